"""Noting the requests the wiki did not answer, at the cost of a queue put.

:meth:`GapRecorder.note` is called by every answer of ``/search``, ``/acronym``,
``/runbook`` and ``/support`` (the knowledge base's methods, so the console and the
bot alike), on whatever thread answers, the event loop included: it decides from
the reply whether the request was answered (a reply that is not ``ok``, or a
confidence of ``low`` or ``none``, was not) and puts the query on a queue.
One writer thread redacts the queries (:func:`knowledge.triage.redact.redact`),
masks them as public posts are (``mask_credentials``: ``wikibot gaps`` and
``/wiki gaps`` show them), cuts them to ``MAX_QUERY_CHARS`` and writes them in
batches; nothing on the caller's thread touches SQLite or redaction. Redacting comes
first: a cut through a token would leave a piece that no pattern knows (``hf_`` and
30 of its 34 characters).
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from knowledge.gaps.store import MAX_QUERY_CHARS, GapRecord, GapStore
from knowledge.reply import Reply
from knowledge.text import cut_at_word

__all__ = ["UNSURE", "GapRecorder", "GapSettings", "unanswered"]

log = logging.getLogger(__name__)

#: Confidences (``knowledge.triage.CONFIDENCES``) of an answer that was not confident.
UNSURE: Final = frozenset({"low", "none"})
#: Most requests waiting to be written; past it, new ones are dropped (and counted).
MAX_WAITING: Final = 1000
#: Most records written in one transaction.
BATCH: Final = 200
#: Closest pages kept per request.
PAGES_KEPT: Final = 3
#: Longest query queued (more than a Discord option holds): a longer one (the console)
#: loses its last words, the word the bound falls in whole, so no piece of a token is left.
MAX_QUEUED_CHARS: Final = 16 * MAX_QUERY_CHARS


@dataclass(frozen=True, slots=True)
class GapSettings:
    """``gaps.enabled`` and ``gaps.keep_days`` of the bot's config."""

    enabled: bool = True
    keep_days: int = 90


def unanswered(reply: Reply) -> str | None:
    """The confidence to record ``reply`` with, or None when it answered the request or
    failed on the bot's side (an error: no gap in the wiki)."""
    if reply.kind == "error":
        return None
    if not reply.ok:
        return "none"
    confidence = reply.meta.get("confidence")
    if isinstance(confidence, str) and confidence in UNSURE:
        return confidence
    return None


class GapRecorder:
    """Queues unanswered requests and writes them to a :class:`GapStore` in a thread."""

    def __init__(
        self,
        store_opener: Callable[[], GapStore],
        *,
        today: Callable[[], dt.date] = dt.date.today,
    ) -> None:
        self._open = store_opener
        self._today = today
        self._queue: queue.Queue[GapRecord | None] = queue.Queue(MAX_WAITING)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._flushed = threading.Condition()
        self._written = 0
        self._queued = 0
        self.dropped = 0

    @classmethod
    def in_folder(cls, data_dir: Path, settings: GapSettings) -> GapRecorder | None:
        """The recorder of ``data_dir``, or None when recording is off."""
        if not settings.enabled:
            return None
        return cls(lambda: GapStore.in_folder(data_dir, keep_days=settings.keep_days))

    # --- the callers' side: O(1), never blocks ---------------------------------------

    def note(self, command: str, query: str, reply: Reply) -> bool:
        """Record ``query`` if ``reply`` did not answer it; True when it was queued."""
        confidence = unanswered(reply)
        if confidence is None:
            return False
        pages = tuple(ref.path for ref in reply.pages[:PAGES_KEPT])
        return self.note_outcome(command, query, confidence, pages)

    def note_outcome(
        self, command: str, query: str, confidence: str, pages: tuple[str, ...] = ()
    ) -> bool:
        """Record a request whose outcome the caller judged (the support check)."""
        # redacted, then cut to MAX_QUERY_CHARS, by the writer; a query with no break in
        # its first MAX_QUEUED_CHARS leaves nothing
        text = cut_at_word(query, MAX_QUEUED_CHARS)
        if not text or text.isspace():
            return False
        record = GapRecord(command, text, confidence, self._today(), pages[:PAGES_KEPT])
        self._ensure_thread()
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1
            return False
        with self._flushed:
            self._queued += 1
        return True

    def note_triage(self, command: str, query: str, result: object) -> bool:
        """Record a triage (``/support``'s check) that was not confident: ``result`` is a
        :class:`knowledge.triage.TriageResult` (its confidence and suggested pages)."""
        confidence = getattr(result, "confidence", None)
        if not isinstance(confidence, str) or confidence not in UNSURE:
            return False
        pages = tuple(s.page for s in getattr(result, "suggestions", ()))
        return self.note_outcome(command, query, confidence, pages)

    # --- the writer thread -----------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gaps-writer", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        # the redaction patterns: in this thread
        from knowledge.triage.redact import redact_public

        store: GapStore | None = None
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in batch
            records = [r for r in batch if r is not None]
            records = [
                GapRecord(
                    r.command,
                    _kept(redact_public(r.query, "query").text),
                    r.confidence,
                    r.day,
                    r.pages,
                )
                for r in records
            ]
            try:
                if store is None and records:
                    store = self._open()
                if store is not None:
                    store.purge(self._today())
                    store.add(records)
            except (OSError, sqlite3.Error) as exc:
                log.warning("gaps: %d request(s) not recorded: %s", len(records), exc)
            with self._flushed:
                self._written += len(records)
                self._flushed.notify_all()
        if store is not None:
            store.close()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every request queued so far is written (tests, shutdown)."""
        with self._flushed:
            return self._flushed.wait_for(lambda: self._written >= self._queued, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, then stop the writer thread."""
        thread = self._thread
        if thread is None:
            return
        self._queue.put(None)
        thread.join(timeout)


def _kept(query: str) -> str:
    """A redacted query as the store keeps it: one line, ``MAX_QUERY_CHARS`` at most."""
    return " ".join(query.split())[:MAX_QUERY_CHARS]
