"""Knowledge-core figures: warm start, /runbook, /acronym and /search latency, peak RSS.

    python -m benchmarks.knowledge_bench [--wiki DIR]

Warm start is measured in a fresh process (interpreter start to first answer)
against an index the previous step built, as an admin restarting the bot sees it.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.search_bench import QUERIES as SEARCH_BENCH_QUERIES
from benchmarks.stats import peak_rss_mb, percentile

__all__ = ["main", "run"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"

RUNBOOK_QUERIES = [
    "qwen",
    "glm",
    "glm 5.1",
    "deepseek",
    "ds4",
    "kimi k2.7",
    "minimax",
    "mimo",
    "kimmi",
    "llama",
    "GLM-5.2",
    "deepsek",
]
ACRONYM_QUERIES = [
    "DCP",
    "dcp4",
    "TP8",
    "MTP3",
    "cc64",
    "ctx0",
    "W4A16",
    "AG+RS",
    "NVFP4",
    "decode context parallelism",
    "DSprak",
    "zzz",
]
#: The same questions the search benchmark times, so the two figures compare.
SEARCH_QUERIES = list(SEARCH_BENCH_QUERIES)

_WARM = """
import sys, time
t0 = float(sys.argv[1])
from knowledge.service import KnowledgeBase
kb = KnowledgeBase.open(sys.argv[2], sys.argv[3])
kb.runbook("glm")
print(time.time() - t0, kb.state.built.mode)
"""


def _percentiles(samples: list[float]) -> tuple[float, float]:
    return percentile(samples, 0.50) * 1000, percentile(samples, 0.99) * 1000


def _timed(fn, queries: list[str], rounds: int) -> tuple[float, float]:
    samples = []
    for _ in range(rounds):
        for query in queries:
            start = time.perf_counter()
            fn(query)
            samples.append(time.perf_counter() - start)
    return _percentiles(samples)


def run(wiki_dir: Path, data_dir: Path | None = None) -> dict[str, float]:
    from knowledge.service import KnowledgeBase

    with tempfile.TemporaryDirectory() as tmp:
        data = data_dir or Path(tmp)
        started = time.perf_counter()
        kb = KnowledgeBase.open(wiki_dir, data)
        cold = time.perf_counter() - started
        figures: dict[str, float] = {"cold_start_with_full_build_s": cold}
        kb.close()

        out = subprocess.run(
            [sys.executable, "-c", _WARM, repr(time.time()), str(wiki_dir), str(data)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        figures["warm_start_s"] = float(out[0])

        kb = KnowledgeBase.open(wiki_dir, data)
        for query in RUNBOOK_QUERIES + ACRONYM_QUERIES:  # warm caches as a live bot would be
            kb.runbook(query)
            kb.acronym(query)
        figures["runbook_p50_ms"], figures["runbook_p99_ms"] = _timed(
            kb.runbook, RUNBOOK_QUERIES, 20
        )
        figures["acronym_p50_ms"], figures["acronym_p99_ms"] = _timed(
            kb.acronym, ACRONYM_QUERIES, 20
        )
        figures["search_reply_p50_ms"], figures["search_reply_p99_ms"] = _timed(
            kb.search, SEARCH_QUERIES, 10
        )
        figures["explain_p50_ms"], figures["explain_p99_ms"] = _timed(
            kb.explain, [" ".join(SEARCH_QUERIES + ACRONYM_QUERIES)] * 5, 10
        )
        kb.close()
    figures["peak_rss_mb"] = peak_rss_mb()
    # the largest child: the index build process (and the warm-start process)
    figures["peak_rss_child_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    args = parser.parse_args(argv)
    if not args.wiki.is_dir():
        print(f"wiki not found: {args.wiki}", file=sys.stderr)
        return 2
    for name, value in run(args.wiki).items():
        print(f"{name:32s} {value:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
