"""Section-level full-text search over the wiki, on Whoosh.

One Whoosh document per :class:`~knowledge.wiki.model.Section`. Everything lives under
one data directory::

    data_dir/
      build.lock            held (flock) by whoever writes; readers never take it
      current -> gen-...    symlink to the live generation, swapped with os.replace
      gen-.../              Whoosh files + manifest.json (page hashes, statuses, versions)

A full rebuild writes a new ``gen-*`` directory, fsyncs it and then swaps the
``current`` symlink, so a crash or an exception mid-build leaves the previous
index serving. On a wiki of some size the Whoosh writing of a full rebuild runs
in a child process (:mod:`knowledge.search.child`) that only fills and commits
the new directory; the lock, manifest, fsync, swap and cleanup stay here, so a
child that fails or dies leaves the previous index serving just the same. Small
changes are applied in place (Whoosh commits are all-or-nothing) and the manifest
is rewritten afterwards (temp file + os.replace); replaying an interrupted update
is harmless because every changed page is deleted by path before its sections are
added again.

User text never reaches a Whoosh query parser: :mod:`knowledge.search.query` cleans it
and cuts it into terms with the index's own analyzer, and the query objects are
built here from those terms. Snippets are cut from the stored section text by
finding the analysed query terms in it, which is several times faster than
Whoosh's highlighter and returns plain (text, is_match) parts.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import logging
import os
import re
import secrets
import shutil
import signal
import site
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

import whoosh
from whoosh import collectors, scoring
from whoosh import index as whoosh_index
from whoosh.analysis import Analyzer
from whoosh.fields import ID, STORED, TEXT, Schema
from whoosh.query import And, Or, Query, Term
from whoosh.searching import Searcher

from knowledge.files import fsync_dir, write_atomic
from knowledge.search.query import PreparedQuery, make_analyzer, prepare_query
from knowledge.wiki import Page, Section, Wiki, status_of, status_weight

__all__ = [
    "CHILD_BUILD_MIN_CHARS",
    "FIELD_BOOSTS",
    "SCHEMA_VERSION",
    "SYMPTOM_LABELS",
    "BuildStats",
    "Hit",
    "IndexBuildError",
    "IndexLockedError",
    "SearchIndex",
    "SearchResults",
    "Snippet",
    "make_schema",
]

log = logging.getLogger(__name__)

#: Bump whenever the schema, the analyzer or what goes into a field changes.
SCHEMA_VERSION = 2
#: Query-time weight of each searched field.
FIELD_BOOSTS: Mapping[str, float] = {
    "page_title": 1.5,
    "section_title": 3.0,
    "headings": 1.5,
    "text": 1.0,
    "code": 0.6,
    "symptom": 1.5,
}
#: Labels of paragraphs that quote what a failure looks like (the message, the log
#: line). Their text and code go once more into the "symptom" field, so a pasted
#: error message finds the section written about it before sections that merely
#: mention it. "Problem"/"Cause" paragraphs are prose about the issue and stay body.
SYMPTOM_LABELS = frozenset({"error", "errors", "symptom", "symptoms", "log"})

Snippet = tuple[tuple[str, bool], ...]
BuildMode = Literal["reused", "incremental", "full"]
Progress = Callable[[int, int], None]

_MANIFEST = "manifest.json"
_CURRENT = "current"
_LOCK = "build.lock"
_GEN_PREFIX = "gen-"
_MAX_LIMIT = 100
_MAX_OFFSET = 1000
#: open() updates in place when at most this share of the pages changed.
_INCREMENTAL_SHARE = 0.3
#: Full builds of wikis with at least this many characters of section text and code
#: run in a child process (see SearchIndex). Below it the build's longest GIL hold
#: (Whoosh's sort at commit, ~65 ms per million characters) stays under ~15 ms,
#: while starting the child would add ~0.25 s to a build of ~0.3 s.
CHILD_BUILD_MIN_CHARS = 250_000
#: Whoosh's in-memory buffer for a full build: one segment, sorted once at commit.
_FULL_LIMITMB = 256
#: Seconds a build process may take to exit once it has reported its commit.
_CHILD_EXIT_TIMEOUT = 30.0
#: Seconds without a word from a build process before it counts as hung.
_CHILD_IDLE_TIMEOUT = 600.0
#: OR fallback: how many top sections are re-ranked by the share of terms they hold.
_RERANK_DEPTH = 100
_COORD_POWER = 3.0
_SYMPTOM_B = 0.0
_SNIPPET_WIDTH = 280
_SNIPPET_LEAD = 60
_MAX_SCAN = 60_000


class IndexLockedError(RuntimeError):
    """Another process (or writer) holds the index's build lock."""


class IndexBuildError(RuntimeError):
    """The process building a new generation failed or died; the old one still serves."""


@dataclass(frozen=True, slots=True)
class BuildStats:
    mode: BuildMode
    pages: int
    sections: int
    changed_pages: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    anchor: str
    page_title: str
    section_title: str
    category: str
    status: str
    score: float
    #: A short plain-text excerpt as (text, is_match) parts; no Markdown.
    snippet: Snippet = ()

    @property
    def id(self) -> str:
        return f"{self.path}#{self.anchor}"

    @property
    def snippet_text(self) -> str:
        return "".join(text for text, _ in self.snippet)


@dataclass(frozen=True, slots=True)
class SearchResults:
    #: The cleaned query that was actually run.
    query: str
    total: int
    hits: tuple[Hit, ...]
    #: Short user-facing reason when nothing could be searched, else None.
    problem: str | None = None


def make_schema(analyzer: Analyzer | None = None) -> Schema:
    analyzer = analyzer or make_analyzer()

    def text(stored: bool) -> TEXT:
        # No positions: queries are built from single terms and snippets are our own.
        return TEXT(analyzer=analyzer, phrase=False, stored=stored)

    return Schema(
        id=ID(stored=True, unique=True),
        path=ID(stored=True),
        anchor=STORED(),
        page_title=text(True),
        section_title=text(True),
        headings=text(False),
        text=text(True),
        code=text(True),
        symptom=text(False),
        category=ID(stored=True),
        status=ID(stored=True, sortable=True),
    )


# --- manifest ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Manifest:
    schema_version: int
    whoosh_version: str
    #: path -> (sha, status, number of sections)
    pages: dict[str, tuple[str, str, int]]

    @property
    def sections(self) -> int:
        return sum(n for _, _, n in self.pages.values())

    def to_json(self) -> str:
        return json.dumps(
            {
                "schema_version": self.schema_version,
                "whoosh_version": self.whoosh_version,
                "pages": {p: list(v) for p, v in sorted(self.pages.items())},
            },
            indent=0,
        )

    @classmethod
    def from_json(cls, raw: str) -> _Manifest:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get("pages"), dict):
            raise ValueError("manifest is not an object with pages")
        pages: dict[str, tuple[str, str, int]] = {}
        for path, value in data["pages"].items():
            sha, status, count = value
            if not (isinstance(sha, str) and isinstance(status, str) and isinstance(count, int)):
                raise ValueError(f"bad manifest entry for {path!r}")
            pages[str(path)] = (sha, status, count)
        return cls(
            schema_version=int(data["schema_version"]),
            whoosh_version=str(data["whoosh_version"]),
            pages=pages,
        )


def _whoosh_version() -> str:
    return whoosh.versionstring()


def _status_of(statuses: Mapping[str, str] | None, path: str) -> str:
    return status_of(statuses.get(path) if statuses else None).value


def _wanted(wiki: Wiki, statuses: Mapping[str, str] | None) -> dict[str, tuple[str, str, int]]:
    return {
        path: (page.sha, _status_of(statuses, path), len(page.sections))
        for path, page in wiki.pages.items()
    }


def _fsync_tree(path: Path) -> None:
    for file in path.iterdir():
        if file.is_file():
            with open(file, "rb") as handle:
                os.fsync(handle.fileno())
    fsync_dir(path)


# --- locking -------------------------------------------------------------------


class _BuildLock:
    """An exclusive flock on ``data_dir/build.lock``, polled until a timeout."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> _BuildLock:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(0.0, self.timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:
                    holder = ""
                    with contextlib.suppress(OSError, ValueError):
                        holder = os.pread(fd, 64, 0).decode().strip()
                    os.close(fd)
                    who = f" (pid {holder})" if holder else ""
                    raise IndexLockedError(
                        f"search index in {self.path.parent} is being written by another "
                        f"process{who}; gave up after {self.timeout:g} s"
                    ) from None
                time.sleep(0.05)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        import fcntl

        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


# --- scoring -------------------------------------------------------------------


class _StatusWeighting(scoring.BM25F):
    """BM25F whose final score is multiplied by the page status factor of each doc."""

    use_final = True

    def __init__(self, factors: list[float]) -> None:
        # Most sections have no symptom paragraph, so its average length is tiny and
        # length normalisation would all but erase it where it exists.
        super().__init__(B=0.75, K1=1.2, symptom_B=_SYMPTOM_B)
        self._factors = factors

    def final(self, searcher: Any, docnum: int, score: float) -> float:
        if docnum < len(self._factors):
            return score * self._factors[docnum]
        return score


# --- snippets ------------------------------------------------------------------

_WORD_TAIL = re.compile(r"[^\W_]*(?:\.\d+)*")
_WS = re.compile(r"\s+")
_DOTTED = re.compile(r"\d+(?:\.\d+)+")


class _Marker:
    """Finds the words of a text whose analysed form is one of the query terms."""

    def __init__(self, terms: tuple[str, ...], analyzer: Analyzer) -> None:
        self.terms = frozenset(terms)
        self.analyzer = analyzer
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
                hit = any(token.text in self.terms for token in self.analyzer(word))
            except Exception:
                hit = False
            if len(self._cache) < 4096:
                self._cache[key] = hit
        return hit

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, lower-cased word) of every matching word, in order."""
        found: list[tuple[int, int, str]] = []
        search = self._find.search
        pos = 0
        while len(found) < 400:
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
        start = max(0, spans[left][0] - _SNIPPET_LEAD)
        end = start + width
        right = max(right, left)
        while right + 1 < len(spans) and spans[right + 1][1] <= end:
            right += 1
        inside = spans[left : right + 1]
        score = (len({w for _, _, w in inside}), len(inside), -start)
        if score > best:
            best, best_range = score, (start, end)
    return best_range


def _clean(text: str) -> str:
    return _WS.sub(" ", text)


def _snippet(text: str, spans: list[tuple[int, int, str]], width: int = _SNIPPET_WIDTH) -> Snippet:
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


def _snippet_for(sources: tuple[str, ...], marker: _Marker) -> Snippet:
    """Snippet from the first source with a query word in it, else the first non-empty."""
    first = ""
    for raw in sources:
        text = _clean(raw[:_MAX_SCAN]).strip()
        if not text:
            continue
        first = first or text
        spans = marker.spans(text)
        if spans:
            return _snippet(text, spans)
    return _snippet(first, [])


# --- the index -----------------------------------------------------------------


@dataclass(slots=True)
class _Live:
    """One opened generation: its Whoosh index, manifest and (lazily) its searcher."""

    gen_dir: Path
    ix: Any
    manifest: _Manifest
    searcher: Searcher | None = None


class SearchIndex:
    """Full-text search over the sections of a wiki. Use :meth:`open`.

    Thread-safe: searches from several threads share one Whoosh searcher behind a
    lock. Measured with 4 worker threads on 2 cores, that gave the same throughput
    as a pool of searchers (the work is CPU-bound under the GIL) with a third of
    the p99 latency, while a new searcher per call halved throughput. Writes
    (rebuild/update) are serialised by a thread lock and, across processes, by a
    file lock; a writer that cannot get it within ``lock_timeout`` seconds raises
    :class:`IndexLockedError`. Searches keep using the previous generation while a
    build runs.

    Full builds of wikis with at least :data:`CHILD_BUILD_MIN_CHARS` characters
    (``build_in_child=None``; True or False forces either way) write the Whoosh
    index in a child process, a fresh interpreter running :mod:`knowledge.search.child`
    (never fork: the bot has threads). In process, Whoosh holds the GIL for long
    stretches, the longest being the sort at commit (~130 ms on the real wiki), and
    an event loop in another thread of this process stalls as long; with the child,
    this process only sends the documents (a page at a time) and waits. Starting
    the child costs ~0.25 s per build, more than tiny wikis take to build in
    process. The child imports this package and Whoosh, never the calling
    program's main module, so scripts need no ``if __name__ == "__main__":`` guard.
    A child that fails or dies raises :class:`IndexBuildError` here and the
    previous generation keeps serving.
    Updates run in process (a few pages: milliseconds, short GIL holds), except
    that where full builds would run in a child, an update whose commit would
    merge every segment (a rewrite of the whole index) becomes a full rebuild.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        lock_timeout: float = 10.0,
        build_in_child: bool | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.lock_timeout = lock_timeout
        #: Full builds in a child process: always, never, or None for wikis of at
        #: least CHILD_BUILD_MIN_CHARS characters.
        self.build_in_child = build_in_child
        self.analyzer = make_analyzer()
        self.schema = make_schema(self.analyzer)
        self._live: _Live | None = None
        #: Guards ``_live`` and its searcher; held for the whole of each search.
        self._search_lock = threading.Lock()
        #: Serialises rebuild/update within the process (the file lock does across).
        self._write_lock = threading.RLock()
        self._closed = False

    # -- opening ----------------------------------------------------------------

    @classmethod
    def open(
        cls,
        wiki: Wiki,
        data_dir: Path,
        statuses: Mapping[str, str] | None = None,
        progress: Progress | None = None,
        *,
        lock_timeout: float = 10.0,
        build_in_child: bool | None = None,
    ) -> tuple[SearchIndex, BuildStats]:
        """Open the index in ``data_dir`` for ``wiki``: reuse, update or rebuild it."""
        started = time.perf_counter()
        self = cls(data_dir, lock_timeout=lock_timeout, build_in_child=build_in_child)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        wanted = _wanted(wiki, statuses)
        live = self._load_live()
        if live is not None and live.manifest.pages == wanted:
            self._install(live)
            self._clean_if_idle()
            return self, self._stats("reused", wanted, 0, started)
        with self._write_lock, _BuildLock(self.data_dir / _LOCK, self.lock_timeout):
            if live is not None:
                self._close_live(live)
            # Another process may have brought the index up to date meanwhile.
            live = self._load_live()
            if live is not None:
                self._install(live)
                changed = _changed(live.manifest.pages, wanted)
                if not changed:
                    return self, self._stats("reused", wanted, 0, started)
                if len(changed) <= max(3, _INCREMENTAL_SHARE * max(len(wanted), 1)):
                    return self, self._incremental(wiki, wanted, changed, progress, started)
            return self, self._full(wiki, wanted, progress, started)

    def rebuild(
        self,
        wiki: Wiki,
        statuses: Mapping[str, str] | None = None,
        progress: Progress | None = None,
    ) -> BuildStats:
        """Build a fresh generation from ``wiki`` and swap it in (forced full build)."""
        started = time.perf_counter()
        self._check_open()
        wanted = _wanted(wiki, statuses)
        with self._write_lock, _BuildLock(self.data_dir / _LOCK, self.lock_timeout):
            return self._full(wiki, wanted, progress, started)

    def update(
        self,
        wiki: Wiki,
        statuses: Mapping[str, str] | None = None,
        progress: Progress | None = None,
    ) -> BuildStats:
        """Apply the pages that changed, appeared or disappeared since the last build."""
        started = time.perf_counter()
        self._check_open()
        wanted = _wanted(wiki, statuses)
        with self._write_lock, _BuildLock(self.data_dir / _LOCK, self.lock_timeout):
            # Reopen: another process may have written a newer generation meanwhile.
            live = self._load_live()
            if live is None:
                return self._full(wiki, wanted, progress, started)
            self._install(live)
            changed = _changed(live.manifest.pages, wanted)
            if not changed:
                return self._stats("reused", wanted, 0, started)
            return self._incremental(wiki, wanted, changed, progress, started)

    def close(self) -> None:
        with self._search_lock:
            self._closed = True
            live, self._live = self._live, None
        if live is not None:
            self._close_live(live)

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def generation(self) -> str | None:
        """Name of the live generation directory, or None before the first build."""
        live = self._live
        return live.gen_dir.name if live is not None else None

    @property
    def sections(self) -> int:
        live = self._live
        return live.manifest.sections if live is not None else 0

    # -- searching --------------------------------------------------------------

    def prepare(self, query: str) -> PreparedQuery:
        """Clean ``query`` and analyse it into index terms (see :mod:`knowledge.search.query`)."""
        return prepare_query(query, self.analyzer)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        offset: int = 0,
        category: str | None = None,
    ) -> SearchResults:
        """Sections matching ``query``, best first. Never raises for bad query text."""
        self._check_open()
        prepared = self.prepare(query)
        if prepared.problem is not None:
            return SearchResults(query=prepared.text, total=0, hits=(), problem=prepared.problem)
        limit = max(1, min(int(limit), _MAX_LIMIT))
        offset = max(0, min(int(offset), _MAX_OFFSET))
        try:
            with self._search_lock:
                live = self._live
                if live is None:
                    return SearchResults(
                        query=prepared.text, total=0, hits=(), problem="no index yet"
                    )
                if live.searcher is None:
                    live = self._follow_locked(live)
                    live.searcher = self._new_searcher(live.ix)
                total, found = self._run(live.searcher, prepared, limit, offset, category)
            # Snippets need no searcher: build them outside the lock.
            marker = _Marker(prepared.terms, self.analyzer)
            hits = tuple(self._hit(fields, score, marker) for score, fields in found)
            return SearchResults(query=prepared.text, total=total, hits=hits)
        except Exception:
            log.exception("search failed for %r", prepared.text)
            return SearchResults(
                query=prepared.text, total=0, hits=(), problem="search failed, please retry"
            )

    def _rank(
        self, searcher: Searcher, terms: tuple[str, ...], need: int, filter_q: Query | None
    ) -> tuple[list[tuple[float, int]], int]:
        """(score, docnum) of the best ``need`` sections, and how many matched in all.

        Terms found nowhere in the index are dropped first. Sections holding every
        remaining term come first; if there are none, sections holding any term are
        ranked by score times (share of the terms they hold) ** _COORD_POWER, so a
        section with most of the words beats one with a single word in its title.
        """
        reader = searcher.reader()
        groups: list[Query] = []
        for term in terms:
            # Only fields that hold the term: absent terms would still cost a matcher.
            parts = [
                Term(field, term, boost=boost)
                for field, boost in FIELD_BOOSTS.items()
                if reader.doc_frequency(field, term)
            ]
            if parts:
                groups.append(parts[0] if len(parts) == 1 else _union(parts))
        if not groups:
            return [], 0
        if len(groups) == 1:
            results = _collect(searcher, groups[0], need, filter_q)
            return [(hit.score or 0.0, hit.docnum) for hit in results], len(results)
        results = _collect(searcher, And(groups), need, filter_q)
        if len(results):
            return [(hit.score or 0.0, hit.docnum) for hit in results], len(results)
        depth = max(need, _RERANK_DEPTH)
        results = _collect(searcher, _union(groups), depth, filter_q, terms=True)
        count = len(groups)
        ranked = []
        for hit in results:
            matched = {text for _, text in hit.matched_terms()}
            share = len(matched) / count
            ranked.append(((hit.score or 0.0) * share**_COORD_POWER, hit.docnum))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        return ranked[:need], len(results)

    def _run(
        self,
        searcher: Searcher,
        prepared: PreparedQuery,
        limit: int,
        offset: int,
        category: str | None,
    ) -> tuple[int, list[tuple[float, dict[str, Any]]]]:
        """(total, [(score, stored fields)]) of one page of results."""
        filter_q = Term("category", category) if category else None
        ranked, total = self._rank(searcher, prepared.terms, offset + limit, filter_q)
        page = ranked[offset : offset + limit]
        return total, [(score, searcher.stored_fields(docnum)) for score, docnum in page]

    def _hit(self, fields: Mapping[str, Any], score: float | None, marker: _Marker) -> Hit:
        snippet = _snippet_for((fields.get("text") or "", fields.get("code") or ""), marker)
        return Hit(
            path=fields.get("path", ""),
            anchor=fields.get("anchor", ""),
            page_title=fields.get("page_title", ""),
            section_title=fields.get("section_title", ""),
            category=fields.get("category", ""),
            status=fields.get("status", "other"),
            score=float(score or 0.0),
            snippet=snippet,
        )

    def _follow_locked(self, live: _Live) -> _Live:
        """``live``, or the generation now current if another process removed it.

        Called with the search lock held, only when a new searcher is needed: a
        searcher that is already open keeps working on deleted files (Linux).
        """
        if (live.gen_dir / _MANIFEST).exists():
            return live
        fresh = self._load_live()
        if fresh is None:
            return live
        log.info("search index generation %s is gone; now using %s", live.gen_dir, fresh.gen_dir)
        with contextlib.suppress(Exception):
            live.ix.close()
        self._live = fresh
        return fresh

    @staticmethod
    def _new_searcher(ix: Any) -> Searcher:
        reader = ix.reader()
        factors: list[float] = []
        try:
            count = reader.doc_count_all()
            if count and reader.has_column("status"):
                column = reader.column_reader("status")
                factors = [status_weight(column[i]) for i in range(count)]
        except Exception:
            log.exception("could not read page statuses; ranking without them")
        return Searcher(reader, weighting=_StatusWeighting(factors), fromindex=ix)

    # -- state ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("search index is closed")

    def _stats(
        self, mode: BuildMode, wanted: Mapping[str, tuple[str, str, int]], changed: int, t0: float
    ) -> BuildStats:
        return BuildStats(
            mode=mode,
            pages=len(wanted),
            sections=sum(n for _, _, n in wanted.values()),
            changed_pages=changed,
            seconds=time.perf_counter() - t0,
        )

    def _load_live(self) -> _Live | None:
        """Open the generation ``current`` points at, or None if absent or unusable."""
        link = self.data_dir / _CURRENT
        if not link.is_symlink() and not link.exists():
            return None
        try:
            gen_dir = (self.data_dir / os.readlink(link)).resolve()
            manifest = _Manifest.from_json((gen_dir / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("search index in %s has no usable manifest (%s); rebuilding", link, exc)
            return None
        if manifest.schema_version != SCHEMA_VERSION:
            log.info(
                "search index schema %s != %s; rebuilding", manifest.schema_version, SCHEMA_VERSION
            )
            return None
        if manifest.whoosh_version != _whoosh_version():
            log.info(
                "search index written by whoosh %s, running %s; rebuilding",
                manifest.whoosh_version,
                _whoosh_version(),
            )
            return None
        try:
            ix = whoosh_index.open_dir(str(gen_dir), schema=self.schema)
            count = ix.doc_count()
            if count != manifest.sections:
                raise ValueError(f"{count} documents, manifest says {manifest.sections}")
        except Exception as exc:
            log.warning("search index in %s is unreadable (%r); rebuilding", gen_dir, exc)
            return None
        return _Live(gen_dir=gen_dir, ix=ix, manifest=manifest)

    def _reload(self, live: _Live) -> _Live:
        """The same generation reopened (after an in-place update)."""
        manifest = _Manifest.from_json((live.gen_dir / _MANIFEST).read_text(encoding="utf-8"))
        ix = whoosh_index.open_dir(str(live.gen_dir), schema=self.schema)
        fresh = _Live(gen_dir=live.gen_dir, ix=ix, manifest=manifest)
        self._install(fresh)
        return fresh

    def _install(self, live: _Live) -> None:
        with self._search_lock:
            old, self._live = self._live, live
        if old is not None and old is not live:
            self._close_live(old)

    def _close_live(self, live: _Live) -> None:
        # Waits for a search in progress on this generation to finish.
        with self._search_lock:
            searcher, live.searcher = live.searcher, None
            if searcher is not None:
                with contextlib.suppress(Exception):
                    searcher.close()
            with contextlib.suppress(Exception):
                live.ix.close()

    # -- writing ----------------------------------------------------------------

    def _documents(self, page: Page, status: str) -> Iterator[dict[str, Any]]:
        for section in page.sections:
            yield _document(page, section, status)

    def _full(
        self,
        wiki: Wiki,
        wanted: dict[str, tuple[str, str, int]],
        progress: Progress | None,
        started: float,
    ) -> BuildStats:
        data_dir = self.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        gen_dir = data_dir / f"{_GEN_PREFIX}{stamp}-{os.getpid()}-{secrets.token_hex(3)}"
        gen_dir.mkdir()
        try:
            pages = (
                [_document(wiki.pages[path], section, wanted[path][1]) for section in page.sections]
                for path, page in sorted(wiki.pages.items())
            )
            on_page = None if progress is None else _page_progress(progress, len(wiki.pages))
            if self._build_in_child(wiki):
                sections = sum(n for _, _, n in wanted.values())
                _write_in_child(gen_dir, self.schema, pages, sections, on_page)
            else:
                _write_generation(gen_dir, self.schema, pages, on_page)
            manifest = _Manifest(SCHEMA_VERSION, _whoosh_version(), dict(wanted))
            write_atomic(gen_dir / _MANIFEST, manifest.to_json())
            _fsync_tree(gen_dir)
            self._swap(gen_dir)
        except BaseException:
            shutil.rmtree(gen_dir, ignore_errors=True)
            raise
        live = _Live(
            gen_dir=gen_dir.resolve(),
            ix=whoosh_index.open_dir(str(gen_dir), schema=self.schema),
            manifest=manifest,
        )
        self._install(live)
        self._clean_old()
        if progress is not None and not wiki.pages:
            progress(0, 0)
        return self._stats("full", wanted, len(wanted), started)

    def _build_in_child(self, wiki: Wiki) -> bool:
        if self.build_in_child is not None:
            return self.build_in_child
        return _text_size(wiki) >= CHILD_BUILD_MIN_CHARS

    def _swap(self, gen_dir: Path) -> None:
        link = self.data_dir / _CURRENT
        if link.exists() and not link.is_symlink():
            # Not ours to replace in one step (os.replace cannot overwrite a folder).
            aside = self.data_dir / f"{_GEN_PREFIX}stale-{secrets.token_hex(3)}"
            os.replace(link, aside)
        tmp = self.data_dir / f".{_CURRENT}.{secrets.token_hex(4)}"
        os.symlink(gen_dir.name, tmp)
        try:
            os.replace(tmp, link)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        fsync_dir(self.data_dir)

    def _clean_old(self) -> None:
        """Remove generations other than the current one (call with the build lock)."""
        try:
            keep = Path(os.readlink(self.data_dir / _CURRENT)).name
        except OSError:
            return
        for child in self.data_dir.iterdir():
            if child.name.startswith(_GEN_PREFIX) and child.name != keep:
                shutil.rmtree(child, ignore_errors=True)
            elif child.name.startswith(f".{_CURRENT}.") and child.is_symlink():
                with contextlib.suppress(OSError):
                    child.unlink()

    def _clean_if_idle(self) -> None:
        """Clean up after crashed builds, unless someone is building right now."""
        try:
            with _BuildLock(self.data_dir / _LOCK, 0):
                self._clean_old()
        except (IndexLockedError, OSError) as exc:
            log.debug("left old index generations alone: %s", exc)

    def _incremental(
        self,
        wiki: Wiki,
        wanted: dict[str, tuple[str, str, int]],
        changed: list[str],
        progress: Progress | None,
        started: float,
    ) -> BuildStats:
        live = self._live
        assert live is not None
        # Where a full build would run in a child, so does an update that would
        # rewrite every segment: in process that stalls like a full build.
        merge = functools.partial(_merge_into_delta, whole=not self._build_in_child(wiki))
        try:
            writer = live.ix.writer(limitmb=64, timeout=min(self.lock_timeout, 5.0))
        except whoosh_index.LockError as exc:
            raise IndexLockedError(
                f"search index in {live.gen_dir} is locked by another writer"
            ) from exc
        try:
            total = len(changed)
            for done, path in enumerate(changed, start=1):
                writer.delete_by_term("path", path)
                page = wiki.pages.get(path)
                if page is not None:
                    for doc in self._documents(page, wanted[path][1]):
                        writer.add_document(**doc)
                if progress is not None:
                    progress(done, total)
            writer.commit(mergetype=merge)
        except _WholeMerge:
            with contextlib.suppress(Exception):
                writer.cancel()
            log.info(
                "updating %d pages would rewrite the whole search index here; rebuilding it",
                len(changed),
            )
            return self._full(wiki, wanted, progress, started)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        manifest = _Manifest(SCHEMA_VERSION, _whoosh_version(), dict(wanted))
        write_atomic(live.gen_dir / _MANIFEST, manifest.to_json())
        self._reload(live)
        self._clean_old()
        return self._stats("incremental", wanted, len(changed), started)


def _text_size(wiki: Wiki) -> int:
    """Characters of section text and code: what the cost of a build grows with."""
    return sum(
        len(section.text) + sum(len(block.text) for block in section.code)
        for page in wiki.pages.values()
        for section in page.sections
    )


def _page_progress(progress: Progress, total: int) -> Callable[[int], None]:
    def on_page(done: int) -> None:
        progress(done, total)

    return on_page


def _write_generation(
    gen_dir: Path,
    schema: Schema,
    pages: Iterable[list[dict[str, Any]]],
    on_page: Callable[[int], None] | None,
) -> int:
    """Create a Whoosh index in the empty ``gen_dir`` from per-page documents.

    All-or-nothing: an exception cancels the writer and leaves ``gen_dir`` to the
    caller to remove. Returns the number of documents committed.
    """
    ix = whoosh_index.create_in(str(gen_dir), schema)
    try:
        try:
            writer = ix.writer(limitmb=_FULL_LIMITMB)
        except whoosh_index.LockError as exc:
            raise IndexLockedError(f"search index in {gen_dir} is locked") from exc
        count = 0
        try:
            for done, docs in enumerate(pages, start=1):
                for doc in docs:
                    writer.add_document(**doc)
                count += len(docs)
                if on_page is not None:
                    on_page(done)
            writer.commit()
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
    finally:
        ix.close()
    return count


def _write_in_child(
    gen_dir: Path,
    schema: Schema,
    pages: Iterable[list[dict[str, Any]]],
    sections: int,
    on_page: Callable[[int], None] | None,
) -> None:
    """:func:`_write_generation` in a child process, so this one keeps the GIL free.

    The child is ``python -m knowledge.search.child`` (see :func:`_child_command`),
    connected by a socket pair. The schema goes first, then the pages one message
    each (pickled a page at a time: no long GIL hold here either); the child reads
    them all, then writes and commits, sending ("progress", done) after each page
    and ("done", count) at the end. While it reads it sends nothing and while it
    writes it reads nothing, so neither side can block the other on a full
    socket. Any failure kills the child and waits for it before returning, so the
    caller may remove ``gen_dir``.
    """
    here_socket, there_socket = socket.socketpair()
    here = Connection(here_socket.detach())
    there = there_socket.detach()
    proc: subprocess.Popen[bytes] | None = None
    try:
        try:
            proc = subprocess.Popen(
                _child_command(there, gen_dir),
                stdin=subprocess.DEVNULL,
                env=_child_env(),
                pass_fds=(there,),
            )
        except OSError as exc:
            raise IndexBuildError(
                f"search index build process could not be started ({exc}); "
                "the previous index is still in use"
            ) from exc
        finally:
            os.close(there)  # the child has its own copy: EOF here once it is gone
        try:
            here.send(("schema", schema))
            for docs in pages:
                here.send(("page", docs))
            here.send(("write", None))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child is gone; recv() says so below
        while True:
            if not here.poll(_CHILD_IDLE_TIMEOUT):
                raise IndexBuildError(
                    f"search index build process sent nothing for {_CHILD_IDLE_TIMEOUT:g} s; "
                    "stopped it, the previous index is still in use"
                )
            try:
                message = here.recv()
            except (EOFError, ConnectionResetError):
                proc.wait()
                raise IndexBuildError(
                    f"search index build process {_exit_reason(proc.returncode)} "
                    "before finishing; the previous index is still in use"
                ) from None
            kind = message[0]
            if kind == "progress":
                if on_page is not None:
                    on_page(message[1])
            elif kind == "done":
                count = message[1]
                break
            else:
                log.error("search index build process failed:\n%s", message[2])
                raise IndexBuildError(
                    f"search index build process failed: {message[1]}; "
                    "the previous index is still in use"
                )
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_CHILD_EXIT_TIMEOUT)
        if proc.returncode != 0:
            raise IndexBuildError(
                f"search index build process {_exit_reason(proc.returncode)} after writing; "
                "the previous index is still in use"
            )
        if count != sections:
            raise IndexBuildError(
                f"search index build process wrote {count} sections, expected {sections}"
            )
    except BaseException:
        if proc is not None:  # started: make sure it is gone before gen_dir is
            if proc.returncode is None:
                proc.kill()
            proc.wait()
        raise
    finally:
        here.close()


def _child_command(fd: int, gen_dir: Path) -> list[str]:
    """Command line of a build process talking over ``fd`` (no shell is involved).

    ``-P``: the working directory does not go on the child's ``sys.path``, where a
    folder of its own called ``knowledge`` would win over this package.
    """
    return [
        sys.executable,
        "-P",
        "-m",
        "knowledge.search.child",
        "--fd",
        str(fd),
        os.path.abspath(gen_dir),
    ]


def _child_env() -> dict[str, str]:
    """This process's environment, with the folder holding this package on PYTHONPATH.

    So the child imports the very copy of ``knowledge`` that this process runs, from
    whatever working directory and however this one found it (an install, an
    editable install, a checkout on ``sys.path``). A site-packages folder is left
    out: the child finds it anyway, and on PYTHONPATH it would come before the
    standard library.
    """
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[2]
    sites = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    if all(Path(folder).resolve() != root for folder in sites if folder):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(root), env.get("PYTHONPATH"))))
    return env


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _child_build(conn: Connection, gen_dir: str) -> int:
    """Work of the build process (:mod:`knowledge.search.child`); returns its exit code.

    Reads ("schema", schema), then ("page", docs) messages up to ("write", None),
    from :func:`_write_in_child`; then writes the generation, answering
    ("progress", done) per page and ("done", count), or ("error", message,
    traceback). When the parent goes away (end of file, broken pipe) it exits.
    """
    try:
        kind, schema = conn.recv()
        if kind != "schema":
            raise ValueError(f"expected the schema first, got {kind!r}")
        pages: list[list[dict[str, Any]]] = []
        while True:
            kind, docs = conn.recv()
            if kind != "page":
                break
            pages.append(docs)

        def on_page(done: int) -> None:
            conn.send(("progress", done))

        count = _write_generation(Path(gen_dir), schema, pages, on_page)
        conn.send(("done", count))
    except EOFError:
        return 1  # the parent gave up on us
    except BaseException as exc:
        with contextlib.suppress(Exception):
            conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        return 1
    finally:
        conn.close()
    return 0


class _WholeMerge(Exception):
    """An update would merge every segment, and the caller would rather rebuild."""


def _merge_into_delta(writer: Any, segments: list[Any], *, whole: bool = True) -> list[Any]:
    """Whoosh merge policy for updates: the big segment plus at most one small one.

    Each update writes a segment and every extra segment costs each search about
    1.5 ms, so all but the biggest segment are merged into the one being written
    (a few hundred sections at most: milliseconds). Once the small side or the
    deleted sections reach a quarter of the big segment, everything is merged;
    unless ``whole`` is false: then it raises :class:`_WholeMerge` before touching
    anything (merging the real wiki's segments took ~1.4 s in process, holding
    the GIL for up to ~175 ms at a time), and the caller rebuilds in a child.
    """
    from whoosh.reading import SegmentReader

    if not segments:
        return segments
    biggest = max(segments, key=lambda seg: seg.doc_count_all())
    rest = [seg for seg in segments if seg is not biggest]
    churn = biggest.deleted_count() + sum(seg.doc_count_all() for seg in rest)
    if churn * 4 > biggest.doc_count_all():
        if not whole:
            raise _WholeMerge
        merge, keep = segments, []
    else:
        merge, keep = rest, [biggest]
    for segment in merge:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return keep


def _collect(
    searcher: Searcher, query: Query, limit: int, filter_q: Query | None, terms: bool = False
) -> Any:
    """Score every matching section and keep the best ``limit``.

    Whoosh's default top-N collector prunes with score bounds ("replace" and
    block quality) computed before :meth:`_StatusWeighting.final`, which could
    drop a section that a status factor above 1 would have lifted into the top
    N, and its total is then only an estimate. Scoring everything is exact, and
    at a few thousand sections it measured no slower.
    """
    collector: Any = collectors.TopCollector(limit=limit, usequality=False, replace=0)
    if terms:
        collector = collectors.TermsCollector(collector)
    if filter_q is not None:
        collector = collectors.FilterCollector(collector, filter_q)
    searcher.search_with_collector(query, collector)
    return collector.results()


def _union(queries: list[Query]) -> Or:
    """An Or that merges its parts lazily.

    Whoosh's automatic choice for small indexes preloads and scores every posting
    of every part, which made two- and three-word searches 2-3x slower here; the
    binary tree of union matchers lets an enclosing And skip what cannot match.
    """
    query = Or(queries)
    query.matcher_type = Or.DEFAULT_MATCHER
    return query


def _changed(
    have: Mapping[str, tuple[str, str, int]], wanted: Mapping[str, tuple[str, str, int]]
) -> list[str]:
    """Paths added, removed or changed (content or status), sorted."""
    paths = set(have) | set(wanted)
    return sorted(p for p in paths if have.get(p) != wanted.get(p))


def _document(page: Page, section: Section, status: str) -> dict[str, Any]:
    return {
        "id": f"{page.path}#{section.anchor}",
        "path": page.path,
        "anchor": section.anchor,
        "page_title": page.title,
        "section_title": section.title,
        # The page title has its own field; count it once.
        "headings": " / ".join(
            section.parents[1:] if section.parents[:1] == (page.title,) else section.parents
        ),
        "text": section.text,
        "code": "\n\n".join(block.text for block in section.code),
        "symptom": "\n\n".join(
            "\n".join((item.text, *item.code))
            for item in section.labelled
            if item.label.casefold() in SYMPTOM_LABELS
        ),
        "category": page.category,
        "status": status,
    }
