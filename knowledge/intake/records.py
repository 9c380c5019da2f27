"""What the intake keeps: drafts between form steps, tickets, and their events.

Every text in these records is already redacted (see :mod:`knowledge.intake.validate`);
the store redacts once more before writing, so a record built by hand cannot leak
either. Times are UTC seconds since the epoch (``float``); JSON shows ISO 8601.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

__all__ = [
    "DRAFT_STATES",
    "EVENT_KINDS",
    "POST_STATES",
    "TICKET_STATUSES",
    "Draft",
    "Ticket",
    "TicketEvent",
    "iso",
]

#: open: being filled; filed: a ticket was made from it; deflected: "this solved it".
DRAFT_STATES: Final = ("open", "filed", "deflected")
TICKET_STATUSES: Final = ("open", "solved", "closed")
#: none: filed without a forum (command line); pending: to be posted; posted: in the forum;
#: failed: Discord refused the post for a reason retrying does not change (given up).
POST_STATES: Final = ("none", "pending", "posted", "failed")
EVENT_KINDS: Final = (
    "created",
    "deflected",
    "post_started",
    "posted",
    "post_failed",
    "post_given_up",
    "helpers_pinged",
    "claimed",
    "released",
    "feedback",
    "reminded",
    "private",
    "answered",
    "solved",
    "closed",
    "reopened",
)


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Draft:
    id: str
    #: Who fills it: ``discord:<user id>`` or ``local:<login>``.
    user: str
    created_at: float
    updated_at: float
    #: Redacted answers by field key; missing keys were not answered yet.
    values: Mapping[str, str] = field(default_factory=dict)
    #: The last step the user saved (0 before any).
    step: int = 0
    state: str = "open"
    #: (kind, field, count) of every secret removed so far.
    redactions: tuple[tuple[str, str, int], ...] = ()
    #: Worded problems shown to the user when the draft was last saved.
    notes: tuple[str, ...] = ()
    #: Where the form was started (e.g. the model given to ``/support``).
    origin: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user": self.user,
            "state": self.state,
            "step": self.step,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "fields": dict(self.values),
            "redactions": [{"kind": k, "field": f, "count": n} for k, f, n in self.redactions],
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class TicketEvent:
    kind: str
    actor: str
    at: float
    ticket_id: int | None = None
    draft_id: str | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "actor": self.actor, "at": iso(self.at), "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Ticket:
    id: int
    draft_id: str
    user: str
    title: str
    #: Family key from the catalogue, or "" when none was recognised.
    family: str
    status: str
    created_at: float
    updated_at: float
    #: Redacted answers by field key.
    values: Mapping[str, str] = field(default_factory=dict)
    redactions: tuple[tuple[str, str, int], ...] = ()
    #: The triage summary at filing time (suggestions, findings, known errors, missing).
    triage: Mapping[str, Any] = field(default_factory=dict)
    post_state: str = "none"
    #: Forum thread id once posted.
    thread_id: int | None = None
    post_attempts: int = 0
    post_error: str = ""
    next_attempt_at: float | None = None
    #: When the bot last began creating the post (None: never tried).
    post_started_at: float | None = None
    events: tuple[TicketEvent, ...] = ()

    @property
    def feedback(self) -> str | None:
        """The asker's answer to "was this helpful?" (``helpful`` / ``not_helpful``)."""
        return next((e.detail for e in self.events if e.kind == "feedback"), None)

    @property
    def helper(self) -> str | None:
        """Who claimed the ticket (``claimed`` not followed by ``released``), if anyone."""
        for event in reversed(self.events):
            if event.kind == "claimed":
                return event.actor
            if event.kind == "released":
                return None
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "helper": self.helper,
            "feedback": self.feedback,
            "title": self.title,
            "family": self.family or None,
            "user": self.user,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "draft_id": self.draft_id,
            "fields": dict(self.values),
            "redactions": [{"kind": k, "field": f, "count": n} for k, f, n in self.redactions],
            "triage": dict(self.triage),
            "post": {
                "state": self.post_state,
                "thread_id": str(self.thread_id) if self.thread_id else None,
                "attempts": self.post_attempts,
                "error": self.post_error or None,
            },
            "events": [e.to_json() for e in self.events],
        }
