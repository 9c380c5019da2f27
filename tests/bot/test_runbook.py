"""/runbook: the embed, its buttons (Launch command, Older versions, Open page), autocomplete."""

from __future__ import annotations

from tests.bot.helpers import (
    EPHEMERAL,
    LINK_BASE,
    bot_factory,
    buttons,
    demo_kb,
    embed_of,
)
from tests.discord_standin import DEFAULT_IDS


def test_runbook_qwen_answers_publicly_with_buttons_and_a_page_link(discord_standin):
    kb = demo_kb()
    expected = kb.runbook("qwen")  # what the console would answer, for comparison

    async def scenario(standin):
        record = await standin.slash("runbook", model="qwen")
        return record.response

    response = discord_standin.run(bot_factory(), scenario)
    assert response.callback_type == 4, "answered at once: the catalogue is in memory"
    message = response.message
    assert not (message.get("flags") or 0) & EPHEMERAL, "public by default"
    embed = embed_of(message)
    assert embed["title"] == expected.title
    assert embed["title"].startswith("Qwen3")
    page = expected.meta["page"]
    assert embed["url"] == LINK_BASE + page
    names = [f["name"] for f in embed["fields"]]
    assert "Docker image" in names and "Current page" in names
    assert "```bash" in embed["description"], "the launch command is shown"
    family = expected.meta["family"]
    by_label = {b["label"]: b for b in buttons(message)}
    assert by_label["Launch command"]["custom_id"] == f"wikibot:rb:launch:{family}"
    assert by_label["Older versions"]["custom_id"] == f"wikibot:rb:older:{family}"
    assert by_label["Open page"]["style"] == 5
    assert by_label["Open page"]["url"] == LINK_BASE + page


def test_runbook_private_option_and_unknown_family(discord_standin):
    async def scenario(standin):
        private = await standin.slash("runbook", model="glm", private=True)
        missing = await standin.slash("runbook", model="no such model xyz")
        return private.response.message, missing.response.message

    private, missing = discord_standin.run(bot_factory(), scenario)
    assert private["flags"] & EPHEMERAL
    assert embed_of(private)["title"].startswith("GLM")
    assert missing["flags"] & EPHEMERAL, "not found is only shown to the asker"
    assert "No runbook family" in embed_of(missing)["title"]
    assert not buttons(missing)


def test_launch_and_older_versions_buttons_answer_ephemerally(discord_standin):
    kb = demo_kb()
    family = kb.runbook("qwen").meta["family"]

    async def scenario(standin):
        record = await standin.slash("runbook", model="qwen")
        message = record.original
        launch = await standin.press(
            message, f"wikibot:rb:launch:{family}", user_id=DEFAULT_IDS.mod
        )
        older = await standin.press(message, f"wikibot:rb:older:{family}")
        return launch.response.message, older.response.message

    launch, older = discord_standin.run(bot_factory(), scenario)
    assert launch["flags"] & EPHEMERAL and older["flags"] & EPHEMERAL
    launch_embed = embed_of(launch)
    assert launch_embed["title"] == kb.launch(family).title
    assert "```bash" in launch_embed["description"] and "docker run" in launch_embed["description"]
    older_embed = embed_of(older)
    assert older_embed["title"] == kb.versions(family).title
    assert LINK_BASE in older_embed["description"], "each version links to its page"


def test_buttons_of_an_old_message_still_work_after_a_restart(discord_standin):
    """The message comes from an earlier run of the bot: nothing of it is in memory."""
    kb = demo_kb()
    family = kb.runbook("glm").meta["family"]

    async def first_run(standin):
        return (await standin.slash("runbook", model="glm")).original

    async def second_run(standin):
        record = await standin.press(old_message, f"wikibot:rb:launch:{family}")
        return record.response.message

    old_message = discord_standin.run(bot_factory(), first_run)
    answer = discord_standin.run(bot_factory(), second_run)
    assert answer["flags"] & EPHEMERAL
    assert embed_of(answer)["title"] == kb.launch(family).title


def test_runbook_autocomplete_answers_from_memory_within_limits(discord_standin):
    async def scenario(standin):
        empty = await standin.autocomplete("runbook", "model", "")
        typed = await standin.autocomplete("runbook", "model", "gl")
        long = await standin.autocomplete("runbook", "model", "x" * 100)
        return empty.choices, typed.choices, long.choices

    empty, typed, long = discord_standin.run(bot_factory(), scenario)
    for choices in (empty, typed, long):
        assert len(choices) <= 25
        assert all(1 <= len(c["name"]) <= 100 and len(c["value"]) <= 100 for c in choices)
    assert {c["value"] for c in empty} == {value for _, value in demo_kb().family_choices("")}
    assert typed and typed[0]["name"].startswith("GLM")
