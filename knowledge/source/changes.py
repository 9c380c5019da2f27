"""What changed between two generations that a user would notice, and the announcement.

Compared: each runbook family's current page and Docker image (from the
catalogue), the families themselves, the glossary's terms and the wiki's
**Error** sections (known errors). Everything else (a typo fixed, a new
paragraph) is not announced. :meth:`WikiChanges.between` takes two
:class:`Snapshot` objects, each read from one loaded wiki; :func:`announcement`
words the result as a :class:`~knowledge.reply.Reply` with the wording of
``templates/source.yaml``, or None when there is nothing to say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from knowledge.reply import LIMITS, Field, PageRef, Reply
from knowledge.templates import Templates
from knowledge.text import escape_markdown, inline_code
from knowledge.triage.known_errors import KnownErrors
from knowledge.wiki import Wiki
from knowledge.wiki.catalogue import Catalogue
from knowledge.wiki.glossary import Glossary

__all__ = [
    "FamilyUpdate",
    "FamilyView",
    "NewError",
    "NewTerm",
    "Snapshot",
    "WikiChanges",
    "announcement",
]

#: Makes a page reference for reply text: (title, path, anchor) -> Markdown.
Linker = Callable[[str, str, "str | None"], str]


@dataclass(frozen=True, slots=True)
class FamilyView:
    key: str
    name: str
    #: The current runbook page and the title of its version ("" when unknown).
    page: str
    title: str
    images: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NewTerm:
    term: str
    meaning: str
    page: str
    anchor: str


@dataclass(frozen=True, slots=True)
class NewError:
    page: str
    anchor: str
    title: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The parts of one loaded wiki that announcements compare."""

    families: dict[str, FamilyView]
    terms: dict[str, NewTerm]
    #: (page, title casefolded) -> entry: an anchor renumbered is no new error.
    errors: dict[tuple[str, str], NewError]

    @classmethod
    def of(cls, wiki: Wiki, glossary: Glossary, catalogue: Catalogue) -> Snapshot:
        families = {}
        for family in catalogue.families:
            runbook = catalogue.runbook(family)
            title = family.current[0].title if family.current else runbook.page_title
            families[family.key] = FamilyView(
                key=family.key,
                name=family.name,
                page=runbook.page,
                title=title,
                images=tuple(runbook.images),
            )
        terms = {
            entry.term.casefold(): NewTerm(
                entry.term, entry.meaning, glossary.page or "", entry.anchor
            )
            for entry in glossary.entries
        }
        errors = {
            (e.page, e.title.casefold()): NewError(e.page, e.anchor, e.title)
            for e in KnownErrors.from_wiki(wiki).entries
        }
        return cls(families, terms, errors)


@dataclass(frozen=True, slots=True)
class FamilyUpdate:
    new: FamilyView
    old: FamilyView

    @property
    def page_changed(self) -> bool:
        return self.new.page != self.old.page

    @property
    def images_changed(self) -> bool:
        return bool(self.new.images) and self.new.images != self.old.images


@dataclass(frozen=True, slots=True)
class WikiChanges:
    updated: tuple[FamilyUpdate, ...] = ()
    new_families: tuple[FamilyView, ...] = ()
    new_terms: tuple[NewTerm, ...] = ()
    new_errors: tuple[NewError, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.updated or self.new_families or self.new_terms or self.new_errors)

    @classmethod
    def between(cls, old: Snapshot, new: Snapshot) -> WikiChanges:
        updated = []
        for key, view in new.families.items():
            before = old.families.get(key)
            if before is None:
                continue
            change = FamilyUpdate(view, before)
            if change.page_changed or change.images_changed:
                updated.append(change)
        return cls(
            updated=tuple(updated),
            new_families=tuple(v for k, v in new.families.items() if k not in old.families),
            new_terms=tuple(v for k, v in new.terms.items() if k not in old.terms),
            new_errors=tuple(v for k, v in new.errors.items() if k not in old.errors),
        )

    def summary(self) -> str:
        """One line for the log."""
        return (
            f"{len(self.updated)} runbooks changed, {len(self.new_families)} new families, "
            f"{len(self.new_terms)} new terms, {len(self.new_errors)} new known errors"
        )


def announcement(
    changes: WikiChanges,
    t: Templates,
    link: Linker,
    *,
    commit: str = "",
    commit_url: str | None = None,
) -> Reply | None:
    """One reply saying what changed, or None when nothing a user would notice did."""
    if not changes:
        return None
    fields: list[Field] = []
    pages: list[PageRef] = []

    def images(view: FamilyView) -> str:
        return ", ".join(inline_code(i) for i in view.images)

    lines = []
    for change in changes.updated:
        new, old = change.new, change.old
        name = escape_markdown(new.name)
        parts = []
        if change.page_changed:
            parts.append(
                t(
                    "announce.now_current",
                    family=name,
                    version=link(new.title or new.page, new.page, None),
                    was=escape_markdown(old.title or old.page),
                )
            )
        if change.images_changed:
            if parts:
                key = "announce.also_image" if old.images else "announce.also_first_image"
            else:
                key = "announce.new_image" if old.images else "announce.first_image"
            parts.append(t(key, family=name, image=images(new), was=images(old)))
        lines.append(" ".join(parts))
        pages.append(PageRef(new.page, None, new.title))
    _add_field(fields, t("announce.runbooks"), lines, t)

    lines = [
        t(
            "announce.new_family",
            family=escape_markdown(v.name),
            page=link(v.title or v.page, v.page, None),
        )
        for v in changes.new_families
    ]
    pages.extend(PageRef(v.page, None, v.title) for v in changes.new_families)
    _add_field(fields, t("announce.families"), lines, t)

    lines = [
        t(
            "announce.new_term",
            term=link(n.term, n.page, n.anchor) if n.page else inline_code(n.term),
            meaning=escape_markdown(n.meaning),
        )
        for n in changes.new_terms
    ]
    _add_field(fields, t("announce.terms"), lines, t)

    lines = [
        t("announce.new_error", page=link(e.title, e.page, e.anchor)) for e in changes.new_errors
    ]
    pages.extend(PageRef(e.page, e.anchor, e.title) for e in changes.new_errors)
    _add_field(fields, t("announce.errors"), lines, t)

    if commit:
        short = commit[:12]
        where = f"[`{short}`]({commit_url})" if commit_url else inline_code(short)
        text = t("announce.text_commit", commit=where)
    else:
        text = t("announce.text")
    return Reply(
        "announce",
        t("announce.title"),
        text,
        fields=tuple(fields),
        pages=tuple(pages),
        meta={
            "commit": commit,
            "commit_url": commit_url,
            "updated": [c.new.key for c in changes.updated],
            "new_families": [v.key for v in changes.new_families],
            "new_terms": [n.term for n in changes.new_terms],
            "new_errors": [f"{e.page}#{e.anchor}" for e in changes.new_errors],
        },
    )


def _add_field(fields: list[Field], name: str, lines: list[str], t: Templates) -> None:
    """A field of whole lines within Discord's 1024 characters, counting what is left out."""
    if not lines:
        return
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        more = t("announce.more", count=len(lines) - i)
        if used + len(line) + 1 + len(more) + 1 > LIMITS.field_value:
            kept.append(more)
            break
        kept.append(line)
        used += len(line) + 1
    fields.append(Field(name, "\n".join(kept)))
