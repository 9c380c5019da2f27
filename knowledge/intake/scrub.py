"""Redaction of what a store writes, without scanning the same clean text again and again.

A store redacts every string once more just before writing it (the intake already
hands it redacted text; this keeps a record built by hand from leaking). A draft's
answers are written several times (each step, then the ticket), and a server log is
tens of kilobytes: :class:`Scrubber` remembers the texts it found clean (redaction
left them unchanged) and passes them through when they come back, as the very same
strings. Redaction is a pure function of the text, so the result is the same as
redacting again. Strings under a key that names a secret (``HF_TOKEN``, ``api_key``)
always go through :func:`~knowledge.triage.redact.redact_fields`, which replaces
them whole.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Final

from knowledge.triage.redact import is_secret_name, redact, redact_fields

__all__ = ["KEPT_CHARS", "NESTED", "Scrubber"]

#: Characters of clean text remembered at most (the oldest go first): about twenty
#: server logs at their largest, some hundreds of ordinary ones.
KEPT_CHARS: Final = 4_000_000
#: Levels of nested mappings walked here (a ticket's ``values``, its ``triage``).
NESTED: Final = 2


class Scrubber:
    """Redacts strings and JSON-like mappings; remembers clean texts (thread-safe)."""

    def __init__(self, kept_chars: int = KEPT_CHARS) -> None:
        self.kept_chars = kept_chars
        self._clean: OrderedDict[str, None] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def known_clean(self, text: str) -> bool:
        """Whether ``text`` was found clean before (and is still remembered)."""
        with self._lock:
            if text in self._clean:
                self._clean.move_to_end(text)
                return True
        return False

    def _remember(self, text: str) -> None:
        if len(text) > self.kept_chars:
            return
        with self._lock:
            if text in self._clean:
                return
            self._clean[text] = None
            self._chars += len(text)
            while self._chars > self.kept_chars:
                old, _ = self._clean.popitem(last=False)
                self._chars -= len(old)

    def text(self, text: str) -> str:
        """``text`` redacted."""
        if not text or self.known_clean(text):
            return text
        out = redact(text).text
        if out == text:
            self._remember(text)
        return out

    def mapping(self, data: Mapping[str, object], *, _depth: int = 0) -> dict[str, object]:
        """``data`` with every string redacted, as ``redact_fields`` does it (nested
        mappings and lists too, values under secret names replaced whole); keys keep
        their order. Mappings nested deeper than :data:`NESTED` and lists are handed to
        ``redact_fields`` whole."""
        out: dict[str, object] = {}
        rest: dict[str, object] = {}
        for key, value in data.items():
            if isinstance(value, Mapping) and _depth < NESTED:
                out[key] = self.mapping(value, _depth=_depth + 1)
            elif isinstance(value, str) and not is_secret_name(str(key)):
                out[key] = self.text(value)
            else:
                out[key] = rest[key] = value
        if rest:
            scrubbed, _ = redact_fields(rest)
            out.update(scrubbed)
        return out
