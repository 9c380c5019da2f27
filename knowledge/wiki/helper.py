"""A second process parsing pages while this one parses others: a big first load on two cores.

Parsing is pure Python (markdown-it-py) and holds the GIL, so a thread would not
help; a process does. :func:`parse_files` starts ``python -P -m
knowledge.wiki.helper --fd N ROOT`` (a fresh interpreter, never a fork: the bot
has threads), sends it the pages to parse, and parses them itself from the first
while the helper parses them from the last, each page by :func:`read_page`, so
the two meet wherever their speeds put them and no page waits for the other
process. A helper that cannot start or dies only leaves more pages for this
process: the result is the same either way (a test compares them).

Messages, pickled over a socket pair: the parent sends ``("files", [relative
path, ...])``; the helper answers ``("page", index, page, reason)`` per page,
starting at the last index, and exits at end of file or when told nothing more.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path

from knowledge.processes import package_env
from knowledge.wiki.model import Page
from knowledge.wiki.pagefile import read_page

__all__ = ["HELPER_MIN_BYTES", "Parsed", "helper_command", "main", "parse_files", "serve"]

log = logging.getLogger(__name__)

#: Parse with a helper process only when at least this many bytes of pages need parsing
#: (about 0.4 s of parsing; starting the helper costs about 0.15 s on the same machine).
HELPER_MIN_BYTES = 500_000

#: One page's result: the page, or None and why it was skipped (as :func:`read_page`).
Parsed = tuple[Page | None, str | None]


def helper_command(fd: int, root: Path) -> list[str]:
    """The helper's command line (``-P``: the working directory is not on its path)."""
    return [sys.executable, "-P", "-m", "knowledge.wiki.helper", "--fd", str(fd), str(root)]


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Helper:
    """The parent's end: the process and what it has sent back so far."""

    def __init__(self, conn: Connection, proc: subprocess.Popen[bytes], count: int) -> None:
        self.conn = conn
        self.proc = proc
        #: The helper has sent every index from ``low`` up (it works downwards).
        self.low = count
        self.results: dict[int, Parsed] = {}

    @classmethod
    def start(
        cls, root: Path, rels: Sequence[str], command: Callable[[int, Path], list[str]]
    ) -> _Helper | None:
        here_socket, there_socket = socket.socketpair()
        here = Connection(here_socket.detach())
        there = there_socket.detach()
        try:
            proc = subprocess.Popen(
                command(there, root), stdin=subprocess.DEVNULL, env=package_env(), pass_fds=(there,)
            )
        except OSError as exc:
            log.info("page parse helper not started (%s); parsing in this process", exc)
            here.close()
            return None
        finally:
            os.close(there)
        helper = cls(here, proc, len(rels))
        try:
            here.send(("files", list(rels)))
        except OSError:
            helper.stop()
            return None
        return helper

    def take(self) -> None:
        """Everything the helper has sent by now, without waiting."""
        if self.conn.closed:
            return
        try:
            while self.conn.poll(0):
                kind, index, page, reason = self.conn.recv()
                if kind != "page" or not 0 <= index < self.low:
                    raise ValueError(f"unexpected message {kind!r} {index!r}")
                self.results[index] = (page, reason)
                self.low = index
        except Exception as exc:  # whatever went wrong, this process parses on
            log.info("page parse helper stopped (%r); parsing the rest in this process", exc)
            self.stop()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def parse_files(
    root: Path,
    files: Sequence[Path],
    parse_here: Callable[[Path], Parsed],
    *,
    command: Callable[[int, Path], list[str]] = helper_command,
) -> list[Parsed]:
    """Each of ``files`` parsed: by ``parse_here`` in this process from the first, by a
    helper process (:func:`read_page`) from the last. Results in the order of ``files``."""
    if len(files) < 2 or _usable_cpus() < 2:
        return [parse_here(file) for file in files]
    rels = [file.relative_to(root).as_posix() for file in files]
    helper = _Helper.start(root, rels, command)
    mine: dict[int, Parsed] = {}
    try:
        for index, file in enumerate(files):
            if helper is not None:
                helper.take()
                if index >= helper.low:
                    break
            mine[index] = parse_here(file)
    finally:
        if helper is not None:
            helper.stop()
    theirs = helper.results if helper is not None else {}
    results: list[Parsed] = []
    for index, file in enumerate(files):
        parsed = mine.get(index) or theirs.get(index)
        if parsed is None:  # the helper stopped before it got here
            parsed = parse_here(file)
        elif index not in mine and parsed[0] is None and (parsed[1] or "").startswith("parse"):
            log.warning("page %s could not be parsed: %s", rels[index], parsed[1])
        results.append(parsed)
    return results


def serve(conn: Connection, root: Path) -> int:
    """The helper's side: parse the files it is sent, last first, sending each back."""
    try:
        kind, rels = conn.recv()
        if kind != "files":
            return 1
        for index in range(len(rels) - 1, -1, -1):
            page, reason = read_page(root, root / rels[index])
            conn.send(("page", index, page, reason))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return 0  # the parent has what it needs
    finally:
        conn.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse pages as told over ``--fd`` (internal: started by :func:`parse_files`)."""
    parser = argparse.ArgumentParser(
        prog="python -m knowledge.wiki.helper",
        description="Parse wiki pages sent by knowledge.wiki.load (internal).",
    )
    parser.add_argument("--fd", type=int, required=True, help="inherited socket to the parent")
    parser.add_argument("root", type=Path, help="the wiki folder")
    args = parser.parse_args(argv)
    # What read_page logs goes nowhere here: the parent says what matters about a page.
    logging.disable(logging.CRITICAL)
    return serve(Connection(args.fd), args.root)


if __name__ == "__main__":
    raise SystemExit(main())
