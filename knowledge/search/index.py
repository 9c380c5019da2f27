"""Section-level full-text search over the wiki: :class:`SearchIndex`.

It keeps the generations in one data directory (:mod:`knowledge.search.store`),
decides between reusing, updating and rebuilding, runs big full builds in a
child process (:mod:`knowledge.search.child`) and adds snippets
(:mod:`knowledge.search.snippets`) to what the engine found. The engine
(:class:`~knowledge.search.engine.Engine`, by default Whoosh) writes, opens and
searches one generation.

A full rebuild fills a new generation and only then swaps it in, so a crash, an
exception or a dying child mid-build leaves the previous index serving. Small
changes are applied to a copy of the live generation, which is then swapped in
the same way: the live generation's files are never written again, so a failed
update (a full disk) leaves nothing behind but the previous index, still serving.
When :meth:`SearchIndex.open` or :meth:`SearchIndex.update` fail to write (an
``OSError`` such as ENOSPC, or a failed build process) while a previous index
exists, it keeps serving, the failure is logged once as a warning and returned
in :attr:`BuildStats.problem`; the next update tries again. Without a previous
index, or on a forced :meth:`SearchIndex.rebuild`, :class:`IndexBuildError` is
raised, saying whether a previous index still serves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from knowledge.search import ranking
from knowledge.search._whoosh import WhooshEngine
from knowledge.search.documents import section_document, text_size
from knowledge.search.engine import (
    BuildMode,
    BuildStats,
    Document,
    Engine,
    Found,
    Generation,
    Hit,
    IndexBuildError,
    Progress,
    SearchResults,
    WouldRewrite,
)
from knowledge.search.query import PROBLEM_FAILED, PROBLEM_NO_INDEX, PreparedQuery, prepare_query
from knowledge.search.snippets import Marker, snippet_for
from knowledge.search.store import Manifest, PageEntry, Store, changed_pages
from knowledge.wiki import Wiki
from knowledge.wiki.facts import facts_of

__all__ = ["CHILD_BUILD_MIN_CHARS", "RESULT_DEPTH", "SearchIndex"]

log = logging.getLogger(__name__)

#: open() updates in place when at most this share of the pages changed.
_INCREMENTAL_SHARE = 0.3
#: Full builds of wikis with at least this many characters of section text and code
#: run in a child process (see SearchIndex). Below it the build's longest GIL hold
#: (Whoosh's sort at commit, ~65 ms per million characters) stays under ~15 ms,
#: while starting the child would add ~0.25 s to a build of ~0.3 s.
CHILD_BUILD_MIN_CHARS = 250_000
#: Sections ranked per query at least (ten pages of /search), kept for the next pages.
#: Within the OR fallback's re-rank depth, so asking for fewer gives the same order.
RESULT_DEPTH = 50


@dataclass(slots=True)
class _Live:
    """The generation in use: its folder, its opened engine side and its manifest."""

    gen_dir: Path
    generation: Generation
    manifest: Manifest


def _wanted(wiki: Wiki, statuses: Mapping[str, str] | None) -> dict[str, PageEntry]:
    return {
        # The section count from the page's facts: a page of the cache is not read for it.
        path: (page.sha, ranking.indexed_status(statuses, path), facts_of(page).sections)
        for path, page in wiki.pages.items()
    }


class SearchIndex:
    """Full-text search over the sections of a wiki. Use :meth:`open`.

    Thread-safe: searches from several threads share one opened generation (one
    Whoosh searcher) behind a lock. Measured with 4 worker threads on 2 cores,
    that gave the same throughput as a pool of searchers (the work is CPU-bound
    under the GIL) with a third of the p99 latency, while a new searcher per call
    halved throughput. The rankings of recent queries are kept until the index
    changes (:class:`_ResultCache`): a repeated question does not take that lock
    at all, the same question asked while it is being ranked waits for that
    ranking instead of ranking again, the next page of one only takes the lock to
    read its hits' stored fields, and snippets are made outside it, once per hit.
    Writes (rebuild/update) are serialised by a thread lock and, across processes,
    by a file lock; a writer that cannot get it within ``lock_timeout`` seconds
    raises :class:`IndexLockedError`. Searches keep using the previous generation
    while a build runs.

    Full builds of wikis with at least :data:`CHILD_BUILD_MIN_CHARS` characters
    (``build_in_child=None``; True or False forces either way) are written by a
    child process (:mod:`knowledge.search.child`). In process, Whoosh holds the
    GIL for long stretches, the longest being the sort at commit (~130 ms on the
    real wiki), and an event loop in another thread of this process stalls as
    long; with the child, this process only sends the documents and waits.
    Starting the child costs ~0.25 s per build, more than tiny wikis take to
    build in process. A child that fails or dies raises :class:`IndexBuildError`
    here and the previous generation keeps serving. Updates run in process (a
    few pages: milliseconds, short GIL holds), except that where full builds
    would run in a child, an update that would rewrite the whole index becomes
    a full rebuild.
    """

    #: Queries whose ranking is kept (see :class:`_ResultCache`).
    result_cache_size = 512

    def __init__(
        self,
        data_dir: Path,
        *,
        engine: Engine | None = None,
        lock_timeout: float = 10.0,
        build_in_child: bool | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.engine: Engine = engine or WhooshEngine()
        self.lock_timeout = lock_timeout
        #: Full builds in a child process: always, never, or None for wikis of at
        #: least CHILD_BUILD_MIN_CHARS characters.
        self.build_in_child = build_in_child
        self._store = Store(self.data_dir)
        self._live: _Live | None = None
        #: Guards ``_live`` and its generation; held for the whole of each search.
        self._search_lock = threading.Lock()
        #: Ranked sections and their hits of recent queries on the live generation.
        self._results = _ResultCache(self.result_cache_size)
        #: Queries being ranked now, set when their ranking is cached (see _rank_once).
        self._flying: dict[tuple[object, ...], threading.Event] = {}
        self._flying_lock = threading.Lock()
        #: Serialises rebuild/update within the process (the file lock does across).
        self._write_lock = threading.RLock()
        self._closed = False
        #: The last write failure logged while the previous index kept serving, so a
        #: retry that fails the same way is not logged again; None after a success.
        self._failure: str | None = None
        #: True for an index held in memory only (see :meth:`in_memory`).
        self.in_memory = False

    # -- opening ----------------------------------------------------------------

    @classmethod
    def open(
        cls,
        wiki: Wiki,
        data_dir: Path,
        statuses: Mapping[str, str] | None = None,
        progress: Progress | None = None,
        *,
        engine: Engine | None = None,
        lock_timeout: float = 10.0,
        build_in_child: bool | None = None,
    ) -> tuple[SearchIndex, BuildStats]:
        """Open the index in ``data_dir`` for ``wiki``: reuse, update or rebuild it."""
        started = time.perf_counter()
        self = cls(
            data_dir, engine=engine, lock_timeout=lock_timeout, build_in_child=build_in_child
        )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        wanted = _wanted(wiki, statuses)
        live = self._load_live()
        if live is not None and live.manifest.pages == wanted:
            self._install(live)
            self._store.clean_if_idle()
            return self, self._stats("reused", wanted, 0, started)

        said = live is None  # why the live index is unusable (if it is) was logged

        def bring_up_to_date() -> BuildStats:
            nonlocal live
            with self._write_lock, self._store.lock(self.lock_timeout):
                if live is not None:
                    self._close_live(live)
                    live = None
                # Another process may have brought the index up to date meanwhile.
                live = self._load_live(said=said)
                if live is not None:
                    self._install(live)
                    changed = changed_pages(live.manifest.pages, wanted)
                    if not changed:
                        return self._stats("reused", wanted, 0, started)
                    if len(changed) <= max(3, _INCREMENTAL_SHARE * max(len(wanted), 1)):
                        return self._incremental(wiki, wanted, changed, progress, started)
                return self._full(wiki, wanted, progress, started)

        try:
            return self, self._keeping_previous(bring_up_to_date, wanted, started)
        except BaseException:
            if live is not None and self._live is None:  # the lock was never taken
                live.generation.close()
            raise

    @classmethod
    def in_memory(
        cls,
        wiki: Wiki,
        statuses: Mapping[str, str] | None = None,
        *,
        engine: Engine | None = None,
    ) -> tuple[SearchIndex, BuildStats]:
        """An index of ``wiki`` held in memory only: for a run without a usable data folder.

        It searches like one on disk; :meth:`update` and :meth:`rebuild` build it again
        in memory. Nothing is written anywhere.
        """
        started = time.perf_counter()
        self = cls(Path(":memory:"), engine=engine)
        self.in_memory = True
        wanted = _wanted(wiki, statuses)
        self._build_memory(wiki, wanted)
        return self, self._stats("full", wanted, len(wanted), started)

    def _build_memory(self, wiki: Wiki, wanted: dict[str, PageEntry]) -> None:
        pages = (
            [section_document(page, section, wanted[path][1]) for section in page.sections]
            for path, page in sorted(wiki.pages.items())
        )
        generation = self.engine.write_memory(pages)
        self._install(_Live(Path(":memory:"), generation, self._manifest(wanted)))

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
        if self.in_memory:
            with self._write_lock:
                self._build_memory(wiki, wanted)
            return self._stats("full", wanted, len(wanted), started)
        with self._write_lock, self._store.lock(self.lock_timeout):
            try:
                return self._full(wiki, wanted, progress, started)
            except (OSError, IndexBuildError) as exc:
                raise self._build_error(exc) from exc

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
        if self.in_memory:
            with self._write_lock:
                live = self._live
                if live is not None and live.manifest.pages == wanted:
                    return self._stats("reused", wanted, 0, started)
                self._build_memory(wiki, wanted)
            return self._stats("full", wanted, len(wanted), started)

        def bring_up_to_date() -> BuildStats:
            with self._write_lock, self._store.lock(self.lock_timeout):
                # Reopen: another process may have written a newer generation meanwhile.
                live = self._load_live()
                if live is None:
                    return self._full(wiki, wanted, progress, started)
                self._install(live)
                changed = changed_pages(live.manifest.pages, wanted)
                if not changed:
                    return self._stats("reused", wanted, 0, started)
                return self._incremental(wiki, wanted, changed, progress, started)

        return self._keeping_previous(bring_up_to_date, wanted, started)

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

    # -- write failures -----------------------------------------------------------

    def _build_error(self, exc: OSError | IndexBuildError) -> IndexBuildError:
        """``exc`` as an IndexBuildError saying whether the previous index still serves."""
        kept = self._live is not None
        what = (
            "the previous index is still in use"
            if kept
            else "there is no previous index to answer from"
        )
        text = str(exc) if isinstance(exc, IndexBuildError) else f"search index not written: {exc}"
        return IndexBuildError(f"{text}; {what}", previous_kept=kept)

    def _keeping_previous(
        self, build: Callable[[], BuildStats], wanted: Mapping[str, PageEntry], started: float
    ) -> BuildStats:
        """Run ``build``; if it cannot write while a previous index serves, keep serving it.

        The failure is logged as one warning (not again while retries fail the same
        way) and returned in ``problem``. Without a previous index it raises
        :class:`IndexBuildError`.
        """
        try:
            stats = build()
        except (OSError, IndexBuildError) as exc:
            error = self._build_error(exc)
            if not error.previous_kept:
                raise error from exc
            problem = str(exc)
            if problem != self._failure:
                log.warning(
                    "search index update failed: %s; still answering from the previous index",
                    problem,
                )
                self._failure = problem
            return replace(self._stats("reused", wanted, 0, started), problem=problem)
        self._failure = None
        return stats

    # -- searching --------------------------------------------------------------

    def prepare(self, query: str) -> PreparedQuery:
        """Clean ``query`` and analyse it into index terms (see :mod:`knowledge.search.query`)."""
        return prepare_query(query, self.engine.analyze)

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
        limit, offset = ranking.clamp(limit, offset)
        need = offset + limit
        depth = max(need, RESULT_DEPTH)
        key = (prepared.terms, category, depth)
        try:
            entry = self._results.get(key, self._live)
            if entry is None:
                entry = self._rank_once(key, prepared, category, depth)
                if entry is None:
                    return SearchResults(
                        query=prepared.text, total=0, hits=(), problem=PROBLEM_NO_INDEX
                    )
            hits = self._hits(entry, prepared, offset, limit)
            if hits is None:  # the generation was swapped meanwhile: rank again
                self._results.clear()
                return self.search(query, limit=limit, offset=offset, category=category)
            return SearchResults(query=prepared.text, total=entry.total, hits=hits)
        except Exception:
            log.exception("search failed (%d query terms)", len(prepared.terms))
            return SearchResults(query=prepared.text, total=0, hits=(), problem=PROBLEM_FAILED)

    def clear_cache(self) -> None:
        """Forget every cached result (they are also dropped whenever the index changes)."""
        self._results.clear()

    def _rank_once(
        self, key: tuple[object, ...], prepared: PreparedQuery, category: str | None, depth: int
    ) -> _Ranked | None:
        """Rank ``key`` and cache it; a search of the same key already running is
        waited for and its ranking shared instead of queueing for the lock to rank again."""
        with self._flying_lock:
            running = self._flying.get(key)
            if running is None:
                self._flying[key] = done = threading.Event()
        if running is not None:
            running.wait()
            entry = self._results.get(key, self._live)
            if entry is not None:
                return entry
            # It failed, the cache keeps nothing, or the index changed: rank here.
            return self._rank(prepared, category, depth)
        try:
            entry = self._rank(prepared, category, depth)
            if entry is not None:
                self._results.put(key, entry)
            return entry
        finally:
            with self._flying_lock:
                del self._flying[key]
            done.set()

    def _rank(self, prepared: PreparedQuery, category: str | None, depth: int) -> _Ranked | None:
        """The best ``depth`` sections of the live generation; None before the first build."""
        with self._search_lock:
            live = self._live
            if live is None:
                return None
            if not live.generation.searching:
                live = self._follow_locked(live)
            total, ranked = live.generation.rank(prepared.terms, need=depth, category=category)
        return _Ranked(live=live, total=total, ranked=tuple(ranked))

    def _hits(
        self, entry: _Ranked, prepared: PreparedQuery, offset: int, limit: int
    ) -> tuple[Hit, ...] | None:
        """Hits ``offset`` to ``offset + limit`` of ``entry``, made once each; None if the
        generation it was ranked on is no longer live."""
        wanted = entry.ranked[offset : offset + limit]
        missing = [(score, doc) for score, doc in wanted if doc not in entry.hits]
        if missing:
            with self._search_lock:
                if self._live is not entry.live:
                    return None
                found = [entry.live.generation.fetch(score, doc) for score, doc in missing]
            # Snippets need no searcher: built outside the lock.
            marker = Marker(prepared.terms, self.engine.analyze)
            for (_, doc), item in zip(missing, found, strict=True):
                entry.hits[doc] = _hit(item, marker)
        return tuple(entry.hits[doc] for _, doc in wanted)

    def _follow_locked(self, live: _Live) -> _Live:
        """``live``, or the generation now current if another process removed it.

        Called with the search lock held, only before a generation's first search:
        one already searched keeps working on removed files (Linux).
        """
        if self.in_memory or self._store.holds_manifest(live.gen_dir):
            return live
        fresh = self._load_live()
        if fresh is None:
            return live
        log.info("search index generation %s is gone; now using %s", live.gen_dir, fresh.gen_dir)
        live.generation.close()
        self._live = fresh
        self._results.clear()
        return fresh

    # -- state ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("search index is closed")

    def _stats(
        self, mode: BuildMode, wanted: Mapping[str, PageEntry], changed: int, t0: float
    ) -> BuildStats:
        return BuildStats(
            mode=mode,
            pages=len(wanted),
            sections=sum(n for _, _, n in wanted.values()),
            changed_pages=changed,
            seconds=time.perf_counter() - t0,
        )

    def _manifest(self, wanted: Mapping[str, PageEntry]) -> Manifest:
        return Manifest(
            schema_version=self.engine.schema_version,
            engine_version=self.engine.version,
            pages=dict(sorted(wanted.items())),
        )

    def _load_live(self, *, said: bool = False) -> _Live | None:
        """Open the generation ``current`` points at, or None if absent or unusable.

        ``said``: why it is unusable was logged by an earlier look; log it at debug only.
        """
        warn, info = (logging.DEBUG, logging.DEBUG) if said else (logging.WARNING, logging.INFO)
        current = self._store.read_current(level=warn)
        if current is None:
            return None
        gen_dir, manifest = current
        if manifest.schema_version != self.engine.schema_version:
            log.log(
                info,
                "search index schema %s != %s; rebuilding",
                manifest.schema_version,
                self.engine.schema_version,
            )
            return None
        if manifest.engine_version != self.engine.version:
            log.log(
                info,
                "search index written by engine version %s, running %s; rebuilding",
                manifest.engine_version,
                self.engine.version,
            )
            return None
        try:
            generation = self.engine.open(gen_dir)
        except Exception as exc:
            log.log(warn, "search index in %s is unreadable (%r); rebuilding", gen_dir, exc)
            return None
        try:
            count = generation.doc_count()
            if count != manifest.sections:
                raise ValueError(f"{count} documents, manifest says {manifest.sections}")
        except Exception as exc:
            generation.close()
            log.log(warn, "search index in %s is unreadable (%r); rebuilding", gen_dir, exc)
            return None
        return _Live(gen_dir=gen_dir, generation=generation, manifest=manifest)

    def _install(self, live: _Live) -> None:
        with self._search_lock:
            old, self._live = self._live, live
            self._results.clear()
        if old is not None and old is not live:
            self._close_live(old)

    def _close_live(self, live: _Live) -> None:
        # Waits for a search in progress on this generation to finish.
        with self._search_lock:
            live.generation.close()

    # -- writing ----------------------------------------------------------------

    def _build_in_child(self, wiki: Wiki) -> bool:
        if self.build_in_child is not None:
            return self.build_in_child
        return text_size(wiki) >= CHILD_BUILD_MIN_CHARS

    def _full(
        self,
        wiki: Wiki,
        wanted: dict[str, PageEntry],
        progress: Progress | None,
        started: float,
    ) -> BuildStats:
        gen_dir = self._store.new_generation()
        try:
            pages = (
                [section_document(page, section, wanted[path][1]) for section in page.sections]
                for path, page in sorted(wiki.pages.items())
            )
            total = len(wiki.pages)
            on_page = None if progress is None else (lambda done: progress(done, total))
            if self._build_in_child(wiki):
                # Imported here, not with the package: ``python -m knowledge.search.child``
                # must find it unimported (runpy warns otherwise).
                from knowledge.search.child import write_in_child

                sections = sum(n for _, _, n in wanted.values())
                write_in_child(self.engine, gen_dir, pages, sections, on_page)
            else:
                self.engine.write(gen_dir, pages, on_page)
            manifest = self._store.publish(gen_dir, self._manifest(wanted))
        except BaseException:
            self._store.discard(gen_dir)
            raise
        self._install_published(gen_dir, manifest)
        if progress is not None and not wiki.pages:
            progress(0, 0)
        return self._stats("full", wanted, len(wanted), started)

    def _incremental(
        self,
        wiki: Wiki,
        wanted: dict[str, PageEntry],
        changed: list[str],
        progress: Progress | None,
        started: float,
    ) -> BuildStats:
        live = self._live
        assert live is not None

        def changes() -> Iterator[tuple[str, Sequence[Document]]]:
            for done, path in enumerate(changed, start=1):
                page = wiki.pages.get(path)
                status = wanted[path][1] if page is not None else ""
                yield (
                    path,
                    []
                    if page is None
                    else [section_document(page, section, status) for section in page.sections],
                )
                if progress is not None:
                    progress(done, len(changed))

        gen_dir = self._store.copy_generation(live.gen_dir)
        try:
            copy = self.engine.open(gen_dir)
            try:
                # Where a full build would run in a child, so does an update that would
                # rewrite every segment: in process that stalls like a full build.
                copy.update(
                    changes(),
                    rewrite_ok=not self._build_in_child(wiki),
                    timeout=min(self.lock_timeout, 5.0),
                )
            finally:
                copy.close()
            manifest = self._store.publish(gen_dir, self._manifest(wanted))
        except WouldRewrite:
            self._store.discard(gen_dir)
            log.info(
                "updating %d pages would rewrite the whole search index here; rebuilding it",
                len(changed),
            )
            return self._full(wiki, wanted, progress, started)
        except BaseException:
            self._store.discard(gen_dir)
            raise
        self._install_published(gen_dir, manifest)
        return self._stats("incremental", wanted, len(changed), started)

    def _install_published(self, gen_dir: Path, manifest: Manifest) -> None:
        """Serve the generation just made current and remove the ones before it."""
        gen_dir = gen_dir.resolve()
        self._install(_Live(gen_dir, self.engine.open(gen_dir), manifest))
        self._store.clean_old()


@dataclass(slots=True)
class _Ranked:
    """One query ranked on one generation: the best sections, and the hits made of them."""

    live: _Live
    total: int
    ranked: tuple[tuple[float, int], ...]
    #: Hits (with snippets) by document number, made when a page of results first shows them.
    hits: dict[int, Hit] = field(default_factory=dict)


class _ResultCache:
    """The rankings of the last ``size`` queries, keyed by (terms, category, depth).

    An entry only answers while its generation is live, and the whole cache is
    emptied whenever the index swaps or updates a generation, so a result never
    outlives the wiki it was ranked on. Ranking to :data:`RESULT_DEPTH` sections
    at once lets the next pages of ``/search`` (and a repeated question) come from
    here without asking the engine again.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[object, ...], _Ranked] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...], live: _Live | None) -> _Ranked | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.live is not live:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[object, ...], entry: _Ranked) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _hit(found: Found, marker: Marker) -> Hit:
    return Hit(
        path=found.path,
        anchor=found.anchor,
        page_title=found.page_title,
        section_title=found.section_title,
        category=found.category,
        status=found.status,
        score=found.score,
        snippet=snippet_for((found.text, found.code), marker),
    )
