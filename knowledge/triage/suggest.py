"""Which wiki sections to read for a request, each with why, best first.

Candidates come from the known errors found, the family's current runbook (and the
page the user followed), the findings' justifying sections, the pages that best
answer the request's text and error lines, and sections naming the image. Each
source adds a score in 0..1; a section's score is ``1 - prod(1 - s)`` over its
sources, so agreeing sources add up without passing 1, and each page is suggested
once, by its best section.

The request's words are read by the page ranker of :mod:`knowledge.search.pages`
(the engine behind ``/search`` with pasted text) when the suggester has one (a
family known only from those words then adds no runbook score of its own: the
ranker counted it already);
without it, a section search of the request's telling words and of the log's
first error stands in (a search hit counts only when it shares enough analysed
words with what the user wrote).
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from knowledge.launch import ImageRef
from knowledge.search import STOP, SearchResults, make_term_analyzer
from knowledge.search.pages import PageHit, PageRanker, PageRanking, error_lines
from knowledge.templates import Templates
from knowledge.triage.family import FamilyInfo
from knowledge.triage.known_errors import KnownErrorMatch
from knowledge.triage.logs import LogSummary
from knowledge.triage.request import TriageRequest
from knowledge.triage.rules import Finding
from knowledge.wiki import Wiki, status_weight

__all__ = [
    "MAX_SUGGESTIONS",
    "Searcher",
    "Suggested",
    "Suggester",
    "Suggestion",
    "with_anchor",
]

log = logging.getLogger(__name__)

#: Most suggestions returned.
MAX_SUGGESTIONS: Final = 5
#: Characters of a search query.
QUERY_CHARS: Final = 200
#: Words of a field used as a search query (the most telling ones).
QUERY_WORDS: Final = 5
#: Distinct analysed words of a field a suggestion's fit is judged on.
MAX_TERMS: Final = 40
#: A search hit must share this many words with the request (or half of them), and
#: this many before its share of the request's words counts towards confidence.
MIN_SHARED_TERMS: Final = 3
#: Characters of the user's text read for search words.
_TEXT_CHARS: Final = 4000
#: Score each source adds (searches scale theirs by rank and fit).
_WEIGHTS: Final = {
    "runbook_named": 0.55,
    "runbook_guessed": 0.4,
    "named_page": 0.3,
    "symptoms": 0.5,
    "first_error": 0.45,
    "image": 0.25,
    # the page ranker's best page (the others scale by their score relative to it)
    "ranked": 0.75,
}
#: Characters of the log whose error lines the page ranker reads (its end: the crash).
_LOG_CHARS: Final = 200_000
_FINDING_WEIGHTS: Final = {"error": 0.5, "warning": 0.4, "info": 0.15}
_WORD_RE: Final = re.compile(r"[^\W_]+")


class Searcher(Protocol):
    def __call__(self, query: str, *, limit: int) -> SearchResults | None: ...


@dataclass(frozen=True, slots=True)
class Suggestion:
    page: str
    title: str
    why: tuple[str, ...]
    score: float

    def to_json(self) -> dict[str, object]:
        return {
            "page": self.page,
            "title": self.title,
            "why": "; ".join(self.why),
            "reasons": list(self.why),
            "score": round(self.score, 3),
        }


@dataclass(frozen=True, slots=True)
class Suggested:
    """The suggestions for one request, and what confidence can be judged on."""

    suggestions: tuple[Suggestion, ...]
    #: The top search hit's share of the request's words (section search only).
    coverage: float = 0.0
    #: The page ranker's ranking of the request, when it read it.
    ranking: PageRanking | None = None

    @property
    def ranked_first(self) -> bool:
        """True when the first suggestion is the page the ranker put first."""
        if self.ranking is None or not self.ranking.hits or not self.suggestions:
            return False
        return self.suggestions[0].page.partition("#")[0] == self.ranking.hits[0].path


@dataclass(slots=True)
class _Candidate:
    page: str
    title: str
    scores: list[float] = field(default_factory=list)
    why: list[str] = field(default_factory=list)

    def add(self, score: float, why: str) -> None:
        self.scores.append(max(0.0, min(1.0, score)))
        if why and why not in self.why:
            self.why.append(why)

    @property
    def score(self) -> float:
        remaining = 1.0
        for s in self.scores:
            remaining *= 1.0 - s
        return 1.0 - remaining


def with_anchor(wiki: Wiki, ref: str) -> str:
    """``path#anchor`` for a reference; a bare page path gets its first heading's anchor."""
    if "#" in ref:
        return ref
    page = wiki.pages.get(ref)
    anchor = next((s.anchor for s in page.sections if s.anchor), None) if page else None
    return f"{ref}#{anchor}" if anchor else ref


def _word_sections(wiki: Wiki) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for page in wiki.pages.values():
        for section in page.sections:
            counts.update(set(_WORD_RE.findall(f"{section.title} {section.text}".lower())))
    return dict(counts)


def _focused_query(text: str, word_sections: Mapping[str, int], keep: int) -> str:
    """The ``keep`` most telling words of ``text`` (fewest sections holding them, but some),
    in their original order: a short query the index answers fast and on topic."""
    words: list[str] = []
    for word in _WORD_RE.findall(text[:_TEXT_CHARS].lower()):
        if word not in words and word not in STOP and len(word) > 1 and word_sections.get(word):
            words.append(word)
    if len(words) <= keep:
        return " ".join(words)
    chosen = set(sorted(words, key=lambda w: (word_sections[w], -len(w)))[:keep])
    return " ".join(w for w in words if w in chosen)


def _terms(text: str) -> list[str]:
    analyze = make_term_analyzer()
    return list(dict.fromkeys(analyze(text)))[:MAX_TERMS]


def _coverage(terms: Sequence[str], wiki: Wiki, path: str, anchor: str) -> tuple[float, list[str]]:
    if not terms:
        return 0.0, []
    page = wiki.pages.get(path)
    section = page.section(anchor) if page is not None else None
    if section is None:
        return 0.0, []
    analyze = make_term_analyzer()
    text = " ".join((page.title if page else "", section.title, section.text[:20_000]))
    present = set(analyze(text))
    shared = [t for t in terms if t in present and t not in STOP]
    return len(shared) / len(terms), shared


def _words_for(query: str, stems: Sequence[str]) -> list[str]:
    """The user's own words behind analysed ``stems``, in query order."""
    wanted = set(stems)
    analyze = make_term_analyzer()
    words: list[str] = []
    for word in _WORD_RE.findall(query)[:200]:
        if any(t in wanted for t in analyze(word)) and word.casefold() not in words:
            words.append(word.casefold())
    return words


@dataclass(frozen=True, slots=True)
class _CodeText:
    """The code blocks of every section, end to end, to find an image reference in one
    pass: each section's blocks joined by NUL, sections one after another in the wiki's
    page order. A reference holding no NUL occurs in a section's code exactly when it
    occurs in that section's run of :attr:`text`."""

    text: str
    #: Where each section's run starts in :attr:`text` (sections with code only).
    starts: list[int]
    #: Each run's (page path, section anchor).
    refs: list[tuple[str, str]]
    #: For each run, where the next page's runs start (``len(text)`` after the last).
    next_page: list[int]

    @classmethod
    def of(cls, wiki: Wiki) -> _CodeText:
        parts: list[str] = []
        starts: list[int] = []
        refs: list[tuple[str, str]] = []
        pages: list[int] = []
        size = 0
        for number, page in enumerate(wiki.pages.values()):
            for section in page.sections:
                if not section.code:
                    continue
                run = "\0".join(block.text for block in section.code) + "\0"
                starts.append(size)
                refs.append((page.path, section.anchor))
                pages.append(number)
                parts.append(run)
                size += len(run)
        next_page = [size] * len(starts)
        for i in range(len(starts) - 2, -1, -1):
            next_page[i] = starts[i + 1] if pages[i + 1] != pages[i] else next_page[i + 1]
        return cls("".join(parts), starts, refs, next_page)

    def first_sections(self, ref: str) -> list[tuple[str, str]]:
        """(path, anchor) of the first section of each page whose code holds ``ref``
        (which holds no NUL), in page order."""
        found: list[tuple[str, str]] = []
        at = self.text.find(ref)
        while at != -1:
            run = bisect_right(self.starts, at) - 1
            found.append(self.refs[run])
            at = self.text.find(ref, self.next_page[run])
        return found


@dataclass(frozen=True, slots=True)
class Suggester:
    """Ranks wiki sections for requests against one loaded wiki (prepared once)."""

    wiki: Wiki
    templates: Templates
    search: Searcher | None = None
    statuses: Mapping[str, str] = field(default_factory=dict)
    #: Lower-case word -> number of sections holding it (picks a query's telling words).
    word_sections: Mapping[str, int] = field(default_factory=dict)
    #: Pages for the request's text and error lines (replaces the section search).
    ranker: PageRanker | None = None
    #: The wiki's code blocks, searched for the request's image (made from ``wiki``).
    code: _CodeText = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _CodeText.of(self.wiki))

    @classmethod
    def build(
        cls,
        wiki: Wiki,
        templates: Templates,
        search: Searcher | None = None,
        statuses: Mapping[str, str] | None = None,
        ranker: PageRanker | None = None,
    ) -> Suggester:
        words = _word_sections(wiki) if ranker is None else {}
        return cls(wiki, templates, search, dict(statuses or {}), words, ranker)

    def suggest(
        self,
        request: TriageRequest,
        known: Sequence[KnownErrorMatch],
        findings: Sequence[Finding],
        family: FamilyInfo | None,
        summary: LogSummary | None,
        image: ImageRef | None,
    ) -> Suggested:
        """The best section of each of the best pages, best first."""
        t = self.templates
        candidates: dict[str, _Candidate] = {}

        def add(ref: str, score: float, why: str, title: str | None = None) -> None:
            ref = with_anchor(self.wiki, ref)
            path, _, anchor = ref.partition("#")
            if path not in self.wiki.pages:
                return
            cand = candidates.get(ref)
            if cand is None:
                cand = candidates[ref] = _Candidate(ref, title or self._title(path, anchor))
            cand.add(score, why)

        for match in known:
            if match.lines and match.field != "text":
                why = t("why.known_error", field=match.field, line=match.lines[0].number)
            else:
                why = t("why.known_error_text", field=match.field)
            add(match.page, match.score, why, match.title)
        ranking = None
        if self.ranker is not None:
            ranking = self._rank(self.ranker, request, summary)
        if family is not None:
            rb = family.runbook
            ref = f"{rb.page}#{rb.launch_anchor}" if rb.launch_anchor else rb.page
            named = family.how in ("page", "model", "image")
            weight = _WEIGHTS["runbook_named" if named else "runbook_guessed"]
            if _ranked_family(family, ranking):
                weight = 0.0  # the reason stays with the page, the score is the ranker's
            add(ref, weight, t("why.runbook", family=family.family.name))
            if family.named_page and family.named_page != rb.page:
                add(family.named_page, _WEIGHTS["named_page"], t("why.named_page"))
        for finding in findings:
            if finding.page and not finding.id.startswith("checklist."):
                weight = _FINDING_WEIGHTS.get(finding.severity, _FINDING_WEIGHTS["info"])
                add(finding.page, weight, t("why.finding", id=finding.id))
        coverage = 0.0
        symptoms = " ".join(filter(None, (request.actual, request.text, request.expected)))
        if ranking is not None:
            top = ranking.hits[0].score if ranking.hits else 0.0
            for hit in ranking.hits:
                ref = f"{hit.path}#{hit.anchor}" if hit.anchor else hit.path
                score = _WEIGHTS["ranked"] * (hit.score / top if top > 0 else 0.0)
                add(ref, score, self._ranked_why(hit), _hit_title(hit.title, hit.section_title))
        else:
            if symptoms.strip():
                coverage = self._search(symptoms, "symptoms", add)
            if summary is not None and summary.first_error and not known:
                self._search(summary.first_error, "first_error", add)
        if image is not None and image.tag:
            for ref in self._image_sections(image):
                add(ref, _WEIGHTS["image"], t("why.image"))
        # Equal scores (known errors quoted on several pages all reach 1.0): the page
        # ranker's order decides, a troubleshooting entry before a model's runbook
        # that repeats it; then the path.
        order = {hit.path: i for i, hit in enumerate(ranking.hits)} if ranking else {}
        last = len(order)
        ranked = sorted(
            candidates.values(),
            key=lambda c: (-c.score, order.get(c.page.partition("#")[0], last), c.page),
        )
        best: dict[str, _Candidate] = {}
        for cand in ranked:  # each page once, by its best section, with every reason
            path = cand.page.partition("#")[0]
            if path not in best:
                best[path] = cand
            else:
                best[path].why.extend(w for w in cand.why if w not in best[path].why)
        suggestions = tuple(
            Suggestion(c.page, c.title, tuple(c.why), c.score)
            for c in list(best.values())[:MAX_SUGGESTIONS]
            if c.score > 0.0
        )
        return Suggested(suggestions, coverage, ranking)

    @staticmethod
    def _rank(
        ranker: PageRanker, request: TriageRequest, summary: LogSummary | None
    ) -> PageRanking:
        """The ranker's pages for everything the user wrote and the log's error lines."""
        text = "\n".join(
            filter(None, (request.text, request.actual, request.expected, request.tried))
        )
        log_lines = request.log[-_LOG_CHARS:].splitlines()
        errors = error_lines(log_lines + request.client[-_LOG_CHARS:].splitlines())
        if summary is not None and summary.first_error and summary.first_error not in errors:
            errors.insert(0, summary.first_error)
        return ranker.rank(text, errors, limit=MAX_SUGGESTIONS * 2)

    def _ranked_why(self, hit: PageHit) -> str:
        t = self.templates
        for code, detail in hit.why:
            if code == "error_quote":
                return t("why.ranked_quote")
            if code == "terms":
                return t("why.symptoms", terms=detail)
            if code == "family":
                return t("why.ranked_family", family=detail)
        return t("why.ranked")

    def _title(self, path: str, anchor: str) -> str:
        page = self.wiki.pages.get(path)
        if page is None:
            return path
        section = page.section(anchor) if anchor else None
        if section is None or section.title == page.title:
            return page.title
        return _hit_title(page.title, section.title)

    def _image_sections(self, image: ImageRef, limit: int = 3) -> list[str]:
        """Sections whose code names exactly this image (repository and tag), current first:
        the first such section of each page, found in the wiki's code laid end to end."""
        ref = f"{image.repository}:{image.tag}"
        if "\0" not in ref:
            sections = self.code.first_sections(ref)
        else:  # the code laid end to end is NUL-separated: read block by block
            sections = []
            for page in self.wiki.pages.values():
                naming = (s for s in page.sections if any(ref in b.text for b in s.code))
                if (first := next(naming, None)) is not None:
                    sections.append((page.path, first.anchor))
        found = [
            (-status_weight(self.statuses.get(path)), f"{path}#{anchor}")
            for path, anchor in sections
        ]
        found.sort()
        return [ref for _, ref in found[:limit]]

    def _search(self, text: str, reason: str, add: Callable[..., None]) -> float:
        """Run ``text``'s telling words through the index; add the hits; return the top
        hit's share of the query terms."""
        if self.search is None:
            return 0.0
        query = _focused_query(text, self.word_sections, QUERY_WORDS)[:QUERY_CHARS]
        if not query:
            return 0.0
        try:
            results = self.search(query, limit=MAX_SUGGESTIONS)
        except Exception:  # the index is advice too
            log.exception("triage search failed")
            return 0.0
        if results is None or not results.hits:
            return 0.0
        terms = _terms(text[:_TEXT_CHARS])  # fit is judged against everything the user wrote
        top = results.hits[0].score or 1.0
        best = 0.0
        weight = _WEIGHTS[reason]
        for hit in results.hits:
            covered, shared = _coverage(terms, self.wiki, hit.path, hit.anchor)
            if len(shared) < MIN_SHARED_TERMS and covered < 0.5:
                continue  # a word or two in common is no reason to read a page
            if len(shared) >= MIN_SHARED_TERMS:
                best = max(best, covered)
            relative = (hit.score / top) if top > 0 else 0.0
            score = weight * relative * (0.35 + 0.65 * covered)
            if reason == "symptoms":
                words = _words_for(text[:_TEXT_CHARS], shared)[:5]
                why = self.templates("why.symptoms", terms=", ".join(words) or query[:40])
            else:
                why = self.templates(f"why.{reason}")
            add(hit.id, score, why, _hit_title(hit.page_title, hit.section_title))
        return best


def _ranked_family(family: FamilyInfo, ranking: PageRanking | None) -> bool:
    """True when the family is known from the user's words alone and the page ranker,
    reading the same words, named it too: its ranking already weighs the family's hub
    and current page, and adding the runbook again would count one mention twice."""
    return family.how == "name" and ranking is not None and ranking.family == family.family.name


def _hit_title(page: str, section: str) -> str:
    return page if not section or section == page else f"{page} › {section}"
