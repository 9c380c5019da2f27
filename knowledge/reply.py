"""One reply model for every command, with Discord's size limits applied in one place.

The console prints a :class:`Reply` as text, ``--json`` dumps it, and the
Discord layer turns the same object into an embed. ``Reply.fitted()`` cuts every
part to Discord's embed limits (:data:`LIMITS`) so no renderer has to.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from knowledge.text import truncate

__all__ = ["LIMITS", "Attachment", "Field", "PageRef", "Reply"]


@dataclass(frozen=True, slots=True)
class _Limits:
    title: int = 256
    description: int = 4096
    fields: int = 25
    field_name: int = 256
    field_value: int = 1024
    footer: int = 2048
    total: int = 6000
    #: Our own cap for a code block shown inside the description.
    code: int = 1800
    #: Attached files per message, and the size of one (Discord's limits for bots).
    files: int = 10
    file_bytes: int = 8 * 1024 * 1024
    suggestions: int = 10
    pages: int = 10


LIMITS = _Limits()


@dataclass(frozen=True, slots=True)
class PageRef:
    """A cited wiki location: ``path#anchor`` with the title to show."""

    path: str
    anchor: str | None = None
    title: str = ""

    @property
    def ref(self) -> str:
        return f"{self.path}#{self.anchor}" if self.anchor else self.path


@dataclass(frozen=True, slots=True)
class Attachment:
    """A text sent whole beside the reply (a launch command too long for an embed)."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True, slots=True)
class Reply:
    #: runbook, versions, launch, acronym, search, explain, status, help, not_found, error, ...
    kind: str
    title: str
    text: str = ""
    fields: tuple[Field, ...] = ()
    #: Wiki pages this reply cites, best first.
    pages: tuple[PageRef, ...] = ()
    #: "Did you mean" candidates, as plain strings a user could type.
    suggestions: tuple[str, ...] = ()
    footer: str = ""
    #: Errors and "not found" are shown only to the asker.
    ephemeral: bool = False
    #: Extra data for interactive renderers (family key, page number, ...). Never shown.
    meta: dict[str, Any] = field(default_factory=dict)
    #: Texts sent whole as files: never cut, unlike everything above.
    files: tuple[Attachment, ...] = ()

    @property
    def ok(self) -> bool:
        return self.kind not in ("not_found", "error", "ambiguous", "unavailable")

    def fitted(self) -> Reply:
        """This reply cut to Discord's embed limits (each part and 6000 in total)."""
        title = truncate(self.title, LIMITS.title)
        footer = truncate(self.footer, LIMITS.footer)
        fields = tuple(
            Field(
                name=truncate(f.name, LIMITS.field_name) or "\u200b",
                value=truncate(f.value, LIMITS.field_value) or "\u200b",
                inline=f.inline,
            )
            for f in self.fields[: LIMITS.fields]
        )
        budget = LIMITS.total - len(title) - len(footer)
        kept: list[Field] = []
        for f in fields:
            cost = len(f.name) + len(f.value)
            if cost > budget - 200:  # keep room for at least a short description
                break
            kept.append(f)
            budget -= cost
        text = truncate(self.text, min(LIMITS.description, max(budget, 1)))
        return replace(
            self,
            title=title,
            text=text,
            fields=tuple(kept),
            footer=footer,
            suggestions=self.suggestions[: LIMITS.suggestions],
            pages=self.pages[: LIMITS.pages],
            files=tuple(f for f in self.files if len(f.text.encode()) <= LIMITS.file_bytes)[
                : LIMITS.files
            ],
        )

    def total_length(self) -> int:
        return (
            len(self.title)
            + len(self.text)
            + len(self.footer)
            + sum(len(f.name) + len(f.value) for f in self.fields)
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["pages"] = [p.ref for p in self.pages]
        data["page_titles"] = {p.ref: p.title for p in self.pages}
        data["ok"] = self.ok
        return data
