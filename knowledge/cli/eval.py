"""``wikibot eval``: how often the bot points at the right pages, on judged help requests.

    wikibot eval [--wiki DIR] [--data DIR] [--json] [--verbose] REQUESTS.jsonl

Each request (JSON Lines, see :mod:`knowledge.evaluation`) goes through the two
code paths a newcomer reaches: the support triage (question as text, error
lines as log, launch as command) and ``/search`` with the question and its
error lines pasted in. Both are scored page-level: hit@1/3/5 and MRR@5 on the
answerable requests, declines on the unanswerable ones, and how often a
confident answer is right. ``--verbose`` adds one line per request; ``--json``
prints the scores and every request's outcome as one object.
"""

from __future__ import annotations

import argparse
import json
import sys
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
    load_requests,
    run,
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


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole}"


def _row(t: Templates, name: str, s: Scores) -> str:
    right = (
        t(
            "eval.right",
            right=s.confident_right,
            confident=s.confident,
            percent=round(100 * s.confident_right / s.confident),
        )
        if s.confident
        else "-"
    )
    return t(
        "eval.row",
        name=name.ljust(_NAME_WIDTH),
        hit1=_share(s.hit1, s.answerable),
        hit3=_share(s.hit3, s.answerable),
        hit5=_share(s.hit5, s.answerable),
        mrr=f"{s.mrr5:.2f}",
        declined=_share(s.declined, s.unanswerable) if s.has_confidence else "-",
        confident=_share(s.confident, s.answerable) if s.has_confidence else "-",
        right=right if s.has_confidence else "-",
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
        confident=t("eval.columns.confident"),
        right=t("eval.columns.right"),
    )


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


def _eval(args: argparse.Namespace) -> int:
    t = load_templates()
    try:
        requests = load_requests(args.requests)
    except EvalRequestError as exc:
        print(t("eval.bad_requests", problem=exc), file=sys.stderr)
        return 2
    if not requests:
        print(t("eval.no_requests", path=args.requests), file=sys.stderr)
        return 2
    kb = open_knowledge(args, t)
    if args.answers:  # answers in words, scored on a model server (knowledge.cli.eval_answers)
        from knowledge.cli.eval_answers import eval_answers

        try:
            return eval_answers(args, kb, requests)
        finally:
            kb.close()
    try:
        results = run(
            requests,
            {
                "triage": lambda r: triage_answer(kb, r),
                "search": lambda r: search_answer(kb, r),
            },
        )
    finally:
        kb.close()
    if args.json:
        data = {
            name: {"scores": scores.to_json(), "requests": [_outcome_json(o) for o in outcomes]}
            for name, (scores, outcomes) in results.items()
        }
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    if args.per_request:
        for name, (_, outcomes) in results.items():
            for outcome in outcomes:
                print(_line(t, name, outcome))
        print()
    answerable = sum(1 for r in requests if r.answerable)
    print(
        t(
            "eval.summary",
            requests=len(requests),
            answerable=answerable,
            unanswerable=len(requests) - answerable,
            wiki=kb.wiki_dir,
        )
    )
    print(_header(t))
    for name, (scores, _) in results.items():
        print(_row(t, name, scores))
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
    add_answer_options(parser)  # --answers --llm-url URL --llm-model NAME
    parser.add_argument("requests", type=Path, help="JSON Lines file of judged requests")
    parser.set_defaults(func=_eval)
