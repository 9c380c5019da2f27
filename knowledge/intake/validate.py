"""Cleaning what a user typed or uploaded into a form field, secrets first.

Every value goes through :func:`clean_value` (typed text) or :func:`read_upload`
(an uploaded log file): control characters are removed, **secrets are redacted
before anything is cut** (so a token is never split into a part the redactor no
longer recognises), white-space-only answers count as empty, and answers over the
field's cap are cut at a line boundary. Logs keep their *end* (where failures are),
other fields their start. Uploads that are too big are refused without reading
them; binary files are refused; in both cases the rest of the request is kept and a
:class:`Problem` says why, worded later by ``templates/intake.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from knowledge.intake.fields import FormField
from knowledge.text import cut_tail
from knowledge.triage.redact import Redacted, Redaction, redact

#: ``redact(text, field)`` or a stand-in that gives the same (``Scrubber.redact``).
Redactor = Callable[[str, str], Redacted]

__all__ = [
    "MAX_LOG_CHARS",
    "MAX_UPLOAD_BYTES",
    "Cleaned",
    "Problem",
    "Redactor",
    "clean_value",
    "cut_head",
    "human_size",
    "looks_binary",
    "read_upload",
]

#: Largest uploaded log read at all; bigger files are refused before download.
MAX_UPLOAD_BYTES: Final = 8 * 1024 * 1024
#: Most characters of a log kept (its end): about 1,000 long lines. A log cut to it says
#: which lines were kept, in the check's reply, the forum post and ``tickets show``.
MAX_LOG_CHARS: Final = 200_000
#: Characters of an upload sniffed for binary content.
_SNIFF_BYTES: Final = 8192
_CONTROL_RE: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: A terminal's colour or cursor code (``ESC [ 36 m``), removed whole.
_ANSI_RE: Final = re.compile(r"\x1b\[[0-9;?]{0,32}[A-HJKSTfmsu]")
#: Control characters that are not white space: counted one by one (``str.count``).
_CONTROL_CHARS: Final = tuple(chr(c) for c in range(32) if chr(c) not in "\t\n\r")
#: ``str.translate`` table deleting what ``_CONTROL_RE`` matches.
_NO_CONTROLS: Final = dict.fromkeys(c for c in range(128) if _CONTROL_RE.fullmatch(chr(c)))


@dataclass(frozen=True, slots=True)
class Problem:
    """Something about an answer the user should be told, worded from the templates."""

    field: str
    #: empty, cut, log_cut, upload_too_big, upload_binary, upload_unreadable, control_chars
    code: str
    values: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"field": self.field, "code": self.code, **self.values}


@dataclass(frozen=True, slots=True)
class Cleaned:
    """One field's value after cleaning: redacted, capped, and what happened on the way."""

    value: str
    redactions: tuple[Redaction, ...] = ()
    problems: tuple[Problem, ...] = ()


def human_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} B"


def cut_head(text: str, limit: int) -> str:
    """The first ``limit`` characters, ended at the last line break if one is near."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    newline = cut.rfind("\n")
    return cut[:newline] if newline >= limit // 2 else cut


def _normalise(raw: str) -> tuple[str, bool]:
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:  # colour codes go whole: ``[36m`` left behind would split tokens
        coloured = len(text)
        text = _ANSI_RE.sub("", text)
        if len(text) != coloured:
            cleaned = text.translate(_NO_CONTROLS) if text.isascii() else _CONTROL_RE.sub("", text)
            return cleaned, True
    # str.translate runs table lookups on ASCII text, several times faster than the
    # pattern; on other text it is far slower than the pattern.
    cleaned = text.translate(_NO_CONTROLS) if text.isascii() else _CONTROL_RE.sub("", text)
    return cleaned, len(cleaned) != len(text)


def clean_value(spec: FormField, raw: str, redactor: Redactor = redact) -> Cleaned:
    """``raw`` as stored for ``spec``: stripped, redacted, capped (logs keep their end).

    ``redactor`` is :func:`~knowledge.triage.redact.redact` or one that remembers what it
    redacted (``Scrubber.redact``): the text is stripped first, so that what it redacted
    is, uncut, the very text stored."""
    if not isinstance(raw, str):
        raw = "" if raw is None else str(raw)
    text, had_controls = _normalise(raw)
    redacted = redactor(text.strip(), spec.key)
    text = redacted.text.strip()  # normalising may have made new white space at an end
    problems: list[Problem] = []
    if had_controls:
        problems.append(Problem(spec.key, "control_chars", {"field": spec.label}))
    limit = MAX_LOG_CHARS if spec.is_log else spec.max_chars
    if len(text) > limit:
        if spec.is_log:
            tail = cut_tail(text, limit)
            kept = tail.strip()
            start = len(text) - len(tail) + (len(tail) - len(tail.lstrip()))
            problems.append(Problem(spec.key, "log_cut", _part_kept(spec, text, start, limit)))
            text = kept
        else:
            text = cut_head(text, limit).strip()
            problems.append(Problem(spec.key, "cut", {"field": spec.label, "limit": limit}))
    if not text and spec.required:
        problems.append(Problem(spec.key, "empty", {"field": spec.label}))
    return Cleaned(text, redacted.redactions, tuple(problems))


def _part_kept(spec: FormField, text: str, start: int, limit: int) -> dict[str, object]:
    """Which part of the log ``text`` was kept, from ``start`` on: the values of the
    ``log_cut`` problem, and what the ticket says about it (see ``LogCut``)."""
    first = text.count("\n", 0, start) + 1
    return {
        "field": spec.label,
        "limit": limit,
        "first": first,
        "lines": text.count("\n") + 1,
        "skipped": start,
        "total": len(text),
    }


def looks_binary(data: bytes) -> bool:
    """True for data that is not a text log: NUL bytes, known archive magic, or mostly
    bytes that are neither UTF-8 text nor white space."""
    head = data[:_SNIFF_BYTES]
    if not head:
        return False
    if b"\x00" in head or head.startswith((b"\x1f\x8b", b"PK\x03\x04", b"\x7fELF", b"BZh")):
        return True
    text = head.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") + sum(map(text.count, _CONTROL_CHARS))
    return bad > max(8, len(text) // 20)


def read_upload(
    spec: FormField, data: bytes | None, size: int, redactor: Redactor = redact
) -> Cleaned:
    """An uploaded file for ``spec`` (a log): refused when ``size`` is over
    :data:`MAX_UPLOAD_BYTES` (``data`` is then not needed) or the bytes are binary,
    else decoded and cleaned like typed text, keeping the end."""
    if size > MAX_UPLOAD_BYTES:
        return Cleaned(
            "",
            problems=(
                Problem(
                    spec.key,
                    "upload_too_big",
                    {
                        "field": spec.label,
                        "size": human_size(size),
                        "limit": human_size(MAX_UPLOAD_BYTES),
                    },
                ),
            ),
        )
    if data is None:
        return Cleaned(
            "", problems=(Problem(spec.key, "upload_unreadable", {"field": spec.label}),)
        )
    if looks_binary(data):
        return Cleaned("", problems=(Problem(spec.key, "upload_binary", {"field": spec.label}),))
    text = data[:MAX_UPLOAD_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff")
    return clean_value(spec, text, redactor)
