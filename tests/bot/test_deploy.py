"""Deploying for real: a server refusing the sync, stale commands, DMs and user installs,
and the per-server copies a global sync leaves behind."""

from __future__ import annotations

import copy
import io
import logging
import sys

import pytest

from bot.cli import main
from tests.bot.helpers import EPHEMERAL, bot_factory, buttons, embed_of, make_config
from tests.bot.test_sync import _config
from tests.discord_standin import DEFAULT_IDS
from tests.discord_standin.server import FOREIGN_GUILD_ID

MISSING_GUILD = 910000000000000777


def test_a_server_refusing_the_sync_does_not_stop_the_bot(discord_standin):
    config = make_config(discord={"guild_ids": [MISSING_GUILD, DEFAULT_IDS.guild]})

    async def scenario(standin):
        status = await standin.slash("wiki status", user_id=DEFAULT_IDS.mod)
        return standin.requests_to("guild_commands", "PUT"), status, standin.log_records

    puts, status, logs = discord_standin.run(bot_factory(config), scenario)
    assert [(r.path.split("/")[4], r.status) for r in puts] == [
        (str(MISSING_GUILD), 403),
        (str(DEFAULT_IDS.guild), 200),
    ], "the next guild is still synced"
    (warning,) = [r for r in logs if "could not sync" in r.getMessage()]
    assert warning.levelno == logging.WARNING and "50001" in warning.getMessage()
    fields = {f["name"]: f["value"] for f in embed_of(status.response.message)["fields"]}
    failure = fields["Command sync failed"]
    assert f"Server `{MISSING_GUILD}`: Discord answered 403 (code 50001)" in failure
    assert "applications.commands" in failure


def test_out_of_date_commands_get_a_clear_answer_and_a_warning(discord_standin):
    async def scenario(standin):
        commands = standin.commands[DEFAULT_IDS.guild]
        commands.append(  # left over from an older version of the bot
            {**commands[0], "id": "910000000000000888", "name": "oldcmd", "options": []}
        )
        wiki = next(c for c in commands if c["name"] == "wiki")
        wiki["options"].append({"name": "purge", "description": "gone", "type": 1})
        gone = await standin.slash("oldcmd")
        renamed = await standin.slash("wiki purge", user_id=DEFAULT_IDS.mod)
        return gone.response.message, renamed.response.message, standin.log_records

    gone, renamed, logs = discord_standin.run(bot_factory(), scenario)
    for message in (gone, renamed):
        assert message["flags"] & EPHEMERAL
        assert embed_of(message)["title"] == "Commands out of date"
        assert "/wiki sync" in embed_of(message)["description"]
    warnings = [r for r in logs if "out-of-date commands" in r.getMessage()]
    assert len(warnings) == 2 and all(r.levelno == logging.WARNING for r in warnings)


def test_commands_work_in_dms_and_user_installs_but_admin_ones_stay_in_servers(discord_standin):
    config = make_config(discord={"guild_ids": []})

    async def scenario(standin):
        await standin.client.sync_commands(None)
        dm = await standin.slash("runbook", model="qwen", context=1)
        elsewhere = await standin.slash("acronym", term="TP", install=1)
        friends = await standin.slash("runbook", model="glm", context=2, install=1)
        with pytest.raises(LookupError, match="contexts are \\[0\\]"):
            await standin.slash("wiki status", context=1)
        with pytest.raises(LookupError, match="installed to the user"):
            await standin.slash("wiki status", install=1)
        return dm, elsewhere, friends

    dm, elsewhere, friends = discord_standin.run(bot_factory(config), scenario)
    assert "guild_id" not in dm.payload
    assert embed_of(dm.response.message)["title"].startswith("Qwen3")
    assert elsewhere.payload["guild_id"] == str(FOREIGN_GUILD_ID)
    assert embed_of(elsewhere.response.message)["title"].startswith("TP")
    assert embed_of(friends.response.message)["title"].startswith("GLM")


def test_sync_global_offers_to_clear_the_guild_copies(
    threaded_standin,
    tmp_path,
    monkeypatch,
    capsys,
):
    monkeypatch.setenv("DISCORD_TOKEN", threaded_standin.config.token)
    config = _config(tmp_path, f"[{DEFAULT_IDS.guild}]")
    assert main(["sync", "--config", str(config)]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not interactive: kept, with a hint
    assert main(["sync", "--global", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "--clear-guild-copies" in out and threaded_standin.commands[DEFAULT_IDS.guild]
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert main(["sync", "--global", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"1 servers ({DEFAULT_IDS.guild}) still hold their own copies" in out
    assert "removed the per-server copies in 1 of 1 servers" in out
    assert threaded_standin.commands[DEFAULT_IDS.guild] == []
    assert {c["name"] for c in threaded_standin.commands[None]} >= {"runbook", "wiki"}


def test_wiki_sync_global_offers_a_button_that_clears_the_guild_copies(discord_standin):
    async def scenario(standin):
        record = await standin.slash("wiki sync", scope="global", user_id=DEFAULT_IDS.owner)
        await record.answer()
        offer = copy.deepcopy(record.original)  # the stand-in edits its dict in place
        (clear,) = [b for b in buttons(offer) if b["custom_id"] == "wikibot:admin:clear-copies"]
        refused = await standin.press(offer, clear["custom_id"], user_id=DEFAULT_IDS.mod)
        pressed = await standin.press(offer, clear["custom_id"], user_id=DEFAULT_IDS.owner)
        await pressed.answer()
        return offer, clear, refused, record.original, standin.commands

    offer, clear, refused, done, commands = discord_standin.run(bot_factory(), scenario)
    assert "1 servers still hold their own copies" in embed_of(offer)["description"]
    assert clear["label"] == "Remove the server copies (1)"
    assert refused.response.message["flags"] & EPHEMERAL
    assert embed_of(done)["title"] == "Server copies removed"
    assert all(b.get("disabled") for b in buttons(done))
    assert commands[DEFAULT_IDS.guild] == [] and commands[None]


def test_a_command_marked_only_guild_only_stays_in_servers_without_dm_permission():
    import discord
    from discord import app_commands

    from bot.errors import WikiTree

    tree = WikiTree(discord.Client(intents=discord.Intents.none()))

    @app_commands.command(name="legacy", description="Marked the old way")
    @app_commands.guild_only()
    async def legacy(interaction: discord.Interaction) -> None:
        return None

    @app_commands.command(name="anywhere", description="Says nothing about contexts")
    async def anywhere(interaction: discord.Interaction) -> None:
        return None

    tree.add_command(legacy)
    tree.add_command(anywhere)
    payload = {c["name"]: c for c in tree.payload()}
    assert "dm_permission" not in payload["legacy"] and payload["legacy"]["contexts"] == [0]
    assert payload["anywhere"]["contexts"] is None, "left to Discord's default"
