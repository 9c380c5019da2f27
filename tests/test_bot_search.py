"""/search: deferred, answered in a thread, paged by its invoker only, disabled on timeout."""

from __future__ import annotations

import copy

from tests.discord_standin import DEFAULT_IDS
from tests.test_bot_fixtures import EPHEMERAL, bot_factory, buttons, demo_kb, embed_of, make_config


def by_label(message):
    return {b["label"]: b for b in buttons(message)}


def test_search_is_deferred_then_pages_for_its_invoker_only(discord_standin):
    kb = demo_kb()
    first, second = kb.search("nccl"), kb.search("nccl", page=2)
    assert first.meta["pages"] >= 2, "the demo wiki has several pages of nccl hits"

    async def scenario(standin):
        record = await standin.slash("search", query="nccl")
        await record.followup()
        page_one = copy.deepcopy(record.original)  # the stand-in edits its dict in place
        ids = {label: b["custom_id"] for label, b in by_label(page_one).items()}
        turn = await standin.press(page_one, ids["Next"])
        await turn.followup()
        page_two = copy.deepcopy(standin.messages[int(page_one["id"])])
        other = await standin.press(page_two, ids["Previous"], user_id=DEFAULT_IDS.newbie)
        after_refusal = copy.deepcopy(standin.messages[int(page_one["id"])])
        return record, page_one, turn, page_two, other, after_refusal

    record, page_one, turn, page_two, other, after_refusal = discord_standin.run(
        bot_factory(), scenario
    )
    assert record.response.callback_type == 5, "deferred before searching"
    assert not (record.response.json.get("data") or {}).get("flags", 0) & EPHEMERAL, "public"
    assert embed_of(page_one)["title"] == first.title
    assert [f["name"] for f in embed_of(page_one)["fields"]] == [f.name for f in first.fields]
    labels = by_label(page_one)
    assert labels["Previous"]["disabled"] and not labels["Next"].get("disabled")
    assert f"Page 1/{first.meta['pages']}" in labels

    assert turn.response.callback_type == 6, "the page turn acknowledges, then edits"
    assert [f["name"] for f in embed_of(page_two)["fields"]] == [f.name for f in second.fields]
    assert not by_label(page_two)["Previous"].get("disabled")

    refusal = other.response.message
    assert other.response.callback_type == 4 and refusal["flags"] & EPHEMERAL
    assert "Only the person who searched" in embed_of(refusal)["description"]
    assert embed_of(after_refusal) == embed_of(page_two), "the refused press changed nothing"


def test_pager_buttons_are_disabled_when_it_times_out(discord_standin):
    config = make_config(search={"pager_timeout": 0.2})

    async def scenario(standin):
        record = await standin.slash("search", query="nccl", private=True)
        await record.followup()
        edit = await record.followup(timeout=3)
        return record, edit

    record, edit = discord_standin.run(bot_factory(config), scenario)
    assert record.response.json["data"]["flags"] & EPHEMERAL, "private: true"
    assert edit.method == "PATCH"
    assert all(b.get("disabled") for b in buttons(record.original))
    assert embed_of(record.original)["fields"], "the results stay readable"


def test_search_with_a_section_and_nothing_found(discord_standin):
    async def scenario(standin):
        sections = await standin.autocomplete("search", "section", "trou", query="x")
        scoped = await standin.slash("search", query="nccl", section="troubleshooting")
        await scoped.followup()
        nothing = await standin.slash("search", query="zzqxv wvvq")
        await nothing.wait_for(lambda r: r.route == "followup", what="the private answer")
        return sections.choices, scoped.original, nothing

    choices, scoped, nothing = discord_standin.run(bot_factory(), scenario)
    assert [c["value"] for c in choices] == ["troubleshooting"]
    assert "troubleshooting" in embed_of(scoped)["description"]
    # A public "thinking…" cannot become private: it is deleted, the answer sent ephemerally.
    methods = [(r.route, r.method) for r in nothing.requests]
    assert ("webhook_message", "DELETE") in methods
    answer = nothing.followup_messages[-1]
    assert answer["flags"] & EPHEMERAL
    assert "Nothing found" in embed_of(answer)["title"]
