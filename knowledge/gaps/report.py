"""The gaps report: unanswered requests grouped by the terms that tell them apart.

A term tells a request apart when it names something (a capital inside a sentence,
digits, a compound: ``GSP``, ``qwen3-vl``; not a word in small letters) and the wiki
rarely uses it: each such term of a query is weighed by its inverse document
frequency over the wiki's pages (a word on every page tells nothing; a model or an
error the wiki never names tells the most). Each request keeps its few most telling
terms (of equal weight, the earlier in the query: its subject). Groups are then
formed greedily, as frequent-term clustering does: the term shared by the
most requests not yet grouped makes a group of them, until no term is shared;
what is left stands alone. For each group: its terms, the count, three example
queries, and the pages the answers came closest with (the pages worth extending,
or the subject of a page worth writing).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from knowledge.gaps.store import GapRecord
from knowledge.wiki import Wiki

__all__ = ["GapGroup", "GapsReport", "TermWeights", "gaps_report", "named_terms", "terms_of"]

#: A query of at most this many words is a name (a term, a family), all of it telling.
SHORT_QUERY_WORDS: Final = 3
#: Telling terms kept per request.
TERMS_PER_REQUEST: Final = 4
#: Example queries shown per group.
EXAMPLES: Final = 3
#: Closest pages shown per group.
PAGES: Final = 3
#: A term on more than this share of the wiki's pages tells nothing.
COMMON_SHARE: Final = 0.2

_TOKEN = re.compile(r"[a-z0-9][a-z0-9.+_-]*[a-z0-9+]|[a-z]{2,}")
_PARTS = re.compile(r"[-._+]+")
_RAW_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]*[A-Za-z0-9+]|[A-Za-z]{2,}")
#: Nothing before the word but the start of the text or of a sentence.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)[\W_]*$")
#: English function and help-request words: they tell no subject apart.
STOPWORDS: Final = frozenset(
    """
    a about above after again against all also am an and any anyone anything are as at be
    because been before being below between both but by can cannot could did do does doing
    don done down during each else even ever every few for from further get gets getting
    got had has have having he help her here hers him his how however i if in into is it its
    itself just know let like make makes many may me might more most much must my need needs
    no nor not now of off on once one only or other our ours out over own please same she
    should since so some still such than thank thanks that the their theirs them then there
    these they this those though through to too try trying under until up us use used using
    very want wanted was way we well were what when where whether which while who whom why
    will with without work works working would yet you your yours anybody someone something
    seems seem getting happen happens happened issue issues problem problems question
    questions right wrong sure thing things actually really able instead although others
    another new brand either neither both nothing everything always never often sometimes
    already yet again first last next previous around across among upon via per etc ok okay
    hi hello hey guys folks anyone thoughts idea ideas suggestion suggestions tried tries
    says said saying shows showed shown tell told see seen look looks looked find found
    give gives given take takes took goes going went come comes came keep keeps kept
    put puts set sets start starts started stop stops stopped run runs ran running
    warn warns plan plans expect expected expecting

    """.split()  # noqa: SIM905 - a word list reads better as words
)


@dataclass(frozen=True, slots=True)
class TermWeights:
    """Inverse document frequency of terms over a wiki's pages."""

    pages: int
    frequency: Mapping[str, int]

    @classmethod
    def of(cls, wiki: Wiki) -> TermWeights:
        frequency: Counter[str] = Counter()
        for page in wiki.pages.values():
            words: set[str] = set(terms_of(page.title))
            for section in page.sections:
                words.update(terms_of(section.title))
                words.update(terms_of(section.text))
            frequency.update(words)
        return cls(len(wiki.pages), frequency)

    def weight(self, term: str) -> float:
        return math.log((self.pages + 1) / (self.frequency.get(term, 0) + 1)) + 1.0

    def telling(self, term: str) -> bool:
        return self.frequency.get(term, 0) <= COMMON_SHARE * self.pages


def terms_of(text: str) -> list[str]:
    """Lower-case words of ``text``: a compound (``qwen3-vl``, ``nccl_p2p_level``) whole
    and by its parts (``qwen3``), so variants of one model meet; English function words,
    numbers and versions (``0.26.1rc1``, ``3-6x``) left out."""
    found = []
    for word in _TOKEN.findall(text.casefold()):
        word = word.strip(".-_+")
        if len(word) < 2 or word in STOPWORDS or word[0].isdigit():
            continue
        found.append(word)
        parts = [p for p in _PARTS.split(word) if p]
        if len(parts) > 1:
            found.extend(
                p for p in parts if len(p) >= 3 and not p[0].isdigit() and p not in STOPWORDS
            )
    return found


def _specific(term: str) -> bool:
    """A compound or a word with digits (a model, a flag, an error name): more telling
    than a plain word the wiki happens not to use."""
    return any(c.isdigit() or c in "-_." for c in term)


@dataclass(frozen=True, slots=True)
class GapGroup:
    terms: tuple[str, ...]
    count: int
    examples: tuple[str, ...]
    pages: tuple[str, ...]
    commands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GapsReport:
    groups: tuple[GapGroup, ...]
    requests: int
    since_days: int | None

    def to_json(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "since_days": self.since_days,
            "groups": [
                {
                    "terms": list(g.terms),
                    "count": g.count,
                    "examples": list(g.examples),
                    "pages": list(g.pages),
                    "commands": list(g.commands),
                }
                for g in self.groups
            ],
        }


def named_terms(text: str) -> list[str]:
    """The terms of ``text`` (:func:`terms_of`) that name something: written with a
    capital inside a sentence (``GSP``, ``Proxmox``, ``YaRN``), or with digits or as a
    compound (``qwen3-vl``, ``--tensor-parallel-size``). A word in small letters
    (``execution``, ``phase``) is ordinary language, however rare in the wiki. A query of
    a few words (``/acronym QQZX``, ``/runbook zorblax``) names what it asks for whole."""
    if len(text.split()) <= SHORT_QUERY_WORDS:
        return terms_of(text)  # a term or a family asked for by name: all of it names
    named: list[str] = []
    for match in _RAW_TOKEN.finditer(text):
        raw = match.group(0)
        opens_sentence = _SENTENCE_START.search(text[: match.start()]) is not None
        capital = any(c.isupper() for c in raw[1:]) or (raw[0].isupper() and not opens_sentence)
        if capital or _specific(raw.casefold()):
            named.extend(terms_of(raw))
    return named


def _telling_terms(record: GapRecord, weights: TermWeights) -> list[str]:
    seen: dict[str, float] = {}
    for term in named_terms(record.query):
        if weights.telling(term):
            seen.setdefault(term, weights.weight(term))
    order = list(seen)  # first use in the query
    ranked = sorted(seen, key=lambda t: (-round(seen[t], 1), order.index(t)))
    return ranked[:TERMS_PER_REQUEST]


def gaps_report(
    records: Iterable[GapRecord], weights: TermWeights, *, since_days: int | None = None
) -> GapsReport:
    records = list(records)
    telling = [set(_telling_terms(r, weights)) for r in records]
    left = set(range(len(records)))
    groups: list[tuple[tuple[str, ...], list[int]]] = []
    while True:
        holders: dict[str, list[int]] = {}
        for index in left:
            for term in telling[index]:
                holders.setdefault(term, []).append(index)
        shared = [(t, ix) for t, ix in holders.items() if len(ix) >= 2]
        if not shared:
            break
        term, members = max(
            shared, key=lambda item: (len(item[1]), weights.weight(item[0]), item[0])
        )
        # The group's other terms: those most of its members share too.
        counts = Counter(t for i in members for t in telling[i] if t != term)
        extra = [t for t, n in counts.most_common() if n * 2 > len(members)][:2]
        groups.append(((term, *extra), sorted(members)))
        left -= set(members)
    for index in sorted(left):
        terms = tuple(_telling_terms(records[index], weights)[:2])
        groups.append((terms, [index]))
    built = [_group(terms, [records[i] for i in members]) for terms, members in groups]
    built.sort(key=lambda g: (-g.count, g.terms))
    return GapsReport(tuple(built), len(records), since_days)


def _group(terms: tuple[str, ...], members: list[GapRecord]) -> GapGroup:
    queries = Counter(r.query for r in members)
    examples = tuple(q for q, _ in sorted(queries.items(), key=lambda kv: (-kv[1], len(kv[0]))))
    pages = Counter(p for r in members for p in r.pages)
    commands = Counter(r.command for r in members)
    return GapGroup(
        terms=terms,
        count=len(members),
        examples=examples[:EXAMPLES],
        pages=tuple(p for p, _ in pages.most_common(PAGES)),
        commands=tuple(c for c, _ in commands.most_common()),
    )
