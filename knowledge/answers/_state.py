"""What every answer reads: one loaded wiki, and where its pages are published.

:class:`WikiState` is built by :class:`knowledge.service.KnowledgeBase` on each
(re)load and swapped as a whole, so an answer running in a worker thread never
sees half of an old wiki and half of a new one.

The search index of a state is either given when it is built or opened on first
use (:meth:`WikiState.deferred`): ``wikibot ask "/runbook glm"`` answers from the
catalogue alone and never loads the search engine.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from knowledge.wiki import Catalogue, Glossary, Wiki

if TYPE_CHECKING:
    from knowledge.search import BuildStats, SearchIndex, SearchResults
    from knowledge.search.pages import PageRanker

__all__ = ["IndexOpener", "Links", "WikiState"]

#: Opens (and brings up to date) the search index of a state on first use.
IndexOpener = Callable[[], "tuple[SearchIndex, BuildStats]"]


@dataclass(frozen=True, slots=True)
class Links:
    """Page URLs under a published wiki (``base`` ends with ``/``), or none."""

    base: str | None = None

    @classmethod
    def of(cls, base: str | None) -> Links:
        return cls(base.rstrip("/") + "/" if base else None)

    def url(self, path: str, anchor: str | None = None) -> str | None:
        if self.base is None:
            return None
        return f"{self.base}{path}" + (f"#{anchor}" if anchor else "")


@dataclass(slots=True)
class _Once:
    """A value built on first use, by one thread, then shared."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    value: PageRanker | None = None


@dataclass(slots=True)
class _Index:
    """A state's search index and its build figures: given, or made by ``opener`` once."""

    value: tuple[SearchIndex, BuildStats] | None = None
    opener: IndexOpener | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self) -> tuple[SearchIndex, BuildStats]:
        value = self.value
        if value is None:
            with self.lock:
                if self.value is None:
                    assert self.opener is not None
                    self.value = self.opener()
                    self.opener = None  # what it holds (the wiki) is the state's anyway
                value = self.value
        return value


@dataclass(frozen=True, slots=True)
class WikiState:
    """One loaded wiki: its pages, glossary, runbook catalogue and search index.

    Build it with :meth:`loaded` (the index given) or :meth:`deferred` (opened on
    first use of :attr:`index`, :attr:`built` or :meth:`search`).
    """

    wiki: Wiki
    glossary: Glossary
    catalogue: Catalogue
    _index: _Index = field(repr=False, compare=False)
    #: ``time.time()`` when this state was loaded.
    loaded_at: float
    links: Links = Links()
    _ranker: _Once = field(default_factory=_Once, repr=False, compare=False)

    @classmethod
    def loaded(
        cls,
        wiki: Wiki,
        glossary: Glossary,
        catalogue: Catalogue,
        index: SearchIndex,
        built: BuildStats,
        loaded_at: float,
        links: Links = Links(),
        *,
        ranker: PageRanker | None = None,
    ) -> WikiState:
        """A state whose search index is open and up to date; ``ranker``: the page
        ranker of a previous state of the very same pages, kept instead of rebuilt."""
        return cls(
            wiki,
            glossary,
            catalogue,
            _Index(value=(index, built)),
            loaded_at,
            links,
            _Once(value=ranker),
        )

    @classmethod
    def deferred(
        cls,
        wiki: Wiki,
        glossary: Glossary,
        catalogue: Catalogue,
        open_index: IndexOpener,
        loaded_at: float,
        links: Links = Links(),
    ) -> WikiState:
        """A state whose search index ``open_index`` opens when it is first needed."""
        return cls(wiki, glossary, catalogue, _Index(opener=open_index), loaded_at, links)

    @property
    def index(self) -> SearchIndex:
        """The search index (opened now if this state was built without it)."""
        return self._index.get()[0]

    @property
    def built(self) -> BuildStats:
        """How the index was brought up to date for this wiki (reused, updated, full)."""
        return self._index.get()[1]

    @property
    def index_opened(self) -> bool:
        """Whether the search index has been opened (a deferred one may not be yet)."""
        return self._index.value is not None

    @property
    def ranker(self) -> PageRanker:
        """The page ranker for pasted questions, built on first use (seconds)."""
        once = self._ranker
        if once.value is None:
            with once.lock:
                if once.value is None:
                    from knowledge.search.pages import PageRanker

                    once.value = PageRanker.build(
                        self.wiki,
                        self.catalogue.statuses(),
                        catalogue=self.catalogue,
                        glossary=self.glossary,
                    )
        return once.value

    @property
    def built_ranker(self) -> PageRanker | None:
        """The page ranker if it has been built (None: not yet), without building it."""
        return self._ranker.value

    def retire(self) -> None:
        """Free the page ranker of a state no longer served, a little at a time.

        The ranker is a million small objects on the real wiki (ten million at 10x).
        Dropped at once, freeing them holds the GIL for 0.3 s (seconds at 10x) in
        whichever thread lets go last, and the bot's event loop stalls as long.
        Emptied piece by piece from Python instead, the interpreter switches threads
        between pieces. Only when nothing but this state holds the ranker: an answer
        still running on the state keeps it whole, and it is freed when that lets go.
        """
        once = self._ranker
        with once.lock:
            ranker, once.value = once.value, None
        # Held by the local name and getrefcount's argument only: no one else can reach it.
        if ranker is not None and sys.getrefcount(ranker) == 2:
            _empty_gradually(ranker)

    @property
    def categories(self) -> list[str]:
        """The wiki's top-level folders, the sections ``/search`` can be limited to."""
        return self.wiki.categories

    def search(
        self, query: str, *, limit: int = 5, offset: int = 0, category: str | None = None
    ) -> SearchResults:
        """Raw section hits for ``query``, best first."""
        return self.index.search(query, limit=limit, offset=offset, category=category)


def _empty_gradually(value: object) -> None:
    """Empty the lists and dicts inside ``value`` (dataclass fields followed) one item at
    a time, so freeing a large structure never holds the GIL for long.

    Only what nothing else refers to is emptied (the reference counts say so): ``value``
    itself must be unreachable by anyone else; a container or object it shares with
    live data is left whole and freed, or kept, as usual.
    """
    stack: list[object] = [value]
    del value
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            while item:
                _, inner = item.popitem()
                # Held by ``inner`` and getrefcount's argument only: ours alone.
                if _container(inner) and sys.getrefcount(inner) == 2:
                    stack.append(inner)
                del inner
        elif isinstance(item, list):
            while item:
                inner = item.pop()
                if _container(inner) and sys.getrefcount(inner) == 2:
                    stack.append(inner)
                del inner
        elif _container(item):
            for f in dataclasses.fields(item):  # type: ignore[arg-type]
                inner = getattr(item, f.name)
                # ... and by the field itself.
                if _container(inner) and sys.getrefcount(inner) == 3:
                    stack.append(inner)
                del inner
        del item


def _container(value: object) -> bool:
    """A dict, a list, or a dataclass instance: what :func:`_empty_gradually` goes into."""
    return isinstance(value, dict | list) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )
