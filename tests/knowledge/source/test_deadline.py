"""A server that trickles bytes cannot hold a fetch past its deadline.

The servers here send one byte every half second, never enough to trip a read
timeout and never finishing. Without the deadline each fetch would run for hours:
the hang guard (generous, never a speed limit) turns that into a failure. How
close to its setting a fetch ends is measured by ``benchmarks/fetch_deadline.py``.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from knowledge.source import FetchError, Follower, HttpSettings, SourceSettings, parse_source
from tests.support import ROOT, hang_guard

#: Seconds between two bytes of a trickle.
PACE = 0.5
#: The deadline set in these tests (a real one is minutes).
DEADLINE = 2.0
HANG_GUARD = 120


class Trickle:
    """A loopback server trickling one of: the body, the headers, the commit's SHA."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.stop = threading.Event()
        self.connections = 0
        trickle = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                trickle.connections += 1
                with contextlib.suppress(OSError):  # the client gave up, as it should
                    trickle.answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def drip(self, h: BaseHTTPRequestHandler, data: bytes) -> None:
        for byte in data:
            if self.stop.wait(PACE):
                return
            h.wfile.write(bytes([byte]))
            h.wfile.flush()

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        if self.mode == "headers":
            h.wfile.write(b"HTTP/1.1 200 OK\r\n")
            self.drip(h, b"X-Slow: " + b"a" * 100_000)
        elif "/commits/" in h.path:  # the commit's SHA: trickled, or at once
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n")
            if self.mode == "sha":
                self.drip(h, b"0" * 40)
            else:
                h.wfile.write(b"0" * 40)
        else:
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            self.drip(h, b"\x1f" * 1_000_000)

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def trickle(request) -> Iterator[Trickle]:
    server = Trickle(request.param)
    yield server
    server.close()


def _follower(tmp_path, source: str, api_url: str) -> Follower:
    settings = SourceSettings(
        parse_source(source),
        api_url=api_url,
        http=HttpSettings(
            api_url=api_url, download_seconds=DEADLINE, backoff_base=0.01, backoff_max=0.05
        ),
    )
    return Follower(settings, tmp_path / "data", sleep=time.sleep)


@pytest.mark.parametrize(
    ("trickle", "source"),
    [
        ("body", "{url}/files/wiki.tar.gz"),
        ("headers", "{url}/files/wiki.tar.gz"),
        ("sha", "github:owner/wiki"),
        ("tarball", "github:owner/wiki"),
    ],
    indirect=["trickle"],
    ids=["body", "headers", "commit-sha", "tarball"],
)
def test_a_trickling_server_ends_the_fetch_at_its_deadline(tmp_path, trickle, source):
    with (
        hang_guard(HANG_GUARD, "the fetch"),
        _follower(tmp_path, source.format(url=trickle.url), trickle.url) as follower,
        pytest.raises(FetchError) as failure,
    ):
        follower.fetch()
    assert f"took longer than {DEADLINE:.0f} s" in str(failure.value)
    assert not (tmp_path / "data" / "fetched" / "live").exists()
    assert [p.name for p in (tmp_path / "data" / "fetched").iterdir() if p.is_dir()] == []


def test_wiki_fetch_says_so_in_one_line(tmp_path):
    """``wikibot wiki fetch`` as a user runs it, its deadline shortened in the process."""
    server = Trickle("body")
    script = (
        "import sys\n"
        "from knowledge.source.http import HttpSettings\n"
        "init = HttpSettings.__init__\n"
        "def short(self, *args, **kwargs):\n"
        f"    kwargs['download_seconds'] = {DEADLINE}\n"
        "    init(self, *args, **kwargs)\n"
        "HttpSettings.__init__ = short\n"
        "from bot.cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    source = f"{server.url}/files/w.tar.gz"
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                script,
                "wiki",
                "fetch",
                "--source",
                source,
                "--data",
                str(tmp_path),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
        )
    finally:
        server.close()
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    said = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and f"took longer than {DEADLINE:.0f} s" in said[0], said


def test_the_watchdog_ends_a_read_blocked_in_another_thread():
    from knowledge.source.http import _Watchdog

    left, right = socket.socketpair()
    got: list[bytes] = []
    try:
        with _Watchdog(time.monotonic() + 0.2) as watchdog:

            class Stream:
                def get_extra_info(self, name: str):
                    return left if name == "socket" else None

            watchdog.trace("connection.connect_tcp.complete", {"return_value": Stream()})
            reader = threading.Thread(target=lambda: got.append(left.recv(10)))
            with hang_guard(60, "the blocked read"):
                reader.start()
                reader.join()
        assert watchdog.fired and got == [b""]
    finally:
        left.close()
        right.close()
