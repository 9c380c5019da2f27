"""The pytest fixture. ``tests/conftest.py`` imports it; nothing else to set up."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator

import pytest

from .runner import StandinRunner, pointed_at
from .server import Standin, StandinConfig

__all__ = ["discord_standin", "threaded_standin"]


@pytest.fixture
def discord_standin() -> Iterator[StandinRunner]:
    """A :class:`StandinRunner`: ``discord_standin.run(bot_factory, scenario)``.

    Each ``run`` starts the stand-in and the bot inside a fresh event loop and fails
    (``StandinFailure``) on ERROR logs, unknown routes and non-loopback hosts. At
    teardown the test fails if a problem slipped past every ``run`` unreported.
    """
    delay = float(os.environ.get("STANDIN_DELAY") or 0)  # `make test-delay`: 0.08
    runner = StandinRunner(StandinConfig(round_trip_delay=delay))
    yield runner
    leftovers = runner.unreported()
    if leftovers:
        pytest.fail(
            "discord stand-in problems nobody reported:\n"
            + "\n".join(f"- [{p.kind}] {p.text}" for p in leftovers)
        )


@pytest.fixture
def threaded_standin() -> Iterator[Standin]:
    """A stand-in served from its own thread, discord.py pointed at it: for code that
    runs its own event loop (``wikibot sync``, ``wikibot doctor``) and uses REST only."""
    loop = asyncio.new_event_loop()
    server = Standin()
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    with pointed_at(server):
        yield server
    asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
