"""``wikibot sync``: the slash commands registered over REST, to guilds or globally."""

from __future__ import annotations

from pathlib import Path

from bot.cli import main
from knowledge.service import demo_wiki_dir
from tests.discord_standin import DEFAULT_IDS


def _config(tmp_path: Path, guilds: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"discord:\n  guild_ids: {guilds}\nwiki:\n  path: {demo_wiki_dir()}\n"
        f"  data_dir: {tmp_path / 'data'}\n",
        encoding="utf-8",
    )
    return path


def test_sync_registers_commands_in_the_configured_guild(
    threaded_standin, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("DISCORD_TOKEN", threaded_standin.config.token)
    config = _config(tmp_path, f"[{DEFAULT_IDS.guild}]")
    assert main(["sync", "--config", str(config)]) == 0
    names = {c["name"] for c in threaded_standin.commands[DEFAULT_IDS.guild]}
    assert {"runbook", "acronym", "search", "wiki", "help", "Explain acronyms"} <= names
    assert None not in threaded_standin.commands  # nothing global unless asked
    assert str(DEFAULT_IDS.guild) in capsys.readouterr().out
    assert not threaded_standin.problems


def test_sync_global_and_no_guilds(threaded_standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", threaded_standin.config.token)
    config = _config(tmp_path, "[]")
    assert main(["sync", "--config", str(config)]) == 2  # no guild and no --global: says so
    assert capsys.readouterr().err.strip()
    assert main(["sync", "--global", "--config", str(config)]) == 0
    assert {c["name"] for c in threaded_standin.commands[None]} >= {"runbook", "acronym", "search"}


def test_sync_with_a_wrong_token_is_one_line(threaded_standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", "wrong.token.value")
    config = _config(tmp_path, f"[{DEFAULT_IDS.guild}]")
    assert main(["sync", "--config", str(config)]) == 1
    err = capsys.readouterr().err.strip()  # discord.py's own INFO log may come first
    assert err.splitlines()[-1].startswith("wikibot: ") and "wrong.token.value" not in err
    assert not threaded_standin.commands
