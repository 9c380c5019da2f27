"""The stale-ticket decision (knowledge.intake.stale): which open tickets to remind, which
to close, which to leave, and when to look again, from the time, the configured days and
each ticket's history. Plain data: no store, no Discord."""

from __future__ import annotations

from knowledge.intake.records import Ticket, TicketEvent
from knowledge.intake.stale import (
    CHECK_MAX,
    INACTIVE,
    LastWord,
    closed_for_inactivity,
    plan_stale,
    snowflake_seconds,
    waiting_changed,
    who_wrote,
)

DAY = 86400.0
#: A thread id made at a known moment: Discord ids carry their creation time.
THREAD = ((1_750_000_000_000 - 1420070400000) << 22) | 1
MADE = 1_750_000_000.0


def ticket(
    number: int = 1,
    *,
    thread: int | None = THREAD,
    status: str = "open",
    updated: float = MADE,
    events: tuple[TicketEvent, ...] = (),
) -> Ticket:
    return Ticket(
        id=number,
        draft_id=f"d{number}",
        user="discord:7",
        title="t",
        family="",
        status=status,
        created_at=MADE - 10,
        updated_at=updated,
        thread_id=thread,
        events=events,
    )


def plan(tickets, last, now, remind=3.0, close=7.0, check_max=30 * DAY):
    return plan_stale(
        tickets, last, now, remind_after_days=remind, close_after_days=close, check_max=check_max
    )


def test_a_thread_id_tells_when_it_was_made():
    assert snowflake_seconds(THREAD) == MADE


def test_an_asker_silent_after_a_helper_is_reminded_once_when_the_days_are_up():
    last = {THREAD: LastWord(MADE + 100, "helper")}
    early = plan([ticket()], last, MADE + 100 + 3 * DAY - 1)
    assert early.remind == () and early.close == ()
    assert early.next_due == MADE + 100 + 3 * DAY, "wake when the reminder is due"
    due = plan([ticket()], last, MADE + 100 + 3 * DAY)
    assert [(t.id, since) for t, since in due.remind] == [(1, MADE + 100)]
    assert due.next_due == MADE + 100 + 7 * DAY, "then at the close"
    reminded = ticket(events=(TicketEvent("reminded", "bot", MADE + 100 + 3 * DAY),))
    again = plan([reminded], last, MADE + 100 + 4 * DAY)
    assert again.remind == (), "once per wait"
    older = ticket(events=(TicketEvent("reminded", "bot", MADE + 50),))
    assert len(plan([older], last, MADE + 100 + 3 * DAY).remind) == 1, (
        "a reminder of an earlier wait"
    )


def test_no_reminder_while_the_asker_or_the_bot_wrote_last():
    for who in ("asker", "bot"):
        shown = plan([ticket()], {THREAD: LastWord(MADE, who)}, MADE + 5 * DAY)  # type: ignore[arg-type]
        assert shown.remind == () and shown.close == ()


def test_a_silent_ticket_is_closed_with_its_silence_and_not_reminded():
    last = {THREAD: LastWord(MADE + 100, "helper")}
    shown = plan([ticket()], last, MADE + 100 + 8 * DAY)
    assert [(t.id, silence) for t, silence in shown.close] == [(1, 8 * DAY)]
    assert shown.remind == ()
    assert shown.next_due == MADE + 100 + 8 * DAY + 30 * DAY, "nothing else due"
    default = plan_stale([], {}, MADE, remind_after_days=3, close_after_days=7)
    assert default.next_due == MADE + CHECK_MAX, "never longer than an hour asleep"


def test_a_thread_never_seen_is_silent_since_it_was_made_and_a_reopen_restarts_the_wait():
    assert len(plan([ticket()], {}, MADE + 7 * DAY).close) == 1
    reopened = ticket(updated=MADE + 5 * DAY)
    assert plan([reopened], {}, MADE + 7 * DAY).close == ()
    assert plan([reopened], {}, MADE + 7 * DAY).next_due == MADE + 12 * DAY


def test_zero_days_never_and_tickets_without_a_thread_or_not_open_are_left():
    last = {THREAD: LastWord(MADE, "helper")}
    assert plan([ticket()], last, MADE + 100 * DAY, remind=0, close=0).close == ()
    assert plan([ticket()], last, MADE + 100 * DAY, remind=0, close=0).remind == ()
    only_remind = plan([ticket()], last, MADE + 100 * DAY, remind=3, close=0)
    assert only_remind.close == () and len(only_remind.remind) == 1
    left = plan([ticket(thread=None), ticket(2, status="solved")], last, MADE + 100 * DAY)
    assert left.close == () and left.remind == () and left.watched == frozenset()
    assert plan([ticket()], {}, MADE).watched == {THREAD}


def test_who_wrote_and_the_waiting_tag_follow_the_asker_and_the_helpers():
    assert who_wrote(5, bot_id=5, asker_id=7) == "bot"
    assert who_wrote(7, bot_id=5, asker_id=7) == "asker"
    assert who_wrote(9, bot_id=5, asker_id=7) == "helper"
    assert who_wrote(9, bot_id=None, asker_id=None) == "helper"
    assert waiting_changed(None, "helper", "open") is True
    assert waiting_changed(LastWord(0, "helper"), "asker", "open") is False
    assert waiting_changed(LastWord(0, "helper"), "helper", "open") is None, "no change"
    assert waiting_changed(LastWord(0, "asker"), "bot", "open") is None, "the bot changes nothing"
    assert waiting_changed(LastWord(0, "asker"), "helper", "solved") is None


def test_only_a_close_for_inactivity_is_reopened_by_the_asker():
    by_schedule = ticket(status="closed", events=(TicketEvent("closed", INACTIVE, MADE),))
    by_staff = ticket(status="closed", events=(TicketEvent("closed", "discord:9", MADE),))
    reclosed = ticket(
        status="closed",
        events=(TicketEvent("closed", INACTIVE, MADE), TicketEvent("closed", "discord:9", MADE)),
    )
    assert closed_for_inactivity(by_schedule)
    assert not closed_for_inactivity(by_staff) and not closed_for_inactivity(reclosed)
