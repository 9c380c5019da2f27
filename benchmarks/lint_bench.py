"""Time ``wikibot lint`` on a whole wiki: cold, warm, and the checks alone.

Run from the repository root::

    .venv/bin/python -m benchmarks.lint_bench [--wiki DIR] [--rounds N]

- cold: ``wikibot lint --wiki DIR --data FRESH`` in a new process, no page cache yet
  (a CI job on a fresh checkout: every page parsed, a helper process sharing it);
- warm: the same command again, the page cache in the data folder now current
  (a maintainer's second run; the bot's /wiki lint has the wiki loaded already);
- checks: the checks alone on a loaded wiki (what /wiki lint costs the bot).

Wall and CPU seconds (user + system of the process and its children) per round, the
median printed; the findings per check once. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"


def _command(wiki: Path, data: Path) -> tuple[float, float, dict]:
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("wikibot")),
            "lint",
            "--wiki",
            str(wiki),
            "--data",
            str(data),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"wikibot lint failed ({done.returncode}): {done.stderr[-500:]}")
    return wall, cpu, json.loads(done.stdout)


def _checks(wiki: Path, rounds: int) -> tuple[float, float]:
    from knowledge.lint import lint_wiki
    from knowledge.lint.folder import load_for_lint

    loaded = load_for_lint(wiki, None)
    walls, cpus = [], []
    for _ in range(rounds):
        cpu, started = time.process_time(), time.perf_counter()
        lint_wiki(*loaded)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    wiki = args.wiki.resolve()
    if not wiki.is_dir():
        print(f"lint_bench needs a wiki: {wiki} not found", file=sys.stderr)
        return 2
    cold, warm = [], []
    report: dict = {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="lint-bench-") as data:
            cold.append(_command(wiki, Path(data))[:2])
            for _ in range(2):
                wall, cpu, report = _command(wiki, Path(data))
            warm.append((wall, cpu))
    checks_wall, checks_cpu = _checks(wiki, args.rounds)
    print(f"wiki: {wiki} ({report['pages']} pages, revision {report['revision']})")
    for name, runs in (("cold (no page cache)", cold), ("warm (page cache current)", warm)):
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"wikibot lint, {name}: {wall:.2f} s wall, {cpu:.2f} s CPU (median of {len(runs)})")
    print(f"checks alone on a loaded wiki: {checks_wall:.2f} s wall, {checks_cpu:.2f} s CPU")
    print("findings per check: " + ", ".join(f"{k} {v}" for k, v in report["per_check"].items()))
    print("findings per rule:  " + ", ".join(f"{k} {v}" for k, v in report["per_rule"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
