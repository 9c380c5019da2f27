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
import itertools
import sys
import threading
from collections.abc import Callable, Iterable
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
    #: The ranker of an earlier load, to build this one from (dropped once it is built).
    basis: PageRanker | None = None


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
        basis: PageRanker | None = None,
    ) -> WikiState:
        """A state whose search index is open and up to date; ``ranker``: the page
        ranker of a previous state of the very same pages, kept instead of rebuilt;
        ``basis``: that of a previous state of other pages, whose reading of the pages
        still the same is taken when this state's ranker is built."""
        return cls(
            wiki,
            glossary,
            catalogue,
            _Index(value=(index, built)),
            loaded_at,
            links,
            _Once(value=ranker, basis=None if ranker is not None else basis),
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
                        previous=once.basis,
                    )
                    basis, once.basis = once.basis, None
                    # What the new ranker did not take of the old one is freed a piece
                    # at a time (see :meth:`retire`), if no one else holds it.
                    if basis is not None and sys.getrefcount(basis) == 2:
                        _empty_gradually(basis)
                    del basis
        return once.value

    @property
    def built_ranker(self) -> PageRanker | None:
        """The page ranker if it has been built (None: not yet), without building it."""
        return self._ranker.value

    @property
    def ranker_basis(self) -> PageRanker | None:
        """The ranker this state's will be built from, or its own if built already:
        what the next load's ranker can take pages from."""
        once = self._ranker
        return once.value if once.value is not None else once.basis

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
            ranker, once.value, once.basis = once.value, None, None
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


#: What :func:`_empty_gradually` never goes into: values holding no container it must
#: empty (tuples and frozensets of the ranker hold numbers and strings).
_LEAVES = frozenset({str, int, float, bool, type(None), bytes, tuple, frozenset})
#: Items dropped at once: freeing this many leaves (with the tuples in them) takes
#: well under a millisecond.
_CHUNK = 1024
#: Items of the small flat containers among a chunk's items freed with the chunk.
_BUDGET = 16 * _CHUNK


def _empty_gradually(value: object) -> None:
    """Empty the lists and dicts inside ``value`` (dataclass fields followed) a chunk at
    a time, so freeing a large structure never holds the GIL for long.

    Only what nothing else refers to is emptied (the reference counts say so): ``value``
    itself must be unreachable by anyone else; a container or object it shares with
    live data is left whole and freed, or kept, as usual. Dropping a reference is
    always safe, so what is small and flat goes at once: a run of up to
    :data:`_CHUNK` plain values or dataclass instances of a type whose instances hold
    no container, and small lists and dicts of plain values (up to :data:`_BUDGET`
    items a chunk). The work in Python is then per chunk and per object holding
    large containers, not per item (ten million of them at 10x the wiki).
    """
    stack: list[object] = [value]
    del value
    #: dataclass types whose instances hold no container (judged by one of them)
    flat: dict[type, bool] = {}
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            # Small and flat: freed at once below. Else its values go on as a list and
            # the keys (strings and numbers) are freed in C.
            if _flat_size(item) < 0:
                stack.append(list(item.values()))
                item.clear()
        elif isinstance(item, list):
            while item:
                chunk = item[-_CHUNK:]
                del item[-_CHUNK:]
                rest = set(map(type, chunk)) - _LEAVES
                if (
                    not rest
                    or (rest == {list} and _flat_lists(chunk))
                    or rest <= _flat_kinds(chunk, flat)
                ):
                    del chunk
                    continue
                budget = _BUDGET
                for inner in chunk:
                    size = _flat_size(inner)
                    if 0 <= size <= budget:
                        budget -= size  # freed with the chunk
                    # Held by ``chunk``, ``inner`` and getrefcount's argument only: ours.
                    elif _container(inner) and sys.getrefcount(inner) == 3:
                        stack.append(inner)
                del inner, chunk
        elif _container(item):
            for f in dataclasses.fields(item):  # type: ignore[arg-type]
                inner = getattr(item, f.name)
                # ... by the field, ``inner`` and getrefcount's argument. A small flat
                # one is freed with the object.
                if _flat_size(inner) < 0 and _container(inner) and sys.getrefcount(inner) == 3:
                    stack.append(inner)
                del inner
        del item


def _flat_lists(chunk: list[object]) -> bool:
    """Whether ``chunk`` (plain values and lists) holds at most :data:`_BUDGET` items in
    its lists, all plain values (counted and checked in C)."""
    lists = [value for value in chunk if type(value) is list]
    return (
        sum(map(len, lists)) <= _BUDGET
        and set(map(type, itertools.chain.from_iterable(lists))) <= _LEAVES
    )


def _flat_size(value: object) -> int:
    """The length of a list or dict of at most :data:`_CHUNK` plain values; else -1."""
    if isinstance(value, list):
        values: Iterable[object] = value
    elif isinstance(value, dict):
        values = value.values()
    else:
        return -1
    if len(value) > _CHUNK or not set(map(type, values)) <= _LEAVES:
        return -1
    return len(value)


def _flat_kinds(chunk: list[object], flat: dict[type, bool]) -> set[type]:
    """The types in ``chunk`` of dataclass instances holding no container (only leaves),
    each judged once, by its first instance met: freeing one is freeing a few objects."""
    for value in chunk:
        kind = type(value)
        if kind not in flat and kind not in _LEAVES:
            flat[kind] = (
                dataclasses.is_dataclass(value)
                and not isinstance(value, type)
                and all(type(getattr(value, f.name)) in _LEAVES for f in dataclasses.fields(value))
            )
    return {kind for kind, is_flat in flat.items() if is_flat}


def _container(value: object) -> bool:
    """A dict, a list, or a dataclass instance: what :func:`_empty_gradually` goes into."""
    return isinstance(value, dict | list) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )
