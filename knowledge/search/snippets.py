"""Plain-text excerpts of a section around the words a query matched.

Snippets are cut from the stored section text by finding the analysed query
terms in it, which is several times faster than a highlighter over the index
and returns plain (text, is_match) parts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from knowledge.search.engine import Snippet

__all__ = ["SNIPPET_WIDTH", "Marker", "make_snippet", "snippet_for"]

#: Characters of text a snippet shows (before the ellipses).
SNIPPET_WIDTH = 280
#: Characters of context kept before the first match of a window.
_LEAD = 60
#: Characters of a section scanned for matches.
_MAX_SCAN = 60_000
#: Most matches one text is scanned for.
_MAX_SPANS = 400
#: Most words whose analysis a marker remembers.
_MAX_CACHED = 4096

_WORD_TAIL = re.compile(r"[^\W_]*(?:\.\d+)*")
_WS = re.compile(r"\s+")
_DOTTED = re.compile(r"\d+(?:\.\d+)+")


class Marker:
    """Finds the words of a text whose analysed form is one of the query terms."""

    def __init__(self, terms: Iterable[str], analyze: Callable[[str], Iterable[str]]) -> None:
        self.terms = frozenset(terms)
        self.analyze = analyze
        self._cache: dict[str, bool] = {}
        alternatives: list[str] = []
        for term in sorted(self.terms, key=len, reverse=True):
            if _DOTTED.fullmatch(term):
                alternatives.append(re.escape(term))
            else:
                # Porter stems are prefixes of their words up to the last letters
                # (memory -> memori, relational -> relat): match a shorter prefix
                # and confirm by analysing the whole word.
                keep = len(term) if len(term) <= 3 else max(3, len(term) - 2)
                alternatives.append(re.escape(term[:keep]))
        # Literal prefixes only: the regex engine scans for them fast, and each hit
        # is widened to its whole word below.
        self._find = re.compile("|".join(alternatives) or "(?!)", re.IGNORECASE)

    def _is_match(self, word: str) -> bool:
        key = word.lower()
        hit = self._cache.get(key)
        if hit is None:
            try:
                hit = any(term in self.terms for term in self.analyze(word))
            except Exception:
                hit = False
            if len(self._cache) < _MAX_CACHED:
                self._cache[key] = hit
        return hit

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, lower-cased word) of every matching word, in order."""
        found: list[tuple[int, int, str]] = []
        search = self._find.search
        pos = 0
        while len(found) < _MAX_SPANS:
            match = search(text, pos)
            if match is None:
                break
            start = match.start()
            while start > 0 and text[start - 1].isalnum():
                start -= 1
            end = _WORD_TAIL.match(text, match.end()).end()  # type: ignore[union-attr]
            word = text[start:end]
            if self._is_match(word):
                found.append((start, end, word.lower()))
            pos = max(end, match.start() + 1)
        return found


def _cut(text: str, start: int, end: int) -> tuple[int, int]:
    """Move a window's edges to whitespace so that no word is split."""
    if start > 0:
        space = text.rfind(" ", max(0, start - 20), start)
        if space == -1:
            space = text.find(" ", start, start + 20)
        if space != -1:
            start = space + 1
    if end < len(text):
        space = text.rfind(" ", max(start, end - 30), end)
        if space > start:
            end = space
    return start, end


def _window(spans: list[tuple[int, int, str]], width: int) -> tuple[int, int]:
    """The window of ``width`` chars holding the most distinct, then most, matches."""
    best = (-1, -1, 0)
    best_range = (0, width)
    right = 0
    for left in range(len(spans)):
        start = max(0, spans[left][0] - _LEAD)
        end = start + width
        right = max(right, left)
        while right + 1 < len(spans) and spans[right + 1][1] <= end:
            right += 1
        inside = spans[left : right + 1]
        score = (len({w for _, _, w in inside}), len(inside), -start)
        if score > best:
            best, best_range = score, (start, end)
    return best_range


def make_snippet(
    text: str, spans: list[tuple[int, int, str]], width: int = SNIPPET_WIDTH
) -> Snippet:
    """A plain excerpt of whitespace-collapsed ``text`` around the best cluster of spans."""
    if not text:
        return ()
    if not spans:
        _, end = _cut(text, 0, width)
        parts: list[tuple[str, bool]] = [(text[:end], False)]
        if end < len(text):
            parts.append(("…", False))
        return tuple(parts)
    start, end = _window(spans, width)
    start, end = _cut(text, start, min(len(text), end))
    parts = []
    if start > 0:
        parts.append(("…", False))
    pos = start
    for s, e, _ in spans:
        if s < start or e > end:
            continue
        if s > pos:
            parts.append((text[pos:s], False))
        parts.append((text[s:e], True))
        pos = e
    if pos < end:
        parts.append((text[pos:end], False))
    if end < len(text):
        parts.append(("…", False))
    merged: list[tuple[str, bool]] = []
    for piece, mark in parts:
        if merged and not mark and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + piece, False)
        else:
            merged.append((piece, mark))
    return tuple(merged)


def snippet_for(sources: Iterable[str], marker: Marker) -> Snippet:
    """Snippet from the first source with a query word in it, else the first non-empty."""
    first = ""
    for raw in sources:
        text = _WS.sub(" ", raw[:_MAX_SCAN]).strip()
        if not text:
            continue
        first = first or text
        spans = marker.spans(text)
        if spans:
            return make_snippet(text, spans)
    return make_snippet(first, [])
