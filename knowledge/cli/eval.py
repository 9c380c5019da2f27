"""``wikibot eval``: how often the bot points at the right pages, on judged help requests.

    wikibot eval [--wiki DIR] [--data DIR] [--json] [--verbose] [--calibration] REQUESTS.jsonl
    wikibot eval --set WIKI REQUESTS [--set WIKI REQUESTS ...] [options]

Each request (JSON Lines, see :mod:`knowledge.evaluation`) goes through the two
code paths a newcomer reaches: the support triage (question as text, error
lines as log, launch as command) and ``/search`` with the question and its
error lines pasted in. Both are scored page-level: hit@1/3/5 and MRR@5 on the
answerable requests, declines on the unanswerable ones, precision (confident
answers that are right, a confident answer to an unanswerable request counting
as wrong) and coverage (confident answers on the answerable requests). Several
sets, each judged against its own wiki, are printed one by one, then pooled.
``--calibration`` adds, per confidence word, how many answers carried it and how
many were right; ``--verbose`` adds one line per request; ``--json`` prints the
scores and every request's outcome as one object.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from knowledge.cli.eval_answers import add_answer_options
from knowledge.cli.options import add_wiki_options, open_knowledge
from knowledge.evaluation import (
    Answer,
    EvalRequest,
    EvalRequestError,
    Outcome,
    Scores,
    calibration,
    load_requests,
    run,
    score,
)
from knowledge.templates import Templates, load_templates

if TYPE_CHECKING:
    from knowledge.service import KnowledgeBase  # loaded by open_knowledge when it runs

__all__ = ["add_eval_command", "search_answer", "triage_answer"]

#: Width of the answerer's name in the table.
_NAME_WIDTH: Final = 8
#: Suggestions shown per request with ``--verbose``.
_SHOWN: Final = 5


def triage_answer(kb: KnowledgeBase, request: EvalRequest) -> Answer:
    """The support triage's suggestions for a request, best first, and its confidence."""
    result = kb.triage_context.run(
        {
            "text": request.question,
            "log": "\n".join(request.error_lines),
            "command": request.launch,
        }
    )
    return Answer(tuple(s.page for s in result.suggestions), result.confidence)


def search_answer(kb: KnowledgeBase, request: EvalRequest) -> Answer:
    """``/search`` with the question and its error lines pasted in, one per line."""
    reply = kb.search("\n".join(filter(None, (request.question, *request.error_lines))))
    ranked = reply.meta.get("ranked") or [p.path for p in reply.pages]
    return Answer(tuple(ranked), reply.meta.get("confidence"))


def _percent(part: int, whole: int) -> int:
    return round(100 * part / whole)


def _share(t: Templates, part: int, whole: int) -> str:
    return t("eval.share", part=part, whole=whole, percent=_percent(part, whole)) if whole else "-"


def _row(t: Templates, name: str, s: Scores) -> str:
    return t(
        "eval.row",
        name=name.ljust(_NAME_WIDTH),
        hit1=f"{s.hit1}/{s.answerable}",
        hit3=f"{s.hit3}/{s.answerable}",
        hit5=f"{s.hit5}/{s.answerable}",
        mrr=f"{s.mrr5:.2f}",
        declined=f"{s.declined}/{s.unanswerable}" if s.has_confidence else "-",
        precision=_share(t, s.confident_right, s.confident_all) if s.has_confidence else "-",
        coverage=_share(t, s.confident, s.answerable) if s.has_confidence else "-",
    )


def _header(t: Templates) -> str:
    return t(
        "eval.row",
        name="".ljust(_NAME_WIDTH),
        hit1=t("eval.columns.hit1"),
        hit3=t("eval.columns.hit3"),
        hit5=t("eval.columns.hit5"),
        mrr=t("eval.columns.mrr"),
        declined=t("eval.columns.declined"),
        precision=t("eval.columns.precision"),
        coverage=t("eval.columns.coverage"),
    )


def _calibration_rows(t: Templates, name: str, outcomes: Sequence[Outcome]) -> list[str]:
    return [
        t(
            "eval.calibration_row",
            name=name.ljust(_NAME_WIDTH),
            confidence=level.confidence,
            answers=level.answers,
            right=_share(t, level.right, level.answers),
            unanswerable=level.unanswerable,
        )
        for level in calibration(outcomes)
    ]


def _table(
    t: Templates,
    results: dict[str, tuple[Scores, list[Outcome]]],
    *,
    with_calibration: bool,
) -> list[str]:
    lines = [_header(t)]
    lines += [_row(t, name, scores) for name, (scores, _) in results.items()]
    if with_calibration:
        lines.append(t("eval.calibration_title"))
        for name, (_, outcomes) in results.items():
            lines += _calibration_rows(t, name, outcomes)
    return lines


def _line(t: Templates, name: str, o: Outcome) -> str:
    return t(
        "eval.verbose_line",
        id=o.id,
        name=name,
        rank=o.rank if o.rank is not None else "-",
        confidence=o.confidence or "-",
        given=", ".join(o.given[:_SHOWN]) or "-",
        expected=", ".join(o.expected) or t("eval.none_expected"),
    )


def _outcome_json(o: Outcome) -> dict[str, object]:
    return {
        "id": o.id,
        "rank": o.rank,
        "confidence": o.confidence,
        "confident": o.confident,
        "given": list(o.given[:_SHOWN]),
        "expected": list(o.expected),
    }


@dataclass(frozen=True, slots=True)
class _Set:
    """One request file judged against one wiki, and what both answerers did on it."""

    requests_file: Path
    requests: list[EvalRequest]
    wiki: Path
    results: dict[str, tuple[Scores, list[Outcome]]]


def _named_sets(args: argparse.Namespace) -> list[tuple[Path | None, Path]]:
    """(wiki, requests) pairs: the positional file on ``--wiki`` first, then each ``--set``."""
    sets: list[tuple[Path | None, Path]] = []
    if args.requests is not None:
        sets.append((args.wiki, args.requests))
    sets += [(Path(wiki), Path(requests)) for wiki, requests in args.sets or ()]
    return sets


def _run_set(
    args: argparse.Namespace,
    t: Templates,
    wiki: Path | None,
    data: Path | None,
    requests: list[EvalRequest],
) -> tuple[Path, dict[str, tuple[Scores, list[Outcome]]]]:
    kb = open_knowledge(argparse.Namespace(**{**vars(args), "wiki": wiki, "data": data}), t)
    try:
        return kb.wiki_dir, run(
            requests,
            {
                "triage": lambda r: triage_answer(kb, r),
                "search": lambda r: search_answer(kb, r),
            },
        )
    finally:
        kb.close()


def _pooled(sets: Sequence[_Set]) -> dict[str, tuple[Scores, list[Outcome]]]:
    names = list(sets[0].results)
    pooled: dict[str, tuple[Scores, list[Outcome]]] = {}
    for name in names:
        outcomes = [o for s in sets for o in s.results[name][1]]
        pooled[name] = (score(outcomes), outcomes)
    return pooled


def _results_json(
    results: dict[str, tuple[Scores, list[Outcome]]], *, with_requests: bool
) -> dict[str, object]:
    data: dict[str, object] = {}
    for name, (scores, outcomes) in results.items():
        entry: dict[str, object] = {
            "scores": scores.to_json(),
            "calibration": [level.to_json() for level in calibration(outcomes)],
        }
        if with_requests:
            entry["requests"] = [_outcome_json(o) for o in outcomes]
        data[name] = entry
    return data


def _summary(t: Templates, requests: Sequence[EvalRequest], wiki: Path) -> str:
    answerable = sum(1 for r in requests if r.answerable)
    return t(
        "eval.summary",
        requests=len(requests),
        answerable=answerable,
        unanswerable=len(requests) - answerable,
        wiki=wiki,
    )


def _set_data(data: Path | None, number: int, sets: int) -> Path | None:
    """The data folder of set ``number``: with several sets and one ``--data``, each
    keeps its index in a sub-folder of its own."""
    return data / f"set-{number}" if data is not None and sets > 1 else data


def _eval_answers(
    args: argparse.Namespace,
    t: Templates,
    loaded: Sequence[tuple[Path | None, Path, list[EvalRequest]]],
) -> int:
    """``--answers``: each set's requests asked through ``/ask`` on its own wiki."""
    from knowledge.cli.eval_answers import eval_answers

    worst = 0
    for number, (wiki, path, requests) in enumerate(loaded, start=1):
        if len(loaded) > 1:
            print(t("eval.set_title", number=number, requests_file=path))
        namespace = {**vars(args), "wiki": wiki, "data": _set_data(args.data, number, len(loaded))}
        kb = open_knowledge(argparse.Namespace(**namespace), t)
        try:
            worst = max(worst, eval_answers(args, kb, requests))
        finally:
            kb.close()
    return worst


def _eval(args: argparse.Namespace) -> int:
    t = load_templates()
    named = _named_sets(args)
    if not named:
        print(t("eval.no_sets"), file=sys.stderr)
        return 2
    loaded: list[tuple[Path | None, Path, list[EvalRequest]]] = []
    for wiki, path in named:
        try:
            requests = load_requests(path)
        except EvalRequestError as exc:
            print(t("eval.bad_requests", problem=exc), file=sys.stderr)
            return 2
        if not requests:
            print(t("eval.no_requests", path=path), file=sys.stderr)
            return 2
        loaded.append((wiki, path, requests))
    if args.answers:  # answers in words, scored on a model server (knowledge.cli.eval_answers)
        return _eval_answers(args, t, loaded)
    sets: list[_Set] = []
    for number, (wiki, path, requests) in enumerate(loaded, start=1):
        data = _set_data(args.data, number, len(loaded))
        wiki_dir, results = _run_set(args, t, wiki, data, requests)
        sets.append(_Set(path, requests, wiki_dir, results))
    pooled = _pooled(sets) if len(sets) > 1 else None
    if args.json:
        data_json: dict[str, object] = {
            "sets": [
                {
                    "wiki": str(s.wiki),
                    "requests": str(s.requests_file),
                    "answerers": _results_json(s.results, with_requests=True),
                }
                for s in sets
            ]
        }
        if pooled is not None:
            data_json["pooled"] = _results_json(pooled, with_requests=False)
        print(json.dumps(data_json, ensure_ascii=False, indent=2))
        return 0
    if args.per_request:
        for s in sets:
            for name, (_, outcomes) in s.results.items():
                for outcome in outcomes:
                    print(_line(t, name, outcome))
        print()
    for number, s in enumerate(sets, start=1):
        if len(sets) > 1:
            print(t("eval.set_title", number=number, requests_file=s.requests_file))
        print(_summary(t, s.requests, s.wiki))
        print("\n".join(_table(t, s.results, with_calibration=args.calibration)))
        print()
    if pooled is not None:
        all_requests = [r for s in sets for r in s.requests]
        answerable = sum(1 for r in all_requests if r.answerable)
        print(
            t(
                "eval.pooled_summary",
                sets=len(sets),
                requests=len(all_requests),
                answerable=answerable,
                unanswerable=len(all_requests) - answerable,
            )
        )
        print("\n".join(_table(t, pooled, with_calibration=args.calibration)))
        print()
    print(t("eval.legend"))
    return 0


def add_eval_command(sub: argparse._SubParsersAction) -> None:
    """Register ``wikibot eval`` on the ``wikibot`` sub-command parser."""
    parser = sub.add_parser(
        "eval",
        help="score triage and /search on judged help requests (JSON Lines)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_wiki_options(parser)
    parser.add_argument("--json", action="store_true", help="print scores and outcomes as JSON")
    parser.add_argument(
        "--verbose",
        dest="per_request",  # not `verbose`: wikibot's own --verbose sets the log level
        action="store_true",
        help="one line per request: rank, confidence, given and expected pages",
    )
    parser.add_argument(
        "--calibration",
        action="store_true",
        help="for each confidence word: how many answers carried it, how many were right",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        nargs=2,
        metavar=("WIKI", "REQUESTS"),
        help="a request file judged against that wiki folder (repeatable; pooled after)",
    )
    add_answer_options(parser)  # --answers --llm-url URL --llm-model NAME
    parser.add_argument(
        "requests",
        type=Path,
        nargs="?",
        default=None,
        help="JSON Lines file of judged requests (on --wiki, or the default wiki)",
    )
    parser.set_defaults(func=_eval)
