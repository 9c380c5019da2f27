"""The ticket store in one SQLite file (stdlib ``sqlite3``), WAL mode.

The schema version is SQLite's ``user_version``; :data:`MIGRATIONS` holds one script
per version, applied in order inside one transaction each, so a database of any
older version is brought forward on open and a newer one is refused
(:class:`~knowledge.intake.store.StoreTooNew`) rather than misread.

Every string is redacted again just before it is written (``_safe``): the intake
already stores only redacted text, and this keeps a record built by hand from
leaking. A :class:`~knowledge.intake.scrub.Scrubber` remembers the texts it found
clean, so a draft's log is not scanned again each time the draft or its ticket is
written. One connection is shared by the threads of a process under a lock; other
processes (the command line while the bot runs) wait on SQLite's busy timeout.
Writes use ``BEGIN IMMEDIATE`` so a rate-limit check and the insert it guards are
one transaction.

Every commit survives the process being killed (WAL: a commit is in the log file
before it returns). Tickets, their status, deflections and the mark that a post is
being made also survive a power loss (``synchronous=FULL``: the log is flushed to
disk at each such commit, a few milliseconds each). Drafts and the post's thread id
are written with ``synchronous=NORMAL``, without that flush: a power loss may take
the last step of a draft (the user fills it again) or the thread id of a post (the
post carries the ticket's key and is found again before any retry), and the
steps of twenty users at once no longer wait on the disk one after the other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from knowledge.intake.records import Draft, Ticket, TicketEvent
from knowledge.intake.scrub import Scrubber
from knowledge.intake.similar import SolvedAnswer
from knowledge.intake.store import (
    NotFound,
    RateLimit,
    RateLimited,
    StoreTooNew,
    StoreUnavailable,
)

__all__ = [
    "BUSY_SECONDS",
    "FILE_NAME",
    "MAX_ID",
    "MIGRATIONS",
    "SqliteTicketStore",
    "TicketFigures",
    "ticket_figures",
    "unavailable",
]

log = logging.getLogger(__name__)

FILE_NAME: Final = "tickets.sqlite3"
#: Seconds a statement waits for another process's lock before giving up.
BUSY_SECONDS: Final = 15.0
#: Largest id SQLite can store (a signed 64-bit integer); larger ids name no ticket.
MAX_ID: Final = 2**63 - 1
#: Free bytes under which a failed write is put down to a full disk.
_NEARLY_FULL: Final = 1024 * 1024

#: MIGRATIONS[n] takes a database from version n to n + 1.
MIGRATIONS: Final[tuple[str, ...]] = (
    """
    CREATE TABLE drafts (
        id TEXT PRIMARY KEY,
        user TEXT NOT NULL,
        state TEXT NOT NULL,
        step INTEGER NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX drafts_user ON drafts (user, state, updated_at);
    CREATE TABLE tickets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        draft_id TEXT NOT NULL UNIQUE,
        user TEXT NOT NULL,
        title TEXT NOT NULL,
        family TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        data TEXT NOT NULL,
        post_state TEXT NOT NULL,
        thread_id INTEGER,
        post_attempts INTEGER NOT NULL DEFAULT 0,
        post_error TEXT NOT NULL DEFAULT '',
        next_attempt_at REAL
    );
    CREATE INDEX tickets_user ON tickets (user, created_at);
    CREATE INDEX tickets_status ON tickets (status, family);
    CREATE INDEX tickets_post ON tickets (post_state, next_attempt_at);
    CREATE TABLE ticket_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ticket_id INTEGER REFERENCES tickets (id),
        draft_id TEXT,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        at REAL NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
    );
    """,
    """
    CREATE UNIQUE INDEX tickets_thread ON tickets (thread_id) WHERE thread_id IS NOT NULL;
    CREATE INDEX ticket_events_ticket ON ticket_events (ticket_id, at);
    """,
    # When the bot last began creating the post: a post may exist that was never
    # recorded (killed in between), so the next attempt looks for it first.
    """
    ALTER TABLE tickets ADD COLUMN post_started_at REAL;
    """,
    # The message that solved a ticket ("Mark as answer"), redacted, with its link: the
    # next question like it is offered this ticket.
    """
    CREATE TABLE solved_answers (
        ticket_id INTEGER PRIMARY KEY REFERENCES tickets (id),
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        url TEXT NOT NULL,
        marked_by TEXT NOT NULL,
        at REAL NOT NULL
    );
    """,
)

_TICKET_COLUMNS: Final = (
    "id, draft_id, user, title, family, status, created_at, updated_at, data, "
    "post_state, thread_id, post_attempts, post_error, next_attempt_at, post_started_at"
)


def _redactions(raw: object) -> tuple[tuple[str, str, int], ...]:
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, list) and len(item) == 3:
            out.append((str(item[0]), str(item[1]), int(item[2])))
    return tuple(out)


def _nearly_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < _NEARLY_FULL
    except OSError:
        return False


def _problem(path: Path, exc: BaseException) -> str | None:
    """What ``exc`` says about the database at ``path`` (see :class:`StoreUnavailable`),
    or None when it is not about the file or its folder (a mistake in the code)."""
    folder = path.parent
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "read_only"
        return "io"
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return "locked"
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return "damaged"
    if name.startswith("SQLITE_FULL"):
        return "full"
    if name.startswith("SQLITE_READONLY"):
        return "read_only"
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR")):
        if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            return "read_only"
        return "full" if _nearly_full(folder) else "io"
    return None


def unavailable(path: Path, exc: BaseException) -> StoreUnavailable | None:
    """:class:`StoreUnavailable` for a failure of the database at ``path``, or None when
    ``exc`` is not about the file or its folder."""
    problem = _problem(path, exc)
    if problem is None:
        return None
    if isinstance(exc, OSError):
        reason = exc.strerror or type(exc).__name__
    elif problem == "locked":
        reason = f"another process held it for more than {BUSY_SECONDS:.0f} s"
    else:
        reason = " ".join(str(exc).split()) or type(exc).__name__
    return StoreUnavailable(problem, str(path), reason)


@contextlib.contextmanager
def _translated(path: Path) -> Iterator[None]:
    """Failures of the file or its folder raised as :class:`StoreUnavailable`."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        error = unavailable(path, exc)
        if error is None:
            raise
        raise error from exc


def _fits(ticket_id: int) -> bool:
    """Whether SQLite can hold ``ticket_id`` (an id past it names no ticket)."""
    return -MAX_ID - 1 <= ticket_id <= MAX_ID


class SqliteTicketStore:
    """:class:`~knowledge.intake.store.TicketStore` in ``<data>/tickets.sqlite3``.

    A file or folder that cannot be used (damaged, locked past :data:`BUSY_SECONDS`,
    a full disk, read-only) raises
    :class:`~knowledge.intake.store.StoreUnavailable`, on opening or on any
    operation; a write that fails leaves the database as it was (one transaction).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self.scrubber = Scrubber()
        db: sqlite3.Connection | None = None
        try:
            with _translated(self.path):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if not self.path.exists():  # private from the first byte: it holds user reports
                    with contextlib.suppress(FileExistsError):
                        os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                db = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS
                )
                self._db = db
                db.row_factory = sqlite3.Row
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.execute("PRAGMA foreign_keys=ON")
                self._migrate()
        except BaseException:
            if db is not None:
                db.close()
            raise

    @classmethod
    def in_folder(cls, data_dir: Path) -> SqliteTicketStore:
        return cls(Path(data_dir) / FILE_NAME)

    # ----------------------------------------------------------------- plumbing

    @property
    def version(self) -> int:
        with _translated(self.path):
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        with self._lock:
            found = self.version
            if found > len(MIGRATIONS):
                self._db.close()
                raise StoreTooNew(str(self.path), found, len(MIGRATIONS))
            for number in range(found, len(MIGRATIONS)):
                with self._write():
                    if self.version != number:  # another process migrated meanwhile
                        continue
                    for statement in MIGRATIONS[number].split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute(f"PRAGMA user_version = {number + 1}")
                log.info("ticket store %s migrated to schema %d", self.path, number + 1)

    @contextlib.contextmanager
    def _write(self, *, flush: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``flush=False`` commits without flushing the log to
        disk (it survives a crash of the process, not a power loss)."""
        with self._lock, _translated(self.path):
            if not flush:
                self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                    self._db.execute("COMMIT")
                except BaseException:
                    # SQLite may have rolled back itself (a full disk): then there is none.
                    if self._db.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._db.execute("ROLLBACK")
                    raise
            finally:
                if not flush:
                    self._db.execute("PRAGMA synchronous=FULL")

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[sqlite3.Row]:
        with self._lock, _translated(self.path):
            return self._db.execute(sql, args).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _safe(self, text: str) -> str:
        return self.scrubber.text(text)

    def _safe_json(self, data: Mapping[str, Any]) -> str:
        scrubbed = self.scrubber.mapping(data)
        return orjson.dumps(scrubbed, option=orjson.OPT_NON_STR_KEYS).decode()

    def _event(
        self,
        db: sqlite3.Connection,
        kind: str,
        actor: str,
        at: float,
        *,
        ticket_id: int | None = None,
        draft_id: str | None = None,
        detail: str = "",
    ) -> None:
        db.execute(
            "INSERT INTO ticket_events (ticket_id, draft_id, kind, actor, at, detail) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (ticket_id, draft_id, kind, self._safe(actor), at, self._safe(detail)),
        )

    # ----------------------------------------------------------------- drafts

    @staticmethod
    def _draft(row: sqlite3.Row) -> Draft:
        data = orjson.loads(row["data"])
        return Draft(
            id=row["id"],
            user=row["user"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            values={str(k): str(v) for k, v in dict(data.get("values", {})).items()},
            step=row["step"],
            state=row["state"],
            redactions=_redactions(data.get("redactions")),
            notes=tuple(str(n) for n in data.get("notes", [])),
            origin={str(k): str(v) for k, v in dict(data.get("origin", {})).items()},
        )

    def save_draft(self, draft: Draft) -> Draft:
        data = self._safe_json(
            {
                "values": dict(draft.values),
                "redactions": [list(r) for r in draft.redactions],
                "notes": list(draft.notes),
                "origin": dict(draft.origin),
            }
        )
        with self._write(flush=False) as db:
            db.execute(
                "INSERT INTO drafts (id, user, state, step, created_at, updated_at, data) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "state = excluded.state, step = excluded.step, "
                "updated_at = excluded.updated_at, data = excluded.data",
                (
                    draft.id,
                    self._safe(draft.user),
                    draft.state,
                    draft.step,
                    draft.created_at,
                    draft.updated_at,
                    data,
                ),
            )
        found = self.get_draft(draft.id)
        assert found is not None
        return found

    def get_draft(self, draft_id: str) -> Draft | None:
        rows = self._read("SELECT * FROM drafts WHERE id = ?", (draft_id,))
        return self._draft(rows[0]) if rows else None

    def open_draft(self, user: str, since: float) -> Draft | None:
        rows = self._read(
            "SELECT * FROM drafts WHERE user = ? AND state = 'open' AND updated_at >= ? "
            "ORDER BY updated_at DESC LIMIT 1",
            (user, since),
        )
        return self._draft(rows[0]) if rows else None

    def expire_drafts(self, before: float) -> int:
        with self._write(flush=False) as db:
            cur = db.execute(
                "DELETE FROM drafts WHERE state = 'open' AND updated_at < ?", (before,)
            )
            return cur.rowcount

    def deflect(self, draft_id: str, actor: str, at: float) -> Draft:
        with self._write() as db:
            row = db.execute("SELECT state FROM drafts WHERE id = ?", (draft_id,)).fetchone()
            if row is None:
                raise NotFound(draft_id)
            if row["state"] == "open":
                db.execute(
                    "UPDATE drafts SET state = 'deflected', updated_at = ? WHERE id = ?",
                    (at, draft_id),
                )
                self._event(db, "deflected", actor, at, draft_id=draft_id)
        found = self.get_draft(draft_id)
        assert found is not None
        return found

    # ----------------------------------------------------------------- tickets

    def _ticket(self, row: sqlite3.Row, *, with_events: bool = True) -> Ticket:
        data = orjson.loads(row["data"])
        return Ticket(
            id=row["id"],
            draft_id=row["draft_id"],
            user=row["user"],
            title=row["title"],
            family=row["family"],
            status=row["status"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            values={str(k): str(v) for k, v in dict(data.get("values", {})).items()},
            redactions=_redactions(data.get("redactions")),
            triage=dict(data.get("triage", {})),
            post_state=row["post_state"],
            thread_id=row["thread_id"],
            post_attempts=row["post_attempts"],
            post_error=row["post_error"],
            next_attempt_at=row["next_attempt_at"],
            post_started_at=row["post_started_at"],
            events=tuple(self.events(row["id"])) if with_events else (),
        )

    def file_ticket(
        self,
        draft: Draft,
        *,
        title: str,
        family: str,
        triage: Mapping[str, Any],
        post: bool,
        at: float,
        limit: RateLimit,
        lease: float = 60.0,
        private: bool = False,
    ) -> tuple[Ticket, bool]:
        data = self._safe_json(
            {
                "values": dict(draft.values),
                "redactions": [list(r) for r in draft.redactions],
                "triage": dict(triage),
            }
        )
        with self._write() as db:
            row = db.execute("SELECT id FROM tickets WHERE draft_id = ?", (draft.id,)).fetchone()
            if row is not None:
                ticket_id, created = int(row["id"]), False
            else:
                if limit.count > 0:
                    recent = db.execute(
                        "SELECT created_at FROM tickets WHERE user = ? AND created_at > ? "
                        "ORDER BY created_at",
                        (draft.user, at - limit.seconds),
                    ).fetchall()
                    if len(recent) >= limit.count:
                        oldest = recent[len(recent) - limit.count]["created_at"]
                        raise RateLimited(limit, max(1.0, oldest + limit.seconds - at))
                cur = db.execute(
                    "INSERT INTO tickets (draft_id, user, title, family, status, created_at, "
                    "updated_at, data, post_state, next_attempt_at, post_started_at) "
                    "VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)",
                    (
                        draft.id,
                        self._safe(draft.user),
                        self._safe(title),
                        self._safe(family),
                        at,
                        at,
                        data,
                        "pending" if post else "none",
                        at + lease if post else None,
                        # The caller posts next: the post counts as begun from here.
                        at if post else None,
                    ),
                )
                ticket_id, created = int(cur.lastrowid or 0), True
                # The draft is kept (filed) so a second press finds this ticket.
                db.execute(
                    "INSERT INTO drafts (id, user, state, step, created_at, updated_at, data) "
                    "VALUES (?, ?, 'filed', ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "state = 'filed', updated_at = excluded.updated_at",
                    (draft.id, self._safe(draft.user), draft.step, draft.created_at, at, "{}"),
                )
                self._event(db, "created", draft.user, at, ticket_id=ticket_id, draft_id=draft.id)
                if private:  # in the filing's own transaction: never posted publicly
                    self._event(db, "private", "bot", at, ticket_id=ticket_id)
        ticket = self.get_ticket(ticket_id)
        assert ticket is not None
        return ticket, created

    def get_ticket(self, ticket_id: int) -> Ticket | None:
        if not _fits(ticket_id):
            return None
        rows = self._read(f"SELECT {_TICKET_COLUMNS} FROM tickets WHERE id = ?", (ticket_id,))
        return self._ticket(rows[0]) if rows else None

    def ticket_for_thread(self, thread_id: int) -> Ticket | None:
        if not _fits(thread_id):
            return None
        rows = self._read(
            f"SELECT {_TICKET_COLUMNS} FROM tickets WHERE thread_id = ?", (thread_id,)
        )
        return self._ticket(rows[0]) if rows else None

    def ticket_for_draft(self, draft_id: str) -> Ticket | None:
        rows = self._read(f"SELECT {_TICKET_COLUMNS} FROM tickets WHERE draft_id = ?", (draft_id,))
        return self._ticket(rows[0]) if rows else None

    @staticmethod
    def _where(**equal: str | None) -> tuple[str, list[object]]:
        """`` WHERE a = ? AND b = ?`` for the filters given (not None), and their values."""
        where = [f"{column} = ?" for column, value in equal.items() if value is not None]
        args: list[object] = [value for value in equal.values() if value is not None]
        return (" WHERE " + " AND ".join(where) if where else ""), args

    def list_tickets(
        self,
        *,
        status: str | None = None,
        family: str | None = None,
        user: str | None = None,
        limit: int = 50,
    ) -> list[Ticket]:
        where, args = self._where(status=status, family=family, user=user)
        sql = f"SELECT {_TICKET_COLUMNS} FROM tickets{where} ORDER BY id DESC LIMIT ?"
        args.append(max(1, limit))
        return [self._ticket(r, with_events=False) for r in self._read(sql, args)]

    def count_tickets(
        self, *, status: str | None = None, family: str | None = None, user: str | None = None
    ) -> int:
        where, args = self._where(status=status, family=family, user=user)
        return int(self._read(f"SELECT COUNT(*) FROM tickets{where}", args)[0][0])

    def set_status(
        self, ticket_id: int, status: str, *, actor: str, at: float, event: str
    ) -> Ticket:
        if not _fits(ticket_id):
            raise NotFound(str(ticket_id))
        with self._write() as db:
            cur = db.execute(
                "UPDATE tickets SET status = ?, updated_at = ? WHERE id = ?",
                (status, at, ticket_id),
            )
            if cur.rowcount == 0:
                raise NotFound(str(ticket_id))
            self._event(db, event, actor, at, ticket_id=ticket_id)
        ticket = self.get_ticket(ticket_id)
        assert ticket is not None
        return ticket

    def events(self, ticket_id: int) -> list[TicketEvent]:
        rows = self._read(
            "SELECT * FROM ticket_events WHERE ticket_id = ? ORDER BY at, id", (ticket_id,)
        )
        return [
            TicketEvent(r["kind"], r["actor"], r["at"], r["ticket_id"], r["draft_id"], r["detail"])
            for r in rows
        ]

    def draft_events(self, draft_id: str) -> list[TicketEvent]:
        rows = self._read(
            "SELECT * FROM ticket_events WHERE draft_id = ? ORDER BY at, id", (draft_id,)
        )
        return [
            TicketEvent(r["kind"], r["actor"], r["at"], r["ticket_id"], r["draft_id"], r["detail"])
            for r in rows
        ]

    # ----------------------------------------------------------------- posting

    def claim_post(self, ticket_id: int, *, now: float, lease: float) -> bool:
        with self._write(flush=False) as db:
            cur = db.execute(
                "UPDATE tickets SET next_attempt_at = ? WHERE id = ? AND post_state = 'pending' "
                "AND (next_attempt_at IS NULL OR next_attempt_at <= ?)",
                (now + lease, ticket_id, now),
            )
            return cur.rowcount == 1

    def posts_due(self, now: float, limit: int = 20) -> list[Ticket]:
        rows = self._read(
            f"SELECT {_TICKET_COLUMNS} FROM tickets WHERE post_state = 'pending' "
            "AND (next_attempt_at IS NULL OR next_attempt_at <= ?) ORDER BY id LIMIT ?",
            (now, limit),
        )
        return [self._ticket(r, with_events=False) for r in rows]

    def start_post(self, ticket_id: int, *, at: float) -> Ticket:
        with self._write() as db:
            cur = db.execute(
                "UPDATE tickets SET post_started_at = ? WHERE id = ? AND post_state = 'pending'",
                (at, ticket_id),
            )
            if cur.rowcount:
                self._event(db, "post_started", "bot", at, ticket_id=ticket_id)
        ticket = self.get_ticket(ticket_id)
        if ticket is None:
            raise NotFound(str(ticket_id))
        return ticket

    def pending_count(self) -> int:
        rows = self._read("SELECT COUNT(*) FROM tickets WHERE post_state = 'pending'")
        return int(rows[0][0])

    def failed_count(self) -> int:
        rows = self._read("SELECT COUNT(*) FROM tickets WHERE post_state = 'failed'")
        return int(rows[0][0])

    def mark_posted(self, ticket_id: int, thread_id: int, *, at: float) -> Ticket:
        with self._write(flush=False) as db:
            cur = db.execute(
                "UPDATE tickets SET post_state = 'posted', thread_id = ?, post_error = '', "
                "next_attempt_at = NULL, updated_at = ? WHERE id = ?",
                (thread_id, at, ticket_id),
            )
            if cur.rowcount == 0:
                raise NotFound(str(ticket_id))
            self._event(db, "posted", "bot", at, ticket_id=ticket_id, detail=str(thread_id))
        ticket = self.get_ticket(ticket_id)
        assert ticket is not None
        return ticket

    def record_event(
        self, ticket_id: int, kind: str, actor: str, *, at: float, detail: str = ""
    ) -> Ticket:
        with self._write() as db:
            found = db.execute("SELECT 1 FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
            if found is None:
                raise NotFound(str(ticket_id))
            self._event(db, kind, actor, at, ticket_id=ticket_id, detail=detail[:200])
        ticket = self.get_ticket(ticket_id)
        assert ticket is not None
        return ticket

    def save_answer(
        self, ticket_id: int, *, question: str, answer: str, url: str, actor: str, at: float
    ) -> Ticket:
        with self._write() as db:
            found = db.execute("SELECT 1 FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
            if found is None:
                raise NotFound(str(ticket_id))
            db.execute(
                "INSERT INTO solved_answers (ticket_id, question, answer, url, marked_by, at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (ticket_id) DO UPDATE SET "
                "answer = excluded.answer, url = excluded.url, "
                "marked_by = excluded.marked_by, at = excluded.at",
                (
                    ticket_id,
                    self._safe(question),
                    self._safe(answer),
                    url,
                    self._safe(actor),
                    at,
                ),
            )
            self._event(db, "answered", actor, at, ticket_id=ticket_id, detail=url[:200])
        ticket = self.get_ticket(ticket_id)
        assert ticket is not None
        return ticket

    def solved_answers(self, limit: int = 5000, *, public: bool = False) -> list[SolvedAnswer]:
        private = (
            "WHERE NOT EXISTS (SELECT 1 FROM ticket_events e "
            "WHERE e.ticket_id = a.ticket_id AND e.kind = 'private') "
            if public
            else ""
        )
        rows = self._read(
            "SELECT a.ticket_id, t.title, a.question, a.answer, a.url, a.at "
            f"FROM solved_answers a JOIN tickets t ON t.id = a.ticket_id {private}"
            "ORDER BY a.at DESC LIMIT ?",
            (limit,),
        )
        return [
            SolvedAnswer(
                int(r["ticket_id"]), r["title"], r["question"], r["answer"], r["url"], r["at"]
            )
            for r in rows
        ]

    def last_event_at(self, kind: str) -> float | None:
        rows = self._read("SELECT MAX(at) FROM ticket_events WHERE kind = ?", (kind,))
        return None if rows[0][0] is None else float(rows[0][0])

    def mark_post_failed(
        self, ticket_id: int, error: str, *, at: float, retry_at: float, give_up: bool = False
    ) -> Ticket:
        with self._write() as db:
            cur = db.execute(
                "UPDATE tickets SET post_attempts = post_attempts + 1, post_error = ?, "
                "next_attempt_at = ?, updated_at = ?, post_state = ? "
                "WHERE id = ? AND post_state = 'pending'",
                (
                    self._safe(error[:500]),
                    None if give_up else retry_at,
                    at,
                    "failed" if give_up else "pending",
                    ticket_id,
                ),
            )
            if cur.rowcount:
                kind = "post_given_up" if give_up else "post_failed"
                self._event(db, kind, "bot", at, ticket_id=ticket_id, detail=error[:200])
        ticket = self.get_ticket(ticket_id)
        if ticket is None:
            raise NotFound(str(ticket_id))
        return ticket


@dataclasses.dataclass(frozen=True, slots=True)
class TicketFigures:
    """Counts for metrics and ``/wiki stats``: tickets by status, and the requests the
    wiki answered before a ticket (deflections) against those filed."""

    by_status: dict[str, int]
    deflected: int
    filed: int


def ticket_figures(data_dir: Path) -> TicketFigures | None:
    """The figures of the ticket store in ``data_dir``, read over a read-only connection
    of their own (any thread may call this); None when there is no store yet."""
    path = Path(data_dir) / FILE_NAME
    if not path.is_file():
        return None
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        by_status = dict(db.execute("SELECT status, COUNT(*) FROM tickets GROUP BY status"))
        kinds = dict(
            db.execute(
                "SELECT kind, COUNT(*) FROM ticket_events"
                " WHERE kind IN ('deflected', 'created') GROUP BY kind"
            )
        )
    except sqlite3.Error:  # a store not migrated yet: nothing to count
        return None
    finally:
        db.close()
    return TicketFigures(by_status, kinds.get("deflected", 0), kinds.get("created", 0))
