"""The pytest fixture. ``tests/conftest.py`` imports it; nothing else to set up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .runner import StandinRunner

__all__ = ["discord_standin"]


@pytest.fixture
def discord_standin() -> Iterator[StandinRunner]:
    """A :class:`StandinRunner`: ``discord_standin.run(bot_factory, scenario)``.

    Each ``run`` starts the stand-in and the bot inside a fresh event loop and fails
    (``StandinFailure``) on ERROR logs, unknown routes and non-loopback hosts. At
    teardown the test fails if a problem slipped past every ``run`` unreported.
    """
    runner = StandinRunner()
    yield runner
    leftovers = runner.unreported()
    if leftovers:
        pytest.fail(
            "discord stand-in problems nobody reported:\n"
            + "\n".join(f"- [{p.kind}] {p.text}" for p in leftovers)
        )
