"""Run every benchmark and print its figures: ``make bench`` / ``python -m benchmarks``.

``make bench SCALE=10`` (``--scale 10``) runs the realistic and memory benchmarks alone
on ten copies of the wiki (see :mod:`benchmarks.realistic_bench`).

Each area runs in its own process, so its peak RSS is its own. Figures are
printed, never asserted: these machines are too noisy for timed tests.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"

#: (module, what it measures, takes --wiki)
AREAS = [
    ("benchmarks.search_bench", "index build and search", True),
    ("benchmarks.realistic_bench", "realistic queries: ratios to plain whoosh-ng, targets", True),
    ("benchmarks.knowledge_bench", "warm start, /runbook, /acronym, /search, RSS", True),
    ("benchmarks.triage_parts_bench", "redaction, log summary, launch parsing", False),
    ("benchmarks.redaction_bench", "disguised-secret leaks, credential-like masks", False),
    ("benchmarks.triage_bench", "triage of requests and logs", True),
    ("benchmarks.pasted_bench", "/search and triage on pasted questions (300-1,000 chars)", True),
    ("benchmarks.discord_bench", "end to end through the Discord stand-in", True),
    ("benchmarks.support_bench", "/support as met: one flow at a time, a burst of 50", True),
    ("benchmarks.fetch_bench", "fetching and following the wiki over loopback HTTP", True),
    ("benchmarks.lint_bench", "wikibot lint on the whole wiki: cold, warm, checks alone", True),
    ("benchmarks.fault_bench", "fetch deadline vs a trickle; triage RSS on binary logs", False),
    ("benchmarks.ask_bench", "/ask streamed from a paced model stand-in: first text, stall", True),
    ("benchmarks.memory_bench", "the bot's RSS, stage by stage, and in the steady state", True),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--only", help="run only areas whose module name contains this")
    parser.add_argument("area", nargs="?", help="the same as --only (e.g. support)")
    parser.add_argument(
        "--scale",
        type=int,
        default=1,
        help="N > 1: the realistic and memory benchmarks only, on N copies of the wiki",
    )
    args = parser.parse_args(argv)
    if args.scale > 1:
        if not args.wiki.is_dir():
            print(f"benchmarks need a wiki: {args.wiki} not found", file=sys.stderr)
            return 2
        failed = 0
        for module in ("benchmarks.realistic_bench", "benchmarks.memory_bench"):
            print(f"\n## {module} at {args.scale}x the wiki", flush=True)
            cmd = [sys.executable, "-m", module, "--wiki", str(args.wiki)]
            failed += bool(subprocess.run([*cmd, "--scale", str(args.scale)], cwd=ROOT).returncode)
        return 1 if failed else 0
    args.only = args.only or args.area
    if not args.wiki.is_dir():
        print(f"benchmarks need a wiki: {args.wiki} not found (use --wiki DIR)", file=sys.stderr)
        return 2
    failed = 0
    for module, what, takes_wiki in AREAS:
        if args.only and args.only not in module:
            continue
        if importlib.util.find_spec(module) is None:
            print(f"\n## {module}: not present in this checkout")
            continue
        print(f"\n## {module}: {what}", flush=True)
        cmd = [sys.executable, "-m", module] + (["--wiki", str(args.wiki)] if takes_wiki else [])
        result = subprocess.run(cmd, cwd=ROOT)
        if result.returncode:
            failed += 1
            print(f"{module} exited with {result.returncode}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
