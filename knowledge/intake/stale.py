"""Stale tickets, decided: which open tickets to remind, which to close, and when to look
again, as python-discord's help forum handles quiet posts.

- A helper wrote last and the asker has said nothing for ``remind_after_days``: the
  asker is reminded, once per such wait.
- Nobody wrote in the ticket's thread for ``close_after_days``: the ticket is closed
  (by :data:`INACTIVE`, so the asker writing again reopens it).

Plain data in, plain data out: :func:`plan_stale` is given the open tickets, who wrote
last in each thread and when (:class:`LastWord`), the time and the configured days;
the Discord layer only carries out the :class:`StalePlan` (and keeps the last words
up to date from the messages it sees).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from knowledge.intake.records import Ticket

__all__ = [
    "CHECK_MAX",
    "INACTIVE",
    "LastWord",
    "StalePlan",
    "Who",
    "closed_for_inactivity",
    "plan_stale",
    "snowflake_seconds",
    "waiting_changed",
    "who_wrote",
]

#: The actor of a close for inactivity (the asker writing again reopens only those).
INACTIVE: Final = "bot:inactive"
#: Longest wait before looking again, seconds: a clock change or a missed wake costs no more.
CHECK_MAX: Final = 3600.0
#: Discord's epoch (2015-01-01), milliseconds since the Unix epoch.
_DISCORD_EPOCH_MS: Final = 1420070400000
_DAY: Final = 86400.0

Who = Literal["asker", "helper", "bot"]


@dataclass(frozen=True, slots=True)
class LastWord:
    """The last message of a ticket's thread: when (UTC seconds) and by whom."""

    at: float
    who: Who


@dataclass(frozen=True, slots=True)
class StalePlan:
    """What is due now: tickets to close, with their seconds of silence; tickets whose
    asker to remind, with when the helper's message they have not answered was written;
    when the next thing falls due (UTC seconds); the threads still watched (open tickets)."""

    close: tuple[tuple[Ticket, float], ...]
    remind: tuple[tuple[Ticket, float], ...]
    next_due: float
    watched: frozenset[int]


def snowflake_seconds(snowflake: int) -> float:
    """When a Discord id was made (UTC seconds): a thread's id tells when it was created."""
    return ((snowflake >> 22) + _DISCORD_EPOCH_MS) / 1000.0


def who_wrote(author_id: int, *, bot_id: int | None, asker_id: int | None) -> Who:
    """A message's author as the schedule sees it: the bot, the ticket's asker, or a helper
    (anyone else)."""
    if bot_id is not None and author_id == bot_id:
        return "bot"
    if asker_id is not None and author_id == asker_id:
        return "asker"
    return "helper"


def waiting_changed(before: LastWord | None, who: Who, status: str) -> bool | None:
    """Whether the "waiting for the asker" tag should now be on (True) or off (False), or
    None when nothing changes: it follows who of the asker and the helpers wrote last in
    an open ticket (the bot's own messages change nothing)."""
    if who == "bot" or status != "open":
        return None
    if before is not None and before.who == who:
        return None
    return who == "helper"


def closed_for_inactivity(ticket: Ticket) -> bool:
    """The ticket's last close was the schedule's (so its asker writing reopens it)."""
    actor = next((e.actor for e in reversed(ticket.events) if e.kind == "closed"), None)
    return actor == INACTIVE


def plan_stale(
    tickets: Iterable[Ticket],
    last: Mapping[int, LastWord],
    now: float,
    *,
    remind_after_days: float,
    close_after_days: float,
    check_max: float = CHECK_MAX,
) -> StalePlan:
    """Decide, for the open ``tickets`` with a thread, what is due at ``now``.

    ``last``: thread id -> the thread's last message as seen so far; a thread with none
    seen counts as silent since it was made (by the bot). A ticket changed after that
    message (reopened, or posted) is silent since then. A ticket is closed once silent
    for ``close_after_days``; else its asker is reminded once a helper's message went
    unanswered for ``remind_after_days`` and no reminder was sent since that message.
    0 days: never. ``next_due`` is the soonest such time still ahead, at most
    ``check_max`` away."""
    remind_after = remind_after_days * _DAY
    close_after = close_after_days * _DAY
    next_due = now + check_max
    close: list[tuple[Ticket, float]] = []
    remind: list[tuple[Ticket, float]] = []
    watched: set[int] = set()
    for ticket in tickets:
        if ticket.status != "open" or not ticket.thread_id:
            continue
        watched.add(ticket.thread_id)
        word = last.get(ticket.thread_id) or LastWord(snowflake_seconds(ticket.thread_id), "bot")
        if ticket.updated_at > word.at:  # reopened (or posted) since: the silence starts then
            word = LastWord(ticket.updated_at, "bot")
        if close_after:
            due = word.at + close_after
            if now >= due:
                close.append((ticket, now - word.at))
                continue
            next_due = min(next_due, due)
        if remind_after and word.who == "helper":
            if any(e.kind == "reminded" and e.at >= word.at for e in ticket.events):
                continue
            due = word.at + remind_after
            if now >= due:
                remind.append((ticket, word.at))
            else:
                next_due = min(next_due, due)
    return StalePlan(tuple(close), tuple(remind), next_due, frozenset(watched))
