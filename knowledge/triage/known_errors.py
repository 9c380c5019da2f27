"""Known errors: signatures derived from the wiki's ``**Error**`` sections, matched in logs.

Every section of any page with an ``**Error**:`` paragraph is a known error. Its
signatures come from what that paragraph quotes, read by structure alone:

``error``      each inline code span of the paragraph and the first line of each code
               block after it that reads like an error (an exception name, or words such
               as *error*, *failed*, *illegal*, *not found*), plus later code-block lines
               that do. At least two words.
``message``    for an ``SomeError: message`` signature, the message alone (three words or
               more), so ``RuntimeError: CUDA error: ...`` finds a section written about
               ``torch.AcceleratorError: CUDA error: ...``.
``last-line``  a quote the prose places at the end of the log (*last log message:*,
               *nothing is logged after*, *hangs after* ...): it only matches the log's
               last line (short noise such as ``^C`` after it aside). A healthy
               startup prints such a line too, in the middle.
``phrase``     other quoted spans of two words or more (a flag such as
               ``--load-format fastsafetensors``): they only match on, or within
               ``CONTEXT_LINES`` of, a line that reports an error.
``prose``      when nothing is quoted: the first line of the paragraph itself.

Signatures and log lines are both put through ``logs.normalise_line`` (prefixes
gone, numbers, addresses and paths replaced) and cut into lower-case word tokens
(``<n>``-style placeholders kept); a signature matches when its token run appears in
the line's, where ``...`` in a signature is a gap that may also cut the word on either
side of it. Inline code is read from the page's Markdown (the parsed
:class:`~knowledge.wiki.model.Labelled` text does not show where code spans were); when
the file is gone or changed, the paragraph's first line stands in for it.

Matching is one pass: the log is lower-cased once, the signatures' rarest words (one
per signature, indexed once per wiki) that occur in it at all are found, and the lines
holding them are the few candidates; only those are normalised and compared. The
log's tail is read separately for ``last-line`` signatures.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from knowledge.jsonable import to_jsonable
from knowledge.triage.logs import MAX_LINE_CHARS, normalise_line, split_line
from knowledge.wiki import Labelled, Section, Wiki

__all__ = [
    "CONTEXT_LINES",
    "KINDS",
    "TAIL_LINES",
    "KnownError",
    "KnownErrorMatch",
    "KnownErrors",
    "MatchedLine",
    "Signature",
]

log = logging.getLogger(__name__)

KINDS: Final = ("error", "message", "last-line", "phrase", "prose")
#: Trailing noise lines (under two words) passed over before a log's last line, and
#: lines before it shown with a ``last-line`` match.
TAIL_LINES: Final = 3
#: Lines either side of an error line within which a ``phrase`` counts.
CONTEXT_LINES: Final = 3
#: Most matched lines kept per known error.
MAX_LINES_PER_MATCH: Final = 5
#: Most known errors reported for one request.
MAX_MATCHES: Final = 8
#: Longest fix summary, characters.
MAX_FIX_CHARS: Final = 300
#: Longest matched line shown, characters.
MAX_SHOWN_CHARS: Final = 300
#: Labels whose paragraph says what to do.
FIX_WORDS: Final = ("fix", "workaround", "solution", "resolution", "mitigation", "remedy")
#: Labels whose paragraph quotes the error.
ERROR_LABELS: Final = frozenset({"error", "errors"})
#: Words that make a quoted string read as an error report.
ERROR_WORDS: Final = (
    "error",
    "exception",
    "failed",
    "failure",
    "fatal",
    "assert",
    "abort",
    "illegal",
    "unsupported",
    "not found",
    "no module",
    "out of memory",
    "traceback",
    "segmentation",
    "killed",
    "cannot",
    "can't",
    "unable",
    "invalid",
    "refused",
    "timed out",
    "timeout",
    "missing",
    "unhandled",
    "panic",
    "denied",
    "mismatch",
)
#: Common log words never used as the word that selects candidate lines.
_COMMON: Final = """
    error errors exception failed failure fatal info warning debug cuda torch vllm sglang
    model models with from that this have been found using size memory backend config none
    true false line file python worker rank process server engine tensor value values
"""
COMMON_WORDS: Final = frozenset(_COMMON.split())

#: Distinct raw lines whose normalised form is remembered during one pass.
_MEMO_LINES: Final = 4096
#: Phrase candidates kept for the error-context check after the pass.
_MAX_PHRASE_LINES: Final = 256
_TOKEN_RE: Final = re.compile(r"<[a-z]+>|[a-z]+|[0-9]+")
_ERROR_NAME_RE: Final = re.compile(r"[A-Za-z_]\w*(?:Error|Exception)\b")
_TYPE_PREFIX_RE: Final = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*?(?:Error|Exception|Assertion\w*)|[A-Z][A-Za-z]{1,20} error)"
    r"\s*:\s*(.+)$"
)
_ELLIPSIS_RE: Final = re.compile(r"\.{3,}|…")
_TAIL_CONTEXT_RE: Final = re.compile(
    r"(?:last|final)\s+(?:log\s+)?(?:message|line|output|thing\s+logged)"
    r"|nothing\s+(?:else\s+)?(?:is\s+|gets\s+|was\s+)?(?:logged|printed|shown|written)\s+after"
    r"|no\s+(?:more\s+|further\s+)?(?:output|logs?|lines?)\s+after"
    r"|(?:hangs?|hung|stops?|stopped|stuck|freezes?|froze|stalls?|stalled)\s+(?:right\s+)?(?:after|at)"
    r"|never\s+(?:gets|goes|moves)\s+(?:past|beyond)",
    re.IGNORECASE,
)
_TAIL_PROSE_RE: Final = re.compile(
    r"(?:last|final)\s+(?:log\s+)?(?:message|line)\s*(?:is|was)?\s*[:\-]\s*(.+?)(?:\.(?:\s|$)|$)",
    re.IGNORECASE,
)
_ERROR_LINE_RE: Final = re.compile(
    r"\b(?:ERROR|CRITICAL|FATAL)\b|Traceback \(most recent|\w(?:Error|Exception)\b"
)


# --------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Signature:
    #: One of ``KINDS``.
    kind: str
    #: Normalised text the signature was made from (for display and tests).
    text: str
    #: Token runs, each ``" tok tok "``, to be found in this order.
    fragments: tuple[str, ...]
    #: Lower-case words that must all appear in a raw line before it is normalised.
    words: tuple[str, ...]
    #: The rarest of ``words``: selects candidate lines.
    key: str
    #: Word tokens in the signature (its specificity).
    size: int


@dataclass(frozen=True, slots=True)
class KnownError:
    page: str
    anchor: str
    title: str
    fix: str
    signatures: tuple[Signature, ...]

    @property
    def ref(self) -> str:
        return f"{self.page}#{self.anchor}" if self.anchor else self.page


@dataclass(frozen=True, slots=True)
class MatchedLine:
    #: 1-based line number in the field.
    number: int
    text: str


@dataclass(frozen=True, slots=True)
class KnownErrorMatch:
    page: str
    title: str
    fix: str
    field: str
    kind: str
    signature: str
    lines: tuple[MatchedLine, ...]
    score: float

    def to_json(self) -> dict[str, object]:
        return {
            "page": self.page,
            "title": self.title,
            "field": self.field,
            "kind": self.kind,
            "signature": self.signature,
            "lines": to_jsonable(self.lines),
            "fix": self.fix,
            "score": round(self.score, 3),
        }


# --------------------------------------------------------------------- deriving


def _tokens(normalised: str) -> list[str]:
    return _TOKEN_RE.findall(normalised.lower())


def _fragments(text: str) -> tuple[tuple[str, ...], ...]:
    """Token runs of a normalised signature; ``...`` gaps also cut the adjacent words."""
    pieces = _ELLIPSIS_RE.split(text)
    runs: list[tuple[str, ...]] = []
    for i, piece in enumerate(pieces):
        tokens = _tokens(piece)
        if i > 0 and tokens and not piece[:1].isspace():
            tokens = tokens[1:]
        if i < len(pieces) - 1 and tokens and not piece[-1:].isspace():
            tokens = tokens[:-1]
        if tokens:
            runs.append(tuple(tokens))
    return tuple(runs)


def _is_word(token: str) -> bool:
    return token[0].isalpha()


def _make(kind: str, raw: str, min_words: int) -> Signature | None:
    text = normalise_line(raw.strip())
    runs = _fragments(text)
    words = [t for run in runs for t in run if _is_word(t)]
    if len(words) < min_words:
        return None
    candidates = [w for w in words if len(w) >= 3] or words
    rare = [w for w in candidates if w not in COMMON_WORDS] or candidates
    key = max(rare, key=lambda w: (len(w), w))
    distinct = tuple(dict.fromkeys(w for w in words if len(w) >= 3))
    return Signature(
        kind=kind,
        text=text,
        fragments=tuple(" " + " ".join(run) + " " for run in runs),
        words=distinct,
        key=key,
        size=len(words),
    )


def _is_error_like(text: str) -> bool:
    if _ERROR_NAME_RE.search(text):
        return True
    lowered = text.lower()
    return any(word in lowered for word in ERROR_WORDS)


def _message_part(line: str) -> str | None:
    m = _TYPE_PREFIX_RE.match(line)
    return m.group(1) if m else None


@dataclass(frozen=True, slots=True)
class _Quote:
    """A code span of an Error paragraph and the prose right before it."""

    code: str
    before: str


def _sentence_tail(before: str) -> str:
    """The part of ``before`` after its last sentence end: the quote's own sentence."""
    cut = max(before.rfind(". "), before.rfind("! "), before.rfind("? "))
    return before[cut + 1 :] if cut >= 0 else before


def _fix_summary(section: Section, error: Labelled) -> str:
    seen_error = False
    for item in section.labelled:
        if item is error:
            seen_error = True
            continue
        if not seen_error:
            continue
        label = item.label.casefold()
        if any(word in label for word in FIX_WORDS):
            text = " ".join(item.text.split())
            if not text and item.code:
                text = item.code[0].strip().splitlines()[0] if item.code[0].strip() else ""
            if len(text) > MAX_FIX_CHARS:
                text = text[: MAX_FIX_CHARS - 1].rstrip() + "…"
            return text
    return ""


def _signatures(error: Labelled) -> list[Signature]:
    quotes = [_Quote(code, before) for code, before in error.quotes]
    made: list[Signature | None] = []

    def add_error(line: str) -> None:
        made.append(_make("error", line, 2))
        message = _message_part(line)
        if message is not None:
            made.append(_make("message", message, 3))

    for quote in quotes:
        if _TAIL_CONTEXT_RE.search(_sentence_tail(quote.before)):
            made.append(_make("last-line", quote.code, 2))
        elif _is_error_like(quote.code):
            add_error(quote.code)
        else:
            made.append(_make("phrase", quote.code, 2))
    for block in error.code:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        for index, line in enumerate(lines[:12]):
            if index == 0 or _is_error_like(line):
                add_error(line)
    if not any(made) and error.text.strip():
        first = error.text.strip().splitlines()[0]
        tail = _TAIL_PROSE_RE.search(first)
        if tail:
            made.append(_make("last-line", tail.group(1), 2))
        else:
            made.append(_make("prose", first[:MAX_LINE_CHARS], 4))
    unique: dict[tuple[str, tuple[str, ...]], Signature] = {}
    for signature in made:
        if signature is not None:
            unique.setdefault((signature.kind, signature.fragments), signature)
    return list(unique.values())


# --------------------------------------------------------------------- matching


@dataclass(slots=True)
class _Hit:
    entry: int
    signature: Signature
    lines: list[MatchedLine]


def _in_order(raw_lower: str, words: Sequence[str]) -> bool:
    """Every word in ``raw_lower``, in this order: needed before a line is worth normalising
    (normalising only removes and replaces text, it never reorders words)."""
    pos = 0
    for word in words:
        found = raw_lower.find(word, pos)
        if found < 0:
            return False
        pos = found + len(word)
    return True


def _lower_same_length(text: str) -> str:
    """``text`` lower-cased, keeping as they are the few characters whose lower case is
    longer (``İ``), so offsets into it are offsets into ``text``.

    The runs between such characters are lowered whole (a log of random bytes holds a
    few hundred of them): one character at a time, a 5 MB log took 400 MB.
    """
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    odd = sorted(c for c in set(text) if len(c.lower()) != 1)
    runs = re.compile("[^" + "".join(re.escape(c) for c in odd) + "]+")
    return runs.sub(lambda m: m.group().lower(), text)


def _contains(line_tokens: str, fragments: Sequence[str]) -> bool:
    pos = 0
    for fragment in fragments:
        found = line_tokens.find(fragment, pos)
        if found < 0:
            return False
        pos = found + len(fragment) - 1
    return True


def _shown(raw: str) -> str:
    text = " ".join(raw[: MAX_SHOWN_CHARS * 2].split())
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


class KnownErrors:
    """The known errors of one wiki and a matcher over them. Immutable once built."""

    def __init__(self, entries: Sequence[KnownError]) -> None:
        self.entries: tuple[KnownError, ...] = tuple(entries)
        self._by_key: dict[str, list[tuple[int, Signature]]] = {}
        self._tail: list[tuple[int, Signature]] = []
        for index, entry in enumerate(self.entries):
            for signature in entry.signatures:
                if signature.kind == "last-line":
                    self._tail.append((index, signature))
                else:
                    self._by_key.setdefault(signature.key, []).append((index, signature))

    @classmethod
    def from_wiki(cls, wiki: Wiki) -> KnownErrors:
        entries: list[KnownError] = []
        for page in wiki.pages.values():
            if not any(s.label(*ERROR_LABELS) for s in page.sections):
                continue
            for section in page.sections:
                errors = [
                    item for item in section.labelled if item.label.casefold() in ERROR_LABELS
                ]
                if not errors:
                    continue
                signatures = [sig for error in errors for sig in _signatures(error)]
                if not signatures:
                    continue
                title = (
                    section.title
                    if section.title == page.title
                    else (f"{page.title} › {section.title}")
                )
                entries.append(
                    KnownError(
                        page=page.path,
                        anchor=section.anchor,
                        title=title,
                        fix=_fix_summary(section, errors[0]),
                        signatures=tuple(signatures),
                    )
                )
        log.info(
            "known errors: %d sections, %d signatures",
            len(entries),
            sum(len(e.signatures) for e in entries),
        )
        return cls(entries)

    @property
    def signatures(self) -> Iterable[tuple[KnownError, Signature]]:
        for entry in self.entries:
            for signature in entry.signatures:
                yield entry, signature

    def match(self, text: str, field: str = "log", *, is_log: bool = True) -> list[KnownErrorMatch]:
        """Known errors whose signatures appear in ``text``, best first. Never raises."""
        if not text or not self.entries:
            return []
        hits: dict[tuple[int, str, tuple[str, ...]], _Hit] = {}
        try:
            self._scan(text, hits)
            if is_log:
                self._scan_tail(text, hits)
        except Exception:  # matching is advice: a bug here must not sink the triage
            log.exception("known-error matching failed on field %s", field)
        return self._results(hits, field)

    # -- the pass over every line ------------------------------------------------

    def _scan(self, text: str, hits: dict) -> None:
        if not self._by_key:
            return
        lowered = _lower_same_length(text)
        # Only the keys found anywhere in the text can select a line: most logs hold a
        # few of them or none, and each is looked for at C speed.
        keyed = [(key, sigs) for key, sigs in self._by_key.items() if key in lowered]
        if not keyed:
            return
        line_no = 1
        counted_to = 0
        phrase_lines: list[tuple[int, int, int, Signature, int]] = []
        seen: dict[str, str] = {}  # raw line -> normalised tokens (logs repeat themselves)
        full: set[int] = set()
        for start, end in _lines_with(lowered, [key for key, _ in keyed]):
            line_no += text.count("\n", counted_to, start)
            counted_to = start
            raw_lower = lowered[start : min(end, start + MAX_LINE_CHARS)]
            normalised: str | None = None
            for key, signatures in keyed:
                if key not in raw_lower:
                    continue
                for index, signature in signatures:
                    if id(signature) in full or not _in_order(raw_lower, signature.words):
                        continue
                    if normalised is None:
                        raw = text[start:end][:MAX_LINE_CHARS]
                        normalised = seen.get(raw)
                        if normalised is None:
                            if len(seen) >= _MEMO_LINES:
                                seen.clear()
                            normalised = " " + " ".join(_tokens(normalise_line(raw))) + " "
                            seen[raw] = normalised
                    if not _contains(normalised, signature.fragments):
                        continue
                    if signature.kind == "phrase":
                        if len(phrase_lines) < _MAX_PHRASE_LINES:
                            phrase_lines.append((start, end, line_no, signature, index))
                        continue
                    if self._record(hits, index, signature, line_no, text[start:end]):
                        full.add(id(signature))  # enough lines: later ones cost nothing
        for start, end, number, signature, index in phrase_lines:
            if _near_error(text, start, end):
                self._record(hits, index, signature, number, text[start:end])

    def _scan_tail(self, text: str, hits: dict) -> None:
        """``last-line`` signatures: the log's last substantive line must match; the same
        message just before it (other workers) is reported with it. Up to ``TAIL_LINES``
        trailing lines of under two words (``^C``, ``Killed``) are passed over."""
        if not self._tail:
            return
        tail: list[tuple[int, str, str]] = []  # (start offset, raw line, token string)
        skipped = 0
        end = len(text)
        while end > 0 and len(tail) < TAIL_LINES + 1:
            start = text.rfind("\n", 0, end) + 1
            line = text[start:end]
            end = start - 1
            if not line.strip():
                continue
            tokens = _tokens(normalise_line(line))
            if not tail and sum(1 for t in tokens if _is_word(t)) < 2 and skipped < TAIL_LINES:
                skipped += 1
                continue
            tail.append((start, line, " " + " ".join(tokens) + " "))
        if not tail:
            return
        first_number = text.count("\n", 0, tail[-1][0]) + 1
        for index, signature in self._tail:
            if not _contains(tail[0][2], signature.fragments):
                continue
            for start, line, tokens in reversed(tail):
                if _contains(tokens, signature.fragments):
                    number = first_number + text.count("\n", tail[-1][0], start)
                    self._record(hits, index, signature, number, line)

    @staticmethod
    def _record(hits: dict, index: int, signature: Signature, number: int, raw: str) -> bool:
        """Keep one matched line; True once the signature has all the lines it shows."""
        key = (index, signature.kind, signature.fragments)
        hit = hits.get(key)
        if hit is None:
            hit = hits[key] = _Hit(index, signature, [])
        if len(hit.lines) < MAX_LINES_PER_MATCH and all(x.number != number for x in hit.lines):
            hit.lines.append(MatchedLine(number, _shown(raw)))
        return len(hit.lines) >= MAX_LINES_PER_MATCH

    # -- ranking ------------------------------------------------------------------

    def _results(self, hits: dict, field: str) -> list[KnownErrorMatch]:
        weight = {"error": 1.0, "last-line": 0.9, "message": 0.8, "prose": 0.8, "phrase": 0.5}
        best: dict[int, tuple[float, _Hit]] = {}
        for hit in hits.values():
            score = weight.get(hit.signature.kind, 0.5) * min(1.0, 0.55 + 0.05 * hit.signature.size)
            current = best.get(hit.entry)
            if current is None or score > current[0]:
                if current is not None:
                    _merge_lines(hit, current[1])
                best[hit.entry] = (score, hit)
            else:
                _merge_lines(current[1], hit)
        ranked = sorted(best.values(), key=lambda item: (-item[0], item[1].entry))
        results = []
        for score, hit in ranked[:MAX_MATCHES]:
            entry = self.entries[hit.entry]
            lines = sorted(hit.lines, key=lambda line: line.number)[:MAX_LINES_PER_MATCH]
            results.append(
                KnownErrorMatch(
                    page=entry.ref,
                    title=entry.title,
                    fix=entry.fix,
                    field=field,
                    kind=hit.signature.kind,
                    signature=hit.signature.text,
                    lines=tuple(lines),
                    score=score,
                )
            )
        return results


def _merge_lines(into: _Hit, other: _Hit) -> None:
    numbers = {line.number for line in into.lines}
    for line in other.lines:
        if line.number not in numbers and len(into.lines) < MAX_LINES_PER_MATCH:
            into.lines.append(line)
            numbers.add(line.number)


def _lines_with(lowered: str, keys: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each line of ``lowered`` holding one of ``keys``, in order.
    Keys hold no line break; after a hit the rest of its line is not searched again."""
    lines: dict[int, int] = {}
    n = len(lowered)
    for key in keys:
        pos = lowered.find(key)
        while pos >= 0:
            start = lowered.rfind("\n", 0, pos) + 1
            end = lowered.find("\n", pos)
            end = n if end < 0 else end
            lines[start] = end
            pos = lowered.find(key, end)
    return sorted(lines.items())


def _near_error(text: str, start: int, end: int) -> bool:
    """True when the line at ``start:end`` or one within ``CONTEXT_LINES`` reports an error."""
    lo = start
    for _ in range(CONTEXT_LINES):
        if lo <= 0:
            break
        lo = text.rfind("\n", 0, lo - 1) + 1
    hi = end
    for _ in range(CONTEXT_LINES):
        if hi >= len(text):
            break
        nxt = text.find("\n", hi + 1)
        hi = len(text) if nxt < 0 else nxt
    window = text[lo : min(hi, lo + (2 * CONTEXT_LINES + 1) * MAX_LINE_CHARS)]
    for line in window.split("\n"):
        if _ERROR_LINE_RE.search(line[:MAX_LINE_CHARS]):
            level = split_line(line[:MAX_LINE_CHARS]).level
            if level not in ("INFO", "DEBUG", "WARNING"):
                return True
    return False
