"""Summarise vLLM / SGLang server logs, and normalise log lines for signature matching.

``summarise_log(text)`` reads a log once, line by line (each line is looked at up to
``MAX_LINE_CHARS``; the few lines that carry the whole configuration up to
``MAX_CONFIG_LINE_CHARS``), and returns a ``LogSummary``: engine and version, model,
parallel sizes, speculative decoding, attention and MoE backends, KV cache size,
quantization, warning and error counts, the first error line and the last traceback.
It never raises on ``str`` input and does no work that grows faster than the log.

``normalise_line(line)`` turns one log line into a stable form for matching known
error signatures. The rules, applied in this order:

1. Only the first ``MAX_LINE_CHARS`` characters are used; ANSI colour codes are removed;
   of a line rewritten with carriage returns (progress bars) the last state is kept.
2. Log prefixes are removed, repeatedly: Compose service prefixes (``srv-1  | ``),
   Docker ISO timestamps, vLLM process tags (``(APIServer pid=1)``,
   ``(Worker_TP0 pid=350)``), torch rank tags (``[rank3]:``), glog tags
   (``[W515 04:23:11.1 file.cpp:12]``), vLLM level/date/source
   (``INFO 05-15 04:23:11 [file.py:123]``), SGLang time tags
   (``[2025-01-02 03:04:05 TP0]``), Uvicorn/Python ``LEVEL:`` and timestamped
   ``YYYY-MM-DD HH:MM:SS,mmm LEVEL`` prefixes.
3. Replaced with placeholders: UUIDs -> ``<uuid>``, URLs -> ``<url>``, ``0x`` numbers
   -> ``<hex>``, absolute or ``./``/``~/`` paths -> ``<path>``, hex strings of 8+
   characters with both a digit and a letter -> ``<hex>``, and numbers not glued to a
   preceding letter, digit, ``_`` or ``.`` (``1,271,040``, ``3.74``; the ``3`` in
   ``TP3`` or ``fp8`` stays) -> ``<n>``.
4. Runs of white space become one space; leading and trailing space is removed.

The result is deterministic, keeps letter case, and normalising it again changes
nothing.
"""

from __future__ import annotations

import ast
import logging
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from knowledge.launch import Parallelism

__all__ = [
    "MAX_CONFIG_LINE_CHARS",
    "MAX_LINE_CHARS",
    "LogLine",
    "LogSummary",
    "Traceback",
    "normalise_line",
    "split_line",
    "summarise_log",
]

log = logging.getLogger(__name__)

#: Characters of each line looked at.
MAX_LINE_CHARS: Final = 4096
#: Characters looked at on the lines that print the whole configuration.
MAX_CONFIG_LINE_CHARS: Final = 64 * 1024
#: Lines kept of one traceback (its last ones: the frames nearest the error).
MAX_TRACEBACK_LINES: Final = 200
#: Tracebacks followed at the same time (one per process tag).
MAX_OPEN_TRACEBACKS: Final = 64
#: Characters kept of the first error line.
MAX_ERROR_CHARS: Final = 1000
#: Markers of the lines that carry the configuration and may be long.
CONFIG_MARKERS: Final = ("non-default args:", "with config:", "server_args=", "ServerArgs(")
#: Messages that say the server is up and serving.
READY_MARKERS: Final = (
    "Application startup complete",
    "Starting vLLM server on",
    "Starting vLLM API server",
    "Uvicorn running on",
    "fired up and ready to roll",
)
VLLM_MARKERS: Final = ("vLLM", "vllm.", "/vllm/", "non-default args:", "V1 LLM engine")
VLLM_SOURCES: Final = ("APIServer", "EngineCore", "VllmWorker", "Worker_TP", "Worker")
SGLANG_MARKERS: Final = ("sglang", "SGLang", "SGLANG", "ServerArgs(", "fired up and ready to roll")

_ANSI_RE: Final = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]")
_COMPOSE_PREFIX_RE: Final = re.compile(r"[A-Za-z0-9][\w.-]{0,63}[ \t]{1,32}\|[ \t]?")
_ISO_TS_RE: Final = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?[ \t]"
)
_RANK_RE: Final = re.compile(r"\[rank(\d{1,5})\]:[ \t]?")
_GLOG_RE: Final = re.compile(
    r"\[([IWEF])\d{3,4} \d\d:\d\d:\d\d(?:\.\d{1,9})? [^\]\n]{0,160}\][ \t]?"
)
_VLLM_LEVEL_RE: Final = re.compile(
    r"(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ \t]+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?"
    r"[ \t]+(?:\[[^\]\s]{1,160}\]|[^\]\s]{1,160}\])[ \t]?"
)
_SGLANG_TS_RE: Final = re.compile(
    r"\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)((?: [A-Z]{1,6}\d{1,5}){0,4})\][ \t]?"
)
_PY_TS_LEVEL_RE: Final = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?[ \t]+(?:-[ \t]+)?"
    r"(?:[\w.]{1,80}[ \t]+-[ \t]+)?(DEBUG|INFO|WARNING|ERROR|CRITICAL)[ \t]*(?:-|:)?[ \t]?"
)
#: A process tag as the ``(`` branch of ``_split`` reads it (up to the first ``)``,
#: within 160 characters), one optional space, then ``_VLLM_LEVEL_RE``.
_VLLM_HEAD_RE: Final = re.compile(r"\(([^)]{0,158})\) ?" + _VLLM_LEVEL_RE.pattern)
_COLON_LEVEL_RE: Final = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL):(?:[\w.]{1,80}:|[ \t]+)")
#: Longest compose prefix (name, padding, ``|``): its ``|`` is within these characters.
_COMPOSE_MAX_CHARS: Final = 1 + 63 + 32 + 1
#: First letters of the levels the two level prefixes start with.
_LEVEL_INITIALS: Final = frozenset("DIWEC")
_GLOG_LEVELS: Final = MappingProxyType({"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"})
_LEVEL_ALIASES: Final = MappingProxyType({"WARN": "WARNING"})

_UUID_RE: Final = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_URL_RE: Final = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s\"'<>]+")
_HEX_PTR_RE: Final = re.compile(r"\b0[xX][0-9a-fA-F]+\b")
_PATH_RE: Final = re.compile(r"(?<![\w:/.~-])(?:~|\.\.?)?/[\w.@+~/-]+")
_HEX_HASH_RE: Final = re.compile(r"\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b")
_NUMBER_RE: Final = re.compile(r"(?<![\w.])\d(?:[\d.,]*\d)?")
# What each replacement needs before it can match (a UUID's middle group; a digit,
# which hex hashes need too): cheap tests that skip the pattern when absent.
_UUID_GUARD_RE: Final = re.compile(r"-[0-9a-fA-F]{4}-")
_DIGIT_RE: Final = re.compile(r"\d")

_PY_WARNING_RE: Final = re.compile(r"\b[A-Z]\w*Warning: ")
_EXCEPTION_RE: Final = re.compile(r"\w(?:Error|Exception)(?::|[ \t]*$)|^(?:Error|Exception)\b")
_TRACEBACK_HEAD: Final = "Traceback (most recent call last):"
_CHAIN_MARKERS: Final = ("During handling of the above exception", "The above exception was")

_VERSION_RE: Final = re.compile(r"\bversion[ \t]+v?(\d+\.\d+[\w.+-]*)")
_ENGINE_VERSION_RE: Final = re.compile(r"engine \(v(\d+\.\d+[\w.+-]*)\)")
_SGLANG_VERSION_RE: Final = re.compile(r"\bsglang(?:==|[ \t]+version:?[ \t]*v?)(\d+\.\d+[\w.+-]*)")
_BANNER_MODEL_RE: Final = re.compile(r"\bmodel[ \t]+(\S+)[ \t]*$")
_KV_TOKENS_RE: Final = re.compile(r"GPU KV cache size: ([\d,]+) tokens")
_CONCURRENCY_RE: Final = re.compile(
    r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"
)
_SGLANG_KV_RE: Final = re.compile(r"KV Cache is allocated\. #tokens: (\d+)")
_SGLANG_TOTAL_RE: Final = re.compile(r"max_total_num_tokens=(\d+)")
_MAX_LEN_RE: Final = re.compile(r"Using max model len (\d+)")
_ATTN_RE: Final = re.compile(
    r"Using (?:AttentionBackendEnum\.|_Backend\.)?([A-Z][A-Za-z0-9_]*) backend\b"
)
_MOE_RE: Final = re.compile(r"Using '?([A-Za-z0-9_]+)'?(?: [\w-]{1,32})? MoE backend")
_KEY_VALUE_RE: Final = re.compile(
    r"\b([a-z_][a-z0-9_]{1,60})=('[^'\n]{0,512}'|\"[^\"\n]{0,512}\"|[^,\s()]{1,512})"
)
_SPEC_CONFIG_RE: Final = re.compile(r"speculative_config=(None|SpeculativeConfig\([^)]{0,4000}\))")
_REPR_RE: Final = re.compile(r"<[^<>\n]{0,200}>")
#: Every text a message is first tested for on the way to an engine hint or a fact
#: (``_read_line``, ``_read_facts``): a line holding none of them yields neither.
_LINE_MARKERS: Final = tuple(
    dict.fromkeys(
        (
            *VLLM_MARKERS,
            *SGLANG_MARKERS,
            *READY_MARKERS,
            "non-default args:",
            "with config:",
            "ServerArgs(",
            "version",
            "█",
            "KV cache size",
            "Maximum concurrency",
            "#tokens",
            "max_total_num_tokens=",
            "max model len",
            " backend",
        )
    )
)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line split into what the logger added and what the program said."""

    level: str | None
    #: Process tag (``APIServer pid=1``, ``rank3``, ``TP0``), or None.
    source: str | None
    message: str


@dataclass(frozen=True, slots=True)
class Traceback:
    """A Python traceback found in the log (prefixes removed)."""

    #: 1-based line number of ``Traceback (most recent call last):``.
    line: int
    lines: tuple[str, ...]
    #: The final ``SomeError: message`` line; None if the log ends before it.
    exception: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LogSummary(Parallelism):
    """What one server log says about its launch and its failure, if any."""

    lines: int
    #: Number, in the whole log, of the first line read (a long log is read from its end).
    first_line: int = 1
    engine: str | None = None
    version: str | None = None
    model: str | None = None
    served_model_name: str | None = None
    ep: bool | int | None = None
    attention_backend: str | None = None
    moe_backend: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_model_len: int | None = None
    server_ready: bool = False
    warnings: int = 0
    #: Lines logged at ERROR/CRITICAL plus exception lines (``ValueError: ...``).
    errors: int = 0
    #: First error message (prefix removed), skipping traceback frames.
    first_error: str | None = None
    first_error_line: int | None = None
    last_traceback: Traceback | None = None
    #: vLLM's ``non-default args`` or SGLang's ``ServerArgs`` as parsed.
    args: dict[str, object] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


# ------------------------------------------------------------------ lines


def _clean(line: str, limit: int = MAX_LINE_CHARS) -> str:
    line = line[:limit].rstrip("\r")
    if "\r" in line:
        line = line.rsplit("\r", 1)[-1]
    while "\x1b" in line:  # removing one escape can join two halves into another
        stripped = _ANSI_RE.sub("", line)
        if stripped == line:
            break
        line = stripped
    return line


def split_line(line: str) -> LogLine:
    """Remove the log prefixes listed in the module docstring from one raw line."""
    return LogLine(*_split(line))


def _split(line: str) -> tuple[str | None, str | None, str]:
    """``split_line`` as (level, source, message), without building a ``LogLine``."""
    level: str | None = None
    source: str | None = None
    rest = line
    # Most lines of a vLLM log start with a process tag and a level prefix: both read
    # by one match, as the loop below would read them (a tag, one space, a level).
    head = _VLLM_HEAD_RE.match(line) if line.startswith("(") else None
    if head is not None and ("pid=" in head.group(1) or "rank=" in head.group(1)):
        source = head.group(1)
        level = _LEVEL_ALIASES.get(head.group(2), head.group(2))
        rest = line[head.end() :]
    while rest:
        first = rest[0]
        if first == "(":  # a process tag; neither a compose prefix nor a timestamp starts so
            close = rest.find(")", 1, 160)
            inner = rest[1:close] if close > 0 else ""
            if "pid=" not in inner and "rank=" not in inner:
                break
            source = source or inner
            rest = rest[close + 1 :]
            rest = rest[1:] if rest.startswith(" ") else rest
            continue
        before = rest
        # Each pattern is tried only when the line can start with it: a compose prefix
        # has its "|" within its first 97 characters, a timestamp its "-" at index 4, a
        # level one of its initials (most messages fail all three tests at once).
        dated = rest[4:5] == "-"
        m = None
        if rest.find("|", 0, _COMPOSE_MAX_CHARS) >= 0:
            m = _COMPOSE_PREFIX_RE.match(rest)
        if m is None and dated:
            m = _ISO_TS_RE.match(rest)
        if m:
            rest = rest[m.end() :]
        elif first == "[":
            if m := _RANK_RE.match(rest):
                source = source or f"rank{m.group(1)}"
            elif m := _GLOG_RE.match(rest):
                level = level or _GLOG_LEVELS[m.group(1)]
            elif m := _SGLANG_TS_RE.match(rest):
                source = source or (m.group(2).strip() or None)
            else:
                break
            rest = rest[m.end() :]
        elif first in _LEVEL_INITIALS and (
            m := _VLLM_LEVEL_RE.match(rest) or _COLON_LEVEL_RE.match(rest)
        ):
            level = level or _LEVEL_ALIASES.get(m.group(1), m.group(1))
            rest = rest[m.end() :]
            if m.re is _COLON_LEVEL_RE:
                rest = rest.lstrip(" \t")
        elif dated and (m := _PY_TS_LEVEL_RE.match(rest)):
            level = level or m.group(1)
            rest = rest[m.end() :]
        else:
            break
        if rest == before:
            break
    return level, source, rest


def normalise_line(line: str) -> str:
    """Stable form of one log line for signature matching (rules in the module doc)."""
    result = _normalise_once(_clean(line))
    while True:  # a prefix may only show once the one before it is gone: run to a fixpoint
        again = _normalise_once(result)
        if again == result:
            return result
        result = again


def _normalise_once(line: str) -> str:
    message = _split(line.lstrip())[2]
    # Each pattern runs only where what it must contain is there: the patterns start
    # with ``\b`` or a look-behind, so a search tries every position of the line, while
    # these tests run at C speed (the second pass to the fixpoint usually skips them all).
    if "-" in message and _UUID_GUARD_RE.search(message):
        message = _UUID_RE.sub("<uuid>", message)
    if "://" in message:
        message = _URL_RE.sub("<url>", message)
    if "0x" in message or "0X" in message:
        message = _HEX_PTR_RE.sub("<hex>", message)
    if "/" in message:
        message = _PATH_RE.sub("<path>", message)
    if _DIGIT_RE.search(message):
        message = _HEX_HASH_RE.sub("<hex>", message)
        message = _NUMBER_RE.sub("<n>", message)
    return " ".join(message.split())


# ------------------------------------------------------------------ summary


def _to_int(text: object) -> int | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    if isinstance(text, str):
        digits = text.strip().strip("'\"").replace(",", "")
        if digits.isdigit():
            return int(digits)
    return None


def _to_str(value: object) -> str | None:
    if isinstance(value, str):
        value = value.strip().strip("'\"")
        return value if value and value != "None" else None
    return None


def _parse_args_dict(text: str) -> dict[str, object] | None:
    """``{'model': 'x', ...}`` as printed by vLLM; ``<Enum.X: 1>`` reprs become None."""
    try:
        value = ast.literal_eval(_REPR_RE.sub("None", text.strip()))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _key_values(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in _KEY_VALUE_RE.finditer(text):
        found.setdefault(m.group(1), m.group(2))
    return found


@dataclass(slots=True)
class _OpenTraceback:
    line: int
    lines: deque[str]


@dataclass(slots=True)
class _Reader:
    """Accumulator for one ``summarise_log`` call."""

    facts: dict[str, object] = field(default_factory=dict)
    args: dict[str, object] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    server_args: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    vllm_hits: int = 0
    sglang_hits: int = 0
    warnings: int = 0
    errors: int = 0
    first_error: str | None = None
    first_error_line: int | None = None
    open_tracebacks: dict[str, _OpenTraceback] = field(default_factory=dict)
    last_opened: str | None = None
    last_traceback: Traceback | None = None
    spec_off: bool = False
    ready: bool = False

    def fact(self, key: str, value: object) -> None:
        if value is not None and key not in self.facts:
            self.facts[key] = value


def _is_traceback_structure(message: str) -> bool:
    stripped = message.strip()
    return (
        not stripped
        or message[:1] in " \t"
        or stripped.startswith(_TRACEBACK_HEAD)
        or stripped.startswith(_CHAIN_MARKERS)
        or stripped.endswith(_TRACEBACK_HEAD)
    )


def _track_traceback(reader: _Reader, key: str, message: str, lineno: int) -> None:
    """Follow tracebacks per process tag. Untagged lines continue the traceback opened
    last when their own tag has none (SGLang logs the frames without a prefix)."""
    if _TRACEBACK_HEAD in message:
        if key not in reader.open_tracebacks and len(reader.open_tracebacks) >= MAX_OPEN_TRACEBACKS:
            reader.open_tracebacks.pop(next(iter(reader.open_tracebacks)))
        reader.open_tracebacks[key] = _OpenTraceback(
            lineno, deque([_TRACEBACK_HEAD], maxlen=MAX_TRACEBACK_LINES)
        )
        reader.last_opened = key
        return
    continuation = not message.strip() or message[:1] in " \t" or message.startswith(_CHAIN_MARKERS)
    if key not in reader.open_tracebacks and not key and reader.last_opened is not None:
        if not continuation and not _EXCEPTION_RE.search(message):
            return  # an untagged line from elsewhere, not this traceback's end
        key = reader.last_opened
    current = reader.open_tracebacks.get(key)
    if current is None:
        return
    if continuation:
        current.lines.append(message.rstrip())
        return
    current.lines.append(message.rstrip())
    reader.last_traceback = Traceback(current.line, tuple(current.lines), message.strip())
    del reader.open_tracebacks[key]


def _read_facts(reader: _Reader, message: str) -> None:
    """Pull launch facts out of one message. Cheap substring checks gate every regex."""
    if "non-default args:" in message and not reader.args:
        parsed = _parse_args_dict(message.split("non-default args:", 1)[1])
        if parsed is None:
            reader.problems.append("non-default args could not be parsed")
        else:
            reader.args = parsed
    if "with config:" in message and not reader.config:
        reader.config = _key_values(message)
        if m := _ENGINE_VERSION_RE.search(message):
            reader.fact("version", m.group(1))
        if m := _SPEC_CONFIG_RE.search(message):
            spec = m.group(1)
            if spec == "None":
                reader.spec_off = True
            else:
                values = _key_values(spec)
                reader.fact("spec_method", _to_str(values.get("method")))
                reader.fact("spec_tokens", _to_int(values.get("num_spec_tokens")))
    if "ServerArgs(" in message and not reader.server_args:
        reader.server_args = _key_values(message)
    if "version" in message:
        if "vLLM" in message or "█" in message:
            if m := _VERSION_RE.search(message):
                reader.fact("version", m.group(1))
        elif "sglang" in message.lower() and (m := _SGLANG_VERSION_RE.search(message.lower())):
            reader.fact("version", m.group(1))
    if "█" in message and "model" in message and (m := _BANNER_MODEL_RE.search(message)):
        reader.fact("banner_model", m.group(1))
    if "KV cache size" in message and (m := _KV_TOKENS_RE.search(message)):
        reader.fact("kv_cache_tokens", _to_int(m.group(1)))
    if "Maximum concurrency" in message and (m := _CONCURRENCY_RE.search(message)):
        reader.fact("max_concurrency", float(m.group(2)))
        reader.fact("concurrency_len", _to_int(m.group(1)))
    if "#tokens" in message and (m := _SGLANG_KV_RE.search(message)):
        reader.fact("kv_cache_tokens", int(m.group(1)))
    if "max_total_num_tokens=" in message and (m := _SGLANG_TOTAL_RE.search(message)):
        reader.fact("kv_cache_tokens", int(m.group(1)))
    if "max model len" in message and (m := _MAX_LEN_RE.search(message)):
        reader.fact("max_model_len", int(m.group(1)))
    if " backend" in message:
        if "MoE backend" in message and (m := _MOE_RE.search(message)):
            reader.fact("moe_backend", m.group(1))
        elif m := _ATTN_RE.search(message):
            reader.fact("attention_backend", m.group(1))
    if not reader.ready and any(map(message.__contains__, READY_MARKERS)):
        reader.ready = True


def _read_line(reader: _Reader, raw: str, lineno: int, marked: bool = True) -> None:
    """Read one line. ``marked`` False says the line holds none of ``_LINE_MARKERS``:
    what only those lead to is skipped."""
    if len(raw) > MAX_LINE_CHARS:
        long_line = any(map(raw[:MAX_LINE_CHARS].__contains__, CONFIG_MARKERS))
        line = _clean(raw, MAX_CONFIG_LINE_CHARS if long_line else MAX_LINE_CHARS)
    else:
        line = _clean(raw)
    level, source, message = _split(line)
    source = source or ""
    if source.startswith(VLLM_SOURCES) or (marked and any(map(message.__contains__, VLLM_MARKERS))):
        reader.vllm_hits += 1
    if marked and any(map(message.__contains__, SGLANG_MARKERS)):
        reader.sglang_hits += 1
    if level in ("WARNING", "WARN") or (level is None and _PY_WARNING_RE.search(message)):
        reader.warnings += 1
    is_error = level in ("ERROR", "CRITICAL") or (
        level is None and _EXCEPTION_RE.search(message) is not None
    )
    if is_error:
        reader.errors += 1
        if reader.first_error is None and not _is_traceback_structure(message):
            reader.first_error = message.strip()[:MAX_ERROR_CHARS]
            reader.first_error_line = lineno
    if _TRACEBACK_HEAD in message or reader.open_tracebacks:
        _track_traceback(reader, source, message, lineno)
    if marked:
        _read_facts(reader, message)


#: Levels of a line that, without a marker, only its tag can count for.
_QUIET_LEVELS: Final = frozenset(("INFO", "DEBUG"))


def _quiet_line(reader: _Reader, line: str) -> bool:
    """Read ``line`` and return True if it is quiet: short, holding no marker (the
    caller knows), no traceback open and none starting, and opened by a vLLM head
    (``_VLLM_HEAD_RE``: a process tag, then INFO or DEBUG). ``_read_line`` would find in
    it that tag and level, neither a warning nor an error, and nothing else to read: only
    the tag counts (a vLLM process's). False, nothing read, for any other line. The
    caller also knows that cleaning leaves the line as it is (no escape, no carriage
    return), so the head is matched where ``_split`` matches it."""
    if len(line) > MAX_LINE_CHARS or line[:1] != "(" or _TRACEBACK_HEAD in line:
        return False
    head = _VLLM_HEAD_RE.match(line)
    if head is None or head.group(2) not in _QUIET_LEVELS:
        return False
    tag = head.group(1)
    if "pid=" not in tag and "rank=" not in tag:
        return False
    if tag.startswith(VLLM_SOURCES):
        reader.vllm_hits += 1
    return True


def _marks(text: str) -> list[int] | None:
    """Where ``_LINE_MARKERS`` occur in ``text``, in order; None when every line must be
    read in full (an ANSI escape, removed from a line, may join the halves of one)."""
    if "\x1b" in text:
        return None
    found: list[int] = []
    for marker in _LINE_MARKERS:
        pos = text.find(marker)
        while pos >= 0:
            found.append(pos)
            pos = text.find(marker, pos + 1)
    found.sort()
    return found


def summarise_log(text: str) -> LogSummary:
    """Summarise a vLLM or SGLang server log (see ``LogSummary``). Never raises.

    The markers every fact is first tested for (``_LINE_MARKERS``) are looked for in the
    whole text at once (``str.find``, at C speed); a line holding none of them is read
    for its prefix, level, errors and tracebacks only, and a quiet one (a vLLM process
    tag at INFO or DEBUG, no traceback: most lines of a server log) for its tag alone
    (``_quiet_line``). A marker is found in a line's message only where it is in the
    line, so this reads what reading every line in full would."""
    reader = _Reader()
    marks = _marks(text)
    # No line of the text is changed by cleaning (no escape, no carriage return): a
    # quiet line (``_quiet_line``) may be read for its tag alone.
    plain = marks is not None and "\r" not in text
    mark = 0
    lines = 0
    start = 0
    n = len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            end = n
        lines += 1
        if end - start > 1 or reader.open_tracebacks or (end > start and text[start] != "\r"):
            if marks is None:
                marked = True
            else:
                while mark < len(marks) and marks[mark] < start:
                    mark += 1
                marked = mark < len(marks) and marks[mark] < end
            # empty lines only matter in tracebacks
            line = text[start:end]
            if marked or not plain or reader.open_tracebacks or not _quiet_line(reader, line):
                _read_line(reader, line, lines, marked)
        start = end + 1
    if reader.last_traceback is None and reader.open_tracebacks:
        latest = max(reader.open_tracebacks.values(), key=lambda tb: tb.line)
        reader.last_traceback = Traceback(latest.line, tuple(latest.lines), None)
    return _summary(reader, lines)


def _pick(*values: object) -> object:
    return next((v for v in values if v is not None), None)


def _summary(reader: _Reader, lines: int) -> LogSummary:
    args, config, sargs, facts = reader.args, reader.config, reader.server_args, reader.facts
    engine = None
    if reader.vllm_hits or reader.sglang_hits:
        engine = "vllm" if reader.vllm_hits >= reader.sglang_hits else "sglang"
    if sargs and not args and not config:
        engine = "sglang"

    def size(arg_key: str, config_key: str, sglang_key: str) -> int | None:
        value = _pick(
            _to_int(args.get(arg_key)),
            _to_int(config.get(config_key)),
            _to_int(sargs.get(sglang_key)),
        )
        return value if isinstance(value, int) else None

    spec = args.get("speculative_config")
    spec_map = spec if isinstance(spec, Mapping) else {}
    spec_method = _pick(
        _to_str(spec_map.get("method")),
        facts.get("spec_method"),
        _to_str(sargs.get("speculative_algorithm")),
    )
    spec_tokens = _pick(
        _to_int(spec_map.get("num_speculative_tokens")),
        facts.get("spec_tokens"),
        _to_int(sargs.get("speculative_num_steps")),
    )
    if spec_tokens is None and spec_method is None and reader.spec_off:
        spec_tokens = 0
    ep: bool | int | None = _to_int(sargs.get("ep_size"))
    if isinstance(args.get("enable_expert_parallel"), bool):
        ep = bool(args["enable_expert_parallel"])
    elif config.get("enable_expert_parallel") in ("True", "False"):
        ep = config["enable_expert_parallel"] == "True"
    served = args.get("served_model_name")
    if isinstance(served, list) and served:
        served = served[0]
    args_out = dict(args) if args else {k: v.strip("'\"") for k, v in sargs.items()}
    return LogSummary(
        lines=lines,
        engine=engine,
        version=_to_str(facts.get("version")),
        model=_to_str(
            _pick(
                args.get("model"),
                args.get("model_tag"),
                config.get("model"),
                facts.get("banner_model"),
                sargs.get("model_path"),
            )
        ),
        served_model_name=_to_str(_pick(served, sargs.get("served_model_name"))),
        tp=size("tensor_parallel_size", "tensor_parallel_size", "tp_size"),
        pp=size("pipeline_parallel_size", "pipeline_parallel_size", "pp_size"),
        dp=size("data_parallel_size", "data_parallel_size", "dp_size"),
        dcp=size("decode_context_parallel_size", "decode_context_parallel_size", "dcp_size"),
        ep=ep,
        spec_method=_to_str(spec_method),
        spec_tokens=spec_tokens if isinstance(spec_tokens, int) else None,
        attention_backend=_to_str(
            _pick(
                facts.get("attention_backend"),
                args.get("attention_backend"),
                sargs.get("attention_backend"),
            )
        ),
        moe_backend=_to_str(
            _pick(
                facts.get("moe_backend"),
                args.get("moe_backend"),
                sargs.get("moe_runner_backend"),
            )
        ),
        quantization=_to_str(
            _pick(args.get("quantization"), config.get("quantization"), sargs.get("quantization"))
        ),
        kv_cache_dtype=_to_str(
            _pick(
                args.get("kv_cache_dtype"),
                config.get("kv_cache_dtype"),
                sargs.get("kv_cache_dtype"),
            )
        ),
        kv_cache_tokens=_to_int(facts.get("kv_cache_tokens")),
        max_concurrency=_float_or_none(facts.get("max_concurrency")),
        max_model_len=_to_int(
            _pick(
                _to_int(args.get("max_model_len")),
                facts.get("max_model_len"),
                _to_int(config.get("max_seq_len")),
                _to_int(sargs.get("context_length")),
            )
        ),
        server_ready=reader.ready,
        warnings=reader.warnings,
        errors=reader.errors,
        first_error=reader.first_error,
        first_error_line=reader.first_error_line,
        last_traceback=reader.last_traceback,
        args=args_out,
        problems=tuple(dict.fromkeys(reader.problems)),
    )


def _float_or_none(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
