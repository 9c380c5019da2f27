"""Scoring the bot's answers against help requests judged by hand.

A request file is JSON Lines, one object per request with ``id``, ``question``,
``error_lines`` (a list), ``launch`` and ``expected_pages`` (wiki paths, best
first, optionally with ``#anchor``; an empty list means the wiki holds nothing
that answers it). Each request runs through two answerers (the support triage
and ``/search`` with the pasted text); each answers with a ranked list of pages
and a confidence. The scores are page-level: a suggestion is a hit when its path
(the part before ``#``) is one of the expected paths.

- hit@1, hit@3, hit@5 and MRR@5 over the answerable requests;
- on the unanswerable ones, how often the answerer says it is not confident;
- on the answerable ones, how often it is confident, and how often a confident
  answer is right (a hit within the first three);
- **precision**: confident answers that are right over all confident answers,
  a confident answer to an unanswerable request counting as wrong;
- **coverage**: confident answers on answerable requests over the answerable
  requests;
- calibration: for each confidence word, how many answers carried it and how
  many of those were right.

Several request sets (each judged against its own wiki) are scored apart and
pooled: :func:`score` over the outcomes of all of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CONFIDENT",
    "LEVELS",
    "Answer",
    "EvalRequest",
    "EvalRequestError",
    "Level",
    "Outcome",
    "Scores",
    "calibration",
    "load_requests",
    "parse_requests",
    "run",
    "score",
]

#: Confidence words that count as "the bot is confident".
CONFIDENT: Final = frozenset({"high", "medium"})
#: Confidence words in the order calibration lists them (unknown words come after).
LEVELS: Final = ("high", "medium", "low", "none")
#: Caps on a request file (it is user input like any other).
MAX_FILE_BYTES: Final = 8 * 1024 * 1024
MAX_REQUESTS: Final = 5_000
MAX_FIELD_CHARS: Final = 20_000
MAX_ERROR_LINES: Final = 20
MAX_EXPECTED: Final = 20


class EvalRequestError(ValueError):
    """A request file that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class EvalRequest:
    id: str
    question: str
    error_lines: tuple[str, ...] = ()
    launch: str = ""
    expected: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        return bool(self.expected)

    @property
    def expected_paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(ref.partition("#")[0] for ref in self.expected))


@dataclass(frozen=True, slots=True)
class Answer:
    """What one answerer said: pages best first (paths or path#anchor) and a confidence."""

    pages: tuple[str, ...]
    confidence: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    id: str
    expected: tuple[str, ...]
    given: tuple[str, ...]
    #: 1-based rank of the first expected page among the first five; None if absent.
    rank: int | None
    confidence: str | None

    @property
    def confident(self) -> bool:
        return self.confidence in CONFIDENT

    @property
    def right(self) -> bool:
        """An expected page within the first three (never, for an unanswerable request)."""
        return self.rank is not None and self.rank <= 3


@dataclass(frozen=True, slots=True)
class Scores:
    answerable: int
    hit1: int
    hit3: int
    hit5: int
    mrr5: float
    unanswerable: int
    #: Unanswerable requests on which the answerer was not confident.
    declined: int
    #: Answerable requests on which it was confident, and of those, right at 3.
    confident: int
    confident_right: int
    #: False when the answerer gives no confidence at all.
    has_confidence: bool = True

    @property
    def confident_all(self) -> int:
        """Confident answers on every request, answerable or not."""
        return self.confident + self.unanswerable - self.declined

    @property
    def precision(self) -> float | None:
        """Right confident answers over all confident ones (None without any)."""
        if not self.has_confidence or not self.confident_all:
            return None
        return self.confident_right / self.confident_all

    @property
    def coverage(self) -> float | None:
        """Confident answers on answerable requests over the answerable requests."""
        if not self.has_confidence or not self.answerable:
            return None
        return self.confident / self.answerable

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["precision"] = None if self.precision is None else round(self.precision, 4)
        data["coverage"] = None if self.coverage is None else round(self.coverage, 4)
        return data


@dataclass(frozen=True, slots=True)
class Level:
    """How many answers carried one confidence word, and how many of them were right."""

    confidence: str
    answers: int
    right: int
    #: Of the answers, those on unanswerable requests (never right).
    unanswerable: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: object, where: str, key: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EvalRequestError(f"{where}: `{key}` must be text")
    return value[:MAX_FIELD_CHARS]


def _texts(value: object, where: str, key: str, limit: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EvalRequestError(f"{where}: `{key}` must be a list of texts")
    return tuple(v[:MAX_FIELD_CHARS] for v in value[:limit])


def parse_requests(lines: Iterable[str], source: str = "<requests>") -> list[EvalRequest]:
    """Requests from JSON Lines text; blank lines are skipped."""
    requests: list[EvalRequest] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        if len(requests) >= MAX_REQUESTS:
            raise EvalRequestError(f"{where}: more than {MAX_REQUESTS} requests")
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise EvalRequestError(f"{where}: not JSON ({exc.__class__.__name__})") from None
        if not isinstance(data, dict):
            raise EvalRequestError(f"{where}: each line must be a JSON object")
        ident = _text(data.get("id"), where, "id").strip()[:100] or f"line-{number}"
        if ident in seen:
            raise EvalRequestError(f"{where}: the id {ident!r} is used twice")
        seen.add(ident)
        question = _text(data.get("question"), where, "question")
        errors = _texts(data.get("error_lines"), where, "error_lines", MAX_ERROR_LINES)
        if not question.strip() and not any(e.strip() for e in errors):
            raise EvalRequestError(f"{where}: `question` is empty")
        requests.append(
            EvalRequest(
                id=ident,
                question=question,
                error_lines=errors,
                launch=_text(data.get("launch"), where, "launch"),
                expected=_texts(data.get("expected_pages"), where, "expected_pages", MAX_EXPECTED),
            )
        )
    return requests


def load_requests(path: Path) -> list[EvalRequest]:
    """Requests from a JSON Lines file (a regular file of at most 8 MB)."""
    try:
        if not path.is_file():
            raise EvalRequestError(f"{path}: no such file")
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise EvalRequestError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise EvalRequestError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalRequestError(f"{path}: not UTF-8 text") from None
    return parse_requests(text.splitlines(), str(path))


def _pages(refs: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ref.partition("#")[0] for ref in refs if ref))


def outcome(request: EvalRequest, answer: Answer) -> Outcome:
    given = _pages(answer.pages)
    wanted = set(request.expected_paths)
    rank = next((i for i, path in enumerate(given[:5], start=1) if path in wanted), None)
    return Outcome(request.id, request.expected_paths, given, rank, answer.confidence)


def score(outcomes: Sequence[Outcome]) -> Scores:
    answerable = [o for o in outcomes if o.expected]
    unanswerable = [o for o in outcomes if not o.expected]
    ranks = [o.rank for o in answerable]
    confident = [o for o in answerable if o.confident]
    return Scores(
        answerable=len(answerable),
        hit1=sum(1 for r in ranks if r == 1),
        hit3=sum(1 for r in ranks if r is not None and r <= 3),
        hit5=sum(1 for r in ranks if r is not None),
        mrr5=round(sum(1 / r for r in ranks if r) / len(answerable), 4) if answerable else 0.0,
        unanswerable=len(unanswerable),
        declined=sum(1 for o in unanswerable if not o.confident),
        confident=len(confident),
        confident_right=sum(1 for o in confident if o.right),
        has_confidence=any(o.confidence is not None for o in outcomes),
    )


def calibration(outcomes: Sequence[Outcome]) -> list[Level]:
    """Per confidence word (:data:`LEVELS` first, then any other in order of
    appearance; an answer without one counts as ``none``): answers and right ones."""
    words = [o.confidence or "none" for o in outcomes]
    order = [w for w in LEVELS if w in words] + [w for w in dict.fromkeys(words) if w not in LEVELS]
    return [
        Level(
            confidence=word,
            answers=sum(1 for w in words if w == word),
            right=sum(1 for w, o in zip(words, outcomes, strict=True) if w == word and o.right),
            unanswerable=sum(
                1 for w, o in zip(words, outcomes, strict=True) if w == word and not o.expected
            ),
        )
        for word in order
    ]


def run(
    requests: Sequence[EvalRequest],
    answerers: dict[str, Callable[[EvalRequest], Answer]],
) -> dict[str, tuple[Scores, list[Outcome]]]:
    """Every request through every answerer; scores and outcomes per answerer."""
    results: dict[str, tuple[Scores, list[Outcome]]] = {}
    for name, answer in answerers.items():
        outcomes = [outcome(request, answer(request)) for request in requests]
        results[name] = (score(outcomes), outcomes)
    return results
