"""Solved tickets that answer a new question: "a similar ticket was solved".

A ticket marked solved with the message that solved it (its answer) is kept as a
:class:`SolvedAnswer`: the question as filed, the answer, a link to the thread, all
redacted. :class:`SimilarTickets` finds the solved questions nearest a new request:
TF-IDF weights (word frequencies dampened by ``1 + log``, rarity learnt from the
wiki's sections plus the solved questions, so "vllm" or "the" weigh little and
"p2pbandwidthlatencytest" much) and the cosine of the two vectors. Only a solved
ticket at or above ``threshold`` is offered: an unrelated one costs the reader more
than none.

Plain Python, no index: a desk holds a few hundred solved tickets, and one request
is compared with each in well under a millisecond apiece.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knowledge.text import fold_key

if TYPE_CHECKING:
    from knowledge.wiki import Wiki

__all__ = [
    "DEFAULT_THRESHOLD",
    "IN_WIKI",
    "Corpus",
    "SimilarTickets",
    "SolvedAnswer",
    "nearest_sections",
    "not_in_wiki",
    "terms",
]

#: The least cosine at which a solved ticket is offered (see the measurement in
#: ``benchmarks/similar_tickets.py``).
DEFAULT_THRESHOLD = 0.3
#: The least cosine between an answer and a wiki section for the answer to count as
#: already in the wiki (a section's own text scores 1).
IN_WIKI = 0.5
#: Longest text read from a request or a solved question, characters.
MAX_TEXT = 8000


@dataclass(frozen=True, slots=True)
class SolvedAnswer:
    """A solved ticket's question and the answer marked as solving it (redacted)."""

    ticket_id: int
    title: str
    question: str
    answer: str
    #: The thread's (or the answer message's) URL on Discord, or "".
    url: str = ""
    at: float = 0.0


def terms(text: str) -> list[str]:
    """The words of ``text`` as the comparison sees them: folded (case, accents, width),
    split at anything but letters, digits, ``.`` and ``+``; single characters dropped."""
    return [w for w in fold_key(text[:MAX_TEXT]).split() if len(w) > 1]


def _vector(words: Iterable[str], idf: dict[str, float], default: float) -> dict[str, float]:
    counts = Counter(words)
    vector = {w: (1.0 + math.log(n)) * idf.get(w, default) for w, n in counts.items()}
    norm = math.sqrt(sum(v * v for v in vector.values()))
    return {w: v / norm for w, v in vector.items()} if norm else {}


@dataclass(frozen=True, slots=True)
class Corpus:
    """How many documents of a corpus hold each word: counted once (the wiki's sections
    change only with the wiki), shared by every :class:`SimilarTickets` built on it."""

    frequency: Counter[str]
    size: int

    @classmethod
    def of(cls, texts: Iterable[str]) -> Corpus:
        frequency: Counter[str] = Counter()
        size = 0
        for text in texts:
            frequency.update(set(terms(text)))
            size += 1
        return cls(frequency, size)


class SimilarTickets:
    """The solved tickets nearest a request. ``corpus``: texts that teach how common a
    word is (the wiki's sections, or their :class:`Corpus`); the solved questions are
    added to them."""

    def __init__(
        self,
        answers: Sequence[SolvedAnswer],
        corpus: Corpus | Iterable[str] = (),
        *,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.answers = tuple(answers)
        self.threshold = threshold
        counted = corpus if isinstance(corpus, Corpus) else Corpus.of(corpus)
        questions = [terms(f"{a.title}\n{a.question}") for a in self.answers]
        frequency = Counter(counted.frequency)
        for question in questions:
            frequency.update(set(question))
        total = counted.size + len(questions)
        self._idf = {w: math.log((total + 1) / (n + 1)) + 1.0 for w, n in frequency.items()}
        self._unseen = math.log(total + 1) + 1.0  # a word no document has: the rarest
        self._vectors = [_vector(q, self._idf, self._unseen) for q in questions]

    def scores(self, text: str) -> list[tuple[SolvedAnswer, float]]:
        """Every solved ticket with its cosine to ``text``, best first."""
        query = _vector(terms(text), self._idf, self._unseen)
        out = [
            (answer, sum(weight * vector.get(word, 0.0) for word, weight in query.items()))
            for answer, vector in zip(self.answers, self._vectors, strict=True)
        ]
        out.sort(key=lambda pair: (-pair[1], pair[0].ticket_id))
        return out

    def find(self, text: str, limit: int = 1) -> list[tuple[SolvedAnswer, float]]:
        """The solved tickets at or above the threshold, best first, at most ``limit``."""
        return [(a, s) for a, s in self.scores(text)[:limit] if s >= self.threshold]


def nearest_sections(
    answers: Sequence[SolvedAnswer], sections: Sequence[tuple[str, str]]
) -> list[tuple[SolvedAnswer, str, float]]:
    """Each answer with the wiki section (``path#anchor``) whose text is nearest it and
    their cosine: an answer far from every section (below :data:`IN_WIKI`) is a
    candidate for a page. ``sections``: (reference, text) pairs."""
    if not sections:
        return [(answer, "", 0.0) for answer in answers]
    as_answers = [SolvedAnswer(i, "", text, "") for i, (_, text) in enumerate(sections)]
    finder = SimilarTickets(as_answers, threshold=0.0)
    out = []
    for answer in answers:
        best, score = finder.scores(answer.answer)[0]
        out.append((answer, sections[best.ticket_id][0], score))
    return out


def not_in_wiki(
    answers: Sequence[SolvedAnswer], wiki: Wiki
) -> list[tuple[SolvedAnswer, str, float]]:
    """The answers no section of ``wiki`` is near (below :data:`IN_WIKI`), each with the
    nearest section and its cosine: candidates for a page."""
    sections = [
        (f"{path}#{s.anchor}", f"{s.title}\n{s.text}")
        for path, page in wiki.pages.items()
        for s in page.sections
    ]
    return [row for row in nearest_sections(answers, sections) if row[2] < IN_WIKI]
