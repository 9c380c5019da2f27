"""Shared helpers for the bot's end-to-end tests (no tests here).

Every test drives the real bot (``bot.client.WikiBot``) through discord.py
against the loopback stand-in of ``tests/discord_standin`` and asserts on the
JSON the bot sent. The demo wiki's knowledge base is opened once per process
(it is thread-safe and read-only apart from reindexing the same files).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.client import WikiBot
from bot.config import BotConfig, parse_config
from knowledge.service import KnowledgeBase, demo_wiki_dir
from tests.discord_standin import DEFAULT_IDS

__all__ = [
    "EPHEMERAL",
    "IMPATIENT",
    "LINK_BASE",
    "PATIENT",
    "Gate",
    "bot_factory",
    "buttons",
    "demo_kb",
    "embed_of",
    "make_config",
]

LINK_BASE = "https://github.com/local-inference-lab/rtx6kpro/blob/main/"
EPHEMERAL = 1 << 6
#: ``make_config(discord=PATIENT)``: answers wait up to 2 s before "thinking…", so work
#: done at once is answered in the first response even on a busy machine.
PATIENT = {"thinking_after": 2.0}
#: ``make_config(discord=IMPATIENT)``: "thinking…" after 50 ms, for tests whose work a
#: :class:`Gate` holds (so the test does not wait out the default patience).
IMPATIENT = {"thinking_after": 0.05}
#: Seconds a held call waits for its gate before giving up (a test that failed early).
GATE_TIMEOUT = 30.0


class Gate:
    """Holds calls in their worker thread until the test opens it: slow work made slow
    by the test itself, with no sleep. ``gate.hold(func)`` wraps ``func``; ``open()`` in
    a ``finally``, so a failing test does not leave a bot thread waiting."""

    def __init__(self) -> None:
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    def hold(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def held(*args: Any, **kwargs: Any) -> Any:
            if not self._open.wait(GATE_TIMEOUT):
                raise TimeoutError("the test never opened the gate")
            return func(*args, **kwargs)

        return held


@functools.cache
def demo_kb() -> KnowledgeBase:
    data = Path(tempfile.mkdtemp(prefix="wikibot-test-"))
    atexit.register(shutil.rmtree, data, ignore_errors=True)
    return KnowledgeBase.open(demo_wiki_dir(), data, link_base=LINK_BASE)


def make_config(wiki_dir: Path | None = None, **sections: dict[str, Any]) -> BotConfig:
    """A config for the stand-in guild; ``sections`` override parts (e.g. ``cooldown=``)."""
    data: dict[str, Any] = {
        "discord": {
            "guild_ids": [DEFAULT_IDS.guild],
            "admin_role_ids": [DEFAULT_IDS.role_moderator],
        },
        "wiki": {"path": str(wiki_dir or demo_wiki_dir()), "link_base": LINK_BASE},
        # Generous: only the cooldown test wants to hit it.
        "cooldown": {"rate": 100, "per": 1},
    }
    for name, body in sections.items():
        data[name] = {**data.get(name, {}), **body}
    return parse_config(data, name="test-config")


def bot_factory(
    config: BotConfig | None = None, kb: KnowledgeBase | None = None, **kwargs: Any
) -> Callable[..., WikiBot]:
    """What ``discord_standin.run`` calls with ``http_trace=``."""
    config = config or make_config()

    def factory(**standin_kwargs: Any) -> WikiBot:
        knowledge = kb if kb is not None else demo_kb()
        return WikiBot(config, knowledge=knowledge, **kwargs, **standin_kwargs)

    return factory


def embed_of(message: dict[str, Any] | None) -> dict[str, Any]:
    """The one embed of a message the bot sent."""
    assert message is not None, "no message"
    embeds = message.get("embeds") or []
    assert len(embeds) == 1, f"expected one embed, got {message}"
    return embeds[0]


def buttons(message: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every button of a message, in order."""
    assert message is not None, "no message"
    return [
        component
        for row in message.get("components") or []
        for component in row.get("components") or []
        if component.get("type") == 2
    ]
