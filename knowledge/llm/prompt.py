"""What the model is given: the question, redacted, and the wiki sections that answer it.

Retrieval is the page ranking the bot already trusts for pasted questions
(:class:`knowledge.search.pages.PageRanker`): its confidence decides whether a model
is asked at all (:func:`confident`). The best section of each of the top pages
becomes one numbered source, its prose and code as the page has them, capped; the
model may cite only those numbers. The wording of the system prompt and of the
user message is data (``templates/llm.yaml``, ``llm.*``).

The question, and the logs and launch command of a support request, go through the
same redaction as tickets (:func:`knowledge.triage.redact.redact`), and then through
the mask of public posts (:func:`~knowledge.triage.redact.mask_credentials`: keys in
no known format) before anything is built from them: no secret reaches the model
server, which may well be a third party's.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from knowledge.answers._state import WikiState
from knowledge.search.pages import PageHit, error_lines
from knowledge.templates import Templates
from knowledge.text import clean_user_text, cut_at_word, cut_tail, truncate
from knowledge.triage.redact import redact_public
from knowledge.wiki import Section

__all__ = [
    "CONFIDENT",
    "MAX_QUESTION_CHARS",
    "Retrieval",
    "Source",
    "build_messages",
    "confident",
    "retrieve",
]

#: Ranking confidences at which the model is asked (see ``PageRanker._confidence``).
CONFIDENT = frozenset({"high", "medium"})
#: The question as sent: Discord's longest option is 6,000 characters.
MAX_QUESTION_CHARS = 2000
#: A support request's log and launch command, each, as sent.
MAX_CONTEXT_CHARS = 2500
#: Of a log or command, what is redacted before the part sent is cut from it: as much
#: as the intake stores of a log (a longer text, from elsewhere, loses its start).
_REDACTED_CHARS = 200_000
_MAX_SOURCES = 4
_SOURCE_CHARS = 1800
_SOURCES_BUDGET = 6000
_CODE_CHARS = 900
_URL = re.compile(r"https?://[^\s<>()\[\]`\"']+", re.IGNORECASE)
#: Tags that would pass for the prompt's own frame inside a source or the question.
_FRAME = re.compile(r"<(\s*/?\s*(?:source|context)\b)", re.I)


@dataclass(frozen=True, slots=True)
class Source:
    """One wiki section given to the model under ``[number]``."""

    number: int
    path: str
    anchor: str
    page_title: str
    section_title: str
    text: str
    #: Every http(s) URL the section quotes (links and bare URLs): the only URLs other
    #: than the wiki's that an answer citing it may link to.
    urls: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.path}#{self.anchor}" if self.anchor else self.path


@dataclass(frozen=True, slots=True)
class Retrieval:
    """The redacted question, how sure the ranking is, and the sources it picked."""

    question: str
    context: tuple[tuple[str, str], ...]
    confidence: str
    sources: tuple[Source, ...]
    hits: tuple[PageHit, ...]
    #: Secrets removed from the question and its context.
    redacted: int
    seconds: float


def confident(retrieval: Retrieval) -> bool:
    """True when the ranking is sure enough of its pages for a model to be asked."""
    return retrieval.confidence in CONFIDENT and bool(retrieval.sources)


def retrieve(
    state: WikiState, question: str, context: Mapping[str, str] | None = None
) -> Retrieval:
    """Rank the wiki's pages for ``question`` (and a request's ``context``: ``log``,
    ``command``) and pick the sections a model will be given."""
    started = time.perf_counter()
    removed = 0
    cleaned = redact_public(cut_at_word(question, MAX_QUESTION_CHARS * 2), "question")
    removed += cleaned.count
    text = _unframed(clean_user_text(cleaned.text, MAX_QUESTION_CHARS))
    extra: list[tuple[str, str]] = []
    for name, value in (context or {}).items():
        if not value or not value.strip():
            continue
        # Redacted before it is cut to what is sent: a cut first could part a secret
        # from its label (``--password``, a one-line log cut at a word), and a key block
        # redacted to a marker would then bring the bare value into the part sent.
        done = redact_public(cut_tail(value, _REDACTED_CHARS), name)
        removed += done.count
        lines = [ln.rstrip() for ln in done.text.splitlines() if ln.strip()]
        kept = _unframed("\n".join(lines))[-MAX_CONTEXT_CHARS:]
        extra.append((name, kept))
    errors = error_lines([line for _, value in extra for line in value.splitlines()])
    ranking = state.ranker.rank(" ".join([text, *(v for _, v in extra)]), errors, limit=8)
    sources: list[Source] = []
    budget = _SOURCES_BUDGET
    for hit in ranking.hits:
        if len(sources) >= _MAX_SOURCES or budget <= 200:
            break
        source = _source(state, hit, len(sources) + 1, min(_SOURCE_CHARS, budget))
        if source is None:
            continue
        sources.append(source)
        budget -= len(source.text)
    return Retrieval(
        text,
        tuple(extra),
        ranking.confidence,
        tuple(sources),
        ranking.hits,
        removed,
        time.perf_counter() - started,
    )


def _source(state: WikiState, hit: PageHit, number: int, limit: int) -> Source | None:
    page = state.wiki.pages.get(hit.path)
    if page is None:
        return None
    section = page.section(hit.anchor) if hit.anchor else None
    if section is None:
        section = next((s for s in page.sections if s.text.strip() or s.code), None)
    if section is None:
        return None
    return Source(
        number,
        page.path,
        section.anchor,
        page.title,
        section.title or page.title,
        _section_text(section, limit),
        _urls(section),
    )


def _section_text(section: Section, limit: int) -> str:
    """The section as the model reads it: its prose, then its code blocks, capped."""
    parts = [section.text.strip()]
    for block in section.code:
        code = block.text.strip()
        if not code:
            continue
        if len(code) > _CODE_CHARS:
            code = code[:_CODE_CHARS].rsplit("\n", 1)[0] + "\n..."
        parts.append(f"```{block.lang}\n{code}\n```")
    return _unframed(truncate("\n\n".join(p for p in parts if p), limit))


def _urls(section: Section) -> tuple[str, ...]:
    found = [link.href for link in section.links if link.href.startswith(("http://", "https://"))]
    found += _URL.findall(section.text)
    for block in section.code:
        found += _URL.findall(block.text)
    return tuple(dict.fromkeys(u.rstrip(".,;:") for u in found))


def _unframed(text: str) -> str:
    """``text`` with tags that imitate the prompt's frame (``</source 1>``) defused."""
    return _FRAME.sub(r"(\1", text)


def build_messages(t: Templates, retrieval: Retrieval) -> list[dict[str, str]]:
    """The chat messages: the system prompt, then the sources and the question."""
    sources = "\n\n".join(
        t(
            "llm.source",
            number=s.number,
            page=s.page_title,
            section=s.section_title,
            ref=s.ref,
            text=s.text,
        )
        for s in retrieval.sources
    )
    context = "\n\n".join(
        t("llm.context", name=name, text=text) for name, text in retrieval.context
    )
    user = t(
        "llm.user",
        sources=sources,
        numbers=", ".join(f"[{s.number}]" for s in retrieval.sources),
        context=context,
        question=retrieval.question,
    )
    return [
        {"role": "system", "content": t("llm.system")},
        {"role": "user", "content": user},
    ]
