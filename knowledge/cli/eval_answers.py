"""``wikibot eval --answers --llm-url URL --llm-model NAME REQUESTS.jsonl``: /ask, scored.

Every judged request (the file ``wikibot eval`` reads, :mod:`knowledge.evaluation`) is
asked through :class:`knowledge.llm.Asker` as ``/ask`` would ask it (the question, its
error lines as the log, its launch command), against whatever server the URL names.
Two figures: on the answerable requests, how often the answer's citations include an
expected page (a page-level match: ``path`` of any expected ``path#anchor``); on the
unanswerable ones, how often it declines (the ranking was not sure, so no model was
asked, or the model's answer cited none of the sections it was given). Failures are
counted by kind, and the median time of an answer is printed: a slow or failing server
shows as such, never as a wrong answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from knowledge.cli.ask_llm import add_llm_options, llm_settings
from knowledge.templates import load_templates

if TYPE_CHECKING:
    from knowledge.evaluation import EvalRequest
    from knowledge.llm import LlmSettings
    from knowledge.service import KnowledgeBase

__all__ = ["add_answer_options", "eval_answers", "score_answers"]


def add_answer_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--answers",
        action="store_true",
        help="score /ask (answers in words) against the server --llm-url names",
    )
    add_llm_options(parser)


def score_answers(
    kb: KnowledgeBase, requests: list[EvalRequest], settings: LlmSettings
) -> dict[str, Any]:
    """Ask every request, one at a time; the scores and each request's outcome."""
    from knowledge.llm import Asker

    t = load_templates("llm.yaml")
    state = kb.state

    async def ask_all() -> list[dict[str, Any]]:
        asker = Asker(settings, max_concurrent=1, templates=t)
        rows = []
        try:
            for request in requests:
                context = {"log": "\n".join(request.error_lines), "command": request.launch}
                plan = await asyncio.to_thread(asker.plan, state, request.question, context)
                outcome = await asker.answer(state, plan)
                cited = [s.ref for s in outcome.checked.cited] if outcome.checked else []
                expected = set(request.expected_paths)
                rows.append(
                    {
                        "id": request.id,
                        "answerable": request.answerable,
                        "status": outcome.status,
                        "reason": outcome.reason,
                        "cited": cited,
                        "given": [s.ref for s in plan.retrieval.sources],
                        "expected": list(request.expected),
                        "hit": any(ref.partition("#")[0] in expected for ref in cited),
                        "declined": outcome.status == "declined" or outcome.reason == "uncited",
                        "seconds": round(outcome.timings.get("total", 0.0), 3),
                    }
                )
        finally:
            await asker.aclose()
        return rows

    rows = asyncio.run(ask_all())
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    times = sorted(r["seconds"] for r in rows if r["status"] == "answered")
    failures = Counter(
        r["reason"] for r in rows if r["status"] == "fallback" and r["reason"] != "uncited"
    )
    return {
        "model": settings.model,
        "requests": len(rows),
        "answerable": len(answerable),
        "cited_expected": sum(r["hit"] for r in answerable),
        "answered": sum(r["status"] == "answered" for r in answerable),
        "unanswerable": len(unanswerable),
        "declined": sum(r["declined"] for r in unanswerable),
        "failures": dict(failures),
        "median_seconds": times[len(times) // 2] if times else None,
        "rows": rows,
    }


def eval_answers(args: argparse.Namespace, kb: KnowledgeBase, requests: list[EvalRequest]) -> int:
    """``wikibot eval --answers``: print the scores (``--json``: everything)."""
    t = load_templates("llm.yaml")
    settings = llm_settings(args)
    if settings is None:
        raise SystemExit(t("ask.eval.needs_url"))
    scores = score_answers(kb, requests, settings)
    if args.json:
        print(json.dumps(scores, ensure_ascii=False, indent=2))
        return 0
    if args.per_request:
        for row in scores["rows"]:
            print(
                t(
                    "ask.eval.line",
                    id=row["id"],
                    status=row["status"] + (f" ({row['reason']})" if row["reason"] else ""),
                    cited=", ".join(row["cited"]) or "-",
                    expected=", ".join(row["expected"]) or "-",
                )
            )
        print()
    median = scores["median_seconds"]
    print(
        t(
            "ask.eval.summary",
            model=scores["model"],
            requests=scores["requests"],
            answerable=scores["answerable"],
            cited=scores["cited_expected"],
            answered=scores["answered"],
            unanswerable=scores["unanswerable"],
            declined=scores["declined"],
            failures=", ".join(f"{k} {v}" for k, v in sorted(scores["failures"].items())) or "none",
            median=f"{median:.1f} s" if median is not None else "-",
        )
    )
    return 0
