"""Helping in a channel as peers do: an answer pointed at someone, deleted by its asker,
/help with clickable commands, and a pointer for the owner of a server without commands."""

from __future__ import annotations

import re

from tests.bot.helpers import EPHEMERAL, bot_factory, buttons, embed_of, make_config
from tests.discord_standin import DEFAULT_IDS

DELETE = f"wikibot:del:{DEFAULT_IDS.alice}"


def test_for_points_a_public_answer_at_one_user_and_pings_nobody_else(discord_standin):
    async def scenario(standin):
        runbook = await standin.slash("runbook", model="qwen", options={"for": DEFAULT_IDS.newbie})
        acronym = await standin.slash("acronym", term="TP", options={"for": DEFAULT_IDS.mod})
        private = await standin.slash(
            "acronym", term="TP", private=True, options={"for": DEFAULT_IDS.mod}
        )
        return runbook.response, acronym.response, private.response, standin.pings

    runbook, acronym, private, pings = discord_standin.run(bot_factory(), scenario)
    assert runbook.message["content"] == f"<@{DEFAULT_IDS.newbie}>, this may help:"
    allowed = runbook.json["data"]["allowed_mentions"]
    assert [str(u) for u in allowed["users"]] == [str(DEFAULT_IDS.newbie)]
    assert runbook.json["data"]["allowed_mentions"]["parse"] == []
    assert embed_of(runbook.message)["title"].startswith("Qwen3"), "the answer itself unchanged"
    assert acronym.message["content"] == f"<@{DEFAULT_IDS.mod}>, this may help:"
    assert not private.message["content"], "a private answer mentions nobody"
    assert [p.pings for p in pings] == [[f"<@{DEFAULT_IDS.newbie}>"], [f"<@{DEFAULT_IDS.mod}>"]]


def test_the_asker_can_delete_a_public_answer_and_nobody_else_can(discord_standin):
    async def scenario(standin):
        record = await standin.slash("runbook", model="qwen")
        answer = record.original
        refused = await standin.press(answer, DELETE, user_id=DEFAULT_IDS.mod)
        still_there = int(answer["id"]) in standin.messages
        deleted = await standin.press(answer, DELETE)
        removal = await deleted.wait_for(lambda r: r.method == "DELETE")
        private = await standin.slash("acronym", term="TP", private=True)
        return answer, refused, still_there, deleted, removal, standin, private

    answer, refused, still_there, deleted, removal, standin, private = discord_standin.run(
        bot_factory(), scenario
    )
    assert buttons(answer)[-1]["label"] == "Delete"
    assert refused.response.message["flags"] & EPHEMERAL and still_there
    assert "Only the person who asked" in embed_of(refused.response.message)["description"]
    assert deleted.response.callback_type == 6
    assert removal.path.endswith("/messages/@original") and removal.status == 204
    assert int(answer["id"]) not in standin.messages
    assert not any(b["custom_id"].startswith("wikibot:del:") for b in buttons(private.original))


def test_help_mentions_the_commands_so_they_are_clickable(discord_standin):
    async def scenario(standin):
        record = await standin.slash("help")
        ids = {c["name"]: c["id"] for c in standin.commands[DEFAULT_IDS.guild]}
        return record.response.message, ids

    message, ids = discord_standin.run(bot_factory(), scenario)
    text = embed_of(message)["description"]
    for name in ("runbook", "acronym", "search"):
        assert f"</{name}:{ids[name]}>" in text
    assert "`/runbook" not in text and "</runbook:" in text
    assert re.search(r"</runbook:\d+> `<model>`", text), "arguments stay readable"


def test_joining_a_server_without_commands_points_the_owner_at_a_sync(discord_standin):
    discord_standin.config.joined = False
    discord_standin.config.guild.system_channel_id = DEFAULT_IDS.general
    config = make_config(discord={"guild_ids": []})

    async def scenario(standin):
        await standin.join_guild()
        return await standin.wait_for_request(lambda r: r.route == "channel_message")

    sent = discord_standin.run(bot_factory(config), scenario)
    assert sent.path == f"/channels/{DEFAULT_IDS.general}/messages" and sent.status == 200
    assert sent.json["content"].startswith(f"<@{DEFAULT_IDS.owner}> thanks for adding me!")
    assert str(DEFAULT_IDS.guild) in sent.json["content"] and "wikibot sync" in sent.json["content"]
    allowed = sent.json["allowed_mentions"]
    assert allowed["parse"] == [] and [str(u) for u in allowed["users"]] == [str(DEFAULT_IDS.owner)]
    assert [p.pings for p in discord_standin.last.pings] == [[f"<@{DEFAULT_IDS.owner}>"]]


def test_joining_a_server_where_the_commands_are_global_says_nothing(discord_standin):
    discord_standin.config.joined = False
    discord_standin.config.guild.system_channel_id = DEFAULT_IDS.general
    config = make_config(discord={"guild_ids": []})

    async def scenario(standin):
        await standin.client.sync_commands(None)
        await standin.join_guild()
        await standin.wait_for_request(lambda r: r.route == "guild_commands" and r.method == "GET")
        await standin.settle()
        return standin.requests_to("channel_message")

    assert discord_standin.run(bot_factory(config), scenario) == []
