"""/acronym, its autocomplete, and the "Explain acronyms" message command."""

from __future__ import annotations

from tests.bot.helpers import (
    EPHEMERAL,
    IMPATIENT,
    Gate,
    bot_factory,
    demo_kb,
    embed_of,
    make_config,
)
from tests.discord_standin import DEFAULT_IDS


def test_acronym_dcp4_is_answered_publicly_at_once(discord_standin):
    async def scenario(standin):
        record = await standin.slash("acronym", term="DCP4")
        return record.response

    response = discord_standin.run(bot_factory(), scenario)
    assert response.callback_type == 4, "a glossary hit is a dictionary lookup: no defer"
    assert not (response.message.get("flags") or 0) & EPHEMERAL
    embed = embed_of(response.message)
    assert embed["title"] == "DCP"
    assert "Decode Context Parallelism" in embed["description"]
    assert "**4**" in embed["description"], "the number of the composite form is explained"


def test_unknown_term_is_answered_privately_with_did_you_mean(discord_standin):
    async def scenario(standin):
        record = await standin.slash("acronym", term="DCPP")
        return record, (await record.answer()).shown

    record, answer = discord_standin.run(bot_factory(), scenario)
    embed = embed_of(answer)
    assert "not in the glossary" in embed["title"]
    assert "Did you mean" in embed["description"] and "DCP" in embed["description"]
    assert answer["flags"] & EPHEMERAL
    assert ("webhook_message", "DELETE") not in [(r.route, r.method) for r in record.requests]


def test_unknown_term_searched_slowly_is_deferred_privately(discord_standin, monkeypatch):
    kb = demo_kb()
    gate = Gate()
    monkeypatch.setattr(kb, "acronym", gate.hold(kb.acronym))

    async def scenario(standin):
        try:
            record = await standin.slash("acronym", term="DCPP")
        finally:
            gate.open()
        return record, (await record.answer()).shown

    record, answer = discord_standin.run(bot_factory(make_config(discord=IMPATIENT)), scenario)
    assert record.response.callback_type == 5, "the index search outlasted the patience"
    assert record.response.json["data"]["flags"] & EPHEMERAL, "privately: it may find nothing"
    assert "not in the glossary" in embed_of(answer)["title"]
    assert record.original["flags"] & EPHEMERAL


def test_acronym_autocomplete_within_limits(discord_standin):
    async def scenario(standin):
        empty = await standin.autocomplete("acronym", "term", "")
        typed = await standin.autocomplete("acronym", "term", "tp")
        meaning = await standin.autocomplete("acronym", "term", "parallel")
        return empty.choices, typed.choices, meaning.choices

    empty, typed, meaning = discord_standin.run(bot_factory(), scenario)
    for choices in (empty, typed, meaning):
        assert 1 <= len(choices) <= 25
        assert all(1 <= len(c["name"]) <= 100 and len(c["value"]) <= 100 for c in choices)
    assert len(demo_kb().glossary.entries) > 25, "the limit is actually exercised"
    assert len(empty) == 25
    assert typed[0]["value"] == "TP"
    assert {"TP", "DCP"} <= {c["value"] for c in meaning}


def test_explain_acronyms_message_command_lists_every_term_privately(discord_standin):
    async def scenario(standin):
        message = standin.make_message(
            "Running TP8 with DCP4 and MTP on two cards, see you @everyone",
            author_id=DEFAULT_IDS.newbie,
        )
        record = await standin.message_command("Explain acronyms", message)
        return record, (await record.answer()).shown

    record, message = discord_standin.run(bot_factory(), scenario)
    assert record.response.json["data"]["flags"] & EPHEMERAL
    assert message["flags"] & EPHEMERAL
    text = embed_of(message)["description"]
    for term, meaning in (
        ("TP8", "Tensor Parallelism"),
        ("DCP4", "Decode Context Parallelism"),
        ("MTP", "Multi"),
    ):
        assert term in text and meaning in text


def test_mentions_in_user_input_never_ping(discord_standin):
    async def scenario(standin):
        everyone = await standin.slash("acronym", term="@everyone")
        await everyone.answer()
        await standin.slash("runbook", model=f"<@{DEFAULT_IDS.mod}> @here")
        role = await standin.slash("search", query=f"<@&{DEFAULT_IDS.role_moderator}> nccl")
        await role.answer()
        standin.assert_no_pings()
        return embed_of(everyone.original), standin.mentions

    echoed, mentions = discord_standin.run(bot_factory(), scenario)
    assert "@everyone" in echoed["title"], "the user's text is echoed back"
    assert len(mentions) >= 3, "every reply was recorded"
    for sent in mentions:
        assert sent.allowed_mentions is not None, f"{sent.path} relied on Discord's default"
        assert sent.allowed_mentions.get("parse") == [], sent
        assert not sent.allowed_mentions.get("users") and not sent.allowed_mentions.get("roles")
