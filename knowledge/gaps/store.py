"""The unanswered requests, kept in ``<data>/gaps.sqlite3`` for a limited time.

One row per request that found nothing or was not confident: the command, the query
(redacted before it is written), the confidence, the day (a date, no time) and the
pages the answer came closest with. Never the user's id, never a log or a launch
command: those are not asked for and there is no column for them. Rows older than
the retention (``gaps.keep_days``, 90 by default) are deleted when the store opens
and once a day after.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["FILE_NAME", "MAX_QUERY_CHARS", "GapRecord", "GapStore"]

log = logging.getLogger(__name__)

FILE_NAME: Final = "gaps.sqlite3"
#: Longest query kept, characters (a pasted question is cut here after redaction).
MAX_QUERY_CHARS: Final = 600
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS gaps (
    id INTEGER PRIMARY KEY,
    day TEXT NOT NULL,
    command TEXT NOT NULL,
    confidence TEXT NOT NULL,
    query TEXT NOT NULL,
    pages TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS gaps_day ON gaps (day);
"""


@dataclass(frozen=True, slots=True)
class GapRecord:
    """One request the wiki did not answer (``query`` already redacted when stored)."""

    command: str
    query: str
    confidence: str
    day: dt.date
    #: The pages the answer offered (not confidently), best first.
    pages: tuple[str, ...] = ()


class GapStore:
    """The ``gaps`` table of one SQLite file: shared by the threads of a process."""

    def __init__(self, path: Path, *, keep_days: int | None = 90) -> None:
        self.path = Path(path)
        self.keep_days = keep_days
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # private from the first byte: it holds what users typed
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=15.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._purged: dt.date | None = None
        self.purge()

    @classmethod
    def in_folder(cls, data_dir: Path, *, keep_days: int | None = 90) -> GapStore:
        """The store of ``data_dir``; ``keep_days=None`` reads without deleting anything
        (the report: the retention is the recorder's, from the config)."""
        return cls(Path(data_dir) / FILE_NAME, keep_days=keep_days)

    @classmethod
    def read(cls, data_dir: Path, days: int | None = None) -> list[GapRecord]:
        """The records of ``data_dir`` of the last ``days`` days; none when no request was
        ever recorded there (the file is not created for asking)."""
        if not (Path(data_dir) / FILE_NAME).is_file():
            return []
        store = cls.in_folder(data_dir, keep_days=None)
        try:
            return store.since(days)
        finally:
            store.close()

    def add(self, records: Iterable[GapRecord]) -> int:
        """Write ``records`` in one transaction (their queries must be redacted already)."""
        rows = [
            (r.day.isoformat(), r.command, r.confidence, r.query, json.dumps(list(r.pages)))
            for r in records
        ]
        if not rows:
            return 0
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT INTO gaps (day, command, confidence, query, pages)"
                    " VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return len(rows)

    def purge(self, today: dt.date | None = None) -> int:
        """Delete the rows older than ``keep_days`` (at most once a day)."""
        today = today or dt.date.today()
        if self.keep_days is None or self._purged == today:
            return 0
        oldest = (today - dt.timedelta(days=self.keep_days)).isoformat()
        with self._lock:
            deleted = self._db.execute("DELETE FROM gaps WHERE day < ?", (oldest,)).rowcount
        self._purged = today
        if deleted:
            log.info("gaps: %d request(s) older than %d days deleted", deleted, self.keep_days)
        return deleted

    def since(self, days: int | None = None, today: dt.date | None = None) -> list[GapRecord]:
        """The records of the last ``days`` days (all kept ones when None), oldest first."""
        today = today or dt.date.today()
        first = (today - dt.timedelta(days=days)).isoformat() if days is not None else ""
        with self._lock:
            rows = self._db.execute(
                "SELECT command, query, confidence, day, pages FROM gaps WHERE day >= ?"
                " ORDER BY day, id",
                (first,),
            ).fetchall()
        return [
            GapRecord(
                command=command,
                query=query,
                confidence=confidence,
                day=dt.date.fromisoformat(day),
                pages=tuple(json.loads(pages)),
            )
            for command, query, confidence, day, pages in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()
