"""/support against Discord's forum rules: "Require tags" (40067), edits of archived
posts (50083), and what the asker, the staff and ``/wiki status`` are told.

Each test drives the real bot through the loopback stand-in, which refuses what
Discord refuses (see ``tests/discord_standin/server.py``: ``REQUIRE_TAG``,
``_thread_edit_refused``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from knowledge.intake.sqlite import SqliteTicketStore
from tests.bot import test_support
from tests.bot.helpers import EPHEMERAL, LINK_BASE, buttons, embed_of
from tests.bot.test_support import (
    STEP1,
    _guild_with_forum,
    button_id,
    factory,
    through_step_1,
    through_step_2,
)
from tests.discord_standin import DEFAULT_IDS
from tests.discord_standin.payloads import ForumTagSpec, forum_post_json

# The data folders of test_support: the demo wiki's index built once, copied per test.
base_data = test_support.base_data
data = test_support.data

REQUIRE_TAG = 1 << 4
NEEDS_HELP = ForumTagSpec(DEFAULT_IDS.tag_open + 50, "needs help")
HARDWARE = ForumTagSpec(DEFAULT_IDS.tag_open + 51, "hardware")


def _support_field(message: dict[str, Any]) -> str:
    return {f["name"]: f["value"] for f in embed_of(message)["fields"]}["Support tickets"]


async def _file(ds) -> dict[str, Any]:
    _, _, saved = await through_step_1(ds)
    _, check = await through_step_2(ds, saved)
    filed = await ds.press(check, button_id(check, "File the ticket"))
    return (await filed.answer()).shown


def _due_now(folder) -> None:
    store = SqliteTicketStore.in_folder(folder)
    try:
        store._db.execute("UPDATE tickets SET next_attempt_at = 0 WHERE post_state = 'pending'")
    finally:
        store.close()


async def _until_ticket(folder, check, patience: float = 30.0) -> None:
    """Wait until ticket 1 in the store satisfies ``check`` (what the bot records)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + patience
    while loop.time() < give_up:
        store = SqliteTicketStore.in_folder(folder)
        try:
            if check(store.get_ticket(1)):
                return
        finally:
            store.close()
        await asyncio.sleep(0.025)
    raise AssertionError("ticket 1 never reached the state waited for")


def test_a_forum_requiring_tags_gets_the_configured_default_tag(discord_standin, data):
    """Tags named otherwise than the bot's statuses: only the configured default tag
    makes the post acceptable to a forum with "Require tags" on."""
    discord_standin.config.guild = _guild_with_forum(
        flags=REQUIRE_TAG, available_tags=(NEEDS_HELP, HARDWARE)
    )

    async def scenario(ds):
        told = await _file(ds)
        status = (await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)).response.message
        return told, status

    told, status = discord_standin.run(factory(data, default_tag="Needs Help"), scenario)
    (request,) = discord_standin.last.requests_to("create_thread")
    assert request.status == 200
    assert request.json["applied_tags"] == [str(NEEDS_HELP.id)]
    assert "Your post is up" in told["content"]
    assert "Problem" not in _support_field(status)


def test_a_refused_post_is_retried_a_few_times_then_given_up_where_staff_see_it(
    discord_standin, data
):
    """No tag fits a forum that requires one: Discord answers 40067 to every attempt.
    The asker is told the forum refused the post (not "the bot retries on its own"),
    the bot stops after a few attempts, and /wiki status and /ticket list show it."""
    discord_standin.config.guild = _guild_with_forum(
        flags=REQUIRE_TAG, available_tags=(NEEDS_HELP, HARDWARE)
    )

    async def scenario(ds):
        ds.expect_error_log("refused its post 3 times")
        told = await _file(ds)
        for attempt in (2, 3):
            await _until_ticket(data, lambda t, n=attempt: t.post_attempts >= n - 1)
            _due_now(data)  # the failure is recorded: its retry is made due now
            await ds.wait_until(
                lambda n=attempt: len(ds.requests_to("create_thread")) >= n or None,
                timeout=20,
                poll=0.05,
            )
        await _until_ticket(data, lambda t: t.post_state == "failed")
        _due_now(data)
        await asyncio.sleep(0.3)  # several rounds of the retry loop
        status = (await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)).response.message
        listed = (await ds.slash("ticket list", user_id=DEFAULT_IDS.mod)).response.message
        return told, status, listed

    told, status, listed = discord_standin.run(factory(data), scenario)
    attempts = discord_standin.last.requests_to("create_thread")
    assert [r.error_code for r in attempts] == [40067, 40067, 40067], "three, then no more"
    said = told["content"]
    assert told["flags"] & EPHEMERAL
    assert "refused its post" in said and "requires a tag" in said
    assert "retries on its own" not in said
    field = _support_field(status)
    assert "1 not posted after the forum refused them" in field
    assert "support.default_tag" in field and "Require tags" in field
    assert "#1 ·" in embed_of(listed)["description"]
    assert "not posted (the forum refused it)" in embed_of(listed)["description"]
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.post_state == "failed" and ticket.post_attempts == 3
        assert "40067" in ticket.post_error
        assert [e.kind for e in ticket.events][-1] == "post_given_up"
    finally:
        store.close()


def test_closing_a_post_discord_archived_unarchives_it_first(discord_standin, data):
    """Discord archives a quiet post on its own; Close then edits an archived thread,
    which Discord refuses (50083) unless the edit unarchives it first."""

    async def scenario(ds):
        await _file(ds)
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(request.response["id"])
        thread = ds.threads[thread_id]
        thread["thread_metadata"]["archived"] = True  # a week without a message
        await ds.dispatch("THREAD_UPDATE", thread)
        await ds.wait_until(  # discord.py drops an archived thread from its cache
            lambda: ds.client.get_channel(thread_id) is None or None, timeout=5, poll=0.02
        )
        closed = await ds.press(ds.messages[thread_id], "wikibot:tk:close:1")
        await closed.followup()
        await ds.wait_until(
            lambda: thread["thread_metadata"].get("locked") or None, timeout=5, poll=0.02
        )
        return closed.response, thread

    closed, thread = discord_standin.run(factory(data), scenario)
    edits = [r for r in discord_standin.last.requests_to("channel") if r.method == "PATCH"]
    assert [r.status for r in edits] == [200, 200], [r.error_code for r in edits]
    assert edits[0].json == {"archived": False}
    assert thread["thread_metadata"]["archived"] and thread["thread_metadata"]["locked"]
    assert [b["label"] for b in buttons(closed.message)] == ["Reopen"]


# --- links ------------------------------------------------------------------------------


def test_pages_are_links_in_the_check_and_the_post_and_the_model_links_its_runbook(
    discord_standin, data
):
    async def scenario(ds):
        opened = await ds.slash("support")
        step1 = await ds.submit_modal(opened, {**STEP1, "model_page": ["glm-5"]})
        _, check = await through_step_2(ds, (await step1.answer()).shown)
        await ds.press(check, button_id(check, "File the ticket"))
        return check, await ds.wait_for_request(lambda r: r.route == "create_thread")

    check, request = discord_standin.run(factory(data), scenario)
    answer = {f["name"]: f["value"] for f in embed_of(check)["fields"]}
    assert f"]({LINK_BASE}" in answer["Suggested pages"], answer["Suggested pages"]
    assert f"]({LINK_BASE}" in answer["Model family"]
    checklist = answer["Checklist"]
    assert "[ok] Link to the runbook" in checklist, "the family picked names its runbook"
    (embed,) = request.json["message"]["embeds"]
    assert embed["url"].startswith(LINK_BASE), "the staff post's embed links a wiki page"
    posted = {f["name"]: f["value"] for f in embed["fields"]}
    assert f"]({LINK_BASE}" in posted["Pages that may answer it"]
    model = posted["Model page or runbook"]
    assert model.startswith("[GLM\\-5](" + LINK_BASE) and model.endswith(".md)"), model


def test_ticket_is_offered_only_to_members_who_manage_threads(discord_standin, data):
    async def scenario(ds):
        await ds.wait_connected()
        return ds.synced_command("ticket"), ds.synced_command("support")

    ticket, support = discord_standin.run(factory(data), scenario)
    assert ticket["default_member_permissions"] == str(1 << 34)  # Manage Threads
    assert support.get("default_member_permissions") is None, "/support is for everyone"


# --- with Discord's network delay ---------------------------------------------------------


def test_the_whole_flow_with_80_ms_of_network_delay_each_way(discord_standin, data):
    """Form, wiki's answer, filing, post and Solved, with every request and gateway
    message 80 ms late each way (``make test-delay`` runs every /support test so)."""
    discord_standin.config.round_trip_delay = 0.08

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File the ticket"))
        told = (await filed.answer()).shown
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(request.response["id"])
        solved = await ds.press(ds.messages[thread_id], "wikibot:tk:solved:1")
        await ds.wait_for_request(lambda r: r.route == "channel" and r.method == "PATCH")
        return told, solved, ds

    told, solved, ds = discord_standin.run(factory(data), scenario)
    assert "Your post is up" in told["content"]
    assert solved.response.callback_type == 7
    late = [r for r in ds.requests if r.error_code == 10062]
    assert late == [], "an interaction expired under the delay"


# --- Discord's hiccups, met by the bot itself ---------------------------------------------


def test_a_post_answered_429_is_made_once_after_the_wait(discord_standin, data):
    async def scenario(ds):
        ds.rate_limit_next("create_thread", retry_after=0.2)
        told = await _file(ds)
        await ds.wait_for_request(lambda r: r.route == "create_thread" and r.status == 200)
        return told

    told = discord_standin.run(factory(data), scenario)
    attempts = discord_standin.last.requests_to("create_thread")
    assert [r.status for r in attempts] == [429, 200], "discord.py waited retry_after once"
    assert attempts[1].at - attempts[0].at >= 0.2
    assert "Your post is up" in told["content"]


def test_a_gateway_hiccup_mid_form_resumes_and_replays_what_was_missed(discord_standin, data):
    """The connection drops between the form's steps; a post made in the forum meanwhile
    reaches the bot through its RESUME, and the form goes on where it was."""

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        thread_id = ds.ids.next()
        thread = _hand_made_post(thread_id, "made while the bot was away")
        ds.threads[thread_id] = thread
        starter = ds.make_message("my server hangs", channel_id=thread_id)
        del ds.messages[int(starter["id"])]
        ds.messages[thread_id] = {**starter, "id": str(thread_id)}
        await ds.drop_connection(missed=[("THREAD_CREATE", {**thread, "newly_created": True})])
        await ds.wait_resumed()
        pointer = await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File the ticket"))
        return pointer, (await filed.answer()).shown

    pointer, told = discord_standin.run(factory(data), scenario)
    assert discord_standin.last.resumes == 1
    assert "/support" in pointer.json["content"]
    assert "Your post is up" in told["content"]


def test_a_filing_answered_after_the_token_expired_is_dropped_quietly(
    discord_standin, data, monkeypatch
):
    """A filing that outlives the interaction's token (15 minutes on Discord; 0.5 s
    here): the edit of "thinking…" is refused (401, 50027); the ticket is still filed and
    posted, and the bot logs it without an error (nothing can be shown any more)."""
    from knowledge.intake.desk import SupportDesk
    from tests.bot.helpers import IMPATIENT, Gate

    gate = Gate()
    monkeypatch.setattr(SupportDesk, "file", gate.hold(SupportDesk.file))
    discord_standin.config.token_lifetime = 0.5

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        try:
            filed = await ds.press(check, button_id(check, "File the ticket"))
            await asyncio.sleep(0.6)  # the token's lifetime passes while the filing waits
        finally:
            gate.open()
        refused = await filed.wait_for(lambda r: r.status == 401)
        await ds.wait_for_request(lambda r: r.route == "create_thread" and r.status == 200)
        await _until_ticket(data, lambda t: t.post_state == "posted")
        return filed, refused

    filed, refused = discord_standin.run(factory(data, discord=IMPATIENT), scenario)
    assert filed.response.callback_type == 6
    assert refused.response["code"] == 50027
    assert [r.route for r in filed.requests].count("webhook_message") == 1, "no retry"


def _hand_made_post(thread_id: int, name: str) -> dict[str, Any]:
    """A forum post alice made by hand, as Discord describes it."""
    return forum_post_json(
        thread_id, DEFAULT_IDS.alice, name, guild_id=DEFAULT_IDS.guild, forum_id=DEFAULT_IDS.forum
    )
