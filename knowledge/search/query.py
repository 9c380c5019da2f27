"""Turn untrusted user text into a bounded list of index terms.

User text never reaches a Whoosh query parser: it is cleaned here (NFKC, format
characters dropped, length capped) and cut into terms with the same analyzer the
index uses, and the index builds ``Term`` query objects from those terms. So
``*``, ``body:*``, ``[a TO z]``, ``(((`` or ``AND OR NOT`` are only words (or
nothing) and can never expand into a slow wildcard, range or field query.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

from whoosh.analysis import (
    STOP_WORDS,
    Analyzer,
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StopFilter,
    Token,
)

from knowledge.text import cap_user_text, clean_user_text

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "MAX_TERM_CHARS",
    "PROBLEM_EMPTY",
    "PROBLEM_NO_WORDS",
    "STOP",
    "TOKEN_PATTERN",
    "PreparedQuery",
    "VersionHeadFilter",
    "clean_text",
    "make_analyzer",
    "prepare_query",
]

log = logging.getLogger(__name__)

#: Longest query text (after cleaning) that is analysed; the rest is cut off.
MAX_QUERY_CHARS = 200
#: Most distinct terms one query may hold; later ones are ignored.
MAX_QUERY_TERMS = 16
#: Longer tokens are dropped, both when indexing and when querying.
MAX_TERM_CHARS = 64

#: Versions stay whole (``2.28.9``, ``K2.7``, ``Qwen3.5``); everything else is split on
#: anything that is not a letter or digit, underscores included (``_zero_fill`` ->
#: ``zero fill``, ``torch.AcceleratorError`` -> ``torch acceleratorerror``).
TOKEN_PATTERN = r"[^\W_]*\d+(?:\.\d+)+|[^\W_]+"

#: Whoosh's English stop words plus auxiliaries, pronouns and question words, which
#: otherwise survive as stems that match nearly every section ("was" -> "wa").
_MORE_STOP = """
    was were been being has had having do does did doing done am i me my mine our ours
    they them their theirs he him his she her hers its what which who whom whose how
    why where there here so than then too very just also about into onto any all some
    but these those would should could shall might must please use used uses using
"""
STOP = frozenset(STOP_WORDS) | frozenset(_MORE_STOP.split())


PROBLEM_EMPTY = "empty query"
PROBLEM_NO_WORDS = "no searchable words in the query"


class VersionHeadFilter(Filter):
    """After a versioned name also emit its name part: ``qwen3.5`` -> ``qwen3.5 qwen3``.

    So "qwen3" finds pages about Qwen3.5, while "qwen3.5" (both terms required)
    does not find pages that only know Qwen3. Bare numbers (``2.28.9``) are left.
    """

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        for token in tokens:
            text = token.text
            yield token
            head, dot, _ = text.partition(".")
            if dot and head and not head.isdigit():
                extra = token.copy()
                extra.text = head
                yield extra


def make_analyzer() -> Analyzer:
    """The analyzer shared by every text field of the index and by queries."""
    return (
        RegexTokenizer(TOKEN_PATTERN)
        | LowercaseFilter()
        | VersionHeadFilter()
        | StopFilter(stoplist=STOP, minsize=2, maxsize=MAX_TERM_CHARS)
        | StemFilter(cachesize=50000)
    )


def clean_text(raw: str, max_chars: int = MAX_QUERY_CHARS) -> str:
    """The query text as searched: :func:`knowledge.text.clean_user_text` at our cap."""
    return clean_user_text(raw, max_chars)


@dataclass(frozen=True, slots=True)
class PreparedQuery:
    """A cleaned query: the text actually run and its index terms, in order."""

    text: str
    terms: tuple[str, ...]
    #: Short user-facing reason when nothing can be searched, else None.
    problem: str | None = None
    #: True when words beyond the limits were dropped.
    truncated: bool = False


def prepare_query(
    raw: str,
    analyzer: Analyzer,
    *,
    max_chars: int = MAX_QUERY_CHARS,
    max_terms: int = MAX_QUERY_TERMS,
) -> PreparedQuery:
    """Clean ``raw`` and cut it into at most ``max_terms`` distinct index terms."""
    text, truncated = cap_user_text(raw or "", max_chars)
    if not text:
        return PreparedQuery(text="", terms=(), problem=PROBLEM_EMPTY)
    terms: list[str] = []
    seen: set[str] = set()
    try:
        for token in analyzer(text):
            term = token.text
            if term in seen:
                continue
            if len(terms) >= max_terms:
                truncated = True
                break
            seen.add(term)
            terms.append(term)
    except Exception:  # an analyzer bug must not reach the caller
        log.exception("query analysis failed for %r", text)
        return PreparedQuery(text=text, terms=(), problem=PROBLEM_NO_WORDS)
    if not terms:
        return PreparedQuery(text=text, terms=(), problem=PROBLEM_NO_WORDS, truncated=truncated)
    return PreparedQuery(text=text, terms=tuple(terms), truncated=truncated)
