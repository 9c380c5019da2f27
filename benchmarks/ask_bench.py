"""/ask through the Discord stand-in, the model stand-in streaming at a fixed pace.

    python -m benchmarks.ask_bench [--wiki DIR] [--count N] [--pace SECONDS]
    python -m benchmarks --only ask        # the same, from the benchmark runner

The real bot (``llm.enabled``) runs against the loopback Discord stand-in, in one event
loop with it and the users; the model stand-in (``tests/llm_standin``) runs in a child
process, as a model server is another process, and streams its answer a word per
``--pace`` seconds. Figures, printed, never asserted:

- **first text visible**: from the moment the model server sent its first token to the
  moment the Discord stand-in received the edit showing text (both on the system's
  monotonic clock), at 1 and at 20 questions in flight (targets 300 ms and 1 s);
- **retrieval + prompt**: :meth:`knowledge.llm.Asker.plan` (the page ranking, the
  sections, the redaction, the messages), p50/p99 over every question (target p99
  30 ms);
- **loop stall**: how late a ticker in the bot's event loop woke while answers
  streamed (target: never more than 50 ms); the Discord stand-in shares that loop, so
  its work counts against the bot here;
- **edits per answer**: the message edits each answer took (paced at about one a second).

The questions are made from the wiki's structure (each page's section titles), kept
when the ranking is confident enough for a model to be asked: no question is written
for any page.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import multiprocessing
import re
import shutil
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from benchmarks.discord_bench import _LagMeter
from benchmarks.stats import percentile

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
TARGET_FIRST_1_MS = 300.0
TARGET_FIRST_20_MS = 1000.0
TARGET_PLAN_P99_MS = 30.0
TARGET_STALL_MS = 50.0
_QUESTION = re.compile(r"\nQuestion: (.*?)\n\nAnswer from", re.S)


def _model_server(conn: Connection, pace: float) -> None:
    """The child process: the model stand-in until told to stop, then what it served."""
    from tests.llm_standin import Behaviour, LlmStandin

    with LlmStandin(validate=False) as standin:
        standin.behaviour = Behaviour(pace=pace)
        conn.send(standin.url)
        conn.recv()  # "stop"
        served = []
        for s in standin.served:
            prompt = s.body["messages"][-1]["content"]
            found = _QUESTION.search(prompt)
            served.append((found.group(1) if found else "", s.first_token, s.tokens))
        conn.send(served)


def questions(kb: Any, asker: Any, limit: int) -> list[str]:
    """Questions from section titles (``title of page``), the confident ones only."""
    state = kb.state
    out: list[str] = []
    for page in sorted(state.wiki.pages.values(), key=lambda p: p.path):
        for section in page.sections[1:3]:
            if len(out) >= limit:
                return out
            question = f"{section.title} on {page.title}".strip()
            if question in out or len(question) < 12:
                continue
            if asker.plan(state, question).ask:
                out.append(question)
    return out


async def _run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    from bot.client import WikiBot
    from bot.config import parse_config
    from knowledge.service import KnowledgeBase
    from tests.discord_standin import DEFAULT_IDS, StandinConfig, run_bot

    data = Path(tempfile.mkdtemp(prefix="wikibot-ask-bench-"))
    try:
        kb = await asyncio.to_thread(KnowledgeBase.open, args.wiki, data)
        _ = await asyncio.to_thread(lambda: kb.state.ranker)
        config = parse_config(
            {
                "discord": {"guild_ids": [DEFAULT_IDS.guild], "thinking_after": 2.0},
                "wiki": {"path": str(args.wiki)},
                "cooldown": {"rate": 100, "per": 1},
                "llm": {
                    "enabled": True,
                    "base_url": url,
                    "model": "standin-model",
                    "max_concurrent": 64,
                    "cooldown_seconds": 0,
                },
            },
            name="bench",
        )

        def factory(**kwargs: Any) -> WikiBot:
            return WikiBot(config, knowledge=kb, **kwargs)

        standin_config = StandinConfig(wait_timeout=120.0, startup_timeout=60.0, check_spec=False)
        async with run_bot(factory, standin_config) as standin:
            asker = standin.client.get_cog("AskCog").asker
            asked = await asyncio.to_thread(questions, kb, asker, args.count)
            for q in asked:  # warm: each page's sections read from the page cache once
                asker.plan(kb.state, q)
            standin.client.settle_memory()
            plan_ms = []
            for _ in range(3):
                for q in asked:
                    started = time.perf_counter()
                    asker.plan(kb.state, q)
                    plan_ms.append((time.perf_counter() - started) * 1000)
            results: dict[str, Any] = {
                "questions": len(asked),
                "plan_ms": {
                    "p50": round(percentile(plan_ms, 0.5), 2),
                    "p99": round(percentile(plan_ms, 0.99), 2),
                    "max": round(max(plan_ms), 2),
                },
            }
            await _ask_all(standin, asked[:4], 4)  # warm-up: threads, connections
            standin.client.settle_memory()  # as the bot does after each load (gc.freeze)
            with _LagMeter() as idle:  # the machine's own noise: the bot idle for 2 s
                await asyncio.sleep(2.0)
            results["idle"] = idle.figures()
            for in_flight in (1, 20):
                with _LagMeter() as meter, _GcPauses() as gc_pauses:
                    cpu = time.process_time()
                    shown = await _ask_all(standin, asked, in_flight)
                    cpu = time.process_time() - cpu
                results[in_flight] = {
                    "shown": shown,
                    "lag": meter.figures(),
                    "gc_max_ms": gc_pauses.max_ms,
                    "cpu_ms_per_answer": round(cpu * 1000 / max(1, len(shown)), 1),
                }
            return results
    finally:
        shutil.rmtree(data, ignore_errors=True)


class _GcPauses:
    """The longest pause of the cyclic garbage collector while it is open (ms)."""

    def __init__(self) -> None:
        self.max_ms = 0.0
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.max_ms = max(self.max_ms, round((time.perf_counter() - self._started) * 1000, 2))

    def __enter__(self) -> _GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


async def _ask_all(standin: Any, asked: list[str], in_flight: int) -> list[tuple[str, float, int]]:
    """Ask every question, ``in_flight`` at a time; each: (question, first text shown at,
    edits)."""
    queue = list(asked)
    shown: list[tuple[str, float, int]] = []

    async def user() -> None:
        while queue:
            question = queue.pop()
            record = await standin.slash("ask", question=question)

            def final(r: Any) -> bool:
                embeds = (r.json or {}).get("embeds") or []
                return r.route == "webhook_message" and bool(embeds and embeds[0].get("fields"))

            await record.wait_for(final, timeout=120, what="the final edit")
            edits = [
                r for r in record.requests if r.route == "webhook_message" and r.method == "PATCH"
            ]
            first = next(
                (
                    r.at
                    for r in edits
                    if ((r.json or {}).get("embeds") or [{}])[0].get("description")
                ),
                float("nan"),
            )
            shown.append((question, first, len(edits)))

    await asyncio.gather(*(user() for _ in range(in_flight)))
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--count", type=int, default=40, help="questions per round")
    parser.add_argument("--pace", type=float, default=0.02, help="seconds between two tokens")
    args = parser.parse_args(argv)
    if not args.wiki.is_dir():
        print(f"ask_bench needs a wiki: {args.wiki} not found (use --wiki DIR)", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING)
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=_model_server, args=(child, args.pace), daemon=True
    )
    server.start()
    try:
        url = parent.recv()
        results = asyncio.run(_run(args, url))
        parent.send("stop")
        served = parent.recv()
    finally:
        server.join(10)
        if server.is_alive():
            server.kill()
    first_token: dict[str, list[float]] = {}
    for question, at, _ in served:
        first_token.setdefault(question, []).append(at)
    pace = args.pace * 1000
    print(f"wiki: {args.wiki}  questions: {results['questions']}  pace: {pace:.0f} ms/token")
    plan = results["plan_ms"]
    print(
        f"retrieval + prompt: p50 {plan['p50']} ms, p99 {plan['p99']} ms, max {plan['max']} ms"
        f"  (target p99 <= {TARGET_PLAN_P99_MS:.0f} ms)"
    )
    ok = plan["p99"] <= TARGET_PLAN_P99_MS
    idle = results["idle"]
    print(
        f"loop stall with the bot idle (this machine's noise): max {idle['max_lag_ms']} ms,"
        f" p99 {idle['p99_lag_ms']} ms"
    )
    for in_flight, target in ((1, TARGET_FIRST_1_MS), (20, TARGET_FIRST_20_MS)):
        round_ = results[in_flight]
        delays = []
        for question, shown_at, _ in round_["shown"]:
            # this round's request for the question: the last first token before it showed
            sent = max(
                (at for at in first_token.get(question, []) if at <= shown_at),
                default=float("nan"),
            )
            delays.append((shown_at - sent) * 1000)
        delays = [d for d in delays if d == d]
        edits = [e for _, _, e in round_["shown"]]
        lag = round_["lag"]
        print(
            f"{in_flight:>2} in flight: first text visible after the first token: "
            f"p50 {percentile(delays, 0.5):.0f} ms, p99 {percentile(delays, 0.99):.0f} ms, "
            f"max {max(delays, default=float('nan')):.0f} ms (target <= {target:.0f} ms); "
            f"edits per answer {min(edits)}-{max(edits)}; loop stall max {lag['max_lag_ms']} ms,"
            f" p99 {lag['p99_lag_ms']} ms (target <= {TARGET_STALL_MS:.0f} ms; longest GC pause"
            f" {round_['gc_max_ms']} ms); CPU {round_['cpu_ms_per_answer']} ms per answer"
            " (bot and Discord stand-in)"
        )
        ok = ok and max(delays, default=1e9) <= target and lag["max_lag_ms"] <= TARGET_STALL_MS
    print("targets:", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
