"""/support for the people who answer: each staff feature, optional in the config,
driven end to end through the loopback stand-in.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Any

from knowledge.intake.sqlite import SqliteTicketStore
from tests.bot import test_support
from tests.bot.test_support import button_id, factory, through_step_1, through_step_2
from tests.discord_standin import DEFAULT_IDS

# The data folders of test_support: the demo wiki's index built once, copied per test.
base_data = test_support.base_data
data = test_support.data

HELPERS = DEFAULT_IDS.role_member


async def _file(ds) -> dict[str, Any]:
    """Alice files a ticket; the forum post's request."""
    since = len(ds.requests)
    _, _, saved = await through_step_1(ds)
    _, check = await through_step_2(ds, saved)
    filed = await ds.press(check, button_id(check, "File the ticket"))
    await filed.answer()
    return await ds.wait_for_request(lambda r: r.route == "create_thread", since=since)


async def _answered_post(ds, text: str) -> tuple[int, dict[str, Any]]:
    """Alice's ticket filed, and a helper's message saying ``text`` in its post: the
    post's thread id, and the message (for "Mark as answer")."""
    post = await _file(ds)
    thread_id = int(post.response["id"])
    return thread_id, ds.make_message(text, channel_id=thread_id, author_id=DEFAULT_IDS.mod)


# --- the helpers' ping ----------------------------------------------------------------------


def test_the_helpers_are_pinged_once_for_a_burst_of_tickets(discord_standin, data):
    async def scenario(ds):
        return [await _file(ds) for _ in range(3)]

    posts = discord_standin.run(factory(data, helper_role_id=HELPERS), scenario)
    first, *others = [p.json["message"] for p in posts]
    assert first["content"].splitlines()[1] == f"<@&{HELPERS}>: a new request."
    assert [str(r) for r in first["allowed_mentions"]["roles"]] == [str(HELPERS)]
    for message in others:  # within ping_quiet_minutes (10) of the first
        assert f"<@&{HELPERS}>" not in message["content"]
        assert not message["allowed_mentions"].get("roles")
    pings = [p for m in discord_standin.last.pings for p in m.pings]
    assert pings.count(f"<@&{HELPERS}>") == 1
    store = SqliteTicketStore.in_folder(data)
    try:
        kinds = [[e.kind for e in store.get_ticket(i).events] for i in (1, 2, 3)]
        assert ["helpers_pinged" in k for k in kinds] == [True, False, False]
    finally:
        store.close()


def test_without_a_quiet_window_each_ticket_pings_and_without_a_role_none(
    discord_standin, data, tmp_path
):
    async def scenario(ds):
        return [await _file(ds) for _ in range(2)]

    posts = discord_standin.run(
        factory(data, helper_role_id=HELPERS, ping_quiet_minutes=0), scenario
    )
    assert all(f"<@&{HELPERS}>" in p.json["message"]["content"] for p in posts)
    plain = tmp_path / "plain"
    test_support.shutil.copytree(data, plain, symlinks=True)
    posts = discord_standin.run(factory(plain), scenario)
    assert not any("<@&" in p.json["message"]["content"] for p in posts)


def test_a_post_refused_spends_no_ping_and_its_retry_carries_it(discord_standin, data):
    """The first attempt at the post is refused: the helpers heard nothing, so the ping
    is not spent; the retry that goes up carries it, once."""
    from tests.bot.test_support_forum import _due_now, _until_ticket
    from tests.discord_standin.faults import fail

    async def scenario(ds):
        fail(ds, "create_thread", status=400, code=40067, message="A tag is required")
        first = await _file(ds)
        await _until_ticket(data, lambda t: t.post_attempts >= 1)
        _due_now(data)
        second = await ds.wait_for_request(
            lambda r: r.route == "create_thread" and r.status == 200, timeout=20
        )
        return first, second

    first, second = discord_standin.run(factory(data, helper_role_id=HELPERS), scenario)
    assert first.error_code == 40067
    message = second.json["message"]
    assert f"<@&{HELPERS}>" in message["content"]
    assert [str(r) for r in message["allowed_mentions"]["roles"]] == [str(HELPERS)]
    pings = [p for m in discord_standin.last.pings for p in m.pings]
    assert pings.count(f"<@&{HELPERS}>") == 1
    store = SqliteTicketStore.in_folder(data)
    try:
        kinds = [e.kind for e in store.get_ticket(1).events]
        assert kinds.count("helpers_pinged") == 1 and kinds[-1] == "posted"
    finally:
        store.close()


def _ping_events(data) -> list[list[float]]:
    """When each ticket's helpers' ping was recorded, per ticket (1, 2, ...)."""
    store = SqliteTicketStore.in_folder(data)
    try:
        ids = sorted(t.id for t in store.list_tickets())
        return [
            [e.at for e in store.get_ticket(i).events if e.kind == "helpers_pinged"] for i in ids
        ]
    finally:
        store.close()


def test_a_post_discord_made_while_the_bot_saw_an_error_keeps_its_ping_counted(
    discord_standin, data
):
    """Discord made the post, helpers' ping and all, but answered 503: the retry finds
    the post instead of posting again, and records the ping it carried (at the post's
    time), so the next ticket inside the quiet window pings nobody."""
    from knowledge.intake.stale import snowflake_seconds
    from tests.bot.test_support import _until_posted
    from tests.bot.test_support_forum import _due_now, _until_ticket
    from tests.discord_standin.faults import lose_answer

    async def scenario(ds):
        lose_answer(ds, "create_thread")
        first = await _file(ds)
        await _until_ticket(data, lambda t: t.post_attempts >= 1)
        _due_now(data)
        await _until_posted(data)
        second = await _file(ds)
        return first, second, len(ds.requests_to("create_thread"))

    first, second, made = discord_standin.run(factory(data, helper_role_id=HELPERS), scenario)
    assert first.status == 503 and f"<@&{HELPERS}>" in first.json["message"]["content"]
    assert made == 2, "the first ticket's post was found, not made again"
    assert f"<@&{HELPERS}>" not in second.json["message"]["content"]
    assert not second.json["message"]["allowed_mentions"].get("roles")
    pings = _ping_events(data)
    store = SqliteTicketStore.in_folder(data)
    try:
        thread_id = store.get_ticket(1).thread_id
    finally:
        store.close()
    assert pings == [[snowflake_seconds(thread_id)], []], "pinged when the post was made"


# --- claim ------------------------------------------------------------------------------


def test_staff_claim_and_release_a_ticket_with_the_claimed_tag(discord_standin, data):
    from tests.bot.helpers import buttons, embed_of
    from tests.bot.test_support import _guild_with_forum
    from tests.discord_standin.payloads import ForumTagSpec

    claimed_tag = ForumTagSpec(DEFAULT_IDS.tag_open + 60, "claimed")
    discord_standin.config.guild = _guild_with_forum(
        available_tags=(
            ForumTagSpec(DEFAULT_IDS.tag_open, "open"),
            ForumTagSpec(DEFAULT_IDS.tag_solved, "solved"),
            claimed_tag,
        )
    )

    async def scenario(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        starter = ds.messages[thread_id]
        offered = [b["label"] for b in buttons(starter)]
        refused = await ds.press(starter, "wikibot:tk:claim:1")  # alice: not staff
        claim = await ds.press(starter, "wikibot:tk:claim:1", user_id=DEFAULT_IDS.mod)
        said = (await claim.followup()).response
        await ds.wait_until(
            lambda: str(claimed_tag.id) in ds.threads[thread_id]["applied_tags"] or None,
            timeout=5,
            poll=0.02,
        )
        after_claim = [b["label"] for b in buttons(ds.messages[thread_id])]
        tags_claimed = list(ds.threads[thread_id]["applied_tags"])
        release = await ds.press(
            ds.messages[thread_id], "wikibot:tk:release:1", user_id=DEFAULT_IDS.mod
        )
        await release.followup()
        await ds.wait_until(
            lambda: str(claimed_tag.id) not in ds.threads[thread_id]["applied_tags"] or None,
            timeout=5,
            poll=0.02,
        )
        after_release = [b["label"] for b in buttons(ds.messages[thread_id])]
        return offered, refused.response, said, after_claim, tags_claimed, after_release

    offered, refused, said, after_claim, tags, after_release = discord_standin.run(
        factory(data, claim=True), scenario
    )
    assert offered == ["Solved", "Close", "Claim"]
    # The asker may press Solved and Close, not Claim: told exactly that.
    told = embed_of(refused.message)["description"]
    assert told == "Only the support staff can claim or release a ticket."
    assert said["content"] == f"Claimed by <@{DEFAULT_IDS.mod}>: they are on it."
    pinged = [p for m in discord_standin.last.pings for p in m.pings]
    assert f"<@{DEFAULT_IDS.mod}>" not in pinged, "naming the helper pings nobody"
    assert after_claim == ["Solved", "Close", "Release"]
    assert str(DEFAULT_IDS.tag_open) in tags
    assert after_release == ["Solved", "Close", "Claim"]
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.helper is None
        kinds = [(e.kind, e.actor) for e in ticket.events if e.kind in ("claimed", "released")]
        mod = f"discord:{DEFAULT_IDS.mod}"
        assert kinds == [("claimed", mod), ("released", mod)]
    finally:
        store.close()


def test_without_claim_in_the_config_no_claim_button(discord_standin, data):
    from tests.bot.helpers import buttons

    async def scenario(ds):
        post = await _file(ds)
        return [b["label"] for b in buttons(ds.messages[int(post.response["id"])])]

    assert discord_standin.run(factory(data), scenario) == ["Solved", "Close"]


# --- status tags both ways ------------------------------------------------------------------


def test_a_status_tag_put_on_the_post_in_discord_moves_the_ticket(discord_standin, data):
    """Staff tag the post "solved" in the forum's UI (Discord sends THREAD_UPDATE): the
    ticket is solved, the post's buttons offer Reopen, the thread says so, and the post
    is archived as the Solved button would have it."""
    from tests.bot.helpers import buttons

    async def scenario(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        thread = ds.threads[thread_id]
        thread["applied_tags"] = [str(DEFAULT_IDS.tag_open), str(DEFAULT_IDS.tag_solved)]
        await ds.dispatch("THREAD_UPDATE", thread)
        await ds.wait_until(
            lambda: thread["thread_metadata"]["archived"] or None, timeout=10, poll=0.02
        )
        return thread, ds.channel_messages(thread_id)

    thread, messages = discord_standin.run(factory(data), scenario)
    assert thread["applied_tags"] == [str(DEFAULT_IDS.tag_solved)], "open went, solved stays"
    assert [b["label"] for b in buttons(messages[0])] == ["Reopen"]
    assert messages[-1]["content"] == "Marked solved with the forum's tags."
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.status == "solved"
        assert ticket.events[-1].kind == "solved" and ticket.events[-1].actor.endswith("tags")
    finally:
        store.close()


# --- feedback -------------------------------------------------------------------------------


def test_a_solved_ticket_asks_its_asker_once_whether_it_helped(discord_standin, data):
    from tests.bot.helpers import buttons, embed_of

    async def scenario(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        solved = await ds.press(ds.messages[thread_id], "wikibot:tk:solved:1")
        notice = (await solved.followup()).shown
        asked = [b["label"] for b in buttons(notice)]
        stranger = await ds.press(notice, "wikibot:fb:yes:1", user_id=DEFAULT_IDS.mod)
        answered = await ds.press(notice, "wikibot:fb:no:1")
        return asked, stranger.response, answered.response

    asked, stranger, answered = discord_standin.run(factory(data, feedback=True), scenario)
    assert asked == ["Yes, it helped", "Not really"]
    assert "Only the person who asked" in embed_of(stranger.message)["description"]
    assert answered.callback_type == 7 and buttons(answered.message) == []
    assert answered.message["content"].endswith(
        "recorded with the ticket. Reopen it if the problem comes back."
    )
    store = SqliteTicketStore.in_folder(data)
    try:
        assert store.get_ticket(1).feedback == "not_helpful"
    finally:
        store.close()


def test_without_feedback_in_the_config_a_solved_ticket_asks_nothing(discord_standin, data):
    from tests.bot.helpers import buttons

    async def scenario(ds):
        post = await _file(ds)
        solved = await ds.press(ds.messages[int(post.response["id"])], "wikibot:tk:solved:1")
        return (await solved.followup()).shown

    notice = discord_standin.run(factory(data), scenario)
    assert buttons(notice) == [] and "helpful" not in notice["content"]


# --- stale tickets --------------------------------------------------------------------------

SECOND = 1 / 86400  # a day's fraction: the config takes days


def test_an_asker_silent_after_a_helpers_answer_is_reminded_once(discord_standin, data):
    async def scenario(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        await ds.user_message(
            "try NCCL_P2P_LEVEL=SYS", channel_id=thread_id, author_id=DEFAULT_IDS.mod
        )
        reminder = await ds.wait_for_request(
            lambda r: (
                r.route == "channel_message"
                and r.path == f"/channels/{thread_id}/messages"
                and "Does it work now" in (r.json or {}).get("content", "")
            ),
            timeout=15,
        )
        await test_support.asyncio.sleep(1.5)  # another wait as long: no second reminder
        return reminder, ds.channel_messages(thread_id)

    reminder, messages = discord_standin.run(
        factory(data, remind_after_days=0.5 * SECOND), scenario
    )
    assert reminder.json["content"].startswith(f"<@{DEFAULT_IDS.alice}>")
    assert [str(u) for u in reminder.json["allowed_mentions"]["users"]] == [str(DEFAULT_IDS.alice)]
    assert sum("Does it work now" in m["content"] for m in messages) == 1
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.status == "open" and [e.kind for e in ticket.events].count("reminded") == 1
    finally:
        store.close()


def test_a_silent_ticket_is_closed_with_a_reason_and_reopens_when_the_asker_writes(
    discord_standin, data
):
    from tests.bot.helpers import buttons

    async def scenario(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        thread = ds.threads[thread_id]
        await ds.wait_until(
            lambda: thread["thread_metadata"]["archived"] or None, timeout=15, poll=0.05
        )
        closed = dict(thread["thread_metadata"])
        said = ds.channel_messages(thread_id)[-1]["content"]
        thread["thread_metadata"]["archived"] = False  # Discord unarchives for her message
        await ds.user_message("still broken after the update", channel_id=thread_id)
        await ds.wait_until(
            lambda: "Reopened" in ds.channel_messages(thread_id)[-1]["content"] or None,
            timeout=10,
            poll=0.05,
        )
        await ds.wait_until(  # the post follows: its buttons last (after tags and archive)
            lambda: len(buttons(ds.messages[thread_id])) == 2 or None, timeout=10, poll=0.05
        )
        return closed, said, ds.messages[thread_id]

    closed, said, starter = discord_standin.run(
        factory(data, close_after_days=1.0 * SECOND), scenario
    )

    assert closed["archived"] and not closed["locked"], "the asker can still write"
    assert said.startswith("Closed after 1 day of silence.")
    assert [b["label"] for b in buttons(starter)] == ["Solved", "Close"]
    store = SqliteTicketStore.in_folder(data)
    try:
        events = [(e.kind, e.actor) for e in store.get_ticket(1).events]
        assert ("closed", "bot:inactive") in events
        assert events[-1] == ("reopened", f"discord:{DEFAULT_IDS.alice}")
        assert store.get_ticket(1).status == "open"
    finally:
        store.close()


def test_after_a_restart_the_schedule_is_rebuilt_from_each_threads_last_message(
    discord_standin, data
):
    """The bot stopped after a helper answered: at start-up it reads each open ticket's
    last message from Discord, so the asker is still reminded (no message arrives)."""
    import copy

    saved: dict[str, Any] = {}

    async def first(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        saved["thread"] = copy.deepcopy(ds.threads[thread_id])
        saved["starter"] = copy.deepcopy(ds.messages[thread_id])

    async def second(ds):
        thread = saved["thread"]
        thread_id = int(thread["id"])
        ds.threads[thread_id] = thread
        ds.messages[thread_id] = saved["starter"]
        ds.make_message("try the v4 image", channel_id=thread_id, author_id=DEFAULT_IDS.mod)
        stale = ds.client.get_cog("StaleTickets")
        await stale._rebuild()  # as at start-up (this stand-in knew no thread then)
        return await ds.wait_for_request(
            lambda r: (
                r.route == "channel_message"
                and "Does it work now" in (r.json or {}).get("content", "")
            ),
            timeout=15,
        )

    discord_standin.run(factory(data), first)
    reminder = discord_standin.run(factory(data, remind_after_days=0.5 * SECOND), second)
    assert reminder.path == f"/channels/{saved['thread']['id']}/messages"


# --- private tickets ------------------------------------------------------------------------


STAFF_CHANNEL = DEFAULT_IDS.bot_log


def _guild_with_a_staff_channel():
    """The default guild, the bot allowed to make private threads in the staff channel."""
    import dataclasses

    from tests.discord_standin import default_guild

    guild = default_guild()
    create_private_threads = 1 << 36
    guild.channels[:] = [
        dataclasses.replace(c, overwrites=((DEFAULT_IDS.role_bot, 0, create_private_threads, 0),))
        if c.id == STAFF_CHANNEL
        else c
        for c in guild.channels
    ]
    return guild


def test_a_ticket_filed_privately_is_a_private_thread_of_the_staff_channel(discord_standin, data):
    from tests.bot.helpers import buttons

    staff_channel = STAFF_CHANNEL
    discord_standin.config.guild = _guild_with_a_staff_channel()

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        labels = [b["label"] for b in buttons(check)]
        filed = await ds.press(check, button_id(check, "File privately"))
        told = (await filed.answer()).shown
        created = await ds.wait_for_request(lambda r: r.route == "create_thread")
        assert created.status == 200, (created.status, created.response)
        thread_id = int(created.response["id"])
        await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )
        closed = await ds.press(ds.channel_messages(thread_id)[0], "wikibot:tk:close:1")
        await closed.followup()
        await ds.wait_until(
            lambda: ds.threads[thread_id]["thread_metadata"]["locked"] or None, timeout=5, poll=0.02
        )
        return labels, told, created, ds.threads[thread_id], ds.thread_members, ds

    labels, told, created, thread, members, ds = discord_standin.run(
        factory(data, private_channel_id=staff_channel), scenario
    )
    assert labels == ["This solved it", "Edit", "File the ticket", "File privately"]
    assert created.path == f"/channels/{staff_channel}/threads"
    assert created.json["type"] == 12 and created.json["invitable"] is False
    assert members[int(thread["id"])] == [DEFAULT_IDS.alice], "the asker is added"
    assert not ds.requests_to("create_thread", "POST")[0].path.startswith(
        f"/channels/{DEFAULT_IDS.forum}"
    ), "nothing in the public forum"
    assert "Your post is up" in told["content"]
    assert thread["thread_metadata"]["archived"] and thread["thread_metadata"]["locked"]


def test_filing_knows_whether_its_new_ticket_is_private_without_asking_the_store(
    discord_standin, data, monkeypatch
):
    """The press that files a ticket made it private or not a moment ago: its post goes
    to the staff channel or the forum without one more trip to the store to ask."""
    from knowledge.intake.desk import SupportDesk

    asked: list[int] = []
    original = SupportDesk.is_private

    def counted(self: SupportDesk, ticket_id: int) -> bool:
        asked.append(ticket_id)
        return original(self, ticket_id)

    monkeypatch.setattr(SupportDesk, "is_private", counted)
    discord_standin.config.guild = _guild_with_a_staff_channel()

    async def scenario(ds):
        private_thread = await _file_privately(ds)
        since = len(ds.requests)
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        public = await ds.wait_for_request(lambda r: r.route == "create_thread", since=since)
        return private_thread, public

    private_thread, public = discord_standin.run(
        factory(data, private_channel_id=STAFF_CHANNEL), scenario
    )
    assert discord_standin.last.threads[private_thread]["parent_id"] == str(STAFF_CHANNEL)
    assert public.path == f"/channels/{DEFAULT_IDS.forum}/threads"
    assert asked == []


def test_a_private_filing_is_private_in_its_own_write_to_the_store(
    discord_standin, data, monkeypatch
):
    """File privately marks the ticket private in the write that files it: a second
    write that could fail (or a stop between the two) never leaves the ticket filed but
    public, for the retry loop to post in the help forum."""
    original = SqliteTicketStore.record_event

    def record_event(self, ticket_id, kind, actor, **kwargs):
        if kind == "private":
            raise sqlite3.OperationalError("disk I/O error")
        return original(self, ticket_id, kind, actor, **kwargs)

    monkeypatch.setattr(SqliteTicketStore, "record_event", record_event)
    discord_standin.config.guild = _guild_with_a_staff_channel()

    async def scenario(ds):
        return await _file_privately(ds)

    thread_id = discord_standin.run(factory(data, private_channel_id=STAFF_CHANNEL), scenario)
    assert discord_standin.last.threads[thread_id]["parent_id"] == str(STAFF_CHANNEL)
    store = SqliteTicketStore.in_folder(data)
    try:
        (ticket,) = store.list_tickets(limit=5)
        assert any(e.kind == "private" for e in store.events(ticket.id))
        assert ticket.thread_id == thread_id
    finally:
        store.close()


async def _file_privately(ds) -> int:
    """Alice files a ticket privately; the private thread's id."""
    since = len(ds.requests)
    _, _, saved = await through_step_1(ds)
    _, check = await through_step_2(ds, saved)
    await ds.press(check, button_id(check, "File privately"))
    created = await ds.wait_for_request(lambda r: r.route == "create_thread", since=since)
    return int(created.response["id"])


def _restore(ds, made: dict[str, Any]) -> None:
    """Put back in the stand-in what Discord kept of a private thread across a restart."""
    thread_id = made["thread"]["id"]
    ds.threads[int(thread_id)] = made["thread"]
    ds.thread_members[int(thread_id)] = made["members"]
    for message in made["messages"]:
        ds.messages[int(message["id"])] = message


def _keep(ds, thread_id: int) -> dict[str, Any]:
    import copy

    return {
        "thread": copy.deepcopy(ds.threads[thread_id]),
        "members": list(ds.thread_members.get(thread_id, [])),
        "messages": copy.deepcopy(ds.channel_messages(thread_id)),
    }


def test_a_private_ticket_posted_before_a_crash_is_found_not_posted_again(discord_standin, data):
    """Killed after the private thread and its post were made, before the store recorded
    them: after the restart the retry finds the thread (archived meanwhile, so only the
    joined private archived threads list it) and records it; nothing is posted twice."""
    from tests.bot.test_support import _as_killed_before_recording, _until_posted

    discord_standin.config.guild = _guild_with_a_staff_channel()
    made: dict[str, Any] = {}

    async def first(ds):
        thread_id = await _file_privately(ds)
        await _until_posted(data)
        made.update(_keep(ds, thread_id), id=thread_id)

    async def after_restart(ds):
        made["thread"]["thread_metadata"]["archived"] = True  # closed meanwhile
        _restore(ds, made)
        return await _until_posted(data)

    settings = {"private_channel_id": STAFF_CHANNEL}
    discord_standin.run(factory(data, **settings), first)
    assert made["thread"]["name"].startswith("#1 "), "the private thread's name numbers it"
    _as_killed_before_recording(data, thread_id=made["id"])
    ticket = discord_standin.run(factory(data, **settings), after_restart)
    ds = discord_standin.last
    assert ticket.thread_id == made["id"]
    assert ds.requests_to("joined_archived_threads"), "it was looked for"
    assert not ds.requests_to("create_thread"), "no second thread"
    assert not ds.requests_to("channel_message", "POST"), "no second post"


def test_a_private_thread_left_empty_by_a_crash_gets_the_post_on_retry(discord_standin, data):
    """Killed between making the private thread and posting in it: the retry posts in
    that thread (the asker added again) instead of making a second one."""
    from tests.bot.test_support import _as_killed_before_recording, _until_posted
    from tests.discord_standin.faults import fail

    discord_standin.config.guild = _guild_with_a_staff_channel()
    made: dict[str, Any] = {}

    async def first(ds):
        fail(ds, "channel_message", status=503, code=0, message="Unavailable", times=None)
        thread_id = await _file_privately(ds)
        await ds.wait_for_request(lambda r: r.route == "channel_message")
        made.update(_keep(ds, thread_id), id=thread_id)
        return len(ds.requests_to("create_thread"))

    async def after_restart(ds):
        _restore(ds, made)
        ds.thread_members[made["id"]] = []
        return await _until_posted(data), ds.channel_messages(made["id"])

    settings = {"private_channel_id": STAFF_CHANNEL}
    assert discord_standin.run(factory(data, **settings), first) == 1
    assert made["messages"] == [], "the thread was left empty"
    _as_killed_before_recording(data, thread_id=None)
    ticket, messages = discord_standin.run(factory(data, **settings), after_restart)
    ds = discord_standin.last
    assert ticket.thread_id == made["id"], "the empty thread holds the post"
    assert not ds.requests_to("create_thread"), "no second thread"
    [post] = messages
    assert post["embeds"][0]["footer"]["text"].endswith(f"ref {ticket.draft_id}")
    assert ds.thread_members[made["id"]] == [DEFAULT_IDS.alice], "the asker is in it"


def test_a_private_post_discord_made_while_the_bot_saw_an_error_keeps_its_ping_counted(
    discord_standin, data
):
    """The private thread's post (with the helpers' ping) was sent, but the bot saw a
    503: the retry finds it in the thread, sends nothing again, and records the ping, so
    the next private ticket inside the quiet window pings nobody."""
    from knowledge.intake.stale import snowflake_seconds
    from tests.bot.test_support import _until_posted
    from tests.bot.test_support_forum import _due_now, _until_ticket
    from tests.discord_standin.faults import lose_answer

    discord_standin.config.guild = _guild_with_a_staff_channel()

    def posts(ds, thread_id: int) -> list[dict[str, Any]]:
        return [
            r
            for r in ds.requests_to("channel_message", "POST")
            if r.path == f"/channels/{thread_id}/messages"
        ]

    async def scenario(ds):
        lose_answer(ds, "channel_message", method="POST")
        first = await _file_privately(ds)
        await _until_ticket(data, lambda t: t.post_attempts >= 1)
        _due_now(data)
        ticket = await _until_posted(data)
        second = await _file_privately(ds)
        await ds.wait_until(lambda: posts(ds, second) or None, timeout=10, poll=0.02)
        return first, ticket, posts(ds, first), posts(ds, second)

    settings = {"private_channel_id": STAFF_CHANNEL, "helper_role_id": HELPERS}
    first, ticket, first_posts, second_posts = discord_standin.run(
        factory(data, **settings), scenario
    )
    assert ticket.thread_id == first
    [lost] = first_posts  # sent once: its answer was lost, and it was found, not sent again
    assert lost.status == 503 and f"<@&{HELPERS}>" in lost.json["content"]
    [post] = second_posts
    assert f"<@&{HELPERS}>" not in post.json["content"]
    assert not post.json["allowed_mentions"].get("roles")
    message_id = int(discord_standin.last.channel_messages(first)[0]["id"])
    assert _ping_events(data) == [[snowflake_seconds(message_id)], []]


def test_a_private_retry_without_read_message_history_waits_and_says_what_is_missing(
    discord_standin, data
):
    """The staff channel denies Read Message History: a private post the bot saw fail
    cannot be looked for on retry (the archived private threads are listed only with
    it). The retry fails instead of posting blind, and /wiki status names the permission
    missing in the staff channel (not the forum's)."""
    from tests.bot.test_support_forum import _due_now, _until_ticket
    from tests.discord_standin.faults import lose_answer

    history = 1 << 16
    guild = _guild_with_a_staff_channel()
    guild.channels[:] = [
        dataclasses.replace(c, overwrites=((DEFAULT_IDS.role_bot, 0, 1 << 36, history),))
        if c.id == STAFF_CHANNEL
        else c
        for c in guild.channels
    ]
    discord_standin.config.guild = guild

    async def scenario(ds):
        lose_answer(ds, "channel_message", method="POST")
        thread_id = await _file_privately(ds)
        await _until_ticket(data, lambda t: t.post_attempts >= 1)
        _due_now(data)
        await _until_ticket(data, lambda t: t.post_attempts >= 2)
        status = await ds.slash("wiki status")
        await status.answer()
        embed = status.response.json["data"]["embeds"][0]
        return thread_id, embed, ds

    thread_id, embed, ds = discord_standin.run(
        factory(data, private_channel_id=STAFF_CHANNEL), scenario
    )
    [listing] = ds.requests_to("joined_archived_threads")
    assert listing.status == 403 and listing.error_code == 50013
    assert len(ds.requests_to("create_thread")) == 1, "no second thread"
    assert len(ds.requests_to("channel_message", "POST")) == 1, "no second post"
    field = next(f for f in embed["fields"] if f["name"] == "Support tickets")
    assert "403 50013 forbidden: missing read_message_history" in field["value"]
    assert thread_id in ds.threads


def _staff_channel_overwrite(allow: int, deny: int):
    guild = _guild_with_a_staff_channel()
    guild.channels[:] = [
        dataclasses.replace(c, overwrites=((DEFAULT_IDS.role_bot, 0, allow, deny),))
        if c.id == STAFF_CHANNEL
        else c
        for c in guild.channels
    ]
    return guild


def test_a_private_filing_the_staff_channel_refuses_says_so_of_that_channel(discord_standin, data):
    """The bot may not make private threads in the staff channel: the asker is told the
    ticket is saved and what the admins must allow there, not in the help forum."""
    discord_standin.config.guild = _staff_channel_overwrite(0, 1 << 36)

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File privately"))
        told = (await filed.answer()).shown
        return told, ds.requests_to("create_thread")

    told, made = discord_standin.run(factory(data, private_channel_id=STAFF_CHANNEL), scenario)
    assert made[0].status == 403
    assert told["content"].endswith(
        "Ticket #1 is saved, and its private thread will be made as soon as an admin gives"
        " the bot Create Private Threads in the staff channel."
    )
    assert "help forum" not in told["content"] and "Posts" not in told["content"]


def test_a_private_ticket_waits_for_its_channel_when_private_tickets_are_switched_off(
    discord_standin, data
):
    """A private ticket not posted yet (the staff channel refused its thread); the bot
    restarts without support.private_channel_id. Its retries never post it in the public
    forum, and /wiki status says why it waits: private tickets are switched off (not
    that the help forum is gone, which it is not)."""
    from tests.bot.test_support_forum import _due_now, _until_ticket

    discord_standin.config.guild = _staff_channel_overwrite(0, 1 << 36)

    async def first(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File privately"))
        await filed.answer()
        await _until_ticket(data, lambda t: t.post_attempts >= 1)

    async def after_restart(ds):
        _due_now(data)
        await _until_ticket(data, lambda t: t.post_attempts >= 2)
        status = await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)
        await status.answer()
        return status.response.json["data"]["embeds"][0], ds

    discord_standin.run(factory(data, private_channel_id=STAFF_CHANNEL), first)
    embed, ds = discord_standin.run(factory(data), after_restart)
    assert not ds.requests_to("create_thread"), "never a public post instead"
    assert not ds.requests_to("channel_message", "POST")
    field = next(f for f in embed["fields"] if f["name"] == "Support tickets")
    assert "private tickets are switched off" in field["value"]
    assert "forum channel is gone" not in field["value"]
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.post_state == "pending" and "private_channel_id" in ticket.post_error
    finally:
        store.close()


def test_closing_a_private_ticket_without_manage_threads_names_the_staff_channel(
    discord_standin, data
):
    """Close locks the private thread, which needs Manage Threads in the staff channel:
    refused, the helper is told what to allow there (not the forum's "Manage Posts")."""
    discord_standin.config.guild = _staff_channel_overwrite(1 << 36, 1 << 34)

    async def scenario(ds):
        thread_id = await _file_privately(ds)
        await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )
        closed = await ds.press(ds.channel_messages(thread_id)[0], "wikibot:tk:close:1")
        await closed.followup()
        return (await closed.followup()).response

    said = discord_standin.run(factory(data, private_channel_id=STAFF_CHANNEL), scenario)
    assert said["flags"] & (1 << 6), "only the helper who pressed sees it"
    assert said["content"] == (
        "The ticket is closed, but its private thread stays as it was because the bot"
        " lacks Manage Threads in the staff channel."
    )


def test_a_private_ticket_solved_by_a_marked_answer_takes_its_buttons_with_it(
    discord_standin, data
):
    """A private thread has no starter message: the ticket's buttons are on the bot's
    post inside it. Solved by "Mark as answer", the post shows only Reopen (no live
    Solved / Close left behind) and the thread is archived, as a forum post would be."""
    from tests.bot.helpers import buttons

    discord_standin.config.guild = _guild_with_a_staff_channel()

    async def scenario(ds):
        thread_id = await _file_privately(ds)
        await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )
        answer = ds.make_message(
            "Pin the v4 image", channel_id=thread_id, author_id=DEFAULT_IDS.mod
        )
        marked = await ds.message_command("Mark as answer", answer)
        await ds.wait_until(
            lambda: ds.threads[thread_id]["thread_metadata"]["archived"] or None,
            timeout=5,
            poll=0.02,
        )
        return marked.response, ds.channel_messages(thread_id)[0]

    marked, post = discord_standin.run(factory(data, private_channel_id=STAFF_CHANNEL), scenario)
    assert "marked" in marked.message["content"]
    assert [b["label"] for b in buttons(post)] == ["Reopen"]


def test_file_privately_pressed_after_private_tickets_were_switched_off_posts_nothing(
    discord_standin, data
):
    """The check offered File privately; the bot restarted without
    support.private_channel_id. The press is refused, saying so: the request is never
    posted in the public forum instead of the private thread its asker chose."""
    from tests.bot.helpers import embed_of

    discord_standin.config.guild = _guild_with_a_staff_channel()
    shown: dict[str, Any] = {}

    async def first(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        shown.update(check)

    async def after_restart(ds):
        pressed = await ds.press(shown, button_id(shown, "File privately"))
        return pressed.response, ds

    discord_standin.run(factory(data, private_channel_id=STAFF_CHANNEL), first)
    refused, ds = discord_standin.run(factory(data), after_restart)
    assert refused.message["flags"] & (1 << 6)
    assert embed_of(refused.message)["description"].startswith(
        "Private tickets are not available any more, so nothing was posted."
    )
    assert not ds.requests_to("create_thread") and not ds.requests_to("channel_message", "POST")
    store = SqliteTicketStore.in_folder(data)
    try:
        assert store.list_tickets() == [], "not filed either: File the ticket still can"
    finally:
        store.close()


def test_without_a_private_channel_there_is_no_private_filing(discord_standin, data):
    from tests.bot.helpers import buttons

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        return [b["label"] for b in buttons(check)]

    assert "File privately" not in discord_standin.run(factory(data), scenario)


def test_the_waiting_tag_follows_who_wrote_last(discord_standin, data):
    """A forum with a "waiting for the asker" tag: on while a helper wrote last, off
    once the asker answers (with stale handling on: it watches who writes)."""
    from tests.bot.test_support import _guild_with_forum
    from tests.discord_standin.payloads import ForumTagSpec

    waiting = ForumTagSpec(DEFAULT_IDS.tag_open + 70, "Waiting for the asker")
    discord_standin.config.guild = _guild_with_forum(
        available_tags=(ForumTagSpec(DEFAULT_IDS.tag_open, "open"), waiting)
    )

    async def scenario(ds):
        post = await _file(ds)
        thread_id = int(post.response["id"])
        tags = ds.threads[thread_id]["applied_tags"]
        await ds.user_message("try the v4 image", channel_id=thread_id, author_id=DEFAULT_IDS.mod)
        await ds.wait_until(
            lambda: str(waiting.id) in ds.threads[thread_id]["applied_tags"] or None,
            timeout=10,
            poll=0.02,
        )
        on = list(ds.threads[thread_id]["applied_tags"])
        await ds.user_message("that fixed the start, thanks", channel_id=thread_id)
        await ds.wait_until(
            lambda: str(waiting.id) not in ds.threads[thread_id]["applied_tags"] or None,
            timeout=10,
            poll=0.02,
        )
        return list(tags), on, list(ds.threads[thread_id]["applied_tags"])

    before, on, off = discord_standin.run(factory(data, remind_after_days=3), scenario)
    assert before == [str(DEFAULT_IDS.tag_open)]
    assert on == [str(DEFAULT_IDS.tag_open), str(waiting.id)]
    assert off == [str(DEFAULT_IDS.tag_open)]


# --- answers from solved tickets -------------------------------------------------------------


def test_a_marked_answer_solves_the_ticket_and_is_offered_to_the_next_like_question(
    discord_standin, data
):
    """The asker marks the helper's message "Mark as answer": the ticket is solved with
    that answer kept (redacted); the next request asking much the same is shown "a
    similar ticket was solved" beside the wiki's answer, linking the message; an
    unrelated request is not."""
    from tests.bot.helpers import embed_of

    secret = "hf_" + "Wd4" * 12

    async def scenario(ds):
        thread_id, answer = await _answered_post(
            ds, f"Pin the v4 image and drop the old pattern; my token {secret} is unrelated"
        )
        stranger = await ds.message_command("Mark as answer", answer, user_id=DEFAULT_IDS.newbie)
        marked = await ds.message_command("Mark as answer", answer)
        await ds.wait_until(
            lambda: ds.threads[thread_id]["thread_metadata"]["archived"] or None,
            timeout=5,
            poll=0.02,
        )
        opened = await ds.slash("support")
        same = {**test_support.STEP1, "text": "GLM-5 dies just after it loads on 8 GPUs"}
        saved = (await (await ds.submit_modal(opened, same)).answer()).shown
        _, check = await through_step_2(ds, saved)
        check = dict(check)  # as shown, before the press below changes it
        await ds.press(check["id"], button_id(check, "This solved it"))  # the draft is done
        opened = await ds.slash("support")
        other = {**test_support.STEP1, "text": "my fans spin at full speed when idle"}
        saved = (await (await ds.submit_modal(opened, other)).answer()).shown
        _, unrelated = await through_step_2(ds, saved)
        return stranger.response, marked.response, answer, check, unrelated

    stranger, marked, answer, check, unrelated = discord_standin.run(factory(data), scenario)
    assert "Only the person who asked" in embed_of(stranger.message)["description"]
    assert marked.callback_type == 4 and "marked" in marked.message["content"]
    fields = {f["name"]: f["value"] for f in embed_of(check)["fields"]}
    offered = fields["A similar ticket was solved"]
    link = f"/channels/{DEFAULT_IDS.guild}/{answer['channel_id']}/{answer['id']}"
    assert offered.startswith("#1 [") and link in offered and secret not in offered
    assert "A similar ticket was solved" not in {f["name"] for f in embed_of(unrelated)["fields"]}
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.status == "solved"
        (kept,) = store.solved_answers()
        assert "[REDACTED:hf-token]" in kept.answer and kept.url.endswith(link)
    finally:
        store.close()


def test_search_offers_a_solved_ticket_like_the_query_beside_the_wiki_pages(discord_standin, data):
    """/search shows "a similar ticket was solved" (the same desk, similarity and
    threshold as the /support check) beside the wiki's sections when a solved ticket
    asked much the same: on every page, linking the answer, redacted, pinging nobody.
    Not for an unrelated query, and not outside the bot's server (a DM)."""
    import copy

    from tests.bot.helpers import buttons, embed_of

    secret = "hf_" + "Qm7" * 12
    title = "A similar ticket was solved"

    async def scenario(ds):
        _, answer = await _answered_post(
            ds, f"@everyone pin the v4 image, <@{DEFAULT_IDS.mod}> saw it too; token {secret}"
        )
        await ds.message_command("Mark as answer", answer)
        pings_before = len(ds.pings)
        query = "glm-5 engine dies after loading on eight gpus"
        same = await ds.slash("search", query=query)
        first_page = copy.deepcopy(same.original)
        turn = {b["label"]: b["custom_id"] for b in buttons(first_page)}["Next"]
        await ds.press(first_page, turn)
        second_page = copy.deepcopy(ds.messages[int(first_page["id"])])
        unrelated = await ds.slash("search", query="my fans spin at full speed when idle")
        await ds.client.sync_commands(None)  # global too: /search is offered in DMs
        in_dm = await ds.slash("search", query=query, context=1)
        return (
            answer,
            first_page,
            second_page,
            unrelated.original,
            in_dm.original,
            ds.pings[pings_before:],
        )

    answer, first_page, second_page, unrelated, in_dm, pings = discord_standin.run(
        factory(data), scenario
    )
    link = f"/channels/{DEFAULT_IDS.guild}/{answer['channel_id']}/{answer['id']}"
    names = [f["name"] for f in embed_of(first_page)["fields"]]
    assert names[-1] == title and len(names) > 1, "beside the wiki's sections, after them"
    offered = embed_of(first_page)["fields"][-1]["value"]
    assert offered.startswith("#1 [") and link in offered
    assert secret not in offered and "REDACTED" in offered
    assert embed_of(second_page)["fields"][-1]["value"] == offered, "on the next page too"
    assert embed_of(second_page)["fields"][0]["name"] != names[0], "the page did turn"
    assert title not in [f["name"] for f in embed_of(unrelated)["fields"]]
    assert title not in [f["name"] for f in embed_of(in_dm)["fields"]]
    assert [p for p in pings if p.pings] == [], "the offer pings nobody"


def test_search_offers_solved_tickets_in_the_forums_server_when_commands_are_global(
    discord_standin, data
):
    """A bot whose commands are global (no ``discord.guild_ids``) still offers a solved
    ticket to a /search made in the help forum's server."""
    from tests.bot.helpers import embed_of

    async def scenario(ds):
        await ds.client.sync_commands(None)
        _, answer = await _answered_post(ds, "pin the v4 image")
        await ds.message_command("Mark as answer", answer)
        query = "glm-5 engine dies after loading on eight gpus"
        return (await ds.slash("search", query=query)).original

    shown = discord_standin.run(factory(data, discord={"guild_ids": []}), scenario)
    assert embed_of(shown)["fields"][-1]["name"] == "A similar ticket was solved"
