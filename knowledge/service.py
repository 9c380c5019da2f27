"""The knowledge base: one wiki folder loaded, kept current, and answered from.

:class:`KnowledgeBase` loads the wiki (parsed pages cached on disk), builds its
glossary, runbook catalogue and search index, and swaps them in as one
:class:`~knowledge.answers.WikiState` on every reload, so a search running in a
worker thread never sees half of an old wiki and half of a new one. The
commands themselves are the pure functions of :mod:`knowledge.answers`; the
methods here call them on the current state, so the console, ``wikibot ask``
and the Discord layer answer alike.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge import answers
from knowledge.answers import Links, WikiState
from knowledge.files import read_regular_text, write_atomic
from knowledge.paths import default_data_dir, demo_wiki_dir
from knowledge.reply import Reply
from knowledge.search.engine import BuildStats, IndexBuildError, SearchResults
from knowledge.search.layout import has_index
from knowledge.templates import Templates, load_templates
from knowledge.wiki import (
    Catalogue,
    Glossary,
    Page,
    PageCache,
    Wiki,
    find_front_page,
    load_wiki,
)
from knowledge.wiki.cache import CachedPages
from knowledge.wiki.helper import HELPER_MIN_BYTES

if TYPE_CHECKING:
    from knowledge.gaps import GapRecorder, GapSettings
    from knowledge.search import SearchIndex
    from knowledge.search.pages import PageRanker
    from knowledge.triage.engine import TriageContext

__all__ = [
    "SKIPPED_SAID_FILE",
    "KnowledgeBase",
    "Progress",
    "data_dir_problem",
    "default_data_dir",
    "demo_wiki_dir",
]

log = logging.getLogger(__name__)

#: Called with (pages done, pages in all) while the index is built.
Progress = Callable[[int, int], None]

#: In the data folder: a digest of the skipped files last warned about, so a CLI
#: run or a refresh warns once per change of the wiki, not on every load.
SKIPPED_SAID_FILE = "skipped-said.txt"


def data_dir_problem(data_dir: Path) -> str | None:
    """None if ``data_dir`` exists (or can be made) and a file can be created in it,
    else the system's reason (``Read-only file system``, ``Not a directory``, ...)."""
    try:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=data_dir, prefix=".probe-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _import_ahead(module: str) -> None:
    """Import ``module`` in a thread, overlapping what this one does next (a parse shared
    with a helper process absorbs it); an import of it here meanwhile waits for that one."""

    def run() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # the import here, when it comes, says what is wrong
            log.debug("importing %s ahead failed", module, exc_info=True)

    threading.Thread(target=run, name="import-ahead", daemon=True).start()


def _os_reason(exc: BaseException) -> str:
    """The system's words for the OSError behind ``exc``, else ``exc`` itself."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__
    return str(exc)


class KnowledgeBase:
    """Answers from one wiki folder. Thread-safe for concurrent reads.

    With ``memory_fallback`` (the read-only commands of the terminal), a data folder
    that cannot be created, or is read-only without a usable index, or a first
    index build that fails (a full disk), costs one warning and an index kept in
    memory for this run; without it (``wikibot serve``, ``wikibot index``) the
    error is raised.
    """

    def __init__(
        self,
        wiki_dir: Path,
        data_dir: Path,
        *,
        link_base: str | None = None,
        templates: Templates | None = None,
        memory_fallback: bool = False,
    ) -> None:
        self.wiki_dir = Path(wiki_dir)
        self.data_dir = Path(data_dir)
        self.memory_fallback = memory_fallback
        #: Whether files can be written in the data folder; found out at the first load.
        self._writable: bool | None = None
        self.links = Links.of(link_base)
        self.t = templates or load_templates()
        self._reload_lock = threading.Lock()
        self._state: WikiState | None = None
        self._index: SearchIndex | None = None
        #: How the index was brought up to date when it was opened.
        self._opened: BuildStats | None = None
        #: Parsed pages kept between runs: a restart costs reading files, not parsing.
        self._page_cache = PageCache.in_folder(self.data_dir)
        #: The cache as read at the first load: the pages it gave read their sections from it.
        self._cached: CachedPages | None = None
        self._triage_lock = threading.Lock()
        self._triage: tuple[WikiState, TriageContext] | None = None
        self._skipped_said: str | None = None
        #: Where unanswered requests are noted (:meth:`record_gaps`); None: nowhere.
        self.gaps: GapRecorder | None = None

    # --- loading ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        wiki_dir: Path | None = None,
        data_dir: Path | None = None,
        *,
        link_base: str | None = None,
        progress: Progress | None = None,
        memory_fallback: bool = False,
        templates: Templates | None = None,
        lazy_index: bool = False,
    ) -> KnowledgeBase:
        """Load ``wiki_dir`` (the demo wiki when None) with its index in ``data_dir``.

        With ``lazy_index`` (``wikibot ask``), a writable data folder that holds an
        index, the search index is left unopened: it is opened, and brought up to
        date as a load would, when an answer first needs it, so a command answered
        from the catalogue or the glossary never loads the search engine.
        """
        wiki_path = Path(wiki_dir) if wiki_dir is not None else demo_wiki_dir()
        kb = cls(
            wiki_path,
            data_dir or default_data_dir(wiki_path),
            link_base=link_base,
            templates=templates,
            memory_fallback=memory_fallback,
        )
        kb._load(progress=progress, lazy_index=lazy_index)
        return kb

    def reload(
        self,
        *,
        force: bool = False,
        progress: Progress | None = None,
        parsed: Mapping[str, Page] | None = None,
    ) -> BuildStats:
        """Re-read the wiki and bring the index up to date (rebuilt if ``force``).

        ``parsed``: pages the caller has just parsed from this wiki folder (a fetch's
        check); one whose bytes are unchanged is taken instead of parsed again.
        """
        built = self._load(force=force, progress=progress, parsed=parsed)
        assert built is not None  # only a lazy first load leaves the index unopened
        return built

    def _load(
        self,
        *,
        force: bool = False,
        progress: Progress | None = None,
        lazy_index: bool = False,
        parsed: Mapping[str, Page] | None = None,
    ) -> BuildStats | None:
        """A (re)load; None when the index was left to be opened on first use."""
        previous = self._state
        try:
            return self._load_locked(
                force=force, progress=progress, lazy_index=lazy_index, parsed=parsed
            )
        finally:
            # The state no longer served is freed here, a piece at a time, not at once in
            # whichever thread lets go of it last, and before reload() returns: the bot
            # freezes the heap next, and must not find the old ranker still there. Only if
            # no answer still holds the state (``previous`` and getrefcount's argument are
            # its only references then). The new state already answers meanwhile.
            if (
                previous is not None
                and previous is not self._state
                and previous.built_ranker is not None
                and previous.built_ranker is not self._state.built_ranker
                and sys.getrefcount(previous) == 2
            ):
                previous.retire()
            del previous

    def _load_locked(
        self,
        *,
        force: bool,
        progress: Progress | None,
        lazy_index: bool,
        parsed: Mapping[str, Page] | None,
    ) -> BuildStats | None:
        with self._reload_lock:
            if self._writable is None:
                problem = data_dir_problem(self.data_dir)
                self._writable = problem is None
                if problem is not None:
                    log.info("data folder %s cannot be written: %s", self.data_dir, problem)
            if self._index is None and not lazy_index:
                # This load opens the index next: the search engine's modules (Whoosh,
                # ~0.3 s) are imported while the wiki is read and parsed.
                _import_ahead("knowledge.search.index")
            if self._state is not None:
                previous: Mapping[str, Page] = self._state.wiki.pages
                stats = self._state.wiki.stats
            else:
                # Read per page when first used; kept open for the pages of every later
                # load that are still the same (closed by ``close``).
                self._cached = self._page_cache.read(self.wiki_dir)
                previous, stats = self._cached, self._cached.stats
            wiki = load_wiki(
                self.wiki_dir,
                cache=parsed or previous,
                helper_min_bytes=HELPER_MIN_BYTES,
                stats=None if parsed else stats,
            )
            fresh = [path for path, page in wiki.pages.items() if previous.get(path) is not page]
            gone = any(path not in wiki.pages for path in previous)
            moved = any(stats.get(path) != stat for path, stat in wiki.stats.items())
            # The cache is written in a thread once the index has every page: a full
            # build in a child process is then committing (this process only waits), so
            # on two cores the two overlap; earlier, the write would slow down this
            # process analysing the pages the child is waiting for.
            with ThreadPoolExecutor(1, thread_name_prefix="page-cache") as writer:
                cache_written: Future[None] | None = None

                def write_cache() -> None:
                    nonlocal cache_written
                    if cache_written is None and self._writable and (fresh or gone or moved):
                        # Only the rows of pages parsed anew (or gone) are written, and
                        # the file status of pages whose file was read again.
                        cache_written = writer.submit(
                            self._page_cache.update, wiki.pages, fresh, wiki.stats
                        )

                def indexed(done: int, total: int) -> None:
                    if progress is not None:
                        progress(done, total)
                    if done == total:
                        write_cache()

                # The same pages (none read anew, none gone): the same page ranker.
                same = self._state is not None and not fresh and len(previous) == len(wiki.pages)
                kept = self._state.built_ranker if same and self._state is not None else None
                # Other pages: the new ranker takes the old one's reading of those still the same.
                basis = self._state.ranker_basis if self._state is not None else None
                try:
                    state, built = self._index_state(wiki, force, indexed, lazy_index, kept, basis)
                finally:
                    write_cache()  # no build told us (reused, updated, opened later)
            if cache_written is not None:
                cache_written.result()  # a failure to write is logged there; a bug is raised
            self._repair_cache(wiki)
            self._state = state
            with self._triage_lock:
                if self._triage is not None and self._triage[0] is not state:
                    # Triage's view of the old wiki (and through it the old state's
                    # ranker) is built again on first use, not kept alive beside the new.
                    self._triage = None
            self._say_skipped(wiki)
            log.info(
                "wiki %s loaded: %d pages, %d terms, %d families, index %s in %.2fs",
                wiki.revision,
                len(wiki.pages),
                len(state.glossary.entries),
                len(state.catalogue.families),
                built.mode if built is not None else "left to open on first use",
                built.seconds if built is not None else 0.0,
            )
            return built

    def _index_state(
        self,
        wiki: Wiki,
        force: bool,
        progress: Progress | None,
        lazy_index: bool,
        ranker: PageRanker | None = None,
        basis: PageRanker | None = None,
    ) -> tuple[WikiState, BuildStats | None]:
        """The state of ``wiki``: its glossary, catalogue and index (opened, or left to open
        on first use: then no build figures); ``ranker``: the previous state's, kept
        when the pages are the very same; ``basis``: the previous state's otherwise,
        which the new ranker is built from."""
        front = find_front_page(wiki)
        glossary = Glossary.from_wiki(wiki, front)
        catalogue = Catalogue.from_wiki(wiki, glossary)
        statuses = catalogue.statuses()
        if self._index is None and lazy_index and self._writable and has_index(self.data_dir):
            # Opened when an answer first needs it (see ``open``). Without an index
            # (a first run, a failed build) or a writable folder it is opened now, so
            # the first build and the in-memory warning happen as they always did.
            state = WikiState.deferred(
                wiki,
                glossary,
                catalogue,
                lambda: self._open_deferred(wiki, statuses),
                time.time(),
                self.links,
            )
            return state, None
        if self._index is None:
            self._index, built = self._open_index(wiki, statuses, progress)
            if force and built.mode != "full":
                built = self._index.rebuild(wiki, statuses=statuses, progress=progress)
        elif force:
            built = self._index.rebuild(wiki, statuses=statuses, progress=progress)
        else:
            built = self._index.update(wiki, statuses=statuses)
        state = WikiState.loaded(
            wiki,
            glossary,
            catalogue,
            self._index,
            built,
            time.time(),
            self.links,
            ranker=ranker,
            basis=basis,
        )
        return state, built

    def _open_deferred(
        self, wiki: Wiki, statuses: Mapping[str, str]
    ) -> tuple[SearchIndex, BuildStats]:
        """The index of a state loaded with it unopened: opened now for that state's wiki.

        If a later load opened it meanwhile, that index (which serves the newer wiki)
        and the figures of its opening are returned instead.
        """
        with self._reload_lock:
            if self._index is None:
                self._index, _ = self._open_index(wiki, statuses, None)
            assert self._opened is not None
            return self._index, self._opened

    def _open_index(
        self, wiki: Wiki, statuses: Mapping[str, str], progress: Progress | None
    ) -> tuple[SearchIndex, BuildStats]:
        """The index in the data folder, or (with ``memory_fallback``) one in memory."""
        from knowledge.search.index import SearchIndex  # the search engine: only when opened

        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            index, built = SearchIndex.open(
                wiki, self.data_dir, statuses=statuses, progress=progress
            )
        except (OSError, IndexBuildError) as exc:
            if not self.memory_fallback:
                raise
            log.warning(self.t("cli.memory_index", data=self.data_dir, reason=_os_reason(exc)))
            index, built = SearchIndex.in_memory(wiki, statuses)
        self._opened = built
        return index, built

    def _repair_cache(self, wiki: Wiki) -> None:
        """Write again the cache rows found damaged when their page was read (that page
        was parsed from its file instead): now, or for those found later, at the next load."""
        damaged = self._cached.take_damaged() if self._cached is not None else []
        repair = [path for path in damaged if path in wiki.pages]
        if repair and self._writable:
            self._page_cache.update(wiki.pages, repair, wiki.stats)

    def _say_skipped(self, wiki: Wiki) -> None:
        """Warn in one line about the files skipped, once per change of the wiki.

        What was said last is kept in the data folder, so ``wikibot ask`` after
        ``wikibot index`` (or a bot refresh after a restart) stays quiet until a page
        changes; an unwritable data folder only means saying it again next time.
        """
        digest = hashlib.sha256(repr((wiki.revision, sorted(wiki.skipped))).encode())
        key = digest.hexdigest()[:16]
        if key == self._skipped_said:
            return
        self._skipped_said = key
        said = self.data_dir / SKIPPED_SAID_FILE
        try:
            if read_regular_text(said, 64).strip() == key:
                return
        except OSError:
            pass
        if wiki.skipped:
            shown = "; ".join(f"{path} ({reason})" for path, reason in wiki.skipped[:10])
            more = f" and {len(wiki.skipped) - 10} more" if len(wiki.skipped) > 10 else ""
            log.warning(
                "%d file(s) of the wiki skipped: %s%s (`wikibot index` lists them)",
                len(wiki.skipped),
                shown,
                more,
            )
        if not self._writable:
            return
        try:
            write_atomic(said, key + "\n")
        except OSError as exc:
            log.debug("cannot record the skipped files warned about: %s", exc)

    def record_gaps(self, settings: GapSettings) -> None:
        """Note from now on the requests the wiki does not answer in the data folder's
        ``gaps.sqlite3`` (nothing when ``settings.enabled`` is false)."""
        from knowledge.gaps import GapRecorder

        if self.gaps is not None:
            self.gaps.close()
        self.gaps = GapRecorder.in_folder(self.data_dir, settings)

    def _noted(self, command: str, query: str, reply: Reply) -> Reply:
        """``reply``, after noting ``query`` if it went unanswered (a queue put)."""
        if self.gaps is not None:
            self.gaps.note(command, query, reply)
        return reply

    def close(self) -> None:
        if self.gaps is not None:
            self.gaps.close()
        if self._index is not None:
            self._index.close()
        if self._cached is not None:
            self._cached.close()

    @property
    def link_base(self) -> str | None:
        return self.links.base

    @property
    def last_build(self) -> BuildStats | None:
        """The figures of the last opening or build of the search index (None: not yet)."""
        return self._opened

    @property
    def state(self) -> WikiState:
        if self._state is None:
            raise RuntimeError("knowledge base not loaded")
        return self._state

    @property
    def wiki(self) -> Wiki:
        return self.state.wiki

    @property
    def glossary(self) -> Glossary:
        return self.state.glossary

    @property
    def catalogue(self) -> Catalogue:
        return self.state.catalogue

    @property
    def categories(self) -> list[str]:
        return self.state.wiki.categories

    @property
    def triage_context(self) -> TriageContext:
        """Triage's view of the loaded wiki: built on first use after each (re)load."""
        from knowledge.triage.engine import TriageContext  # only triage pays for its imports

        state = self.state
        with self._triage_lock:
            if self._triage is None or self._triage[0] is not state:
                context = TriageContext.build(
                    state.wiki, state.catalogue, state.search, ranker=state.ranker
                )
                self._triage = (state, context)
            return self._triage[1]

    # --- commands: each one answer of knowledge.answers on the current state ---

    def url(self, path: str, anchor: str | None = None) -> str | None:
        """The published URL of a wiki page (``link_base`` + path), or None."""
        return self.links.url(path, anchor)

    def runbook(self, query: str) -> Reply:
        return self._noted("/runbook", query, answers.runbook(self.state, self.t, query))

    def versions(self, family_key: str) -> Reply:
        return answers.versions(self.state, self.t, family_key)

    def launch(self, family_key: str) -> Reply:
        return answers.launch(self.state, self.t, family_key)

    def acronym(self, query: str) -> Reply:
        return self._noted("/acronym", query, answers.acronym(self.state, self.t, query))

    def search(
        self,
        query: str,
        *,
        category: str | None = None,
        page: int = 1,
        per_page: int = answers.SEARCH_PAGE_SIZE,
    ) -> Reply:
        reply = answers.search(
            self.state, self.t, query, category=category, page=page, per_page=per_page
        )
        # Once per search: turning its pages is not asking again.
        return self._noted("/search", query, reply) if page == 1 else reply

    def search_at_hand(
        self,
        query: str,
        *,
        category: str | None = None,
        page: int = 1,
        per_page: int = answers.SEARCH_PAGE_SIZE,
    ) -> Reply | None:
        """:meth:`search`'s reply if it is bounded work in memory, else None (see
        :func:`knowledge.answers.search_at_hand`): what an event loop may answer itself."""
        state = self._state
        if state is None:
            return None
        reply = answers.search_at_hand(
            state, self.t, query, category=category, page=page, per_page=per_page
        )
        return self._noted("/search", query, reply) if reply is not None and page == 1 else reply

    def search_sections(
        self, query: str, *, limit: int = 5, offset: int = 0, category: str | None = None
    ) -> SearchResults | None:
        """Raw section hits for ``query``, best first; None before the wiki is loaded.

        For engines that rank pages themselves (triage); replies use ``search``.
        """
        state = self._state
        if state is None:
            return None
        return state.search(query, limit=limit, offset=offset, category=category)

    def explain(self, text: str) -> Reply:
        return answers.explain(self.state, self.t, text)

    def status(self) -> Reply:
        return answers.status(self.state, self.t)

    def lint(self, only: list[str] | None = None) -> Reply:
        """``/wiki lint``: the lint's checks (all, or ``only``) on the wiki loaded now."""
        from knowledge.lint import lint_wiki
        from knowledge.lint.answer import lint_reply

        state = self.state
        report = lint_wiki(state.wiki, state.glossary, state.catalogue, only=only)
        return lint_reply(report, load_templates("lint.yaml"))

    def gaps_report(self, since_days: int | None = None) -> Reply:
        """``/wiki gaps``: the unanswered requests recorded in the data folder, grouped, and
        the solved tickets whose marked answer no wiki section holds."""
        from knowledge.gaps import GapStore, TermWeights, gaps_report
        from knowledge.gaps.answer import gaps_reply
        from knowledge.gaps.solved import solved_not_in_wiki

        if self.gaps is not None:
            self.gaps.flush()  # what was asked a moment ago counts too
        records = GapStore.read(self.data_dir, since_days)
        report = gaps_report(records, TermWeights.of(self.wiki), since_days=since_days)
        solved = solved_not_in_wiki(self.data_dir, self.wiki)
        return gaps_reply(
            report, load_templates("gaps.yaml"), recording=self.gaps is not None, solved=solved
        )

    def help(self) -> Reply:
        return answers.help_reply(self.t)

    def family_choices(self, current: str) -> list[tuple[str, str]]:
        return answers.family_choices(self.state, current)

    def category_choices(self, current: str) -> list[tuple[str, str]]:
        return answers.category_choices(self.state, current)

    def term_choices(self, current: str) -> list[tuple[str, str]]:
        return answers.term_choices(self.state, self.t, current)
