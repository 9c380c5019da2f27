"""What every answer reads: one loaded wiki, and where its pages are published.

:class:`WikiState` is built by :class:`knowledge.service.KnowledgeBase` on each
(re)load and swapped as a whole, so an answer running in a worker thread never
sees half of an old wiki and half of a new one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from knowledge.search import BuildStats, SearchIndex, SearchResults
from knowledge.search.pages import PageRanker
from knowledge.wiki import Catalogue, Glossary, Wiki

__all__ = ["Links", "WikiState"]


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


@dataclass(frozen=True, slots=True)
class WikiState:
    """One loaded wiki: its pages, glossary, runbook catalogue and search index."""

    wiki: Wiki
    glossary: Glossary
    catalogue: Catalogue
    index: SearchIndex
    built: BuildStats
    #: ``time.time()`` when this state was loaded.
    loaded_at: float
    links: Links = Links()
    _ranker: _Once = field(default_factory=_Once, repr=False, compare=False)

    @property
    def ranker(self) -> PageRanker:
        """The page ranker for pasted questions, built on first use (seconds)."""
        once = self._ranker
        if once.value is None:
            with once.lock:
                if once.value is None:
                    once.value = PageRanker.build(
                        self.wiki,
                        self.catalogue.statuses(),
                        catalogue=self.catalogue,
                        glossary=self.glossary,
                    )
        return once.value

    @property
    def categories(self) -> list[str]:
        """The wiki's top-level folders, the sections ``/search`` can be limited to."""
        return self.wiki.categories

    def search(
        self, query: str, *, limit: int = 5, offset: int = 0, category: str | None = None
    ) -> SearchResults:
        """Raw section hits for ``query``, best first."""
        return self.index.search(query, limit=limit, offset=offset, category=category)
