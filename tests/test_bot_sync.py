"""``wikibot sync``: the slash commands registered over REST, to guilds or globally."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.service import demo_wiki_dir
from tests.discord_standin import DEFAULT_IDS
from tests.discord_standin.runner import pointed_at
from tests.discord_standin.server import Standin


@pytest.fixture
def standin() -> Iterator[Standin]:
    """A stand-in served from its own thread: ``sync`` runs its own event loop."""
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


def _config(tmp_path: Path, guilds: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"discord:\n  guild_ids: {guilds}\nwiki:\n  path: {demo_wiki_dir()}\n"
        f"  data_dir: {tmp_path / 'data'}\n",
        encoding="utf-8",
    )
    return path


def test_sync_registers_commands_in_the_configured_guild(standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", standin.config.token)
    config = _config(tmp_path, f"[{DEFAULT_IDS.guild}]")
    assert main(["sync", "--config", str(config)]) == 0
    names = {c["name"] for c in standin.commands[DEFAULT_IDS.guild]}
    assert {"runbook", "acronym", "search", "wiki", "help", "Explain acronyms"} <= names
    assert None not in standin.commands  # nothing global unless asked
    assert str(DEFAULT_IDS.guild) in capsys.readouterr().out
    assert not standin.problems


def test_sync_global_and_no_guilds(standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", standin.config.token)
    config = _config(tmp_path, "[]")
    assert main(["sync", "--config", str(config)]) == 2  # no guild and no --global: says so
    assert capsys.readouterr().err.strip()
    assert main(["sync", "--global", "--config", str(config)]) == 0
    assert {c["name"] for c in standin.commands[None]} >= {"runbook", "acronym", "search"}


def test_sync_with_a_wrong_token_is_one_line(standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", "wrong.token.value")
    config = _config(tmp_path, f"[{DEFAULT_IDS.guild}]")
    assert main(["sync", "--config", str(config)]) == 1
    err = capsys.readouterr().err.strip()  # discord.py's own INFO log may come first
    assert err.splitlines()[-1].startswith("wikibot: ") and "wrong.token.value" not in err
    assert not standin.commands
