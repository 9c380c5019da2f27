"""Turn untrusted user text into a bounded list of index terms.

User text never reaches a query parser: it is cleaned here (NFKC, format
characters dropped, length capped) and cut into terms with the same analyzer the
index uses, and the engine builds its query objects from those terms alone. So
``*``, ``body:*``, ``[a TO z]``, ``(((`` or ``AND OR NOT`` are only words (or
nothing) and can never expand into a slow wildcard, range or field query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from knowledge.text import cap_user_text

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "PROBLEM_EMPTY",
    "PROBLEM_NO_WORDS",
    "PreparedQuery",
    "prepare_query",
]

log = logging.getLogger(__name__)

#: Longest query text (after cleaning) that is analysed; the rest is cut off.
MAX_QUERY_CHARS = 200
#: Most distinct terms one query may hold; later ones are ignored.
MAX_QUERY_TERMS = 16

PROBLEM_EMPTY = "empty query"
PROBLEM_NO_WORDS = "no searchable words in the query"
#: Problems of the bot's side, not of the query: no index to search yet, or the search
#: raised (logged where it happened).
PROBLEM_NO_INDEX = "no index yet"
PROBLEM_FAILED = "search failed, please retry"


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
    analyze: Callable[[str], Iterable[str]],
    *,
    max_chars: int = MAX_QUERY_CHARS,
    max_terms: int = MAX_QUERY_TERMS,
) -> PreparedQuery:
    """Clean ``raw`` and cut it with ``analyze`` into at most ``max_terms`` distinct terms."""
    text, truncated = cap_user_text(raw or "", max_chars)
    if not text:
        return PreparedQuery(text="", terms=(), problem=PROBLEM_EMPTY)
    terms: list[str] = []
    seen: set[str] = set()
    try:
        for term in analyze(text):
            if term in seen:
                continue
            if len(terms) >= max_terms:
                truncated = True
                break
            seen.add(term)
            terms.append(term)
    except Exception:  # an analyzer bug must not reach the caller
        # The query is the user's text: its size, never its words, goes to the log.
        log.exception("query analysis failed (a query of %d characters)", len(text))
        return PreparedQuery(text=text, terms=(), problem=PROBLEM_NO_WORDS)
    if not terms:
        return PreparedQuery(text=text, terms=(), problem=PROBLEM_NO_WORDS, truncated=truncated)
    return PreparedQuery(text=text, terms=tuple(terms), truncated=truncated)
