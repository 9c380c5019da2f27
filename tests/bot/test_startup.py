"""Start-up: the bot logs in, opens the wiki, and syncs its commands to the configured guild."""

from __future__ import annotations

from bot.client import WikiBot
from tests.bot.helpers import bot_factory, make_config
from tests.discord_standin import DEFAULT_IDS

COMMANDS = {"runbook", "acronym", "search", "wiki", "help", "support", "ticket"}


def test_startup_syncs_the_command_schema_to_the_configured_guild(discord_standin, tmp_path):
    config = make_config(wiki={"data_dir": str(tmp_path / "index")})

    def factory(**kwargs):
        # No knowledge passed in: setup_hook opens the wiki itself (in a thread).
        return WikiBot(config, **kwargs)

    async def scenario(standin):
        assert standin.client.kb.status().meta["pages"] > 0
        return standin.commands

    commands = discord_standin.run(factory, scenario)
    assert set(commands) == {DEFAULT_IDS.guild}, "synced to the configured guild only"
    synced = commands[DEFAULT_IDS.guild]
    slash = {c["name"]: c for c in synced if c.get("type", 1) == 1}
    assert set(slash) == COMMANDS
    menus = [c["name"] for c in synced if c.get("type") == 3]
    assert menus == ["Explain acronyms", "Mark as answer"]

    def options(command):
        return {o["name"]: o for o in command.get("options") or []}

    for command in slash.values():
        # What users see, written for them, never cut by discord.py at 100 characters.
        assert 1 <= len(command["description"]) <= 100
        assert not command["description"].endswith("…"), command["description"]
        for option in options(command).values():
            assert 1 <= len(option["description"]) <= 100
            for sub in option.get("options") or []:
                assert 1 <= len(sub["description"]) <= 100
    runbook, acronym, search = (options(slash[n]) for n in ("runbook", "acronym", "search"))
    assert runbook["model"]["required"] and runbook["model"]["autocomplete"]
    assert runbook["private"]["type"] == 5 and not runbook["private"].get("required")
    assert acronym["term"]["autocomplete"] and acronym["private"]["type"] == 5
    assert search["query"]["required"] and not search["query"].get("autocomplete")
    assert search["section"]["autocomplete"] and not search["section"].get("required")
    wiki = options(slash["wiki"])
    assert {name: o["type"] for name, o in wiki.items()} == {
        "status": 1,
        "stats": 1,
        "reindex": 1,
        "sync": 1,
        "lint": 1,
        "gaps": 1,
    }
    # Contexts and installs declared on every command; no deprecated dm_permission.
    assert all("dm_permission" not in c for c in synced)
    wiki = slash["wiki"]
    assert (wiki["contexts"], wiki["integration_types"]) == ([0], [0]), "servers only"
    assert wiki["default_member_permissions"] == str(1 << 5), "Manage Server sees it"
    for name in ("support", "ticket"):  # tickets belong to a server's help forum
        assert (slash[name]["contexts"], slash[name]["integration_types"]) == ([0], [0])
    assert all(c.get("contexts") is not None for c in synced), "every command says where"
    for name in ("runbook", "acronym", "search", "help"):
        assert (slash[name]["contexts"], slash[name]["integration_types"]) == ([0, 1, 2], [0, 1])
        assert slash[name]["default_member_permissions"] is None
    menus = {c["name"]: c for c in synced if c.get("type") == 3}
    menu = menus["Explain acronyms"]
    assert (menu["contexts"], menu["integration_types"]) == ([0, 1, 2], [0, 1])
    answer = menus["Mark as answer"]  # in a ticket's thread: servers only
    assert (answer["contexts"], answer["integration_types"]) == ([0], [0])


def test_no_guild_configured_means_no_sync_at_startup(discord_standin):
    config = make_config(discord={"guild_ids": []})

    async def scenario(standin):
        return standin.requests_to("guild_commands", "PUT") + standin.requests_to(
            "global_commands", "PUT"
        )

    assert discord_standin.run(bot_factory(config), scenario) == []
