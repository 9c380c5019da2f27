"""Pasted questions: /search and triage on help requests of 300-1,000 characters.

    python -m benchmarks.pasted_bench [--wiki DIR] [--data DIR] [--questions N] [--runs N]

The questions are made at bench time from the wiki's own structure, so they fit
any version of it: each takes a section of a page (its heading, a run of its
words, a flag or identifier from its code, and the quote of an **Error**
paragraph when the page has one), a family name from the catalogue, and the
kind of chatter people wrap around a question, to a length drawn between 300 and
1,000 characters. Each question goes through ``/search`` as a pasted question
(ranked pages, snippets and the reply built) and through the support triage
(the question as text, its error line in a short log), ``--runs`` rounds of
``--questions`` questions, after the ranker is built and warmed as the bot does at
start. Every sample is a question of its own (``questions x runs`` are made, and
five more to warm up with): no memo or cache of the bot's answers a question it
has seen, so the figures are those of new questions. ``/search`` is timed first,
before the ranker alone is timed on the same question.
Targets on the real wiki: ``/search`` p99 <= 20 ms, triage p99 <= 50 ms.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from benchmarks.stats import peak_rss_mb, percentile

__all__ = ["DEFAULT_WIKI", "main", "make_questions", "run"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
MIN_CHARS: Final = 300
MAX_CHARS: Final = 1000
_WORD_RE: Final = re.compile(r"[A-Za-z][\w.\-]{2,}")
_IDENT_RE: Final = re.compile(r"--[a-z][\w\-]+|\b[A-Z][A-Z0-9]+_[A-Z0-9_]+\b")
#: Help-desk chatter around the question (no wiki text).
_OPENINGS: Final = (
    "Hi all, first time posting here, sorry if this is a dumb question.",
    "Hello! I have spent most of the weekend on this and I am stuck.",
    "Hey, quick question from someone new to these cards.",
    "Good morning, I followed the guide as closely as I could and still hit this.",
)
_FILLERS: Final = (
    "The machine is a fresh install with the latest driver and the container toolkit.",
    "I tried restarting the container and rebooting the host, no change.",
    "Everything else on the box works, only this part fails.",
    "I can share the full log and the exact command if that helps.",
    "Not sure whether this is a setting on my side or a known problem.",
    "It worked once last week and then stopped after an update.",
    "Other people in the thread seem to have similar setups.",
)
_CLOSINGS: Final = (
    "What am I missing?",
    "Any pointers appreciated, thanks!",
    "Is there a page that explains this?",
    "Thanks in advance for any help.",
)


def make_questions(wiki_dir: Path, count: int, seed: int = 7) -> list[tuple[str, list[str]]]:
    """``count`` (question, error lines) pairs made from ``wiki_dir``'s pages."""
    from knowledge.search.pages import label_word
    from knowledge.wiki import Catalogue, load_wiki

    wiki = load_wiki(wiki_dir)
    families = [f.name for f in Catalogue.from_wiki(wiki).families] or ["my model"]
    sections = [
        section
        for path in sorted(wiki.pages)
        for section in wiki.pages[path].sections
        if len(_WORD_RE.findall(section.text)) >= 20
    ]
    if not sections:
        raise SystemExit(f"no section of {wiki_dir} has 20 words to make a question from")
    with_errors = [s for s in sections if _error_quotes(s, label_word)]
    rng = random.Random(seed)
    questions = []
    for number in range(count):
        # every third question pastes the error an **Error** paragraph quotes
        pool = with_errors if with_errors and number % 3 == 0 else sections
        section = rng.choice(pool)
        words = _WORD_RE.findall(section.text)
        start = rng.randrange(max(1, len(words) - 12))
        idents = [i for block in section.code for i in _IDENT_RE.findall(block.text)]
        quotes = _error_quotes(section, label_word)
        parts = [
            rng.choice(_OPENINGS),
            f"I run {rng.choice(families)} on {rng.choice((2, 4, 8))} cards.",
            f"My problem is about {section.title.lower()}: "
            + " ".join(words[start : start + rng.randint(6, 12)])
            + ".",
        ]
        if idents:
            parts.append(f"I set {rng.choice(idents)} as the page says.")
        errors = [rng.choice(quotes)[:200]] if quotes else []
        # the question and its error line, pasted together, make 300 to 1,000 characters
        target = rng.randint(MIN_CHARS, MAX_CHARS) - sum(len(e) + 1 for e in errors)
        closing = rng.choice(_CLOSINGS)
        fillers = rng.sample(_FILLERS, len(_FILLERS))
        while fillers and len(" ".join(parts)) + len(closing) < target - 40:
            parts.append(fillers.pop())
        text = " ".join((*parts, closing))
        if len(text) < target:  # more of the page's words, as people paste them
            text += " " + " ".join(words[start:] + words[:start])[: target - len(text)]
        questions.append((text[:target], errors))
    return questions


def _error_quotes(section, label_word) -> list[str]:
    return [
        quote
        for item in section.labelled
        if label_word(item.label) == "error"
        for quote, _ in item.quotes
    ]


def _timed(samples: list[tuple[float, float]], func, *args) -> object:
    """Call ``func``; record (wall, CPU of this thread) milliseconds. On a shared
    machine the CPU figure is what the code costs, the wall figure what a user waits."""
    wall, cpu = time.perf_counter(), time.thread_time()
    result = func(*args)
    samples.append(((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000))
    return result


def run(
    wiki_dir: Path = DEFAULT_WIKI,
    data_dir: Path | None = None,
    *,
    questions: int = 100,
    runs: int = 3,
) -> dict[str, float]:
    """Milliseconds per figure (``*_ms``), the questions' sizes, and peak RSS in MB."""
    from knowledge.answers import is_pasted
    from knowledge.service import KnowledgeBase

    warm = 5
    made = make_questions(wiki_dir, questions * runs + warm)
    pasted = ["\n".join((text, *errors)) for text, errors in made]
    figures: dict[str, float] = {
        "questions": float(len(made) - warm),
        "distinct_questions": float(len(set(pasted[:-warm]))),
        "question_chars_min": float(min(len(q) for q in pasted)),
        "question_chars_max": float(max(len(q) for q in pasted)),
        "with_error_line": float(sum(1 for _, errors in made if errors)),
    }
    if not all(is_pasted(q) for q in pasted):
        raise SystemExit("a made question is not taken as pasted text: the bench is broken")
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(wiki_dir, data_dir or Path(tmp))
        try:
            started = time.perf_counter()
            ranker = kb.state.ranker  # the bot builds it at start
            figures["ranker_build_ms"] = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            context = kb.triage_context
            figures["triage_context_ms"] = (time.perf_counter() - started) * 1000
            for question in pasted[-warm:]:  # warm, as a running bot would be
                kb.search(question)
            rank: list[tuple[float, float]] = []
            search: list[tuple[float, float]] = []
            triage: list[tuple[float, float]] = []
            for (text, errors), question in zip(made[:-warm], pasted[:-warm], strict=True):
                reply = _timed(search, kb.search, question)
                _timed(rank, ranker.rank, text, errors)
                log = "\n".join(("INFO starting", *errors))
                _timed(triage, context.run, {"text": text, "log": log})
            if reply.kind != "search":
                raise SystemExit("a pasted question found nothing: the bench is broken")
            for name, pairs in (("rank", rank), ("search", search), ("triage", triage)):
                wall = [w for w, _ in pairs]
                cpu = [c for _, c in pairs]
                figures[f"{name}_p50_ms"] = statistics.median(wall)
                figures[f"{name}_p99_ms"] = percentile(wall, 0.99)
                figures[f"{name}_max_ms"] = max(wall)
                figures[f"{name}_cpu_p50_ms"] = statistics.median(cpu)
                figures[f"{name}_cpu_p99_ms"] = percentile(cpu, 0.99)
        finally:
            kb.close()
    figures["peak_rss_mb"] = peak_rss_mb()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--data", type=Path, default=None, help="index folder to reuse")
    parser.add_argument("--questions", type=int, default=100, help="questions per round")
    parser.add_argument("--runs", type=int, default=3, help="rounds, each of new questions")
    args = parser.parse_args(argv)
    if not args.wiki.is_dir():
        print(f"wiki not found: {args.wiki}", file=sys.stderr)
        return 2
    if args.questions < 1 or args.runs < 1:
        print("--questions and --runs must be at least 1", file=sys.stderr)
        return 2
    print(f"wiki: {args.wiki}; questions: {args.questions}; runs: {args.runs}")
    figures = run(args.wiki, args.data, questions=args.questions, runs=args.runs)
    width = max(map(len, figures))
    for name, value in figures.items():
        print(f"{name:<{width}}  {value:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
