"""A ticket with its thread's messages, redacted: ``wikibot tickets export``.

The ticket comes from the store (redacted when it was filed); the messages come
from Discord (the bot fetches them) and are redacted here, content and author
alike, before anything is written. A transcript is made to be passed on, so every
string of it is also masked as the ticket's public post is
(:func:`~knowledge.triage.redact.mask_credentials`: keys in no known format, which
the store keeps). Two shapes: Markdown for people, JSON for tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.intake.records import Ticket, iso
from knowledge.templates import Templates
from knowledge.triage.redact import mask_credentials, redact

__all__ = ["ThreadMessage", "transcript_json", "transcript_markdown"]


@dataclass(frozen=True, slots=True)
class ThreadMessage:
    """One message of a ticket's thread, as fetched (not yet redacted)."""

    author: str
    at: float
    content: str
    attachments: tuple[str, ...] = ()


def _clean(text: str) -> str:
    return _masked(redact(text, "thread").text)


def _masked(value: Any) -> Any:
    """``value`` with each string in it (nested too) masked."""
    if isinstance(value, str):
        return mask_credentials(value).text
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(item) for item in value]
    return value


def _messages(messages: Sequence[ThreadMessage]) -> list[dict[str, Any]]:
    return [
        {
            "author": _clean(m.author),
            "at": iso(m.at),
            "content": _clean(m.content),
            "attachments": [_clean(a) for a in m.attachments],
        }
        for m in sorted(messages, key=lambda m: m.at)
    ]


def transcript_json(ticket: Ticket, messages: Sequence[ThreadMessage] | None) -> dict[str, Any]:
    """The ticket's JSON (as ``wikibot tickets show --json``) with ``thread``: its
    messages oldest first, or None when they were not fetched."""
    return {
        **_masked(ticket.to_json()),
        "thread": None if messages is None else _messages(messages),
    }


def transcript_markdown(
    ticket: Ticket, messages: Sequence[ThreadMessage] | None, t: Templates
) -> str:
    """The ticket and its thread as a Markdown document (``templates/intake.yaml``,
    ``transcript.*``)."""
    out = [
        t("transcript.title", id=ticket.id, title=_masked(ticket.title)),
        "",
        t(
            "transcript.meta",
            status=t(f"ticket.statuses.{ticket.status}"),
            family=ticket.family or t("ticket.no_family"),
            user=ticket.user,
            created=iso(ticket.created_at),
            thread=ticket.thread_id or "-",
        ),
    ]
    for key, value in ticket.values.items():
        shown = _masked(value).replace("```", "'''")
        out += ["", t("transcript.field", key=key), "", "```", shown, "```"]
    if ticket.events:
        out += ["", t("transcript.events"), ""]
        out += [
            t("transcript.event", at=iso(e.at), kind=e.kind, actor=e.actor) for e in ticket.events
        ]
    out += ["", t("transcript.thread"), ""]
    if messages is None:
        out.append(t("transcript.not_fetched"))
    for m in _messages(messages or ()):
        out.append(t("transcript.message", author=m["author"], at=m["at"]))
        out.extend("> " + line for line in (m["content"] or "").splitlines() or [""])
        out.extend(t("transcript.attachment", name=a) for a in m["attachments"])
        out.append("")
    return "\n".join(out).rstrip() + "\n"
