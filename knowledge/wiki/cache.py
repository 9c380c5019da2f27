"""The parsed-page cache: a restart costs reading the files, not parsing them again.

An SQLite file with one row per page: its path, the hash of its bytes, the parsed
page as JSON (plain lists, strings and numbers: reading it never runs code, unlike
a pickle) and the SHA-256 of that JSON. A ``meta`` table names the version: the
cache format, the parser, markdown-it-py and the layout of the page classes, so a
parse made by other code is never reused.

Each row also has a head, checked by its own SHA-256: the page's title, size,
problems and the :class:`~knowledge.wiki.facts.PageFacts` whole-wiki passes need
(derived once, when the row is written), and the status of the page's file when
it was read (:class:`~knowledge.wiki.model.FileStat`). Opening the cache reads
the heads only: every page is a :class:`StoredPage` whose sections are decoded
when something first reads them, so a start costs a look at each file's status,
not reading every page. Rows are written per page (:meth:`PageCache.update`
replaces only the rows of pages parsed anew, updates the file status of the
others, deletes those of removed pages), so a refresh after one edited page
writes one row. A row whose checksum does not match, whose JSON does not fit the
page classes, or a file that is not an SQLite database at all, is ignored with a
warning: it only costs a re-parse, and the next update rewrites it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import sqlite3
import threading
import types
import typing
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from knowledge.wiki.facts import FACTS_VERSION, PageFacts, facts_of
from knowledge.wiki.model import (
    Cell,
    CodeBlock,
    FileStat,
    Labelled,
    Link,
    Page,
    Section,
    Table,
)
from knowledge.wiki.parse import PARSER_VERSION

__all__ = ["CACHE_FORMAT", "PAGE_CACHE_FILE", "CachedPages", "PageCache", "StoredPage"]

log = logging.getLogger(__name__)

#: Bump when the file's tables or the JSON of a row change shape.
CACHE_FORMAT = 4
#: The cache's file name inside a data folder.
PAGE_CACHE_FILE = "pages.sqlite3"
#: The pickle earlier versions wrote; removed when the cache is first written.
_LEGACY_FILE = "pages.pickle"
#: Every class a cached page is made of; their fields' names and types are in the version.
_MODEL: tuple[type, ...] = (Page, Section, CodeBlock, Table, Cell, Link, Labelled)
#: ... and of the head of a row (see :class:`_Head`) and of a file's status.
_HEAD_MODEL: tuple[type, ...] = (PageFacts, FileStat)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS pages ("
    " path TEXT PRIMARY KEY, sha TEXT NOT NULL, head TEXT NOT NULL, head_checksum TEXT NOT NULL,"
    " stat TEXT, checksum TEXT NOT NULL, data BLOB NOT NULL)",
)

Decoder = Callable[[Any], Any]


class _BadRow(ValueError):
    """A row's JSON does not have the shape of the page classes."""


def _layout() -> str:
    """The page classes' fields and types: a change makes every cached row stale."""
    parts = []
    for cls in (*_MODEL, *_HEAD_MODEL, _Head):
        hints = typing.get_type_hints(cls)
        fields = ",".join(f"{f.name}:{hints[f.name]}" for f in dataclasses.fields(cls))
        parts.append(f"{cls.__module__}.{cls.__qualname__}({fields})")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _encode(value: Any) -> Any:
    """A page (or any part of it) as JSON values: a dataclass is the list of its fields."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, tuple | list):
        return [_encode(item) for item in value]
    if dataclasses.is_dataclass(value):
        return [_encode(getattr(value, f.name)) for f in dataclasses.fields(value)]
    raise TypeError(f"cannot cache a {type(value).__name__}")


#: What a field holds: a set of allowed scalar types, or a function decoding it.
Check = frozenset[type] | Decoder


def _check(tp: Any) -> Check:
    """How to check (and decode) a value of type ``tp`` read from JSON.

    Scalars are checked inline by their caller and sequences with ``map``: a
    page has tens of thousands of values, and a function call per value would
    make reading the cache slower than parsing a few pages.
    """
    if tp in (str, int, float):
        return frozenset({tp})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2:
        (other,) = (arg for arg in args if arg is not type(None))
        inner = _check(other)
        if isinstance(inner, frozenset):
            return inner | {type(None)}
        return lambda value: None if value is None else inner(value)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _check(args[0])
        if isinstance(item, frozenset):
            kinds = item

            def scalars(value: Any) -> tuple[Any, ...]:
                if type(value) is not list or not set(map(type, value)) <= kinds:
                    raise _BadRow(f"expected a list of {sorted(k.__name__ for k in kinds)}")
                return tuple(value)

            return scalars
        decode = item

        def items(value: Any) -> tuple[Any, ...]:
            if type(value) is not list:
                raise _BadRow(f"expected a list, got {type(value).__name__}")
            return tuple(map(decode, value))

        return items
    if origin is tuple:
        return _record(tuple, [_check(arg) for arg in args], "tuple")
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return _record(tp, [_check(hints[f.name]) for f in dataclasses.fields(tp)], tp.__name__)
    raise TypeError(f"no cache decoder for {tp!r}")


def _record(make: Callable[..., Any], checks: list[Check], name: str) -> Decoder:
    """A decoder of a fixed-length list into ``make(*items)``."""
    size = len(checks)
    scalars = [(i, c) for i, c in enumerate(checks) if isinstance(c, frozenset)]
    nested = [(i, c) for i, c in enumerate(checks) if not isinstance(c, frozenset)]

    def record(value: Any) -> Any:
        if type(value) is not list or len(value) != size:
            raise _BadRow(f"{name}: expected a list of {size} items")
        for i, kinds in scalars:
            if type(value[i]) not in kinds:
                raise _BadRow(f"{name}: item {i} is a {type(value[i]).__name__}")
        items = list(value)
        for i, decode in nested:
            items[i] = decode(items[i])
        return make(*items) if make is not tuple else tuple(items)

    return record


def _decoder(tp: Any) -> Decoder:
    """A function turning the JSON of a ``tp`` back into one, checking its shape."""
    check = _check(tp)
    if isinstance(check, frozenset):
        kinds = check

        def scalar(value: Any) -> Any:
            if type(value) not in kinds:
                raise _BadRow(f"unexpected {type(value).__name__}")
            return value

        return scalar
    return check


def _checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _connect(path: Path) -> sqlite3.Connection:
    # Refreshes read and write from worker threads, one at a time (the caller's lock).
    return sqlite3.connect(path, timeout=5.0, check_same_thread=False, isolation_level=None)


@dataclass(frozen=True, slots=True)
class _Head:
    """What a row says of its page besides the sections: read for every row at start."""

    title: str
    category: str
    size: int
    problems: tuple[str, ...]
    facts: PageFacts

    @classmethod
    def of(cls, page: Page) -> _Head:
        return cls(page.title, page.category, page.size, page.problems, facts_of(page))


#: The slot in which a page keeps its sections (made by the dataclass).
_SECTIONS = Page.__dict__["sections"]
_PAGE_FIELDS = tuple(f.name for f in dataclasses.fields(Page))


def sections_in_memory(page: Page) -> bool:
    """False for a page of the cache whose sections are still in the cache file (reading
    them takes the cache's lock and the disk); True for every other page."""
    if not isinstance(page, StoredPage):
        return True
    try:
        _SECTIONS.__get__(page, Page)
    except AttributeError:
        return False
    return True


class StoredPage(Page):
    """A page of the cache whose sections are read from the file when first used.

    Everything else (path, title, hash, size, problems, and the :class:`PageFacts`
    whole-wiki passes ask for) comes with the row's head, so a load and the
    catalogue never read a page they do not show. Once read, the sections stay.
    It equals, and hashes as, the :class:`Page` it stands for; copied or pickled,
    it is read in full first.
    """

    __slots__ = ("__weakref__", "_source", "facts")

    facts: PageFacts

    def _get_sections(self) -> tuple[Section, ...]:
        try:
            return _SECTIONS.__get__(self, Page)
        except AttributeError:  # not read yet
            return self._source.sections_of(self)

    def _set_sections(self, sections: tuple[Section, ...]) -> None:
        # What the dataclass's ``__init__`` and ``__setstate__`` call; the frozen
        # ``__setattr__`` still refuses ``page.sections = ...``.
        _SECTIONS.__set__(self, sections)

    sections = property(_get_sections, _set_sections)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Page):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _PAGE_FIELDS)

    __hash__ = Page.__hash__

    @classmethod
    def _stub(cls, source: CachedPages, path: str, sha: str, head: _Head) -> StoredPage:
        page = cls.__new__(cls)
        values = (
            ("path", path),
            ("title", head.title),
            ("category", head.category),
            ("sha", sha),
            ("size", head.size),
            ("problems", head.problems),
            ("facts", head.facts),
            ("_source", source),
        )
        for name, value in values:
            object.__setattr__(page, name, value)  # the slots, past the frozen __setattr__
        return page


class CachedPages(Mapping[str, Page]):
    """The pages of a cache file: each a :class:`StoredPage`, its sections read on first use.

    Opening reads only the rows' heads (title, hash, facts, the file's status when
    read); a head that fails its checksum or shape makes the row count as absent. A
    row whose sections fail their checksum or shape when read is noted in
    :attr:`damaged` (logged once) and the page is parsed again from its file under
    ``root``; :meth:`take_damaged` tells the knowledge base which rows to write
    again. :meth:`close` (or leaving a ``with`` block) closes the file; it is opened
    again if a page is read after that.
    """

    def __init__(
        self,
        path: Path | None,
        heads: dict[str, tuple[str, _Head]],
        stats: dict[str, FileStat],
        *,
        root: Path | None = None,
        connection: sqlite3.Connection | None = None,
    ) -> None:
        self._path = path
        self._heads = heads
        self.stats: dict[str, FileStat] = stats
        self.root = root
        self._connection = connection
        self._lock = threading.Lock()
        #: One page object per path while something holds it (a load's wiki): a page
        #: dropped by later loads (edited, removed) is not kept alive here.
        self._pages: weakref.WeakValueDictionary[str, StoredPage] = weakref.WeakValueDictionary()
        self._decode_page: Decoder = _decoder(Page)
        self.damaged: list[str] = []
        self._reported = 0

    def __getitem__(self, path: str) -> Page:
        page = self._pages.get(path)
        if page is None:
            sha, head = self._heads[path]  # KeyError: not cached
            page = StoredPage._stub(self, path, sha, head)
            page = self._pages.setdefault(path, page)
        return page

    def __iter__(self) -> Iterator[str]:
        return iter(self._heads)

    def __len__(self) -> int:
        return len(self._heads)

    def __contains__(self, path: object) -> bool:
        return path in self._heads

    def sha(self, path: str) -> str | None:
        """The hash of the page's bytes when it was cached, without reading the page."""
        entry = self._heads.get(path)
        return entry[0] if entry is not None else None

    def take_damaged(self) -> list[str]:
        """The paths found damaged since the last call (their rows need writing again)."""
        with self._lock:
            found, self._reported = self.damaged[self._reported :], len(self.damaged)
        return found

    def sections_of(self, page: StoredPage) -> tuple[Section, ...]:
        """Read the sections of ``page`` (a page of this cache) into it."""
        with self._lock:
            try:
                return _SECTIONS.__get__(page, Page)  # read by another thread meanwhile
            except AttributeError:
                pass
            full = self._read_row(page.path, page.sha) or self._parse_again(page)
            sections = full.sections if full is not None else ()
            _SECTIONS.__set__(page, sections)
            return sections

    def _read_row(self, path: str, sha: str) -> Page | None:
        try:
            connection = self._connect()
            if connection is None:
                raise _BadRow("the cache file is gone or from another version")
            rows = connection.execute(
                "SELECT sha, checksum, data FROM pages WHERE path = ?", (path,)
            ).fetchall()  # all: a cursor left open would keep the file locked
            if not rows:
                raise _BadRow("row missing")
            row_sha, checksum, data = rows[0]
            if row_sha != sha:
                raise _BadRow("row rewritten for other content")
            if not isinstance(data, bytes) or _checksum(data) != checksum:
                raise _BadRow("checksum mismatch")
            page = self._decode_page(json.loads(data))
            if page.path != path or page.sha != sha:
                raise _BadRow(f"row holds page {page.path!r}")
            return page
        except (sqlite3.Error, ValueError, TypeError) as exc:  # JSON errors are ValueErrors
            self.damaged.append(path)
            log.warning("ignoring damaged page cache entry %s: %s", path, exc)
            return None

    def _parse_again(self, page: StoredPage) -> Page | None:
        """``page`` parsed from its file (its row could not be read), or None."""
        from knowledge.wiki.pagefile import read_page  # the parser: only when a row is damaged

        if self.root is None:
            log.warning("page %s: no wiki folder to parse it again from", page.path)
            return None
        parsed, reason = read_page(self.root, self.root / page.path)
        if parsed is None:
            log.warning("page %s could not be parsed again: %s", page.path, reason)
        elif parsed.sha != page.sha:
            log.info("page %s changed since it was loaded; using its new sections", page.path)
        return parsed

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is None and self._path is not None:
            connection = _open_read_only(self._path)
            if connection is not None and _version_of(connection) != PageCache.version():
                connection.close()
                connection = None
            self._connection = connection
        return self._connection

    def close(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def __enter__(self) -> CachedPages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_read_only(path: Path) -> sqlite3.Connection | None:
    """The cache file opened read-only (shared by threads under the caller's lock)."""
    try:
        return sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
        )
    except sqlite3.Error:
        return None


def _version_of(connection: sqlite3.Connection) -> str | None:
    """The version a cache file was written by; None when it has none (yet)."""
    if not connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchall():
        return None
    rows = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchall()
    return rows[0][0] if rows else None


@dataclass(frozen=True, slots=True)
class PageCache:
    """The cache file at ``path``."""

    path: Path

    @classmethod
    def in_folder(cls, data_dir: Path) -> PageCache:
        return cls(Path(data_dir) / PAGE_CACHE_FILE)

    @staticmethod
    def version() -> str:
        """Changes with the format, the parser, markdown-it-py, the page classes or the
        way page facts are derived."""
        mdit = package_version("markdown-it-py")
        return f"{CACHE_FORMAT}/{PARSER_VERSION}/{FACTS_VERSION}/{mdit}/{_layout()}"

    def read(self, root: Path | None = None) -> CachedPages:
        """The cached pages by path, their sections read on first use; empty when the
        file is missing, stale or unreadable. ``root``: the wiki folder, where a page
        whose row turns out damaged is parsed again from.

        Close the result (or use it in a ``with`` block) when done; a page read after
        that opens the file again.
        """
        empty = CachedPages(None, {}, {}, root=root)
        try:
            if not self.path.is_file():
                return empty
        except OSError as exc:  # a data folder this user cannot read
            log.warning("ignoring unreadable page cache %s: %s", self.path, exc)
            return empty
        connection = _open_read_only(self.path)
        if connection is None:
            log.warning("ignoring unreadable page cache %s", self.path)
            return empty
        try:
            version = _version_of(connection)
            if version is None:  # created by a first write that did not finish: nothing cached
                connection.close()
                return empty
            if version != self.version():
                log.info("page cache %s is from another version; parsing again", self.path)
                connection.close()
                return empty
            rows = connection.execute(
                "SELECT path, sha, head, head_checksum, stat FROM pages"
            ).fetchall()
        except sqlite3.Error as exc:  # not a database, damaged, or locked for long
            connection.close()
            log.warning("ignoring unreadable page cache %s: %s", self.path, exc)
            return empty
        heads: dict[str, tuple[str, _Head]] = {}
        stats: dict[str, FileStat] = {}
        damaged: list[str] = []
        decode_head = _decoder(_Head)
        for path, sha, head, head_checksum, stat in rows:
            try:
                if not isinstance(head, str) or _checksum(head.encode()) != head_checksum:
                    raise _BadRow("head checksum mismatch")
                heads[path] = (sha, decode_head(json.loads(head)))
            except (ValueError, TypeError) as exc:
                damaged.append(path)
                log.warning("ignoring damaged page cache entry %s: %s", path, exc)
                continue
            known = _stat_of(sha, stat)
            if known is not None:
                stats[path] = known
        cached = CachedPages(self.path, heads, stats, root=root, connection=connection)
        cached.damaged.extend(damaged)
        return cached

    def update(
        self,
        pages: Mapping[str, Page],
        fresh: Iterable[str] = (),
        stats: Mapping[str, FileStat] | None = None,
    ) -> int:
        """Make the file hold ``pages``: rewrite the rows of the ``fresh`` paths (parsed
        anew) and of pages whose row is missing or stale, record the file ``stats`` that
        changed, delete the rest. The number of rows written; a failure is logged, not
        raised. A damaged file is replaced."""
        stats = stats or {}
        try:
            return self._update(pages, set(fresh), stats)
        except (sqlite3.OperationalError, OSError) as exc:  # disk full, read-only, locked
            log.warning("could not write page cache %s: %s", self.path, exc)
            return 0
        except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
            log.warning("page cache %s is damaged (%s); writing it anew", self.path, exc)
        try:
            self._remove()
            return self._update(pages, set(pages), stats)
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not write page cache %s: %s", self.path, exc)
            return 0

    def write(self, pages: Mapping[str, Page], stats: Mapping[str, FileStat] | None = None) -> int:
        """Replace the cache with ``pages`` (every row written again)."""
        return self.update(pages, pages, stats)

    def _remove(self) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                self.path.with_name(self.path.name + suffix).unlink()

    def _update(
        self, pages: Mapping[str, Page], fresh: set[str], stats: Mapping[str, FileStat]
    ) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = _connect(self.path)
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    connection.execute(statement)
                version = self.version()
                if _version_of(connection) != version:
                    # An older format's table: made again in this one.
                    connection.execute("DROP TABLE IF EXISTS pages")
                    connection.execute(_SCHEMA[1])
                    connection.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)",
                        (version,),
                    )
                stored = {
                    path: (sha, stat)
                    for path, sha, stat in connection.execute("SELECT path, sha, stat FROM pages")
                }
                rows = []
                statuses = []
                for path, page in pages.items():
                    known = stats.get(path)
                    fits = known is not None and known.sha == page.sha
                    stat = _stat_text(known) if known is not None and fits else None
                    old = stored.get(path)
                    if path in fresh or old is None or old[0] != page.sha:
                        head = _json(_Head.of(page))
                        data = _json(page).encode()
                        head_sum, data_sum = _checksum(head.encode()), _checksum(data)
                        rows.append((path, page.sha, head, head_sum, stat, data_sum, data))
                    elif stat is not None and old[1] != stat:
                        statuses.append((stat, path))
                connection.executemany(
                    "INSERT OR REPLACE INTO pages"
                    " (path, sha, head, head_checksum, stat, checksum, data)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                connection.executemany("UPDATE pages SET stat = ? WHERE path = ?", statuses)
                gone = [(path,) for path in stored if path not in pages]
                connection.executemany("DELETE FROM pages WHERE path = ?", gone)
                connection.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise
        finally:
            connection.close()
        with contextlib.suppress(OSError):
            self.path.with_name(_LEGACY_FILE).unlink(missing_ok=True)
        return len(rows)


def _stat_text(known: FileStat) -> str:
    """A file's status as the ``stat`` column holds it: its numbers, ``:``-separated."""
    numbers = (known.size, known.mtime_ns, known.ctime_ns, known.ino, known.read_ns)
    return ":".join(map(str, numbers))


def _stat_of(sha: str, text: object) -> FileStat | None:
    """The status in a ``stat`` column (of the file whose bytes hash to ``sha``); None
    when there is none or it does not read as one: the file is then read."""
    if not isinstance(text, str):
        return None
    parts = text.split(":")
    if len(parts) != 5 or not all(part.isdigit() for part in parts):
        return None
    size, mtime_ns, ctime_ns, ino, read_ns = map(int, parts)
    return FileStat(sha, size, mtime_ns, ctime_ns, ino, read_ns)


def _json(value: Any) -> str:
    return json.dumps(_encode(value), ensure_ascii=False, separators=(",", ":"))
