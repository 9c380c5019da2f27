"""``/acronym`` and ``/explain``: glossary terms, one looked up or every one in a text."""

from __future__ import annotations

from knowledge.answers._format import link, names
from knowledge.answers._state import WikiState
from knowledge.reply import Field, PageRef, Reply
from knowledge.templates import Templates
from knowledge.text import escape_markdown, inline_code, inline_code_head
from knowledge.wiki import GlossaryEntry, Lookup

__all__ = ["MAX_EXPLAIN_CHARS", "acronym", "explain"]

#: Longest text ``/explain`` reads; the rest is ignored.
MAX_EXPLAIN_CHARS = 8000
#: Sections of other pages offered when a term is not in the glossary.
_MISSING_HITS = 3


def acronym(state: WikiState, t: Templates, query: str) -> Reply:
    """The glossary entry for ``query``: a term, a composite such as ``DCP4``, or a meaning."""
    glossary = state.glossary
    if not glossary.available:
        return Reply(
            "unavailable",
            t("acronym.no_glossary_title"),
            t("acronym.no_glossary"),
            ephemeral=True,
        )
    found = glossary.lookup(query)
    if not found.query:
        example = glossary.entries[0].term if glossary.entries else "TP"
        return Reply(
            "not_found",
            t("acronym.empty_title"),
            t("acronym.empty", example=inline_code(example)),
            ephemeral=True,
        )
    if found.entry is None:
        return _missing(state, t, found)
    return _entry(state, t, found, found.entry)


def _entry(state: WikiState, t: Templates, found: Lookup, entry: GlossaryEntry) -> Reply:
    term, meaning = escape_markdown(entry.term), escape_markdown(entry.meaning)
    if found.how == "composite":
        text = t(
            "acronym.composite",
            written=inline_code(found.query),
            term=term,
            meaning=meaning,
            number=found.number,
        )
    elif found.how == "meaning":
        text = t(
            "acronym.via_meaning", query=escape_markdown(found.query), term=term, meaning=meaning
        )
    else:
        text = t("acronym.meaning", term=term, meaning=meaning)
    fields = []
    if entry.notes:
        fields.append(Field(t("acronym.notes"), escape_markdown(entry.notes)))
    return Reply(
        "acronym",
        t("acronym.title", term=entry.term),
        text,
        fields=tuple(fields),
        pages=(PageRef(state.glossary.page or "", entry.anchor, entry.section),),
        footer=t("acronym.section", section=entry.section),
        meta={"term": entry.term, "how": found.how, "number": found.number},
    )


def _missing(state: WikiState, t: Templates, found: Lookup) -> Reply:
    text = t("acronym.not_found")
    if found.suggestions:
        text = t(
            "acronym.did_you_mean",
            names=names(t, [s.term for s in found.suggestions]),
            then=text,
        )
    fields = []
    pages: list[PageRef] = []
    hits = state.search(found.query, limit=_MISSING_HITS).hits
    if hits:
        lines = t.lines(
            "acronym.search_hit",
            (
                {
                    "link": link(
                        t,
                        state.links,
                        t("acronym.search_hit_title", page=h.page_title, section=h.section_title),
                        h.path,
                        h.anchor,
                    )
                }
                for h in hits
            ),
        )
        fields.append(Field(t("acronym.search_hits"), lines))
        pages = [PageRef(h.path, h.anchor, h.section_title) for h in hits]
    return Reply(
        "not_found",
        t("acronym.not_found_title", query=inline_code_head(found.query)),
        text,
        fields=tuple(fields),
        pages=tuple(pages),
        suggestions=tuple(s.term for s in found.suggestions),
        ephemeral=True,
    )


def explain(state: WikiState, t: Templates, text: str) -> Reply:
    """Every glossary term used in ``text``, each expanded once, in order of use."""
    glossary = state.glossary
    if not glossary.available:
        return Reply(
            "unavailable",
            t("acronym.no_glossary_title"),
            t("explain.no_glossary"),
            ephemeral=True,
        )
    cleaned = text[:MAX_EXPLAIN_CHARS]
    if not cleaned.strip():
        return Reply("not_found", t("explain.none_title"), t("explain.empty"), ephemeral=True)
    mentions = glossary.scan(cleaned)
    if not mentions:
        return Reply("not_found", t("explain.none_title"), t("explain.none"), ephemeral=True)
    lines = [
        t(
            "explain.line_composite",
            written=escape_markdown(m.written),
            term=escape_markdown(m.entry.term),
            meaning=escape_markdown(m.entry.meaning),
            number=m.number,
        )
        if m.number is not None
        else t(
            "explain.line",
            written=escape_markdown(m.written),
            meaning=escape_markdown(m.entry.meaning),
        )
        for m in mentions
    ]
    page = glossary.page or ""
    return Reply(
        "explain",
        t("explain.title"),
        t.plural("explain.found", len(mentions), lines="\n".join(lines)),
        pages=tuple(
            dict.fromkeys(PageRef(page, m.entry.anchor, m.entry.section) for m in mentions)
        ),
        meta={"terms": [m.entry.term for m in mentions]},
    )
