"""The ticket store's interface: what the intake needs from a database.

:class:`TicketStore` is small on purpose so that a server database (PostgreSQL)
can replace the SQLite one (:mod:`knowledge.intake.sqlite`) when one bot process is
no longer enough. Implementations must:

- write only redacted text (they redact every string once more before writing,
  through their ``scrubber``, which the desk shares: what the intake redacted is
  then not scanned again);
- make ``file_ticket`` idempotent by draft id and atomic with its rate-limit check;
- make an acknowledged write durable (it survives ``kill -9`` of the process);
- be safe to call from several threads (the bot calls them through
  ``asyncio.to_thread``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from knowledge.intake.records import Draft, Ticket, TicketEvent
from knowledge.intake.scrub import Scrubber
from knowledge.intake.similar import SolvedAnswer

__all__ = [
    "NotFound",
    "RateLimit",
    "RateLimited",
    "StoreError",
    "StoreTooNew",
    "StoreUnavailable",
    "TicketStore",
]


class StoreError(Exception):
    """A store operation that cannot be done; the message is safe to show."""


class NotFound(StoreError):
    pass


class StoreTooNew(StoreError):
    """The database was written by a newer schema than this code knows."""

    def __init__(self, path: str, found: int, known: int) -> None:
        super().__init__(f"{path}: schema {found} is newer than {known}")
        self.path, self.found, self.known = path, found, known


class StoreUnavailable(StoreError):
    """The store cannot be opened or written: ``problem`` says why, in one word.

    ``damaged`` (not a database, or a malformed one), ``locked`` (another process
    held the lock past the wait), ``full`` (no space left), ``read_only`` (the folder
    or the file cannot be written), ``io`` (another input/output error). ``path`` is
    the database file, ``reason`` the system's own words. Nothing was written.
    """

    def __init__(self, problem: str, path: str, reason: str) -> None:
        super().__init__(f"{path}: {problem.replace('_', '-')} ({reason})")
        self.problem, self.path, self.reason = problem, path, reason


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``count`` tickets per user in ``seconds``; ``count`` 0 turns it off."""

    count: int = 3
    seconds: float = 600.0


class RateLimited(StoreError):
    def __init__(self, limit: RateLimit, retry_after: float) -> None:
        super().__init__(f"rate limited for {retry_after:.0f}s")
        self.limit = limit
        self.retry_after = retry_after


class TicketStore(Protocol):
    #: Redacts what is written, remembering the texts found clean (shared with the desk).
    scrubber: Scrubber

    def close(self) -> None: ...

    # --- drafts
    def save_draft(self, draft: Draft) -> Draft: ...
    def get_draft(self, draft_id: str) -> Draft | None: ...
    def open_draft(self, user: str, since: float) -> Draft | None:
        """The user's newest open draft updated at or after ``since``."""
        ...

    def expire_drafts(self, before: float) -> int:
        """Delete open drafts last updated before ``before``; returns how many."""
        ...

    def deflect(self, draft_id: str, actor: str, at: float) -> Draft:
        """Mark a draft as answered by the wiki (nothing filed) and record the event."""
        ...

    # --- tickets
    def file_ticket(
        self,
        draft: Draft,
        *,
        title: str,
        family: str,
        triage: Mapping[str, Any],
        post: bool,
        at: float,
        limit: RateLimit,
        lease: float = 60.0,
        private: bool = False,
    ) -> tuple[Ticket, bool]:
        """The ticket for ``draft``: created (``True``) or the one filed before (``False``).

        With ``post`` the ticket waits to be posted and is leased to the caller for
        ``lease`` seconds (see :meth:`claim_post`), its post counted as begun
        (``post_started_at``, see :meth:`start_post`): the caller posts next. Raises
        :class:`RateLimited` when the user filed ``limit.count`` tickets in the last
        ``limit.seconds``. ``private``: a ticket created is private (its ``private``
        event) in the same write, so no stop or failure can leave it to the public forum.
        """
        ...

    def get_ticket(self, ticket_id: int) -> Ticket | None: ...
    def ticket_for_thread(self, thread_id: int) -> Ticket | None: ...
    def ticket_for_draft(self, draft_id: str) -> Ticket | None: ...
    def list_tickets(
        self,
        *,
        status: str | None = None,
        family: str | None = None,
        user: str | None = None,
        limit: int = 50,
    ) -> Sequence[Ticket]: ...

    def count_tickets(
        self, *, status: str | None = None, family: str | None = None, user: str | None = None
    ) -> int:
        """How many tickets match, counted by the store (none are loaded)."""
        ...

    def set_status(
        self, ticket_id: int, status: str, *, actor: str, at: float, event: str
    ) -> Ticket: ...

    # --- posting to the forum
    def claim_post(self, ticket_id: int, *, now: float, lease: float) -> bool:
        """Take the right to post a pending ticket for ``lease`` seconds (one poster)."""
        ...

    def posts_due(self, now: float, limit: int = 20) -> Sequence[Ticket]:
        """Pending tickets whose next attempt is due."""
        ...

    def start_post(self, ticket_id: int, *, at: float) -> Ticket:
        """Record, durably and before the request leaves, that the bot is creating the
        post of a pending ticket (``post_started_at``): after a crash the next attempt
        then looks for a post it made but never recorded instead of posting again."""
        ...

    def pending_count(self) -> int: ...
    def failed_count(self) -> int:
        """Tickets whose post was given up (``post_state`` "failed")."""
        ...

    def mark_posted(self, ticket_id: int, thread_id: int, *, at: float) -> Ticket: ...
    def mark_post_failed(
        self, ticket_id: int, error: str, *, at: float, retry_at: float, give_up: bool = False
    ) -> Ticket:
        """Count a failed attempt; ``give_up``: no more attempts (``post_state`` "failed")."""
        ...

    def events(self, ticket_id: int) -> Sequence[TicketEvent]: ...
    def record_event(
        self, ticket_id: int, kind: str, actor: str, *, at: float, detail: str = ""
    ) -> Ticket:
        """Add an event (a ping, a claim) to a ticket; :class:`NotFound` if none."""
        ...

    def save_answer(
        self, ticket_id: int, *, question: str, answer: str, url: str, actor: str, at: float
    ) -> Ticket:
        """Keep the message that solved a ticket (redacted; one per ticket, the latest)
        and record the event ``answered``."""
        ...

    def solved_answers(self, limit: int = 5000, *, public: bool = False) -> Sequence[SolvedAnswer]:
        """The kept answers, newest first; ``public``: not those of private tickets (the
        asker chose a staff-only thread: their answer is offered to nobody else)."""
        ...

    def last_event_at(self, kind: str) -> float | None:
        """When the newest event of ``kind`` (of any ticket) happened, or None."""
        ...
