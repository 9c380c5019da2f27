"""/wiki status for anyone; /wiki reindex only for admins, checked in code."""

from __future__ import annotations

import errno
import os
import shutil
import time
from unittest import mock

from knowledge.service import KnowledgeBase, demo_wiki_dir
from tests.bot.helpers import EPHEMERAL, LINK_BASE, bot_factory, embed_of
from tests.discord_standin import DEFAULT_IDS


def fresh_kb(tmp_path) -> KnowledgeBase:
    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    return KnowledgeBase.open(wiki, tmp_path / "data", link_base=LINK_BASE)


def test_wiki_status_shows_revision_and_counts_privately(discord_standin, tmp_path):
    kb = fresh_kb(tmp_path)
    meta = kb.status().meta

    async def scenario(standin):
        return (await standin.slash("wiki status", user_id=DEFAULT_IDS.newbie)).response

    response = discord_standin.run(bot_factory(kb=kb), scenario)
    assert response.callback_type == 4 and response.message["flags"] & EPHEMERAL
    fields = {f["name"]: f["value"] for f in embed_of(response.message)["fields"]}
    assert meta["revision"] in fields["Revision"]
    assert fields["Pages"] == str(meta["pages"]) and fields["Sections"] == str(meta["sections"])
    assert fields["Glossary terms"] == str(meta["terms"])
    kb.close()


def test_wiki_reindex_is_refused_for_a_member_without_admin_rights(discord_standin, tmp_path):
    kb = fresh_kb(tmp_path)
    loaded_at = kb.state.loaded_at

    async def scenario(standin):
        # alice has the Member role only: not configured as admin, no Manage Server.
        return (await standin.slash("wiki reindex", user_id=DEFAULT_IDS.alice)).response

    response = discord_standin.run(bot_factory(kb=kb), scenario)
    assert response.callback_type == 4 and response.message["flags"] & EPHEMERAL
    assert "Only server admins" in embed_of(response.message)["description"]
    assert kb.state.loaded_at == loaded_at, "nothing was reindexed"
    kb.close()


def test_wiki_reindex_works_for_admins_and_reports_counts(discord_standin, tmp_path):
    kb = fresh_kb(tmp_path)
    (kb.wiki_dir / "notes" / "added.md").write_text(
        "# Added page\n\n## Fresh section\n\nWritten after start-up.\n", encoding="utf-8"
    )
    pages_before = kb.status().meta["pages"]

    async def scenario(standin):
        # mod: the Moderator role is configured as an admin role (no Manage Server).
        by_role = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.mod)
        await by_role.followup()
        # owner: no admin role, but owning the guild gives Manage Server.
        by_permission = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.owner)
        await by_permission.followup()
        return by_role, by_permission

    by_role, by_permission = discord_standin.run(bot_factory(kb=kb), scenario)
    for record in (by_role, by_permission):
        assert record.response.callback_type == 5, "deferred: a reindex takes seconds"
        assert record.response.json["data"]["flags"] & EPHEMERAL
        embed = embed_of(record.original)
        assert embed["title"] == "Wiki reindexed"
        assert f"{pages_before + 1} pages" in embed["description"]
    assert kb.status().meta["pages"] == pages_before + 1
    assert kb.status().meta["index_mode"] == "full"
    kb.close()


def test_reindex_progress_is_shown_then_replaced_by_the_result(
    discord_standin, tmp_path, monkeypatch
):
    from bot.exts.admin import _cog

    kb = fresh_kb(tmp_path)
    real_reload = kb.reload

    def slow_reload(*, force=False, progress=None):
        progress(1, 2)
        time.sleep(0.3)  # in the worker thread: the event loop keeps running
        progress(2, 2)
        return real_reload(force=force)

    monkeypatch.setattr(kb, "reload", slow_reload)
    monkeypatch.setattr(_cog, "PROGRESS_EVERY", 0.05)

    async def scenario(standin):
        record = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.owner)
        await record.wait_for(
            lambda r: r.method == "PATCH" and (r.json or {}).get("embeds"), what="the result"
        )
        return record

    record = discord_standin.run(bot_factory(kb=kb), scenario)
    edits = [r.json for r in record.requests if r.method == "PATCH"]
    assert edits[0]["content"] == "Reindexing the wiki: 1/2 pages…"
    assert not record.original["content"], "the progress line is gone"
    assert embed_of(record.original)["title"] == "Wiki reindexed"
    kb.close()


def test_global_sync_is_refused_to_a_server_admin_who_is_not_the_owner(discord_standin):
    async def scenario(standin):
        refused = await standin.slash("wiki sync", scope="global", user_id=DEFAULT_IDS.mod)
        here = await standin.slash("wiki sync", user_id=DEFAULT_IDS.mod)
        await here.answer()
        return refused, here, standin.requests_to("global_commands", "PUT")

    refused, here, global_puts = discord_standin.run(bot_factory(), scenario)
    assert refused.response.message["flags"] & EPHEMERAL
    assert "Only the owner" in embed_of(refused.response.message)["description"]
    assert global_puts == []
    assert "commands synced to this server" in embed_of(here.original)["description"]


def test_reindex_on_a_full_disk_says_so_and_keeps_serving(discord_standin, tmp_path):
    kb = fresh_kb(tmp_path)
    (kb.wiki_dir / "notes" / "added.md").write_text("# Added page\n\nNew text.\n", "utf-8")
    real_reload = kb.reload

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def reload_on_a_full_disk(*, force=False, progress=None):
        with mock.patch.object(os, "fsync", no_space):  # every durable write finds no room
            return real_reload(force=force, progress=progress)

    kb.reload = reload_on_a_full_disk

    async def scenario(standin):
        record = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.owner)
        await record.followup()
        searched = await standin.slash("acronym", term="DCP")
        return record, searched

    record, searched = discord_standin.run(bot_factory(kb=kb), scenario)
    embed = embed_of(record.original)
    assert embed["title"] == "Reindex failed"
    assert "No space left on device" in embed["description"]
    assert embed_of(searched.response.message)["title"].startswith("DCP")
    kb.close()


def test_wiki_lint_is_for_admins_and_attaches_every_finding(discord_standin, tmp_path):
    kb = fresh_kb(tmp_path)
    hub = kb.wiki_dir / "models" / "glm.md"
    text = hub.read_text(encoding="utf-8")
    hub.write_text(text.replace("(glm5_v3.md) | Historical", "(glm5_v9.md) | Historical"), "utf-8")
    kb.reload()

    async def scenario(standin):
        refused = await standin.slash("wiki lint", user_id=DEFAULT_IDS.alice)
        everything = await standin.slash("wiki lint", user_id=DEFAULT_IDS.mod)
        hubs = await standin.slash("wiki lint", check="hubs", user_id=DEFAULT_IDS.owner)
        return (
            refused.response,
            await everything.answer(),
            await hubs.answer(),
            standin.synced_command("wiki"),
        )

    refused, everything, hubs, synced = discord_standin.run(bot_factory(kb=kb), scenario)
    assert refused.message["flags"] & EPHEMERAL
    assert "Only server admins" in embed_of(refused.message)["description"]
    for answer in (everything, hubs):
        assert answer.shown["flags"] & EPHEMERAL
        embed = embed_of(answer.shown)
        assert embed["title"] == "What the wiki gets wrong"
        fields = {f["name"]: f["value"] for f in embed["fields"]}
        assert "`models/glm.md:" in fields["hubs (1)"] and "glm5_v9.md" in fields["hubs (1)"]
        (sent,) = answer.files
        listed = sent.data.decode()
        assert sent.filename == "wiki-lint.txt"
        assert " hub-missing-page [error] " in listed and "Fix: " in listed
    assert set(fields) == {"hubs (1)"}, "check: hubs runs that check alone"
    assert any(f["name"].startswith("orphans") for f in embed_of(everything.shown)["fields"])
    lint = next(o for o in synced["options"] if o["name"] == "lint")
    assert {c["value"] for c in lint["options"][0]["choices"]} >= {"hubs", "links", "orphans"}
    kb.close()


def test_wiki_gaps_lists_what_members_asked_that_the_wiki_did_not_answer(discord_standin, tmp_path):
    from knowledge.gaps import GapSettings

    kb = fresh_kb(tmp_path)
    kb.record_gaps(GapSettings())

    async def scenario(standin):
        await (
            await standin.slash("search", query="Zorblax-9 frobnicator", user_id=DEFAULT_IDS.alice)
        ).answer()
        await (await standin.slash("runbook", model="zorblax", user_id=DEFAULT_IDS.alice)).answer()
        await (await standin.slash("acronym", term="DCP", user_id=DEFAULT_IDS.alice)).answer()
        refused = await standin.slash("wiki gaps", user_id=DEFAULT_IDS.alice)
        shown = await standin.slash("wiki gaps", days=7, user_id=DEFAULT_IDS.mod)
        return refused.response, await shown.answer()

    refused, shown = discord_standin.run(bot_factory(kb=kb), scenario)
    assert "Only server admins" in embed_of(refused.message)["description"]
    assert shown.shown["flags"] & EPHEMERAL
    embed = embed_of(shown.shown)
    assert embed["title"] == "What people asked that the wiki did not answer"
    assert embed["description"].startswith("2 request(s) in the last 7 days")
    (group,) = embed["fields"]
    assert group["name"].startswith("zorblax") and "(2)" in group["name"]
    assert "Zorblax" in group["value"] and "DCP" not in group["value"]  # DCP was answered
    kb.close()
    stored = (tmp_path / "data" / "gaps.sqlite3").read_bytes()
    assert str(DEFAULT_IDS.alice).encode() not in stored


def test_wiki_gaps_lists_the_solved_tickets_whose_answer_no_page_holds(discord_standin, tmp_path):
    """As `wikibot gaps` does: a solved ticket whose marked answer no wiki section is near
    is listed (title linked to its thread, the nearest section), one that the wiki holds
    is not; with no unanswered request recorded, the list still shows. Many such tickets
    stay within one embed field, the rest counted."""
    from knowledge.gaps.answer import gaps_reply
    from knowledge.gaps.report import GapsReport
    from knowledge.intake.similar import SolvedAnswer
    from knowledge.templates import load_templates
    from tests.support import file_solved_tickets

    file_solved_tickets(tmp_path / "data", ("the card whines at <@1> load", "Undervolt it."))
    kb = fresh_kb(tmp_path)

    async def scenario(standin):
        return (await (await standin.slash("wiki gaps", user_id=DEFAULT_IDS.mod)).answer()).shown

    shown = discord_standin.run(bot_factory(kb=kb), scenario)
    kb.close()
    embed = embed_of(shown)
    assert embed["description"].startswith("No unanswered request")
    assert "Recording is off here" in embed["description"], "this kb records no gaps"
    (listed,) = embed["fields"]
    assert listed["name"] == "Solved tickets whose answer no page holds (1)"
    assert listed["value"].startswith("#2 the card whines at \\<@1\\> load · nearest section `")
    assert "GLM-5 hangs" not in listed["value"], "an answer the wiki holds is no gap"

    many = [
        (SolvedAnswer(i, "x" * 200, "q", "a", f"https://discord.com/channels/1/2/{i}"), "p#s", 0.1)
        for i in range(1, 60)
    ]
    empty = GapsReport(groups=(), requests=0, since_days=None)
    (field,) = gaps_reply(empty, load_templates("gaps.yaml"), solved=many).fields
    assert len(field.value) <= 1024 and field.value.endswith("`wikibot gaps` lists them all.")
