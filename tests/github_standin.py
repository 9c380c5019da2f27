"""A loopback imitation of the parts of GitHub's REST API a wiki fetch uses.

``GET /repos/{owner}/{repo}/commits/{ref}`` answers the SHA alone with an ETag and
honours ``If-None-Match`` (304); ``GET /repos/{owner}/{repo}/tarball/{sha}``
redirects to ``/codeload/...`` on the same server, which streams the tarball;
``GET /files/{name}`` serves a plain ``.tar.gz`` (a URL source), with ETags too.
Faults are queued per route (``"commits"``, ``"tarball"``, ``"codeload"``,
``"files"``) and each request takes the next one: a status with headers, a
dropped connection mid-body, a delay, or a body held open until released.
Every request is recorded (method, path, headers) for assertions.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

__all__ = ["Fault", "GitHubStandin", "Request", "github_standin", "tarball", "tree_files"]


@dataclass
class Fault:
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"message": "Server Error"}'
    #: Send the real answer's headers and this many body bytes, then close the connection.
    drop_after: int | None = None
    #: Seconds to sleep before answering (the real answer follows).
    delay: float = 0.0
    #: Send headers and half the body, set ``holding``, then wait for ``release``.
    hold: bool = False


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Repo:
    default: str = "main"
    refs: dict[str, str] = field(default_factory=dict)
    tarballs: dict[str, bytes] = field(default_factory=dict)


class GitHubStandin:
    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.files: dict[str, bytes] = {}
        self.faults: dict[str, list[Fault]] = {}
        self.requests: list[Request] = []
        self.holding = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- content -------------------------------------------------------------------

    def publish(self, owner: str, repo: str, ref: str, archive: bytes) -> str:
        """Make ``archive`` the tarball of a new commit that ``ref`` points at; its SHA."""
        sha = hashlib.sha1(archive + ref.encode()).hexdigest()
        entry = self.repos.setdefault((owner, repo), Repo())
        entry.refs[ref] = sha
        entry.tarballs[sha] = archive
        return sha

    def fault(self, route: str, *faults: Fault) -> None:
        with self._lock:
            self.faults.setdefault(route, []).extend(faults)

    def _next_fault(self, route: str) -> Fault | None:
        with self._lock:
            queue = self.faults.get(route)
            return queue.pop(0) if queue else None

    def count(self, route_part: str) -> int:
        return sum(1 for r in self.requests if route_part in r.path)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- serving -------------------------------------------------------------------

    def start(self) -> None:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                standin.requests.append(Request("GET", self.path, dict(self.headers.items())))
                standin._route(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _route(self, h: BaseHTTPRequestHandler) -> None:
        parts = h.path.split("?")[0].strip("/").split("/")
        if len(parts) >= 5 and parts[0] == "repos" and parts[3] == "commits":
            self._commits(h, (parts[1], parts[2]), unquote("/".join(parts[4:])))
        elif len(parts) == 5 and parts[0] == "repos" and parts[3] == "tarball":
            self._answer(
                h, "tarball", 302, {"Location": f"/codeload/{parts[1]}/{parts[2]}/{parts[4]}"}, b""
            )
        elif len(parts) == 4 and parts[0] == "codeload":
            repo = self.repos.get((parts[1], parts[2]))
            body = repo.tarballs.get(parts[3]) if repo else None
            if body is None:
                self._answer(h, "codeload", 404, {}, b"Not Found")
            else:
                self._answer(h, "codeload", 200, {"Content-Type": "application/x-gzip"}, body)
        elif len(parts) == 2 and parts[0] == "files" and parts[1] in self.files:
            body = self.files[parts[1]]
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            if h.headers.get("If-None-Match") == etag:
                self._answer(h, "files", 304, {"ETag": etag}, b"")
            else:
                self._answer(h, "files", 200, {"ETag": etag}, body)
        else:
            self._answer(h, "other", 404, {}, b'{"message": "Not Found"}')

    def _commits(self, h: BaseHTTPRequestHandler, key: tuple[str, str], ref: str) -> None:
        repo = self.repos.get(key)
        if repo is None:
            self._answer(h, "commits", 404, {}, b'{"message": "Not Found"}')
            return
        sha = repo.refs.get(repo.default if ref == "HEAD" else ref)
        if sha is None and ref in repo.tarballs:
            sha = ref
        if sha is None:
            self._answer(h, "commits", 422, {}, b'{"message": "No commit found for SHA: x"}')
            return
        etag = f'"{sha}"'
        if h.headers.get("If-None-Match") == etag:
            self._answer(h, "commits", 304, {"ETag": etag}, b"")
        elif h.headers.get("Accept") != "application/vnd.github.sha":
            self._answer(h, "commits", 415, {}, b"ask for the SHA only")
        else:
            self._answer(
                h, "commits", 200, {"ETag": etag, "X-RateLimit-Remaining": "59"}, sha.encode()
            )

    def _answer(
        self,
        h: BaseHTTPRequestHandler,
        route: str,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
    ) -> None:
        fault = self._next_fault(route)
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.drop_after is None and not fault.hold and not fault.delay:
            status, headers, body = fault.status, fault.headers, fault.body
        h.send_response(status)
        for name, value in headers.items():
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if fault is not None and fault.drop_after is not None:
            h.wfile.write(body[: fault.drop_after])
            h.wfile.flush()
            h.close_connection = True
            return
        if fault is not None and fault.hold:
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            self.holding.set()
            self.release.wait(60)
            h.close_connection = True
            return
        h.wfile.write(body)


@contextmanager
def github_standin() -> Iterator[GitHubStandin]:
    standin = GitHubStandin()
    standin.start()
    try:
        yield standin
    finally:
        standin.stop()


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path (for :func:`tarball`)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def tarball(
    files: Mapping[str, bytes], prefix: str = "owner-wiki-0123456", *, level: int = 6
) -> bytes:
    """A ``.tar.gz`` shaped like GitHub's: a pax global header, then ``prefix/`` and the files."""
    raw = io.BytesIO()
    with tarfile.open(
        fileobj=raw, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": "0" * 40}
    ) as tar:
        if prefix:
            top = tarfile.TarInfo(prefix)
            top.type = tarfile.DIRTYPE
            top.mode = 0o775
            tar.addfile(top)
        folders: set[str] = set()
        for name, data in files.items():
            path = f"{prefix}/{name}" if prefix else name
            # Every folder before the first file inside it, as git archive writes them.
            parts = name.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folder = "/".join(([prefix] if prefix else []) + parts[:depth])
                if folder in folders:
                    continue
                folders.add(folder)
                info = tarfile.TarInfo(folder)
                info.type = tarfile.DIRTYPE
                info.mode = 0o775
                tar.addfile(info)
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o664
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=level, mtime=0)
