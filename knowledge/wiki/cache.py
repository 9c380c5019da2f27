"""The parsed-page cache: a restart costs reading the files, not parsing them again.

An SQLite file with one row per page: its path, the hash of its bytes, the parsed
page as JSON (plain lists, strings and numbers: reading it never runs code, unlike
a pickle) and the SHA-256 of that JSON. A ``meta`` table names the version: the
cache format, the parser, markdown-it-py and the layout of the page classes, so a
parse made by other code is never reused.

Rows are read lazily (:class:`CachedPages` decodes a page when it is asked for,
once) and written per page (:meth:`PageCache.update` replaces only the rows of
pages parsed anew and deletes those of removed pages), so a refresh after one
edited page writes one row. A row whose checksum does not match, whose JSON does
not fit the page classes, or a file that is not an SQLite database at all, is
ignored with a warning: it only costs a re-parse, and the next update rewrites it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import sqlite3
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from knowledge.wiki.model import Cell, CodeBlock, Labelled, Link, Page, Section, Table
from knowledge.wiki.parse import PARSER_VERSION

__all__ = ["CACHE_FORMAT", "PAGE_CACHE_FILE", "CachedPages", "PageCache"]

log = logging.getLogger(__name__)

#: Bump when the file's tables or the JSON of a row change shape.
CACHE_FORMAT = 3
#: The cache's file name inside a data folder.
PAGE_CACHE_FILE = "pages.sqlite3"
#: The pickle earlier versions wrote; removed when the cache is first written.
_LEGACY_FILE = "pages.pickle"
#: Every class a cached page is made of; their fields' names and types are in the version.
_MODEL: tuple[type, ...] = (Page, Section, CodeBlock, Table, Cell, Link, Labelled)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS pages ("
    " path TEXT PRIMARY KEY, sha TEXT NOT NULL, checksum TEXT NOT NULL, data BLOB NOT NULL)",
)

Decoder = Callable[[Any], Any]


class _BadRow(ValueError):
    """A row's JSON does not have the shape of the page classes."""


def _layout() -> str:
    """The page classes' fields and types: a change makes every cached row stale."""
    parts = []
    for cls in _MODEL:
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


class CachedPages(Mapping[str, Page]):
    """The pages of a cache file, each decoded when first asked for (then kept).

    A row that fails its checksum or does not decode counts as absent (logged
    once). :meth:`close` (or leaving a ``with`` block) closes the file; what was
    decoded stays available.
    """

    def __init__(self, connection: sqlite3.Connection | None, shas: dict[str, str]) -> None:
        self._connection = connection
        self._shas = shas
        self._decoded: dict[str, Page | None] = {}
        self._decode_page: Decoder = _decoder(Page)
        self.damaged: list[str] = []

    def __getitem__(self, path: str) -> Page:
        page = self._load(path)
        if page is None:
            raise KeyError(path)
        return page

    def __iter__(self) -> Iterator[str]:
        return iter([path for path in self._shas if self._load(path) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        # Without decoding every row (``load_wiki`` asks once per file).
        return bool(self._shas)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._load(path) is not None

    def sha(self, path: str) -> str | None:
        """The hash of the page's bytes when it was cached, without decoding it."""
        return self._shas.get(path)

    def _load(self, path: str) -> Page | None:
        if path in self._decoded:
            return self._decoded[path]
        page = None
        if path in self._shas and self._connection is not None:
            page = self._read_row(path)
        self._decoded[path] = page
        return page

    def _read_row(self, path: str) -> Page | None:
        assert self._connection is not None
        try:
            row = self._connection.execute(
                "SELECT checksum, data FROM pages WHERE path = ?", (path,)
            ).fetchone()
            if row is None:
                return None
            checksum, data = row
            if not isinstance(data, bytes) or _checksum(data) != checksum:
                raise _BadRow("checksum mismatch")
            page = self._decode_page(json.loads(data))
            if page.path != path:
                raise _BadRow(f"row holds page {page.path!r}")
            return page
        except (sqlite3.Error, ValueError, TypeError) as exc:  # JSON errors are ValueErrors
            self.damaged.append(path)
            log.warning("ignoring damaged page cache entry %s: %s", path, exc)
            return None

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def __enter__(self) -> CachedPages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class PageCache:
    """The cache file at ``path``."""

    path: Path

    @classmethod
    def in_folder(cls, data_dir: Path) -> PageCache:
        return cls(Path(data_dir) / PAGE_CACHE_FILE)

    @staticmethod
    def version() -> str:
        """Changes with the format, the parser, markdown-it-py or the page classes."""
        mdit = package_version("markdown-it-py")
        return f"{CACHE_FORMAT}/{PARSER_VERSION}/{mdit}/{_layout()}"

    def read(self) -> CachedPages:
        """The cached pages by path, decoded lazily; empty when missing, stale or unreadable.

        Close the result (or use it in a ``with`` block) once the wiki is loaded.
        """
        try:
            if not self.path.is_file():
                return CachedPages(None, {})
        except OSError as exc:  # a data folder this user cannot read
            log.warning("ignoring unreadable page cache %s: %s", self.path, exc)
            return CachedPages(None, {})
        connection = None
        try:
            connection = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
            )
            if not connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone():  # created by a first write that did not finish: nothing cached
                connection.close()
                return CachedPages(None, {})
            row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is None or row[0] != self.version():
                log.info("page cache %s is from another version; parsing again", self.path)
                connection.close()
                return CachedPages(None, {})
            shas = dict(connection.execute("SELECT path, sha FROM pages"))
            return CachedPages(connection, shas)
        except sqlite3.Error as exc:  # not a database, damaged, or locked for long
            if connection is not None:
                connection.close()
            log.warning("ignoring unreadable page cache %s: %s", self.path, exc)
            return CachedPages(None, {})

    def update(self, pages: Mapping[str, Page], fresh: Iterable[str] = ()) -> int:
        """Make the file hold ``pages``: rewrite the rows of the ``fresh`` paths (parsed
        anew) and of pages whose row is missing or stale, delete the rest. The number
        of rows written; a failure is logged, not raised. A damaged file is replaced."""
        try:
            return self._update(pages, set(fresh))
        except (sqlite3.OperationalError, OSError) as exc:  # disk full, read-only, locked
            log.warning("could not write page cache %s: %s", self.path, exc)
            return 0
        except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
            log.warning("page cache %s is damaged (%s); writing it anew", self.path, exc)
        try:
            self._remove()
            return self._update(pages, set(pages))
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not write page cache %s: %s", self.path, exc)
            return 0

    def write(self, pages: Mapping[str, Page]) -> int:
        """Replace the cache with ``pages`` (every row written again)."""
        return self.update(pages, pages)

    def _remove(self) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                self.path.with_name(self.path.name + suffix).unlink()

    def _update(self, pages: Mapping[str, Page], fresh: set[str]) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = _connect(self.path)
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    connection.execute(statement)
                row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
                version = self.version()
                if row is None or row[0] != version:
                    connection.execute("DELETE FROM pages")
                    connection.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)",
                        (version,),
                    )
                stored = dict(connection.execute("SELECT path, sha FROM pages"))
                rows = []
                for path, page in pages.items():
                    if path in fresh or stored.get(path) != page.sha:
                        data = json.dumps(
                            _encode(page), ensure_ascii=False, separators=(",", ":")
                        ).encode()
                        rows.append((path, page.sha, _checksum(data), data))
                connection.executemany(
                    "INSERT OR REPLACE INTO pages (path, sha, checksum, data) VALUES (?, ?, ?, ?)",
                    rows,
                )
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
