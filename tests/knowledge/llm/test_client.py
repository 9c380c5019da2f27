"""The model-server client against the loopback stand-in: a vLLM-style stream is read to
its end, and every way a server fails ends in one failure kind, never a hang."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from knowledge.llm import ChatClient, LlmFailure, LlmSettings, StreamStats, api_root
from knowledge.llm._sse import SseDecoder
from tests.llm_standin import Behaviour, closed_port_url, waits_for

PROMPT = "<source 1> P > S (p.md#s)\nThe fix is to lower it. More.\n</source 1>\n\n"
MESSAGES = [
    {"role": "system", "content": "answer from the sources"},
    {
        "role": "user",
        "content": PROMPT + "Question: why",
    },
]


def settings(url: str, **kw) -> LlmSettings:
    base = {"first_token_timeout": 1.0, "idle_timeout": 0.5, "total_timeout": 5.0}
    return LlmSettings(url, "standin-model", **{**base, **kw})


def collect(url: str, stats: StreamStats | None = None, **kw) -> str:
    async def run() -> str:
        client = ChatClient(settings(url, **kw))
        try:
            return "".join([piece async for piece in client.stream(MESSAGES, stats)])
        finally:
            await client.aclose()

    return asyncio.run(run())


def failure(url: str, **kw) -> LlmFailure:
    with pytest.raises(LlmFailure) as caught:
        collect(url, **kw)
    return caught.value


def test_a_vllm_style_stream_is_read_to_done_with_its_finish_reason_and_usage(llm_standin):
    stats = StreamStats()
    text = collect(llm_standin.url, stats)
    assert text == "The fix is to lower it. [1]"
    assert stats.done and stats.finish_reason == "stop"
    assert stats.usage["completion_tokens"] == llm_standin.served[-1].tokens
    body = llm_standin.served[-1].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 400 and body["model"] == "standin-model"
    assert llm_standin.validated["requests"] == 1 and llm_standin.validated["chunks"] >= 5


def test_the_api_key_goes_in_the_authorization_header_only():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"object": "list", "data": [{"id": "m"}]})

    async def run() -> list[str]:
        client = ChatClient(
            LlmSettings("http://127.0.0.1:9", "m", api_key="sk-secret-1"),
            transport=httpx.MockTransport(handler),
        )
        try:
            return await client.models()
        finally:
            await client.aclose()

    assert asyncio.run(run()) == ["m"]
    assert seen[0].headers["authorization"] == "Bearer sk-secret-1"
    assert str(seen[0].url) == "http://127.0.0.1:9/v1/models"
    assert "sk-secret-1" not in repr(LlmSettings("u", "m", api_key="sk-secret-1"))


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("429", "busy"),
        ("500", "server"),
        ("html", "garbage"),
        ("garbage", "garbage"),
        ("error_event", "server"),
        ("truncated", "truncated"),
        ("slow", "slow"),
        ("stall", "slow"),
        ("endless", "endless"),
    ],
)
def test_each_failure_of_the_server_is_one_kind(llm_standin, mode, kind):
    llm_standin.behaviour = Behaviour(mode=mode)
    waits = waits_for(mode, first_token_timeout=0.5, idle_timeout=0.3)
    assert failure(llm_standin.url, **waits).kind == kind


def test_a_server_that_is_down_is_down():
    assert failure(closed_port_url()).kind == "down"


def test_a_model_ignoring_max_tokens_is_cut_off_and_the_connection_closed(llm_standin):
    # Paced as a model writes: unpaced, the stand-in fills the socket's buffers with
    # thousands of tokens before the client's close reaches it, whatever the client does.
    llm_standin.behaviour = Behaviour(mode="endless", pace=0.005)
    started = time.perf_counter()
    caught = failure(llm_standin.url, max_tokens=20, max_chars=100_000, total_timeout=30)
    assert caught.kind == "endless"
    deadline = time.perf_counter() + 10
    while not llm_standin.served[-1].disconnected and time.perf_counter() < deadline:
        time.sleep(0.01)
    served = llm_standin.served[-1]
    assert served.disconnected, "the server saw the client go"
    assert served.tokens < 100, "cut off near max_tokens, not at the stand-in's own cap"
    assert time.perf_counter() - started < 30


def test_an_endless_stream_is_cut_at_the_length_cap(llm_standin):
    llm_standin.behaviour = Behaviour(mode="endless", pace=0.005)
    assert failure(llm_standin.url, max_tokens=100_000, max_chars=300).kind == "endless"
    assert llm_standin.served[-1].tokens < 200


def test_a_slow_trickle_ends_at_the_total_timeout(llm_standin):
    llm_standin.behaviour = Behaviour(mode="endless", pace=0.05)
    caught = failure(llm_standin.url, total_timeout=0.6, max_chars=100_000, max_tokens=100_000)
    assert caught.kind == "slow"


def test_cancelling_the_task_closes_the_connection_to_the_server(llm_standin):
    llm_standin.behaviour = Behaviour(mode="endless", pace=0.02)

    async def run() -> None:
        client = ChatClient(settings(llm_standin.url, max_chars=10**6, max_tokens=10**6))

        async def read() -> None:
            async for _ in client.stream(MESSAGES):
                pass

        task = asyncio.create_task(read())
        while not llm_standin.served or llm_standin.served[-1].tokens < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()

    asyncio.run(run())
    deadline = time.perf_counter() + 10
    while not llm_standin.served[-1].disconnected and time.perf_counter() < deadline:
        time.sleep(0.01)
    assert llm_standin.served[-1].disconnected
    assert not llm_standin.served[-1].finished


def test_the_sse_decoder_reads_comments_multi_line_data_and_events():
    decoder = SseDecoder()
    lines = [": keep-alive", "event: message", "data: a", "data: b", "", "", "data:[DONE]", ""]
    events = [e for e in map(decoder.feed, lines) if e is not None]
    assert [(e.event, e.data) for e in events] == [("message", "a\nb"), ("message", "[DONE]")]


def test_api_root_adds_v1_to_a_bare_host_only():
    assert api_root("http://gpu:8000") == "http://gpu:8000/v1"
    assert api_root("http://gpu:8000/v1/") == "http://gpu:8000/v1"
    assert api_root("https://proxy.example/openai/v1") == "https://proxy.example/openai/v1"
