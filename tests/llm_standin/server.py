"""A loopback stand-in of an OpenAI-compatible model server, streaming as vLLM does.

``POST /v1/chat/completions`` with ``"stream": true`` answers ``text/event-stream``:
one ``data:`` line per chunk (``chat.completion.chunk``, the first with
``delta.role``, then ``delta.content`` a word at a time), a chunk with
``finish_reason``, a usage chunk with empty ``choices``, then ``data: [DONE]``.
``GET /v1/models`` lists the one model. Every request body and every chunk sent is
validated against OpenAI's published description (:mod:`tests.llm_standin.openapi`);
a mismatch is recorded in :attr:`LlmStandin.mismatches`, which the fixture fails on.

The answer is made from the prompt's own structure (no page is known here): the first
sentence of each of the first two numbered sources, each followed by its citation,
unless a test sets :attr:`Behaviour.text`. :attr:`Behaviour.mode` makes it fail in each
way a real server can: ``429``, ``500``, ``slow`` (nothing before the client gives up),
``stall`` (stops mid-answer, connection open), ``truncated`` (closes mid-answer),
``garbage`` (a data line that is not JSON), ``error_event`` (an error object
mid-stream), ``html`` (200 with a web page), ``endless`` (never stops, ignoring
``max_tokens``). ``down`` is a URL where nothing listens (:func:`closed_port_url`).

It runs in a thread with its own event loop, so a bot's loop, ``asyncio.run`` in the
terminal commands and benchmarks can all use it.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .openapi import check

__all__ = ["Behaviour", "LlmStandin", "closed_port_url", "counts", "waits_for"]

MODEL = "standin-model"
_SOURCE = re.compile(r"^<source (\d+)>[^\n]*\n(.*?)\n</source \1>", re.S | re.M)
#: Validations over the whole test session, for the summary line.
counts = {"requests": 0, "chunks": 0, "models": 0}


@dataclass
class Behaviour:
    mode: str = "ok"
    #: Stream exactly this text (split into words) instead of the made-up answer.
    text: str | None = None
    #: Seconds before the first token, and between two tokens.
    first_delay: float = 0.0
    pace: float = 0.0
    #: Tokens sent before a ``stall``, ``truncated`` or ``garbage`` failure.
    fail_after: int = 3
    #: ``endless``: give up after this many tokens if the client never does.
    endless_cap: int = 20000


@dataclass
class Served:
    """What one chat request did."""

    body: dict[str, Any]
    started: float
    first_token: float = 0.0
    tokens: int = 0
    finished: bool = False
    disconnected: bool = False


@dataclass
class LlmStandin:
    behaviour: Behaviour = field(default_factory=Behaviour)
    served: list[Served] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    validated: dict[str, int] = field(
        default_factory=lambda: {"requests": 0, "chunks": 0, "models": 0}
    )
    port: int = 0
    #: Check bodies against the spec (the tests); benchmarks turn it off for speed.
    validate: bool = True

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- life ---------------------------------------------------------------------

    def start(self) -> LlmStandin:
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="llm-standin", daemon=True)
        self._thread.start()
        assert ready.wait(10), "the model stand-in did not start"
        return self

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(
            app, handle_signals=False, shutdown_timeout=0.5, access_log=None
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def close(self) -> None:
        if self._thread is None:
            return
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> LlmStandin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- checks -------------------------------------------------------------------

    def _check(self, kind: str, schema: str, body: Any) -> None:
        if not self.validate:
            return
        problem = check(schema, body)
        self.validated[kind] += 1
        counts[kind] += 1
        if problem is not None:
            self.mismatches.append(problem)

    # -- routes -------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        body = {
            "object": "list",
            "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "standin"}],
        }
        self._check("models", "ListModelsResponse", body)
        return web.json_response(body)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self._check("requests", "CreateChatCompletionRequest", body)
        served = Served(body, time.monotonic())  # the clock of asyncio loops, across processes
        self.served.append(served)
        b = self.behaviour
        if b.mode == "429":
            return web.json_response({"error": {"message": "busy", "code": 429}}, status=429)
        if b.mode == "500":
            return web.json_response({"error": {"message": "boom", "code": 500}}, status=500)
        if b.mode == "html":
            return web.Response(text="<html>proxy page</html>", content_type="text/html")
        if b.mode == "slow":
            served.disconnected = await _until_gone(request)
            return web.Response(status=204)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        words = _words(b.text if b.text is not None else made_up_answer(body))
        created = int(time.time())
        chunk_id = f"chatcmpl-standin-{len(self.served)}"

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            data = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", MODEL),
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
                **extra,
            }
            self._check("chunks", "CreateChatCompletionStreamResponse", data)
            return f"data: {json.dumps(data)}\n\n".encode()

        try:
            await response.write(chunk({"role": "assistant", "content": ""}))
            if b.first_delay:
                await asyncio.sleep(b.first_delay)
            limit = body.get("max_tokens") or 16
            if b.mode == "endless":
                words = (words * (b.endless_cap // max(1, len(words)) + 1))[: b.endless_cap]
            for i, word in enumerate(words):
                if b.mode in ("stall", "truncated", "garbage", "error_event") and i == b.fail_after:
                    if b.mode == "stall":
                        served.disconnected = await _until_gone(request)
                        return response
                    if b.mode == "garbage":
                        await response.write(b"data: {not json at all\n\n")
                    if b.mode == "error_event":
                        await response.write(b'data: {"error": {"message": "oom"}}\n\n')
                    await response.write_eof()
                    return response
                if i and b.pace:
                    await asyncio.sleep(b.pace)
                if request.transport is None or request.transport.is_closing():
                    served.disconnected = True
                    return response
                if i == limit and b.mode != "endless":
                    break
                if i == 0:
                    await response.write(b": keep-alive comment\n\n")
                await response.write(chunk({"content": word}))
                served.tokens += 1
                if not served.first_token:
                    served.first_token = time.monotonic()
            finish = "length" if len(words) > limit else "stop"
            await response.write(chunk({}, finish))
            usage = {
                "prompt_tokens": 100,
                "completion_tokens": served.tokens,
                "total_tokens": 100 + served.tokens,
            }
            data = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", MODEL),
                "choices": [],
                "usage": usage,
            }
            self._check("chunks", "CreateChatCompletionStreamResponse", data)
            await response.write(f"data: {json.dumps(data)}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
            served.finished = True
            await response.write_eof()
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            served.disconnected = True
        except Exception as exc:  # aiohttp's ClientConnectionResetError and kin
            if "closing transport" in str(exc) or "reset" in str(exc).lower():
                served.disconnected = True
            else:
                raise
        return response


async def _until_gone(request: web.Request, limit: float = 120.0) -> bool:
    """Wait (at most ``limit`` seconds) until the client closes the connection."""
    ends = time.monotonic() + limit
    while time.monotonic() < ends:
        if request.transport is None or request.transport.is_closing():
            return True
        await asyncio.sleep(0.01)
    return False


def _words(text: str) -> list[str]:
    """``text`` as a stream of tokens: each word with the space before it."""
    parts = re.findall(r"\s*\S+", text)
    return parts or [text]


def made_up_answer(body: dict[str, Any]) -> str:
    """An answer made from the prompt's numbered sources: the first sentence of each of
    the first two, each cited by its number."""
    prompt = "\n".join(
        str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "user"
    )
    out = []
    for number, text in _SOURCE.findall(prompt)[:2]:
        prose = " ".join(line for line in text.splitlines() if not line.startswith("```"))
        sentence = re.split(r"(?<=[.!?])\s", prose.strip(), maxsplit=1)[0][:160]
        out.append(f"{sentence} [{number}]")
    return " ".join(out) or "NOT IN THE WIKI"


def closed_port_url() -> str:
    """The URL of a port where nothing listens (a server that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def waits_for(mode: str, **short: float) -> dict[str, float]:
    """The client's waits for a test of *mode*: *short* only where slowness is the fault
    under test (``slow``, ``stall``). Elsewhere a pause of a loaded machine (CI has two
    cores) must not read as a slow server, so each wait is at least ten seconds."""
    if mode in ("slow", "stall"):
        return short
    return {key: max(10.0, value * 10) for key, value in short.items()}
