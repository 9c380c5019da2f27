"""Where the bot's memory goes: resident memory (RSS) after each stage of a start, then
in the steady state after a round of commands through the Discord stand-in.

    python -m benchmarks.memory_bench [--wiki DIR] [--scale N]

The index is built first in a process of its own, as a restart finds it; the measured
process then starts like ``wikibot serve``: imports, the wiki opened from the data
folder, the page ranker built, the support desk's triage context, the bot connected
(to the stand-in, its OpenAPI checks off so its schema is not counted), and a round of
``/search``, ``/acronym``, ``/runbook`` and a whole ``/support`` flow. Each line is the
RSS after a stage and what that stage added (MB, from ``/proc/self/status``). Targets
(issue "run it like a service"): steady state <= 160 MB on the snapshot, <= 450 MB at
10x. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
TARGETS_MB = {1: 160.0, 10: 450.0}
STANDIN = "the stand-in's modules (not the bot's)"
STEADY = "steady state after a round of commands"
#: Seconds between heartbeats in the measured bot.
BEAT = 1.0

__all__ = ["main"]


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Stages:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []

    def mark(self, name: str) -> None:
        self.rows.append((name, rss_mb()))

    def report(self) -> dict[str, float]:
        previous = 0.0
        out = {}
        for name, mb in self.rows:
            print(f"  {name:<44} {mb:7.1f} MB  (+{mb - previous:6.1f})")
            out[name] = round(mb, 1)
            previous = mb
        return out


def measure(wiki: Path, data: Path) -> dict[str, float]:
    stages = Stages()
    stages.mark("python")
    import numpy  # noqa: F401  (the page ranker's arrays)

    stages.mark("numpy")
    import discord  # noqa: F401
    from discord.ext import commands  # noqa: F401

    stages.mark("discord.py (and aiohttp)")
    from bot.client import WikiBot
    from bot.config import parse_config
    from knowledge.service import KnowledgeBase

    stages.mark("the bot's modules")
    # The stand-in shares this process: its modules are counted apart and left out of
    # the bot's figure below.
    from tests.bot.test_support import button_id, through_step_1, through_step_2
    from tests.discord_standin import DEFAULT_IDS, run_bot
    from tests.discord_standin.server import StandinConfig

    stages.mark(STANDIN)
    kb = KnowledgeBase.open(wiki, data)
    stages.mark("wiki opened (pages, glossary, index)")
    _ = kb.state.ranker
    stages.mark("page ranker built")
    _ = kb.triage_context
    stages.mark("triage context (support desk)")
    config = parse_config(
        {
            "discord": {"guild_ids": [DEFAULT_IDS.guild]},
            "wiki": {"path": str(wiki), "data_dir": str(data)},
            "cooldown": {"rate": 100, "per": 1},
            "support": {"forum_channel_id": DEFAULT_IDS.forum, "rate_count": 100},
        }
    )

    def factory(**kwargs: object) -> WikiBot:
        # Heartbeats each second instead of 30: the steady state is read after one.
        return WikiBot(config, knowledge=kb, heartbeat_interval=BEAT, **kwargs)

    async def scenario() -> None:
        standin_config = StandinConfig(check_spec=False)
        async with run_bot(factory, standin_config) as ds:
            await ds.client.get_cog("SupportCog").desk()
            stages.mark("bot connected")
            for query in ("nccl deadlock", "cuda graph capture", "flashinfer", "TP8 DCP4"):
                await ds.slash("search", query=query)
            await ds.slash("acronym", term="DCP")
            await ds.slash("runbook", model="glm")
            _, _, saved = await through_step_1(ds)
            _, check = await through_step_2(ds, saved)
            await ds.press(check, button_id(check, "File the ticket"))
            await ds.wait_for_request(lambda r: r.route == "create_thread")
            await ds.settle()
            # What the stand-in recorded (every request, the uploaded logs) is not the
            # bot's memory: dropped before the figure, like the stand-in's modules.
            for records in (ds.requests, ds.interactions, ds.messages, ds.threads, ds.files):
                records.clear()
            ds.gateway_received.clear()
            ds.gateway_sent.clear()
            gc.collect()
            await asyncio.sleep(2 * BEAT)  # a heartbeat (it trims the C heap) comes
            stages.mark(STEADY)

    asyncio.run(scenario())
    return stages.report()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)  # the measured child
    args = parser.parse_args(argv)
    if args.data is not None:  # the measured process: the index is there already
        figures = measure(args.wiki, args.data)
        print(json.dumps({"stages_mb": figures}))
        return 0
    with tempfile.TemporaryDirectory(prefix="wikibot-memory-") as tmp:
        wiki = args.wiki
        if args.scale > 1:
            from benchmarks.realistic_bench import scaled_wiki

            wiki = scaled_wiki(args.wiki, Path(tmp) / "wiki", args.scale)
        data = Path(tmp) / "data"
        build = "from knowledge.service import KnowledgeBase as K; import sys;"
        build += " K.open(sys.argv[1], sys.argv[2]).close()"
        subprocess.run([sys.executable, "-c", build, str(wiki), str(data)], check=True, cwd=ROOT)
        print(f"RSS of a bot start on {args.wiki} at {args.scale}x (index built beforehand):")
        child = [sys.executable, "-m", "benchmarks.memory_bench", "--wiki", str(wiki)]
        run = subprocess.run(
            [*child, "--data", str(data)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        sys.stdout.write("\n".join(line for line in run.stdout.splitlines() if line[:1] != "{"))
        print()
        if run.returncode:
            sys.stderr.write(run.stderr[-3000:])
            return run.returncode
        stages = json.loads(run.stdout.strip().splitlines()[-1])["stages_mb"]
        names = list(stages)
        standin = stages[STANDIN] - stages[names[names.index(STANDIN) - 1]]
        steady = stages[STEADY] - standin
        target = TARGETS_MB.get(args.scale)
        verdict = "" if target is None else f" (target <= {target:.0f} MB: "
        verdict += "" if target is None else ("met)" if steady <= target else "NOT met)")
        print(f"the bot's steady-state RSS: {steady:.1f} MB{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
