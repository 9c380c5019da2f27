"""Is a help request complete? The wiki's onboarding checklist, item by item.

The checklist is read from the wiki: the onboarding page (linked from the front
page, or any page whose file name contains "onboarding") and its first table with
a "Required"-like column, one item per row, the "Why" column as the reason. Each
row is mapped to what it asks for (runbook, image, launch, layout, logs, client)
by its words, so a reworded row still works; rows we cannot map are listed as
``unchecked``. When the wiki has no such table, the built-in list in
``templates/triage.yaml`` (``checklist.builtin``) is used.

Each item is ``present``, ``missing`` or ``thin`` (given, but not enough: a log
shorter than the line count the row asks for, a launch command without an image,
an image without a tag ...), with a worded ``detail`` from the templates.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Final

from knowledge.launch import ImageRef, Launch
from knowledge.templates import Templates
from knowledge.wiki import Page, Table, Wiki

__all__ = [
    "ITEM_KINDS",
    "STATUSES",
    "Checklist",
    "ChecklistItem",
    "Completeness",
    "ItemStatus",
    "RequestFacts",
    "assess",
    "find_checklist",
    "item_kind",
    "load_checklist",
]

log = logging.getLogger(__name__)

STATUSES: Final = ("present", "missing", "thin", "unchecked")
#: What a checklist row asks for, tried in this order against the row's words.
ITEM_KINDS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("client", ("client", "benchmark command", "curl")),
    ("logs", ("log",)),
    ("layout", ("gpu", "layout", "topology", "tp/", "parallel")),
    ("image", ("image", "digest", "tag")),
    ("launch", ("launch", "compose", "command", "docker run")),
    ("runbook", ("runbook", "model page", "recipe", "page", "link", "hub")),
)
#: Fallback for "too few log lines" when the row names no number.
DEFAULT_MIN_LOG_LINES: Final = 100
_HEADER_WORDS: Final = ("required", "checklist", "item", "what to bring", "bring", "what")
_NUMBER_RE: Final = re.compile(r"(?<![0-9])(\d{1,5})(?![0-9])")


@dataclass(frozen=True, slots=True)
class ChecklistItem:
    #: runbook, image, launch, layout, logs, client or other.
    key: str
    label: str
    why: str = ""
    #: For logs: the fewest lines that count as enough.
    min_lines: int | None = None


@dataclass(frozen=True, slots=True)
class Checklist:
    items: tuple[ChecklistItem, ...]
    #: ``path#anchor`` of the wiki table, or None for the built-in list.
    source: str | None = None


@dataclass(frozen=True, slots=True)
class ItemStatus:
    key: str
    label: str
    status: str
    why: str = ""
    #: Worded reason for ``thin``/``missing`` (empty when present).
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Completeness:
    items: tuple[ItemStatus, ...]
    source: str | None = None

    @property
    def missing(self) -> tuple[ItemStatus, ...]:
        return tuple(i for i in self.items if i.status == "missing")


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """What the request holds, as far as the checklist cares (all redacted)."""

    model_page: str = ""
    #: True when the named page (or a page path in the text) is a page of this wiki.
    page_found: bool = False
    image_text: str = ""
    image: ImageRef | None = None
    command: str = ""
    launch: Launch | None = None
    gpus: str = ""
    settings: str = ""
    log_lines: int = 0
    client: str = ""


def item_kind(label: str) -> str:
    text = label.casefold()
    for key, words in ITEM_KINDS:
        if any(word in text for word in words):
            return key
    return "other"


def _min_lines(label: str) -> int | None:
    numbers = [int(n) for n in _NUMBER_RE.findall(label)]
    numbers = [n for n in numbers if 1 <= n <= 100_000]
    return min(numbers) if numbers else None


def _item(label: str, why: str) -> ChecklistItem:
    key = item_kind(label)
    return ChecklistItem(
        key=key,
        label=label,
        why=why,
        min_lines=(_min_lines(label) or DEFAULT_MIN_LOG_LINES) if key == "logs" else None,
    )


def _checklist_table(table: Table) -> tuple[int, int | None] | None:
    if len(table.rows) < 2 or not table.header:
        return None
    first = table.header[0].casefold()
    col = 0 if any(word in first for word in _HEADER_WORDS) else table.column("required")
    if col is None:
        return None
    return col, table.column("why", "reason", "because")


def _onboarding_pages(wiki: Wiki, front: Page | None) -> list[Page]:
    pages: list[Page] = []
    if front is not None:
        for link in front.links:
            if (
                link.path
                and link.path in wiki.pages
                and ("onboarding" in link.text.casefold() or "onboarding" in link.path.casefold())
            ):
                pages.append(wiki.pages[link.path])
    for path in sorted(wiki.pages):
        stem = path.rsplit("/", 1)[-1].casefold()
        if "onboarding" in stem and wiki.pages[path] not in pages:
            pages.append(wiki.pages[path])
    return pages


def find_checklist(wiki: Wiki, front: Page | None = None) -> Checklist | None:
    """The onboarding page's checklist table, or None when the wiki has none."""
    for page in _onboarding_pages(wiki, front):
        for section, table in page.tables:
            cols = _checklist_table(table)
            if cols is None:
                continue
            col, why_col = cols
            items = tuple(
                _item(row[col].text, row[why_col].text if why_col is not None else "")
                for row in table.rows
                if row[col].text.strip()
            )
            if items:
                anchor = section.anchor
                return Checklist(items, f"{page.path}#{anchor}" if anchor else page.path)
    return None


def load_checklist(wiki: Wiki, front: Page | None, templates: Templates) -> Checklist:
    """The wiki's checklist, else the built-in one from ``templates/triage.yaml``."""
    found = find_checklist(wiki, front)
    if found is not None:
        return found
    builtin = templates.raw("checklist.builtin")
    items = []
    for entry in builtin if isinstance(builtin, list) else []:
        if isinstance(entry, dict) and entry.get("label"):
            items.append(_item(str(entry["label"]), str(entry.get("why", ""))))
    return Checklist(tuple(items), None)


# --------------------------------------------------------------------- assessing


def _nonempty_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def _status(item: ChecklistItem, facts: RequestFacts, t: Templates) -> tuple[str, str]:
    key = item.key
    d = "completeness.detail."
    if key == "runbook":
        if facts.page_found:
            return "present", ""
        if facts.model_page.strip():
            return "thin", t(d + "page_unknown")
        return "missing", t(d + "missing")
    if key == "image":
        image = facts.image
        if image is None:
            if facts.image_text.strip():
                return "thin", t(d + "image_unreadable")
            return "missing", t(d + "missing")
        if image.digest:
            return "present", ""
        if image.tag is None:
            return "thin", t(d + "image_untagged")
        if image.tag.casefold() in ("latest", "nightly", "main", "dev"):
            return "thin", t(d + "image_floating", tag=image.tag)
        return "present", ""
    if key == "launch":
        if not facts.command.strip():
            return "missing", t(d + "missing")
        launch = facts.launch
        if launch is None or launch.kind == "unknown":
            return "thin", t(d + "launch_unknown")
        if launch.image is None and facts.image is None:
            return "thin", t(d + "launch_no_image")
        return "present", ""
    if key == "layout":
        launch = facts.launch
        has_gpus = bool(facts.gpus.strip()) or (launch is not None and launch.gpus is not None)
        has_parallel = bool(facts.settings.strip()) or (
            launch is not None and launch.tp is not None
        )
        if has_gpus and has_parallel:
            return "present", ""
        if has_gpus:
            return "thin", t(d + "layout_no_settings")
        if has_parallel:
            return "thin", t(d + "layout_no_gpus")
        return "missing", t(d + "missing")
    if key == "logs":
        if facts.log_lines == 0:
            return "missing", t(d + "missing")
        need = item.min_lines or DEFAULT_MIN_LOG_LINES
        if facts.log_lines < need:
            return "thin", t(d + "log_short", lines=facts.log_lines, need=need)
        return "present", ""
    if key == "client":
        lines = _nonempty_lines(facts.client)
        if lines == 0:
            return "missing", t(d + "missing")
        if lines == 1:
            return "thin", t(d + "client_no_output")
        return "present", ""
    return "unchecked", t(d + "unchecked")


def assess(checklist: Checklist, facts: RequestFacts, templates: Templates) -> Completeness:
    """Status of every checklist item for a request."""
    items: list[ItemStatus] = []
    for item in checklist.items:
        status, detail = _status(item, facts, templates)
        items.append(ItemStatus(item.key, item.label, status, item.why, detail))
    return Completeness(tuple(items), checklist.source)
