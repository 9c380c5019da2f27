"""The one HTTP client of a fetch: GitHub's REST API and the tarball download, over httpx.

- One ``httpx.Client`` per :class:`WikiHttp`, reused across checks; connect,
  read and pool timeouts, plus an overall deadline per download, its tries and
  waits included (a server that trickles bytes never trips a read timeout): at
  the deadline a watchdog shuts the connection's socket down, so a read blocked
  on a trickle returns at once, whatever the server sends or withholds. Each
  request opens its own connection (none kept alive), so the watchdog knows
  every socket a download uses. A clear ``User-Agent``. HTTP/2
  when asked for (``HttpSettings.http2``) and the optional ``h2`` package is
  installed (``pip install 'rtx6k-wikibot[http2]'``); without it, one warning
  and HTTP/1.1.
- ``GITHUB_TOKEN`` (passed in by the caller) is sent as a bearer token to the
  API host only, never along a redirect (GitHub's download links are signed), and
  never logged or put into a message.
- Redirects are followed by hand: at most a few hops, never from https to http,
  and only to the API's own host or GitHub's download hosts.
- The commit of a ref is asked for as its SHA alone
  (``Accept: application/vnd.github.sha``) with ``If-None-Match``, so an
  unchanged wiki costs a 304, which GitHub does not count against the rate limit.
- Rate limits: a 429, or a 403 saying the limit is used up
  (``X-RateLimit-Remaining: 0``) or carrying ``Retry-After``, becomes
  :class:`RateLimited` with the time to wait. A wait up to ``max_wait`` is
  waited out; a longer one fails the fetch at once, saying when to try again.
- 5xx answers and network errors (refused, reset, dropped mid-body, timeouts)
  are retried by tenacity with full-jitter exponential backoff, up to
  ``attempts`` tries.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import importlib.util
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from .spec import Source

__all__ = [
    "Download",
    "FetchError",
    "HttpSettings",
    "NotFound",
    "RateLimited",
    "Resolved",
    "TooLarge",
    "WikiHttp",
    "h2_installed",
]

log = logging.getLogger(__name__)

USER_AGENT = "rtx6k-wikibot (wiki follower; +https://github.com/local-inference-lab/rtx6kpro)"
MAX_REDIRECTS = 5
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
#: Hosts GitHub sends tarball downloads to.
_DOWNLOAD_HOSTS = ("codeload.github.com", "objects.githubusercontent.com")


def h2_installed() -> bool:
    """Whether the ``h2`` package httpx needs for HTTP/2 can be imported (not importing it)."""
    return importlib.util.find_spec("h2") is not None


class FetchError(Exception):
    """A fetch failed; the message is one line saying why (never holding a token)."""


class NotFound(FetchError):
    """The repository, ref or URL does not exist (or is private and no token allows it)."""


class TooLarge(FetchError):
    """The download is over ``Caps.download_bytes``."""


class RateLimited(FetchError):
    def __init__(self, message: str, wait: float) -> None:
        super().__init__(message)
        #: Seconds until a new try may succeed.
        self.wait = max(0.0, wait)


class _Retryable(FetchError):
    """A 5xx or a network error: worth another try after a pause."""


@dataclass(frozen=True, slots=True)
class HttpSettings:
    api_url: str
    #: Seconds to connect, and to wait for each read.
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    #: Seconds the network part of one fetch may take (asking for the commit and the
    #: download, their retries and waits included; see :meth:`WikiHttp.time_limit`),
    #: or one download or commit lookup made outside of it.
    download_seconds: float = 300.0
    #: Tries per request (the first included).
    attempts: int = 4
    #: Longest backoff between two tries (seconds; the jitter picks up to this).
    backoff_max: float = 20.0
    backoff_base: float = 0.5
    #: Longest rate-limit wait served inside one fetch; longer ones fail it.
    max_wait: float = 60.0
    #: Speak HTTP/2 where the server offers it (needs the optional ``h2`` package).
    http2: bool = False


@dataclass(frozen=True, slots=True)
class Resolved:
    #: The commit's SHA; None when the answer was 304 (unchanged since ``etag``).
    commit: str | None
    etag: str | None


@dataclass(frozen=True, slots=True)
class Download:
    #: False when the server said 304 (a URL source, unchanged).
    changed: bool
    etag: str | None
    size: int = 0
    sha256: str = ""


class WikiHttp:
    """GitHub API calls and downloads with retries; one shared ``httpx.Client``."""

    def __init__(
        self,
        settings: HttpSettings,
        *,
        token: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self._token = token or None
        self._sleep = sleep
        #: Monotonic time by which the calls inside :meth:`time_limit` must be done.
        self._until: float | None = None
        self._api = urlsplit(settings.api_url)
        timeout = httpx.Timeout(
            settings.read_timeout, connect=settings.connect_timeout, pool=settings.connect_timeout
        )
        #: Whether the client offers HTTP/2 (asked for, and ``h2`` installed).
        self.http2 = settings.http2 and h2_installed()
        if settings.http2 and not self.http2:
            log.warning(
                "wiki.http2 is on but the h2 package is not installed "
                "(pip install 'rtx6k-wikibot[http2]'); fetching over HTTP/1.1"
            )
        self._client = httpx.Client(
            timeout=timeout,
            # A new connection per request: the download watchdog learns each socket
            # as it is opened (a pooled one would be out of its reach).
            limits=httpx.Limits(max_keepalive_connections=0),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
            transport=transport,
            trust_env=False,
            http2=self.http2,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> WikiHttp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- deadlines --------------------------------------------------------------

    @contextlib.contextmanager
    def time_limit(self, seconds: float | None = None) -> Iterator[None]:
        """Every call inside the block shares one deadline, ``seconds`` from now
        (default ``download_seconds``); a block inside another keeps the outer one."""
        if self._until is not None:
            yield
            return
        self._until = time.monotonic() + (
            self.settings.download_seconds if seconds is None else seconds
        )
        try:
            yield
        finally:
            self._until = None

    def _deadline(self) -> float:
        if self._until is not None:
            return self._until
        return time.monotonic() + self.settings.download_seconds

    def _too_slow(self, what: str) -> FetchError:
        return FetchError(f"{what}: took longer than {self.settings.download_seconds:.0f} s")

    def _timeout(self, deadline: float) -> httpx.Timeout:
        """The client's timeouts, connecting never past ``deadline`` (the watchdog
        reaches a socket only once it is connected)."""
        left = max(0.1, deadline - time.monotonic())
        connect = min(self.settings.connect_timeout, left)
        return httpx.Timeout(self.settings.read_timeout, connect=connect, pool=connect)

    # --- retries ----------------------------------------------------------------

    def _retrying(self, deadline: float | None = None) -> Retrying:
        backoff = wait_random_exponential(
            multiplier=self.settings.backoff_base, max=self.settings.backoff_max
        )

        def wait(state) -> float:
            exc = state.outcome.exception() if state.outcome else None
            pause = exc.wait if isinstance(exc, RateLimited) else backoff(state)
            if deadline is not None:  # never sleep past the download's deadline
                pause = min(pause, max(0.0, deadline - time.monotonic()))
            return pause

        def worth_retrying(exc: BaseException) -> bool:
            if isinstance(exc, RateLimited):
                return exc.wait <= self.settings.max_wait
            return isinstance(exc, _Retryable)

        return Retrying(
            retry=retry_if_exception(worth_retrying),
            wait=wait,
            stop=stop_after_attempt(self.settings.attempts),
            sleep=self._sleep,
            reraise=True,
            before_sleep=_log_retry,
        )

    def _call(self, func: Callable[[], object], deadline: float | None = None):
        try:
            return self._retrying(deadline)(func)
        except _Retryable as exc:
            raise FetchError(f"{exc} (gave up after {self.settings.attempts} tries)") from None

    # --- requests ---------------------------------------------------------------

    def resolve(self, source: Source, etag: str | None) -> Resolved:
        """The commit ``source``'s ref points at, or ``commit=None`` if unchanged (304)."""
        url = self.settings.api_url + source.commit_path()
        headers = {"Accept": "application/vnd.github.sha", "X-GitHub-Api-Version": "2022-11-28"}
        if etag:
            headers["If-None-Match"] = etag
        what = f"{source.text}: the commit of {source.ref or 'the default branch'}"

        deadline = self._deadline()

        def once() -> Resolved:
            if time.monotonic() >= deadline:
                raise self._too_slow(what)
            with _Watchdog(deadline) as watchdog:
                try:
                    response = self._client.get(
                        url,
                        headers=self._auth(url, headers),
                        timeout=self._timeout(deadline),
                        extensions={"trace": watchdog.trace},
                    )
                except httpx.TransportError as exc:
                    if watchdog.fired or time.monotonic() >= deadline:
                        raise self._too_slow(what) from None
                    raise _Retryable(f"{what}: {_network(exc)}") from None
            if response.status_code == 304:
                return Resolved(None, etag)
            if response.status_code in (404, 422):
                ref = f"branch, tag or commit {source.ref!r}" if source.ref else "default branch"
                raise NotFound(
                    f"{source.text}: no such repository, or no {ref} in it"
                    f" ({response.status_code}; a private repository needs GITHUB_TOKEN)"
                )
            self._check(response, what)
            text = response.text.strip()
            if not _SHA.fullmatch(text):
                raise FetchError(f"{what}: the API did not answer a commit SHA")
            return Resolved(text, response.headers.get("ETag"))

        return self._call(once, deadline)

    def download(
        self,
        url: str,
        into: Path,
        *,
        limit: int,
        etag: str | None = None,
        what: str = "",
        auth: bool = False,
    ) -> Download:
        """Stream ``url`` into the file ``into`` (at most ``limit`` bytes), following
        allowed redirects. With ``etag``, a 304 returns ``changed=False``. With
        ``auth`` (a GitHub API URL) the token goes with the first request."""
        what = what or "the download"
        deadline = self._deadline()

        def once() -> Download:
            if time.monotonic() >= deadline:
                raise self._too_slow(what)
            return self._download_once(
                url, into, limit=limit, etag=etag, what=what, auth=auth, deadline=deadline
            )

        return self._call(once, deadline)

    def _download_once(
        self,
        url: str,
        into: Path,
        *,
        limit: int,
        etag: str | None,
        what: str,
        auth: bool,
        deadline: float,
    ) -> Download:
        headers = {"If-None-Match": etag} if etag else {}
        origin = urlsplit(url)
        with _Watchdog(deadline) as watchdog:
            for hop in range(MAX_REDIRECTS + 1):
                # The token goes with the request to the API only, never along a redirect.
                sent = self._auth(url, headers) if auth and hop == 0 else headers
                try:
                    with self._client.stream(
                        "GET",
                        url,
                        headers=sent,
                        timeout=self._timeout(deadline),
                        extensions={"trace": watchdog.trace},
                    ) as response:
                        if response.has_redirect_location:
                            url = self._redirect(url, response, origin, what)
                            continue
                        if response.status_code == 304 and etag:
                            return Download(False, etag)
                        if response.status_code == 404:
                            raise NotFound(f"{what}: not found (404)")
                        self._check(response, what)
                        declared = response.headers.get("Content-Length", "")
                        if declared.isdigit() and int(declared) > limit:
                            raise TooLarge(f"{what}: {declared} bytes, over the cap of {limit}")
                        got = self._save(response, into, limit, deadline, what)
                        if watchdog.fired:  # cut short at the deadline, whatever it looked like
                            raise self._too_slow(what)
                        return got
                except httpx.TransportError as exc:
                    if watchdog.fired or time.monotonic() >= deadline:
                        raise self._too_slow(what) from None
                    raise _Retryable(f"{what}: {_network(exc)}") from None
        raise FetchError(f"{what}: more than {MAX_REDIRECTS} redirects")

    def _save(
        self, response: httpx.Response, into: Path, limit: int, deadline: float, what: str
    ) -> Download:
        digest = hashlib.sha256()
        size = 0
        with open(into, "wb") as out:
            # Each piece as it arrives (no chunk size to fill): the deadline is looked at
            # after every read, and the watchdog ends a read that waits past it.
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"{what}: more than the cap of {limit} bytes")
                if time.monotonic() > deadline:
                    raise self._too_slow(what)
                digest.update(chunk)
                out.write(chunk)
        return Download(True, response.headers.get("ETag"), size, digest.hexdigest())

    # --- helpers ----------------------------------------------------------------

    def _auth(self, url: str, headers: dict[str, str]) -> dict[str, str]:
        """``headers`` plus the token, for the API's own origin only."""
        if not self._token:
            return headers
        parts = urlsplit(url)
        if (parts.scheme, parts.netloc) != (self._api.scheme, self._api.netloc):
            return headers
        return {**headers, "Authorization": f"Bearer {self._token}"}

    def _allowed_hosts(self, origin: str) -> set[str]:
        api_host = self._api.hostname or ""
        hosts = {api_host, origin, *_DOWNLOAD_HOSTS}
        if api_host.startswith("api."):
            hosts.add("codeload." + api_host[4:])
        else:
            hosts.add("codeload." + api_host)
        return hosts

    def _redirect(self, url: str, response: httpx.Response, origin, what: str) -> str:
        location = response.headers.get("Location", "")
        target = urljoin(url, location)
        parts, here = urlsplit(target), urlsplit(url)
        same_origin = (parts.scheme, parts.netloc) == (here.scheme, here.netloc)
        allowed = parts.hostname in self._allowed_hosts(origin.hostname or "")
        if not location or not allowed or (parts.scheme != "https" and not same_origin):
            raise FetchError(f"{what}: refused a redirect to {parts.scheme}://{parts.hostname}")
        return target

    def _check(self, response: httpx.Response, what: str) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        headers = response.headers
        limited = status == 429 or (
            status == 403
            and (headers.get("X-RateLimit-Remaining") == "0" or "Retry-After" in headers)
        )
        if limited:
            wait = _wait_of(headers)
            until = time.strftime("%H:%M:%S UTC", time.gmtime(time.time() + wait))
            hint = "" if self._token else "; GITHUB_TOKEN raises the limit"
            raise RateLimited(
                f"{what}: rate limited ({status}); try again after {until}{hint}", wait
            )
        if status == 401:
            raise FetchError(f"{what}: the server refused the credentials in GITHUB_TOKEN (401)")
        if status >= 500:
            raise _Retryable(f"{what}: server error ({status})")
        raise FetchError(f"{what}: unexpected answer ({status})")


class _Watchdog:
    """Shuts down, at ``deadline``, every socket opened while it watches.

    httpcore reports each new connection to the request's ``trace`` callback; a
    duplicate of its socket's descriptor is kept, because TLS wraps (and detaches)
    the original. ``shutdown`` on it ends a read blocked in another thread at once,
    which closing cannot be relied on to do.
    """

    def __init__(self, deadline: float) -> None:
        self._deadline = deadline
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.fired = False

    def __enter__(self) -> _Watchdog:
        wait = max(0.0, self._deadline - time.monotonic())
        self._timer = threading.Timer(wait, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()

    def trace(self, event: str, info: dict) -> None:
        if not event.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        raw = stream.get_extra_info("socket") if stream is not None else None
        if raw is None:
            return
        with self._lock:
            self._sockets.append(raw.dup())
            if self.fired:  # opened just as time ran out
                self._shut(self._sockets[-1])

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _wait_of(headers: httpx.Headers) -> float:
    """Seconds to wait, from ``Retry-After`` (seconds or a date) or ``X-RateLimit-Reset``."""
    after = headers.get("Retry-After", "").strip()
    if after.isdigit():
        return float(after)
    if after:
        try:
            when = email.utils.parsedate_to_datetime(after)
            return when.timestamp() - time.time()
        except (TypeError, ValueError):
            pass
    reset = headers.get("X-RateLimit-Reset", "").strip()
    if reset.isdigit():
        return float(reset) - time.time()
    return 60.0  # GitHub's advice when it says nothing: wait at least a minute


def _network(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the connection was dropped mid-answer"
    return f"network error ({type(exc).__name__})"


def _log_retry(state) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.info("%s; trying again in %.1f s (try %d)", exc, wait, state.attempt_number + 1)
