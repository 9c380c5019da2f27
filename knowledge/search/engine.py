"""What a search backend must do, and the plain types that cross its boundary.

:class:`~knowledge.search.index.SearchIndex` keeps the generations on disk, the
locks, the child build process and the snippets; an :class:`Engine` only writes,
opens, updates and searches one generation directory. The types here hold
nothing of the backend, so callers of the index never see it (the shape of
httpx's ``_transports/base.py``: a small base class, an implementation beside it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "BuildMode",
    "BuildStats",
    "Document",
    "Engine",
    "Found",
    "Generation",
    "Hit",
    "IndexBuildError",
    "IndexLockedError",
    "Progress",
    "SearchResults",
    "Snippet",
    "WouldRewrite",
]

#: A plain-text excerpt as (text, is_match) parts; no Markdown.
Snippet = tuple[tuple[str, bool], ...]
BuildMode = Literal["reused", "incremental", "full"]
#: Called with (done, total) as pages are written.
Progress = Callable[[int, int], None]


class IndexLockedError(RuntimeError):
    """Another process (or writer) holds the index's build lock."""


class IndexBuildError(RuntimeError):
    """Building or updating the index failed (a full disk, a dying build process).

    Nothing of the failed build is left behind. ``previous_kept`` says whether an
    earlier index still serves; it is False when there was none to keep.
    """

    def __init__(self, message: str, *, previous_kept: bool = True) -> None:
        super().__init__(message)
        self.previous_kept = previous_kept


class WouldRewrite(Exception):
    """An update would rewrite the whole generation, and the caller would rather rebuild."""


@dataclass(frozen=True, slots=True)
class BuildStats:
    mode: BuildMode
    pages: int
    sections: int
    changed_pages: int
    seconds: float
    #: Why the build or update failed while the previous index kept serving, else None.
    problem: str | None = None


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


@dataclass(frozen=True, slots=True)
class Document:
    """What is indexed of one section (see :mod:`knowledge.search.documents`)."""

    path: str
    anchor: str
    page_title: str
    section_title: str
    #: Parent headings below the page title, joined with " / ".
    headings: str
    text: str
    #: The section's code blocks, joined.
    code: str
    #: Text and code of paragraphs quoting what a failure looks like.
    symptom: str
    category: str
    status: str

    @property
    def id(self) -> str:
        return f"{self.path}#{self.anchor}"


@dataclass(frozen=True, slots=True)
class Found:
    """One section a search returned: its score and stored fields (not yet a :class:`Hit`)."""

    score: float
    path: str
    anchor: str
    page_title: str
    section_title: str
    category: str
    status: str
    text: str
    code: str


class Generation(ABC):
    """One opened generation directory. Not thread-safe: the index serialises calls."""

    @abstractmethod
    def doc_count(self) -> int:
        """Sections held."""

    @property
    @abstractmethod
    def searching(self) -> bool:
        """True once a search opened its reader (which keeps working on removed files)."""

    @abstractmethod
    def rank(
        self, terms: Sequence[str], *, need: int, category: str | None
    ) -> tuple[int, list[tuple[float, int]]]:
        """(sections matching in all, (score, doc number) of the best ``need``, best first)
        for analysed ``terms``. A longer ``need`` only adds to the end of the list."""

    @abstractmethod
    def fetch(self, score: float, doc: int) -> Found:
        """The stored fields of a document :meth:`rank` returned."""

    def search(
        self, terms: Sequence[str], *, limit: int, offset: int, category: str | None
    ) -> tuple[int, list[Found]]:
        """(sections matching in all, one page of them best first) for analysed ``terms``."""
        total, ranked = self.rank(terms, need=offset + limit, category=category)
        return total, [self.fetch(score, doc) for score, doc in ranked[offset : offset + limit]]

    @abstractmethod
    def update(
        self,
        changes: Iterable[tuple[str, Sequence[Document]]],
        *,
        rewrite_ok: bool,
        timeout: float,
    ) -> None:
        """Replace each page's sections, as (path, documents; none for a removed page).

        All-or-nothing. Raises :class:`WouldRewrite` before committing anything if
        the commit would rewrite the whole generation and ``rewrite_ok`` is false,
        and :class:`IndexLockedError` if another writer holds the generation for
        ``timeout`` seconds.
        """

    @abstractmethod
    def close(self) -> None: ...


class Engine(ABC):
    """A search backend: writes, opens and analyses. Must pickle (sent to the build process)."""

    #: Bump whenever what a generation holds changes: a stored one is then rebuilt.
    schema_version: int

    @property
    @abstractmethod
    def version(self) -> str:
        """Version of the backend's on-disk format; a generation written by another is rebuilt."""

    @abstractmethod
    def analyze(self, text: str) -> list[str]:
        """The index terms of ``text``, in order (repeats kept)."""

    def preparer(self) -> Callable[[Sequence[Document]], object]:
        """A function making each page's documents, one page after another, into what
        :meth:`write` takes, with the work that needs no generation (the analysis) done;
        what it returns must pickle. Whatever it caches lives as long as it does.

        A full build in a child process is sent pages prepared here, so this process
        analyses the next pages while the child writes the ones before. The default
        does nothing ahead: the documents themselves.
        """
        return _as_they_are

    @abstractmethod
    def write(
        self,
        gen_dir: Path,
        pages: Iterable[object],
        on_page: Callable[[int], None] | None = None,
    ) -> int:
        """Fill the empty ``gen_dir`` with every page's documents; the number written.

        Each page is its documents or what a :meth:`preparer` made of them. All-or-nothing:
        on an exception ``gen_dir`` is left to the caller to remove. ``on_page`` is
        called with the number of pages written so far.
        """

    @abstractmethod
    def open(self, gen_dir: Path) -> Generation:
        """Open a generation that :meth:`write` filled. Raises if it is unreadable."""

    @abstractmethod
    def write_memory(self, pages: Iterable[Sequence[Document]]) -> Generation:
        """A generation of every page's documents held in memory only (nothing on disk).

        For a run that has no usable data folder; it is gone when closed.
        """


def _as_they_are(docs: Sequence[Document]) -> Sequence[Document]:
    return docs
