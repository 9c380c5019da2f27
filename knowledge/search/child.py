"""Full builds in a child process: both ends of the protocol, and its entry point.

:func:`write_in_child` starts ``python -P -m knowledge.search.child --fd N GEN_DIR``
with the parent's interpreter, where ``N`` is the child's end of a socket pair
and ``GEN_DIR`` the empty generation directory to fill. Nothing of the calling
program is imported in the child (a multiprocessing "spawn" child would
re-import the caller's ``__main__``), so scripts that build a big index need no
``if __name__ == "__main__":`` guard; and it is a fresh interpreter, never a
fork (the bot has threads).

Messages, pickled over the socket: the parent sends ("engine", engine), then
("page", page) for each page as :meth:`Engine.preparer` made it (analysed here
while the child adds the pages before), then ("write", None); the child adds each
page as it arrives, commits after "write" and sends ("done", count), or
("error", message, traceback, is_oserror) when anything fails. It says ("progress", done)
only when it has caught up with what the parent sent (nothing left to read), and
the parent reads what the child said after each page it sends: so at most a
couple of progress messages wait at a time, and neither side can fill the
other's socket buffer while itself blocked (the parent reports every page in
between). A child whose parent goes away (end of file, broken pipe) exits.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from knowledge.processes import package_env
from knowledge.search.engine import Document, Engine, IndexBuildError

__all__ = ["main", "serve", "write_in_child"]

log = logging.getLogger(__name__)

#: Seconds a build process may take to exit once it has reported its commit.
_EXIT_TIMEOUT = 30.0
#: Seconds without a word from a build process before it counts as hung.
_IDLE_TIMEOUT = 600.0


def write_in_child(
    engine: Engine,
    gen_dir: Path,
    pages: Iterable[Sequence[Document]],
    sections: int,
    on_page: Callable[[int], None] | None,
) -> None:
    """``engine.write(gen_dir, pages, on_page)`` in a child process.

    This process only prepares the pages (:meth:`Engine.preparer`, the analysis)
    and sends them, a page at a time (no long GIL hold here), while the child adds
    the pages before; then it waits, so an event loop in another of its threads
    keeps running. Any failure kills the child and waits for it before returning,
    so the caller may remove ``gen_dir``; a child that fails or dies raises
    :class:`IndexBuildError`.
    """
    here_socket, there_socket = socket.socketpair()
    here = Connection(here_socket.detach())
    there = there_socket.detach()
    proc: subprocess.Popen[bytes] | None = None
    said = 0  # pages the child said it has written

    def heard(message: tuple[Any, ...]) -> int | None:
        """Act on one message of the child; its count once it says it is done."""
        nonlocal said
        kind = message[0]
        if kind == "progress":
            done = message[1]
            for count in range(said + 1, done + 1):
                said = count
                if on_page is not None:
                    on_page(count)
            return None
        if kind == "done":
            return int(message[1])
        environment = len(message) > 3 and bool(message[3])
        (log.debug if environment else log.error)(
            "search index build process failed:\n%s", message[2]
        )
        raise IndexBuildError(f"search index build process failed: {message[1]}")

    def died() -> IndexBuildError:
        assert proc is not None
        proc.wait()
        return IndexBuildError(
            f"search index build process {_exit_reason(proc.returncode)} before finishing"
        )

    try:
        try:
            proc = subprocess.Popen(
                _command(there, gen_dir),
                stdin=subprocess.DEVNULL,
                env=package_env(),
                pass_fds=(there,),
            )
        except OSError as exc:
            raise IndexBuildError(
                f"search index build process could not be started ({exc})"
            ) from exc
        finally:
            os.close(there)  # the child has its own copy: EOF here once it is gone
        try:
            here.send(("engine", engine))
            prepare = engine.preparer()
            for docs in pages:
                here.send(("page", prepare(docs)))
                while here.poll(0):  # what it said meanwhile: a message or two at most
                    heard(here.recv())
            here.send(("write", None))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            pass  # the child is gone; recv() says so below
        while True:
            if not here.poll(_IDLE_TIMEOUT):
                raise IndexBuildError(
                    f"search index build process sent nothing for {_IDLE_TIMEOUT:g} s; stopped it"
                )
            try:
                message = here.recv()
            except (EOFError, ConnectionResetError):
                raise died() from None
            count = heard(message)
            if count is not None:
                break
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_EXIT_TIMEOUT)
        if proc.returncode != 0:
            raise IndexBuildError(
                f"search index build process {_exit_reason(proc.returncode)} after writing"
            )
        if count != sections:
            raise IndexBuildError(
                f"search index build process wrote {count} sections, expected {sections}"
            )
    except BaseException:
        if proc is not None:  # started: make sure it is gone before gen_dir is
            if proc.returncode is None:
                proc.kill()
            proc.wait()
        raise
    finally:
        here.close()


def _command(fd: int, gen_dir: Path) -> list[str]:
    """Command line of a build process talking over ``fd`` (no shell is involved).

    ``-P``: the working directory does not go on the child's ``sys.path``, where a
    folder of its own called ``knowledge`` would win over this package.
    """
    return [
        sys.executable,
        "-P",
        "-m",
        "knowledge.search.child",
        "--fd",
        str(fd),
        os.path.abspath(gen_dir),
    ]


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with code {code}"


def serve(conn: Connection, gen_dir: str) -> int:
    """The build process's side of the protocol; returns its exit code."""
    try:
        kind, engine = conn.recv()
        if kind != "engine":
            raise ValueError(f"expected the engine first, got {kind!r}")
        written = said = 0

        def received() -> Iterator[object]:
            nonlocal said
            while True:
                kind, page = conn.recv()
                if kind == "write":
                    break
                if kind != "page":
                    raise ValueError(f"expected a page or write, got {kind!r}")
                yield page
            if said < written:  # all of them, before the commit
                conn.send(("progress", written))
                said = written

        def on_page(done: int) -> None:
            nonlocal written, said
            written = done
            if not conn.poll(0):  # caught up with the parent: say how far (see the module)
                conn.send(("progress", done))
                said = done

        count = engine.write(Path(gen_dir), received(), on_page)
        conn.send(("done", count))
    except EOFError:
        return 1  # the parent gave up on us
    except BaseException as exc:
        with contextlib.suppress(Exception):
            # An OSError (a full disk, a read-only folder) is the machine's, not a bug:
            # the parent says it in one line, without the traceback.
            conn.send(
                (
                    "error",
                    f"{type(exc).__name__}: {exc}",
                    traceback.format_exc(),
                    isinstance(exc, OSError),
                )
            )
        return 1
    finally:
        conn.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Build one generation as told over ``--fd``; 0 once the commit is reported, else 1."""
    parser = argparse.ArgumentParser(
        prog="python -m knowledge.search.child",
        description="Write a full index build sent by knowledge.search (internal).",
    )
    parser.add_argument(
        "--fd", type=int, required=True, help="inherited socket connected to the parent"
    )
    parser.add_argument("gen_dir", help="empty generation directory to fill")
    args = parser.parse_args(argv)
    return serve(Connection(args.fd), args.gen_dir)


if __name__ == "__main__":
    raise SystemExit(main())
