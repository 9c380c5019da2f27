"""Redaction of what a store writes, without scanning the same clean text again and again.

A store redacts every string once more just before writing it (the intake already
hands it redacted text; this keeps a record built by hand from leaking). A draft's
answers are written several times (each step, then the ticket), checked by the
triage in between, and a server log is tens of kilobytes: :class:`Scrubber`
remembers the texts it found clean and passes them through when they come back.

A text is remembered only when redacting it was *seen* to change nothing: redaction
left it as it was, or (:meth:`Scrubber.redact`, for what the intake redacts) its
redacted form was redacted once more and came out the same. That is the proof a
redacted value carries: its exact content is in this memo, put there by this
process's redaction, never its looks (a user who types ``[REDACTED:hf-token]`` next
to a real token gets no pass). Redaction is a pure function of the text, so passing
a remembered text through gives what redacting it again would. The desk shares its
store's scrubber with the triage (``known_clean``), so a log redacted when it was
uploaded is not scanned again when it is saved, checked or filed.

Strings under a key that names a secret (``HF_TOKEN``, ``api_key``) always go
through :func:`~knowledge.triage.redact.redact_fields`, which replaces them whole.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Final

from knowledge.triage.redact import Redacted, redact, redact_fields

__all__ = ["ENTRY_CHARS", "KEPT_CHARS", "Scrubber"]

#: Characters of clean text remembered at most (the oldest go first): about twenty
#: server logs at their largest, some hundreds of ordinary ones.
KEPT_CHARS: Final = 4_000_000
#: What each remembered text costs on top of its characters (the string's header and
#: its entry in the memo, in bytes): many short texts are bounded as well as few long.
ENTRY_CHARS: Final = 160


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
        cost = len(text) + ENTRY_CHARS
        if cost > self.kept_chars:
            return
        with self._lock:
            if text in self._clean:
                return
            self._clean[text] = None
            self._chars += cost
            while self._chars > self.kept_chars:
                old, _ = self._clean.popitem(last=False)
                self._chars -= len(old) + ENTRY_CHARS

    def text(self, text: str) -> str:
        """``text`` redacted."""
        if not text or self.known_clean(text):
            return text
        out = redact(text).text
        if out == text:
            self._remember(text)
        return out

    def redact(self, text: str, field: str = "text") -> Redacted:
        """``redact(text, field)``, and its result remembered as clean once redacting
        that result again is seen to change nothing (one more pass, paid only when this
        one changed the text): the store and the triage then pass it through."""
        if not text or self.known_clean(text):
            return Redacted(text)
        result = redact(text, field)
        if result.text == text and not result.redactions:
            self._remember(text)
        elif result.text and not self.known_clean(result.text):
            self.text(result.text)  # remembered when it is a fixed point
        return result

    def mapping(self, data: Mapping[str, object]) -> dict[str, object]:
        """``data`` with every string redacted, as ``redact_fields`` does it (nested
        mappings and lists too, values under secret names replaced whole); keys keep
        their order. Strings known clean are passed through; those found clean now are
        remembered."""
        scrubbed, _ = redact_fields(data, known_clean=self.known_clean, found_clean=self._remember)
        return scrubbed
