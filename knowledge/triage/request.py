"""A help request: its fields, reading it from a mapping or a file, capping its text.

A request is what a user gives the onboarding checklist: free text, the page
followed, image, GPU layout and settings, launch command, client command and log.
It arrives as a YAML/JSON mapping (keys may be the labels of the wiki's question
template) or as a :class:`TriageRequest`. :func:`capped` turns either into a typed
request whose fields are at most ``MAX_FIELD_CHARS`` long (the log
``MAX_LOG_CHARS``, keeping its end, where failures are). Nothing here redacts: the
triage run redacts the capped request before anything reads it.

Problems with the input are codes ``kind:key`` (``field_cut``, ``field_ignored``,
``field_type``), worded later from ``templates/triage.yaml`` (``problems.<kind>``).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

import yaml

from knowledge.safe_yaml import YamlTooLarge, load_yaml

__all__ = [
    "FIELDS",
    "FIELD_ALIASES",
    "MAX_FIELD_CHARS",
    "MAX_LOG_CHARS",
    "MAX_REQUEST_BYTES",
    "LogPart",
    "RequestError",
    "RequestReader",
    "TriageRequest",
    "capped",
    "field_limit",
]

#: The request's fields, in the order the checklist asks for them.
FIELDS: Final = (
    "text",
    "expected",
    "actual",
    "tried",
    "model_page",
    "image",
    "gpus",
    "settings",
    "command",
    "client",
    "log",
)
#: Longest value of any field but the log; longer ones keep their start.
MAX_FIELD_CHARS: Final = 256 * 1024
#: Longest log read; a longer one keeps its end (where failures are).
MAX_LOG_CHARS: Final = 8 * 1024 * 1024
#: Largest request file read (a YAML/JSON file holding a log of a few MB).
MAX_REQUEST_BYTES: Final = 24 * 1024 * 1024

#: Longest stretch of a log file read only to count its lines (to number the part
#: kept as in the file); past it the line numbers count from the part kept.
MAX_LINE_COUNT_BYTES: Final = 1024 * 1024 * 1024
#: Bytes read at a time while counting.
_CHUNK_BYTES: Final = 1024 * 1024

#: Request keys (lower case, non-alphanumerics as ``_``) accepted for each field; these
#: include the labels of the wiki's question template.
FIELD_ALIASES: Final[Mapping[str, tuple[str, ...]]] = {
    "text": ("text", "question", "description", "problem", "summary", "symptoms", "issue"),
    "expected": ("expected", "what_i_expected"),
    "actual": ("actual", "what_happened", "observed", "result"),
    "tried": ("tried", "already_tried", "what_i_already_tried", "what_i_tried"),
    "model_page": (
        "model_page",
        "runbook",
        "model_runbook",
        "runbook_followed",
        "page",
        "model",
        "link",
    ),
    "image": ("image", "docker_image", "image_tag", "image_tag_digest", "image_digest"),
    "gpus": ("gpus", "gpu_layout", "gpus_and_topology", "layout", "topology", "hardware"),
    "settings": ("settings", "tp_dcp_mtp_dspark", "parallel", "parallelism", "backend"),
    "command": (
        "command",
        "launch",
        "launch_command",
        "launch_command_or_compose_file",
        "compose",
        "docker_run",
    ),
    "client": ("client", "client_command"),
    "log": ("log", "logs", "server_log", "server_log_last_100_300_lines"),
}
_KEY_RE: Final = re.compile(r"[^a-z0-9]+")
#: How far past the cut a kept log end looks for the start of a whole line.
_LINE_START_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class LogPart:
    """Which part of a long log was read, so line numbers are those of the whole log."""

    #: Number, in the whole log, of the first line read; None when the lines before it
    #: were too many to count (line numbers then count from the part read).
    first_line: int | None = 1
    #: Bytes (or characters) of the log before the part read.
    skipped: int = 0
    #: Size of the whole log, when known.
    total: int | None = None
    unit: str = "bytes"

    @property
    def cut(self) -> bool:
        """True when the start of the log was not read."""
        return self.skipped > 0

    @property
    def offset(self) -> int:
        """What to add to a line number of the part read to number it as in the log."""
        return (self.first_line or 1) - 1

    def then_cut(self, dropped: str) -> LogPart:
        """This part with ``dropped`` (characters at its start) cut off too."""
        first = None if self.first_line is None else self.first_line + dropped.count("\n")
        if not self.cut:
            return LogPart(first, len(dropped), None, "characters")
        size = len(dropped.encode("utf-8", "surrogatepass")) if self.unit == "bytes" else 0
        return LogPart(first, self.skipped + (size or len(dropped)), self.total, self.unit)


@dataclass(frozen=True, slots=True)
class TriageRequest:
    """A help request. Every field is plain (possibly secret-bearing) text."""

    text: str = ""
    expected: str = ""
    actual: str = ""
    tried: str = ""
    model_page: str = ""
    image: str = ""
    gpus: str = ""
    settings: str = ""
    command: str = ""
    client: str = ""
    log: str = ""
    #: Where ``log`` starts in the whole log (set by whoever cut it).
    log_part: LogPart = LogPart()

    def texts(self) -> dict[str, str]:
        """The text fields (``FIELDS``) by name, without ``log_part``."""
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_mapping(cls, data: Mapping[Any, Any]) -> tuple[TriageRequest, tuple[str, ...]]:
        """Read a request from a YAML/JSON mapping; unknown keys go into ``text``.

        Returns the request and problem codes ``kind:key`` (``field_ignored``,
        ``field_type``). Values are *not* redacted here.
        """
        lookup = {alias: name for name, aliases in FIELD_ALIASES.items() for alias in aliases}
        values: dict[str, list[str]] = {name: [] for name in FIELDS}
        problems: list[str] = []
        part = LogPart()
        for key, value in data.items():
            if isinstance(value, LogPart):  # given by a reader that cut the log; never YAML
                part = value
                continue
            raw_key = str(key)[:80]
            name = lookup.get(_KEY_RE.sub("_", raw_key.casefold()).strip("_"))
            text = _as_text(value)
            if not isinstance(value, str) and value is not None:
                problems.append(f"field_type:{raw_key}")
            if name is None:
                if text.strip():
                    values["text"].append(f"{raw_key}: {text}")
                    problems.append(f"field_ignored:{raw_key}")
                continue
            if text:
                values[name].append(text)
        request = cls(**{name: "\n".join(parts) for name, parts in values.items()}, log_part=part)
        return request, tuple(problems)


def _as_text(value: object, depth: int = 0) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if depth > 8:
        return ""
    if isinstance(value, Mapping):
        return "\n".join(f"{k}: {_as_text(v, depth + 1)}" for k, v in list(value.items())[:500])
    if isinstance(value, (list, tuple)):
        return "\n".join(_as_text(v, depth + 1) for v in value[:10_000])
    return str(value)


def field_limit(name: str) -> int:
    """Longest value kept of field ``name``."""
    return MAX_LOG_CHARS if name == "log" else MAX_FIELD_CHARS


def _cut(value: str, limit: int, keep_end: bool) -> tuple[str, bool]:
    if len(value) <= limit:
        return value, False
    if keep_end:
        cut = value[-limit:]
        newline = cut.find("\n")
        return (cut[newline + 1 :] if 0 <= newline < _LINE_START_CHARS else cut), True
    return value[:limit], True


def _line_start(data: bytes) -> int:
    """Where the first whole line of ``data`` starts (0 when none starts close by)."""
    newline = data.find(b"\n", 0, _LINE_START_CHARS)
    return newline + 1 if newline >= 0 else 0


def capped(
    request: TriageRequest | Mapping[str, Any],
) -> tuple[TriageRequest, tuple[str, ...]]:
    """The request typed, every field cut to its limit, and the problem codes (cut fields
    first, then the mapping's own)."""
    if isinstance(request, TriageRequest):
        typed, codes = request, ()
    else:
        typed, codes = TriageRequest.from_mapping(request)
    values: dict[str, str] = {}
    cut_codes: list[str] = []
    part = typed.log_part
    for name in FIELDS:
        value = getattr(typed, name)
        value = value if isinstance(value, str) else _as_text(value)
        kept, cut = _cut(value, field_limit(name), keep_end=name == "log")
        if cut and name == "log":  # said with the part read, from the log_part
            part = part.then_cut(value[: len(value) - len(kept)])
        elif cut:
            cut_codes.append(f"field_cut:{name}")
        values[name] = kept
    return TriageRequest(**values, log_part=part), (*cut_codes, *codes)


# --------------------------------------------------------------------- files


class RequestError(Exception):
    """A request that cannot be read; the message names the file, never its text."""


class RequestReader:
    """Reads request files and field files; ``-`` is standard input, readable once."""

    def __init__(self, stdin: BinaryIO | None = None) -> None:
        self._stdin = stdin
        self._stdin_used = False

    def read(
        self, path: str, limit: int, *, keep_end: bool = False, refuse_longer: bool = False
    ) -> str:
        """At most ``limit`` bytes of ``path`` (its end with ``keep_end``), as text; with
        ``refuse_longer``, a longer file is a :class:`RequestError` saying its size."""
        if path == "-":
            if self._stdin_used:
                raise RequestError("standard input can be read only once")
            self._stdin_used = True
            stream = self._stdin if self._stdin is not None else sys.stdin.buffer
            data = stream.read(limit + 1)
            longer = len(data) > limit
            data = data[:limit]
            size = None
        else:
            try:
                with open(path, "rb") as fh:
                    info = os.fstat(fh.fileno())
                    size = info.st_size if stat.S_ISREG(info.st_mode) else None
                    if refuse_longer and size is not None and size > limit:
                        raise _too_large(path, size, limit)
                    if size is not None and size > limit and keep_end:
                        fh.seek(size - limit)
                    data = fh.read(limit + 1)
                    longer = len(data) > limit
                    data = data[:limit]
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise RequestError(f"cannot read {path}: {reason}") from None
        if refuse_longer and longer:
            raise _too_large(path, size, limit)
        return data.decode("utf-8", errors="replace").lstrip("\ufeff")

    def read_log(self, path: str, limit: int) -> tuple[str, LogPart]:
        """The end of a log (at most ``limit`` bytes, from a line start) and which part it is.

        Lines before the part kept are counted (up to ``MAX_LINE_COUNT_BYTES`` of them,
        a chunk at a time), so line numbers can be those of the file; a pipe or standard
        input is read through to its end the same way, never more than that.
        """
        if path == "-":
            if self._stdin_used:
                raise RequestError("standard input can be read only once")
            self._stdin_used = True
            stream = self._stdin if self._stdin is not None else sys.stdin.buffer
            return _tail(stream, limit)
        try:
            with open(path, "rb") as fh:
                info = os.fstat(fh.fileno())
                if not stat.S_ISREG(info.st_mode):  # a pipe: `--log <(docker logs x)`
                    return _tail(fh, limit)
                size = info.st_size
                if size <= limit:
                    return self._text(fh.read(limit)), LogPart(total=size)
                start = size - limit
                lines: int | None = 0
                if start <= MAX_LINE_COUNT_BYTES:
                    done = 0
                    while done < start:
                        chunk = fh.read(min(_CHUNK_BYTES, start - done))
                        if not chunk:
                            break
                        lines += chunk.count(b"\n")
                        done += len(chunk)
                else:
                    lines = None
                fh.seek(start)
                data = fh.read(limit)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise RequestError(f"cannot read {path}: {reason}") from None
        skip = _line_start(data)
        if lines is not None:
            lines += data.count(b"\n", 0, skip)
        first = None if lines is None else lines + 1
        return self._text(data[skip:]), LogPart(first, start + skip, size)

    @staticmethod
    def _text(data: bytes) -> str:
        return data.decode("utf-8", errors="replace").lstrip("\ufeff")

    def request_file(self, path: str) -> dict[Any, Any]:
        """The mapping of request fields in a YAML or JSON file (refused, before it is
        parsed, when over ``MAX_REQUEST_BYTES``: a cut document is no document)."""
        text = self.read(path, MAX_REQUEST_BYTES, refuse_longer=True)
        try:
            data = load_yaml(text)  # plain data only; aliases, sizes and digits capped
        except YamlTooLarge as exc:
            raise RequestError(f"{path} is refused: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise RequestError(f"{path} is not valid YAML or JSON{where}") from None
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            raise RequestError(f"{path} must hold a mapping of request fields")
        return dict(data)


def _too_large(path: str, size: int | None, limit: int) -> RequestError:
    """The request file is over ``limit`` bytes (``size`` when known)."""
    what = "standard input" if path == "-" else path
    given = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return RequestError(
        f"{what} is too large: {given}, over the limit of {limit:,} bytes for a request;"
        " give a long log with --log FILE (its end is read)"
    )


def _tail(stream: BinaryIO, limit: int) -> tuple[str, LogPart]:
    """The last ``limit`` bytes of a stream read to its end (at most
    ``MAX_LINE_COUNT_BYTES`` past them), counting the lines dropped on the way."""
    kept = bytearray()
    dropped = 0
    lines = 0
    read = 0
    while read <= MAX_LINE_COUNT_BYTES + limit:
        chunk = stream.read(_CHUNK_BYTES)
        if not chunk:
            break
        read += len(chunk)
        kept += chunk
        if len(kept) > limit:
            excess = len(kept) - limit
            lines += kept.count(b"\n", 0, excess)
            dropped += excess
            del kept[:excess]
    data = bytes(kept)
    if not dropped:
        return RequestReader._text(data), LogPart(total=read)
    skip = _line_start(data)
    lines += data.count(b"\n", 0, skip)
    return RequestReader._text(data[skip:]), LogPart(lines + 1, dropped + skip, read)
