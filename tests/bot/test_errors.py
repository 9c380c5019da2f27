"""Failures are answered, huge wiki sections fit Discord's limits, cooldowns are friendly."""

from __future__ import annotations

import logging
import re
import shutil

from knowledge.service import KnowledgeBase, demo_wiki_dir
from tests.bot.helpers import (
    EPHEMERAL,
    IMPATIENT,
    LINK_BASE,
    PATIENT,
    Gate,
    bot_factory,
    buttons,
    demo_kb,
    embed_of,
    make_config,
)
from tests.discord_standin import DEFAULT_IDS
from tests.discord_standin.limits import EMBED_TOTAL_MAX, FormErrors, check_embeds


def boom(*args, **kwargs):
    raise RuntimeError("the knowledge base exploded")


def _logged_failures(standin, command):
    return [
        r
        for r in standin.log_records
        if r.name == "bot.errors" and r.levelno == logging.ERROR and command in r.getMessage()
    ]


def test_a_command_that_raises_is_still_answered_and_logged(discord_standin, monkeypatch):
    kb = demo_kb()
    monkeypatch.setattr(kb, "runbook", boom)

    async def scenario(standin):
        standin.expect_error_log(r"/runbook by user \d+ in guild \d+")
        record = await standin.slash("runbook", model="qwen", user_id=DEFAULT_IDS.newbie)
        return record.response, _logged_failures(standin, "/runbook")

    response, logged = discord_standin.run(bot_factory(), scenario)
    assert response.callback_type == 4 and response.message["flags"] & EPHEMERAL
    assert embed_of(response.message)["title"] == "Something went wrong"
    (record,) = logged
    assert f"user {DEFAULT_IDS.newbie}" in record.getMessage()
    assert f"guild {DEFAULT_IDS.guild}" in record.getMessage()
    assert isinstance(record.exc_info[1], RuntimeError), "the traceback is logged"


def test_a_failure_after_a_public_defer_is_answered_privately(discord_standin, monkeypatch):
    kb = demo_kb()
    gate = Gate()
    monkeypatch.setattr(kb, "search", gate.hold(boom))  # slow enough to defer, then fails

    async def scenario(standin):
        standin.expect_error_log(r"/search by user")
        try:
            record = await standin.slash("search", query="nccl")
        finally:
            gate.open()
        await record.wait_for(lambda r: r.route == "followup", what="the error message")
        return record

    record = discord_standin.run(bot_factory(make_config(discord=IMPATIENT)), scenario)
    assert record.response.callback_type == 5
    methods = [(r.route, r.method) for r in record.requests]
    assert ("webhook_message", "DELETE") in methods, "the public 'thinking…' is removed"
    (answer,) = record.followup_messages
    assert answer["flags"] & EPHEMERAL
    assert embed_of(answer)["title"] == "Something went wrong"


def test_a_quick_failure_is_answered_privately_in_the_first_response(discord_standin, monkeypatch):
    kb = demo_kb()
    monkeypatch.setattr(kb, "search", boom)

    async def scenario(standin):
        standin.expect_error_log(r"/search by user")
        return await standin.slash("search", query="nccl")

    record = discord_standin.run(bot_factory(make_config(discord=PATIENT)), scenario)
    assert [r.route for r in record.requests] == ["interaction_callback"]
    assert record.response.callback_type == 4 and record.response.message["flags"] & EPHEMERAL
    assert embed_of(record.response.message)["title"] == "Something went wrong"


def test_a_button_that_raises_is_still_answered(discord_standin, monkeypatch):
    kb = demo_kb()
    family = kb.runbook("qwen").meta["family"]

    async def scenario(standin):
        record = await standin.slash("runbook", model="qwen")
        monkeypatch.setattr(kb, "launch", boom)
        standin.expect_error_log(r"component 'wikibot:rb:launch:")
        press = await standin.press(record.original, f"wikibot:rb:launch:{family}")
        return press.response

    response = discord_standin.run(bot_factory(), scenario)
    assert response.message["flags"] & EPHEMERAL
    assert embed_of(response.message)["title"] == "Something went wrong"


def test_an_autocomplete_that_raises_offers_no_choices_and_is_logged(discord_standin, monkeypatch):
    monkeypatch.setattr(demo_kb(), "term_choices", boom)

    async def scenario(standin):
        standin.expect_error_log(r"autocomplete failed: /acronym")
        record = await standin.autocomplete("acronym", "term", "dc")
        return record

    record = discord_standin.run(bot_factory(), scenario)
    assert record.response.callback_type == 8
    assert record.choices == []


def huge_wiki(tmp_path):
    """The demo wiki plus a 50 kB section under a 300-character heading, and a 50 kB
    launch command on the current Qwen page."""
    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    heading = "Hugeheading " + "very long heading words " * 12
    heading = heading[:300]
    body = " ".join(f"hugeword line {i} with [link](x) and *stars* `code` |" for i in range(1000))
    assert len(body) > 50_000
    (wiki / "troubleshooting" / "huge.md").write_text(
        f"# {heading}\n\n## {heading}\n\n{body}\n\n## {heading} again\n\n{body}\n",
        encoding="utf-8",
    )
    page = wiki / "models" / "qwen3_v2.md"
    text = page.read_text(encoding="utf-8")
    flags = "\n".join(f"  --flag-{i} value-{i} \\" for i in range(2500))
    text = text.replace("docker run -d", "docker run -d \\\n" + flags + "\n ", 1)
    page.write_text(text, encoding="utf-8")
    return wiki


def test_huge_sections_and_headings_stay_within_every_embed_limit(discord_standin, tmp_path):
    wiki = huge_wiki(tmp_path)
    kb = KnowledgeBase.open(wiki, tmp_path / "data", link_base=LINK_BASE)
    family = kb.runbook("qwen").meta["family"]
    assert len(kb.launch(family).meta["command"]) > 50_000, "the launch command is huge"

    async def scenario(standin):
        search = await standin.slash("search", query="hugeword")
        await search.answer()
        runbook = await standin.slash("runbook", model="qwen")
        launch = await standin.press(runbook.original, f"wikibot:rb:launch:{family}")
        older = await standin.press(runbook.original, f"wikibot:rb:older:{family}")
        explain = await standin.message_command(
            "Explain acronyms", standin.make_message(" ".join(["TP8 DCP4 MTP"] * 600))
        )
        await explain.answer()
        return [
            search.original,
            runbook.original,
            launch.response.message,
            older.response.message,
            explain.original,
        ], launch.response.files

    messages, launch_files = discord_standin.run(bot_factory(make_config(wiki), kb=kb), scenario)
    for message in messages:
        embeds = message["embeds"]
        errors = FormErrors()
        check_embeds(errors, embeds, ("embeds",))
        assert not errors, errors.flat()
        total = sum(
            len(e.get("title", ""))
            + len(e.get("description", ""))
            + len((e.get("footer") or {}).get("text", ""))
            + sum(len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
            for e in embeds
        )
        assert total <= EMBED_TOTAL_MAX
    search_embed = embed_of(messages[0])
    assert search_embed["fields"][0]["name"].endswith("…"), "the 300-char heading was cut"
    assert "hugeword" in search_embed["fields"][0]["value"]
    launch_text = embed_of(messages[2])["description"]
    assert "```" not in launch_text, "no cut copy of the command is shown"
    assert len(launch_files) == 1, "the command is attached whole instead"
    assert launch_files[0].data.decode() == kb.launch(family).meta["command"].rstrip("\n") + "\n"
    assert any(b.get("label") == "Open page" for b in buttons(messages[1]))
    kb.close()


def test_cooldown_answers_with_a_friendly_private_message(discord_standin):
    config = make_config(cooldown={"rate": 1, "per": 60})

    async def scenario(standin):
        first = await standin.slash("help")
        second = await standin.slash("help")
        other_user = await standin.slash("help", user_id=DEFAULT_IDS.mod)
        other_command = await standin.slash("wiki status")
        return first, second, other_user, other_command

    first, second, other_user, other_command = discord_standin.run(bot_factory(config), scenario)
    assert embed_of(first.response.message)["title"] == demo_kb().help().title
    refusal = second.response.message
    assert refusal["flags"] & EPHEMERAL
    embed = embed_of(refusal)
    assert embed["title"] == "Slow down a little"
    seconds = int(re.search(r"again in (\d+) s", embed["description"]).group(1))
    assert 55 <= seconds <= 60
    assert "/help" in embed["description"]
    assert embed_of(other_user.response.message)["title"] == demo_kb().help().title
    assert embed_of(other_command.response.message)["title"] == "Wiki status"
