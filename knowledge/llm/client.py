"""A streaming client for one endpoint of an OpenAI-compatible server.

``POST {base_url}/chat/completions`` with ``"stream": true``, read as server-sent events
(:mod:`knowledge.llm._sse`): each ``data:`` line a ``chat.completion.chunk`` whose
``choices[0].delta.content`` carries the next piece of text, a chunk with a
``finish_reason``, an optional usage chunk with empty ``choices``, then ``data: [DONE]``.
That is the common ground of vLLM, SGLang and llama.cpp's server (and of OpenAI's
published description, which the tests check every request against).

Every way a server can fail ends in one :class:`LlmFailure` with a ``kind`` from
:data:`FAILURE_KINDS`, never in a hang: the connection, the first token, each next
chunk and the whole answer have their own time limits, a line and the answer their
own size limits, and a model that goes on past ``max_tokens`` is cut off.
Closing the stream (the caller stops iterating, or its task is cancelled) closes the
connection, which is how a server is told to stop generating.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from knowledge.llm._sse import DONE, SseDecoder

__all__ = [
    "FAILURE_KINDS",
    "ChatClient",
    "LlmFailure",
    "LlmSettings",
    "StreamStats",
    "api_root",
]

log = logging.getLogger(__name__)

#: Why an answer could not be had: the server is unreachable (down), too slow (slow),
#: refuses for load (busy, 429), fails (server, 5xx or an error event), refuses us
#: (refused: 4xx such as a bad key or an unknown model), closes before the end
#: (truncated), sends what is not a chat-completion stream (garbage), or does not stop
#: (endless: past the length cap or past ``max_tokens``).
FAILURE_KINDS = ("down", "slow", "busy", "server", "refused", "truncated", "garbage", "endless")
#: Longest line of the event stream read (a chunk of one token is ~300 bytes).
MAX_LINE_CHARS = 64 * 1024
#: Content chunks allowed past ``max_tokens`` before the model is taken to ignore it
#: (a server may split or merge tokens across chunks a little).
_TOKEN_SLACK = 1.25
_TOKEN_EXTRA = 16


class LlmFailure(Exception):
    """The model server did not give a complete answer; ``kind`` says why."""

    def __init__(self, kind: str, detail: str = "") -> None:
        assert kind in FAILURE_KINDS, kind
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True, slots=True)
class LlmSettings:
    """Where the model server is and how long and how much to wait for."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    connect_timeout: float = 5.0
    #: Seconds until the first piece of text (the prompt is read first).
    first_token_timeout: float = 30.0
    #: Seconds between two chunks once text flows.
    idle_timeout: float = 15.0
    #: Seconds for the whole answer.
    total_timeout: float = 90.0
    max_tokens: int = 400
    #: The answer's length cap in characters; a stream past it is cut off as endless.
    max_chars: int = 2400
    temperature: float = 0.2


def api_root(base_url: str) -> str:
    """The URL the endpoints hang from: ``base_url`` without a trailing slash, with
    ``/v1`` added when it names only a host (``http://gpu-box:8000``)."""
    url = base_url.strip().rstrip("/")
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


@dataclass(slots=True)
class StreamStats:
    """What one stream did, filled in as it goes (read it after the stream ends)."""

    started: float = 0.0
    #: ``time.perf_counter()`` when the first text arrived (0: none yet).
    first_text: float = 0.0
    ended: float = 0.0
    chunks: int = 0
    chars: int = 0
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    done: bool = False


class ChatClient:
    """One model server: ``models()`` and ``stream(messages)``. Close it with ``aclose``."""

    def __init__(
        self, settings: LlmSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.settings = settings
        headers = {"Accept": "text/event-stream"}
        if settings.api_key:
            headers["Authorization"] = f"Bearer {settings.api_key}"
        self._http = httpx.AsyncClient(
            base_url=api_root(settings.base_url) + "/",
            headers=headers,
            timeout=httpx.Timeout(
                connect=settings.connect_timeout,
                read=max(settings.first_token_timeout, settings.idle_timeout),
                write=settings.connect_timeout,
                pool=settings.connect_timeout,
            ),
            follow_redirects=False,
            transport=transport,
            trust_env=False,  # a model server on the LAN is never reached through a proxy
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    def request_body(self, messages: Sequence[Mapping[str, str]]) -> dict[str, Any]:
        """The JSON body of one streamed chat completion."""
        s = self.settings
        return {
            "model": s.model,
            "messages": [dict(m) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": s.max_tokens,
            "temperature": s.temperature,
        }

    async def models(self) -> list[str]:
        """The ids ``GET /models`` lists; :class:`LlmFailure` when it cannot be read."""
        try:
            response = await self._http.get("models", headers={"Accept": "application/json"})
        except httpx.TimeoutException as exc:
            raise LlmFailure("slow", type(exc).__name__) from None
        except httpx.HTTPError as exc:
            raise LlmFailure("down", type(exc).__name__) from None
        _raise_for_status(response.status_code)
        try:
            data = response.json()
            return [str(m["id"]) for m in data["data"]]
        except (ValueError, KeyError, TypeError):
            raise LlmFailure("garbage", "the model list is not an OpenAI model list") from None

    async def stream(
        self, messages: Sequence[Mapping[str, str]], stats: StreamStats | None = None
    ) -> AsyncIterator[str]:
        """Yield the answer's text a piece at a time; raise :class:`LlmFailure`."""
        s = self.settings
        stats = stats if stats is not None else StreamStats()
        stats.started = time.perf_counter()
        deadline = stats.started + s.total_timeout
        first_deadline = stats.started + s.first_token_timeout
        token_cap = math.ceil(s.max_tokens * _TOKEN_SLACK) + _TOKEN_EXTRA
        body = self.request_body(messages)
        try:
            async with asyncio.timeout(max(0.0, first_deadline - time.perf_counter())):
                request = self._http.build_request("POST", "chat/completions", json=body)
                response = await self._http.send(request, stream=True)
        except TimeoutError:
            raise LlmFailure("slow", "no answer to the request in time") from None
        except httpx.TimeoutException as exc:
            raise LlmFailure("slow", type(exc).__name__) from None
        except httpx.HTTPError as exc:
            raise LlmFailure("down", type(exc).__name__) from None
        try:
            if response.status_code != 200:
                _raise_for_status(response.status_code)
            kind = response.headers.get("content-type", "").split(";")[0].strip().casefold()
            if kind != "text/event-stream":
                raise LlmFailure("garbage", f"content type {kind or 'none'}")
            decoder = SseDecoder()
            lines = _lines(response.aiter_text()).__aiter__()
            while True:
                now = time.perf_counter()
                wait = min(
                    deadline - now,
                    (first_deadline - now) if not stats.first_text else s.idle_timeout,
                )
                try:
                    async with asyncio.timeout(max(0.0, wait)):
                        line = await anext(lines, None)
                except TimeoutError:
                    raise LlmFailure("slow", "no text in time") from None
                except httpx.TimeoutException as exc:
                    raise LlmFailure("slow", type(exc).__name__) from None
                except httpx.HTTPError as exc:
                    raise LlmFailure("truncated", type(exc).__name__) from None
                if line is None:
                    raise LlmFailure("truncated", "the stream closed before [DONE]")
                event = decoder.feed(line)
                if event is None:
                    continue
                if event.data.strip() == DONE:
                    if stats.finish_reason is None:
                        raise LlmFailure("truncated", "[DONE] before a finish_reason")
                    stats.done = True
                    return
                text = _chunk_text(event.data, stats)
                if not text:
                    continue
                stats.chunks += 1
                stats.chars += len(text)
                if not stats.first_text:
                    stats.first_text = time.perf_counter()
                if stats.chars > s.max_chars or stats.chunks > token_cap:
                    raise LlmFailure("endless", f"{stats.chars} characters, {stats.chunks} chunks")
                yield text
        finally:
            stats.ended = time.perf_counter()
            await response.aclose()


def _raise_for_status(status: int) -> None:
    if status == 429:
        raise LlmFailure("busy", "429")
    if status >= 500:
        raise LlmFailure("server", str(status))
    if status >= 300:
        raise LlmFailure("refused", str(status))


async def _lines(chunks: AsyncIterator[str]) -> AsyncIterator[str]:
    """The stream's lines without their ends (``\\n``, ``\\r\\n`` or ``\\r``), each
    capped: a line longer than :data:`MAX_LINE_CHARS` is garbage, not a chunk."""
    pending = ""
    async for chunk in chunks:
        pending += chunk
        if "\r" in pending:
            pending = pending.replace("\r\n", "\n").replace("\r", "\n")
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line
        if len(pending) > MAX_LINE_CHARS:
            raise LlmFailure("garbage", "a line of the stream is too long")
    if pending:
        yield pending


def _chunk_text(data: str, stats: StreamStats) -> str:
    """The text one ``chat.completion.chunk`` adds; its finish reason and usage noted."""
    try:
        chunk = json.loads(data)
    except ValueError:
        raise LlmFailure("garbage", "a data line is not JSON") from None
    if not isinstance(chunk, dict):
        raise LlmFailure("garbage", "a chunk is not a JSON object")
    if "error" in chunk:  # vLLM and llama.cpp report a failure mid-stream this way
        raise LlmFailure("server", "an error event in the stream")
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise LlmFailure("garbage", "a chunk without choices")
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        stats.usage = {k: v for k, v in usage.items() if isinstance(v, int)}
    text = ""
    for choice in choices:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            raise LlmFailure("garbage", "a choice without a delta")
        content = delta.get("content")
        if isinstance(content, str):
            text += content
        elif content is not None:
            raise LlmFailure("garbage", "delta.content is not text")
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            stats.finish_reason = reason
    return text
