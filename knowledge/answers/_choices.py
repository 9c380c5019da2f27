"""Autocomplete choices: model families, glossary terms and wiki folders.

Each answers from memory with at most 25 ``(name, value)`` pairs, names and
values at most 100 characters, as Discord requires.
"""

from __future__ import annotations

from knowledge.answers._state import WikiState
from knowledge.templates import Templates
from knowledge.text import clean_user_text, truncate
from knowledge.wiki import Family, GlossaryEntry

__all__ = ["AUTOCOMPLETE_LIMIT", "category_choices", "family_choices", "term_choices"]

#: Most choices Discord shows.
AUTOCOMPLETE_LIMIT = 25
#: Longest choice name or value Discord accepts (and longest input read).
_CHOICE_CHARS = 100

Choice = tuple[str, str]


def family_choices(state: WikiState, current: str) -> list[Choice]:
    """Families for ``/runbook``: the best match first, then names containing the text."""
    catalogue = state.catalogue
    text = clean_user_text(current, _CHOICE_CHARS)
    ordered: list[Family | None]
    if text:
        match = catalogue.match(text)
        key = text.casefold()
        ordered = [match.family, *match.others]
        ordered += [f for f in catalogue.families if key in f.name.casefold()]
    else:
        ordered = [catalogue.family(k) for _, k in catalogue.choices()]
    seen: set[str] = set()
    out = []
    for family in ordered:
        if family is None or family.key in seen:
            continue
        seen.add(family.key)
        out.append((truncate(family.name, _CHOICE_CHARS), family.key[:_CHOICE_CHARS]))
    return out[:AUTOCOMPLETE_LIMIT]


def category_choices(state: WikiState, current: str) -> list[Choice]:
    """Wiki folders for the ``/search`` section option: those containing the text."""
    key = clean_user_text(current, _CHOICE_CHARS).casefold()
    names = [c for c in state.categories if key in c.casefold()]
    return [(c[:_CHOICE_CHARS], c[:_CHOICE_CHARS]) for c in names[:AUTOCOMPLETE_LIMIT]]


def term_choices(state: WikiState, t: Templates, current: str) -> list[Choice]:
    """Glossary terms for ``/acronym``: prefix matches, then containing, then near misses."""
    glossary = state.glossary
    text = clean_user_text(current, _CHOICE_CHARS)
    entries: list[GlossaryEntry]
    if not text:
        entries = list(glossary.entries)
    else:
        key = text.casefold()
        starts = [e for e in glossary.entries if e.term.casefold().startswith(key)]
        inside = [
            e for e in glossary.entries if key in e.term.casefold() or key in e.meaning.casefold()
        ]
        entries = starts + inside + list(glossary.suggest(text))
    seen: set[str] = set()
    out = []
    for e in entries:
        if e.term in seen:
            continue
        seen.add(e.term)
        name = t("choices.term", term=e.term, meaning=e.meaning)
        out.append((truncate(name, _CHOICE_CHARS), e.term[:_CHOICE_CHARS]))
    return out[:AUTOCOMPLETE_LIMIT]
