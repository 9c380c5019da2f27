"""The typed shape of a wiki: pages, their sections, tables, code blocks and links.

Plain frozen dataclasses with no behaviour beyond lookups, so every part of the
code base (search, triage, answers) can hold them without knowing how Markdown was
read. :mod:`knowledge.wiki.parse` builds them; :mod:`knowledge.wiki.load` reads a
folder into a :class:`Wiki`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Cell",
    "CodeBlock",
    "FileStat",
    "Labelled",
    "Link",
    "Page",
    "Section",
    "Table",
    "Wiki",
]


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written on a page, resolved against the wiki root when internal."""

    text: str
    href: str
    #: Wiki-relative POSIX path of the target page, or None for external links.
    path: str | None = None
    #: Fragment (``#anchor``) of the link, without the ``#``.
    anchor: str | None = None


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    links: tuple[Link, ...] = ()
    #: Contents of inline code spans in the cell, in order.
    code: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    line: int = 0

    def column(self, *names: str) -> int | None:
        """Index of the first header matching one of ``names`` (case-insensitive)."""
        wanted = [n.casefold() for n in names]
        for want in wanted:
            for i, head in enumerate(self.header):
                if head.casefold() == want:
                    return i
        for want in wanted:
            for i, head in enumerate(self.header):
                if want in head.casefold():
                    return i
        return None


@dataclass(frozen=True, slots=True)
class CodeBlock:
    lang: str
    text: str
    line: int = 0
    #: The section's prose between the previous code block (or the heading) and this
    #: one, last paragraphs only: what the page says the block is.
    intro: str = ""


@dataclass(frozen=True, slots=True)
class Labelled:
    """A paragraph that opens with a bold label, e.g. ``**Error**: ...`` or ``**Fix:**``.

    ``text`` is the prose after the label plus any list that follows before the
    next label; ``code`` holds the code blocks that follow it.
    """

    label: str
    text: str
    code: tuple[str, ...] = ()
    #: Inline code spans of the labelled paragraph, each with the paragraph's text
    #: before it: ``(code, before)``. Error strings are usually quoted this way.
    quotes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    level: int
    anchor: str
    #: Prose of the section (paragraphs, lists, quotes, table cells), code excluded.
    text: str
    code: tuple[CodeBlock, ...] = ()
    tables: tuple[Table, ...] = ()
    links: tuple[Link, ...] = ()
    labelled: tuple[Labelled, ...] = ()
    line: int = 0
    #: Titles of the enclosing headings, outermost first.
    parents: tuple[str, ...] = ()

    def label(self, *names: str) -> Labelled | None:
        wanted = {n.casefold() for n in names}
        for item in self.labelled:
            if item.label.casefold() in wanted:
                return item
        return None


@dataclass(frozen=True, slots=True)
class Page:
    path: str
    title: str
    category: str
    sections: tuple[Section, ...]
    sha: str
    size: int
    problems: tuple[str, ...] = ()

    @property
    def links(self) -> Iterator[Link]:
        for section in self.sections:
            yield from section.links

    @property
    def tables(self) -> Iterator[tuple[Section, Table]]:
        for section in self.sections:
            for table in section.tables:
                yield section, table

    def section(self, anchor: str) -> Section | None:
        for section in self.sections:
            if section.anchor == anchor:
                return section
        return None


#: A file whose status changed this recently (in ns) before it was read may have been
#: written again within the file system's timestamp granularity: its status vouches for
#: nothing, and the next load reads it (as git does with "racily clean" files).
RACY_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class FileStat:
    """A page file's status when its bytes (hashing to ``sha``) were read.

    While the file's status is the same, its bytes are too, and a load need not read
    it again (:meth:`vouches_for`).
    """

    sha: str
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    #: ``time.time_ns()`` before the file's status was taken and its bytes read.
    read_ns: int

    @classmethod
    def of(cls, sha: str, info: os.stat_result, read_ns: int) -> FileStat:
        return cls(sha, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, read_ns)

    def vouches_for(self, info: os.stat_result) -> bool:
        """True when ``info`` (a fresh ``lstat``) is this status, of a file that had
        not changed for :data:`RACY_NS` when it was read: its bytes still hash to ``sha``."""
        return (
            info.st_size == self.size
            and info.st_mtime_ns == self.mtime_ns
            and info.st_ctime_ns == self.ctime_ns
            and info.st_ino == self.ino
            and max(self.mtime_ns, self.ctime_ns) + RACY_NS < self.read_ns
        )


@dataclass(slots=True)
class Wiki:
    root: Path
    pages: dict[str, Page]
    #: (path, reason) for every file that could not be used at all.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: The status of each page's file when it was read (see :class:`FileStat`).
    stats: dict[str, FileStat] = field(default_factory=dict, repr=False, compare=False)

    @property
    def revision(self) -> str:
        """Content hash of the whole wiki: changes whenever any page changes."""
        digest = hashlib.sha256()
        for path in sorted(self.pages):
            digest.update(path.encode())
            digest.update(self.pages[path].sha.encode())
        return digest.hexdigest()[:12]

    @property
    def categories(self) -> list[str]:
        return sorted({page.category for page in self.pages.values()})

    def find_page(self, *names: str) -> Page | None:
        """The page at one of ``names`` (case-insensitive), in the order given."""
        lowered = {path.casefold(): page for path, page in self.pages.items()}
        for name in names:
            page = self.pages.get(name) or lowered.get(name.casefold())
            if page is not None:
                return page
        return None
