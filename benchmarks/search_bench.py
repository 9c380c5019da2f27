"""Time the section search index on a real wiki: build, reopen, update, search.

Run from the repository root::

    .venv/bin/python -m benchmarks.search_bench [--wiki DIR] [--data DIR]

Figures are printed, never asserted: targets on the 2-core reference machine are a
full build <= 3 s and searches (with snippets) p50 <= 8 ms, p99 <= 20 ms.

Full builds are timed both ways, Whoosh writing in this process and in a child
process (``build_in_child``), with the longest stall meanwhile of a thread that
sleeps 1 ms at a time (the bot's 1 ms switch interval): what the bot's event loop
would wait while a reindex runs. ``build_s`` is the default (by wiki size);
``child_same_results`` is 1 when both ways answer every query alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.stats import percentile
from knowledge.search import SearchIndex
from knowledge.wiki import Wiki, load_wiki

__all__ = ["BAD_QUERIES", "QUERIES", "main", "run"]

log = logging.getLogger(__name__)

#: Questions people ask in the support channels: topics, error pastes, sentences.
QUERIES: tuple[str, ...] = (
    "nccl deadlock",
    "cuda out of memory",
    "mtp acceptance",
    "dcp glm",
    "docker image kimi",
    "pcie topology",
    "illegal memory access",
    "fastsafetensors crash",
    "kld evaluation",
    "flashinfer race condition",
    "nvfp4 quantization",
    "sglang launch command",
    "vllm tool call parser",
    "speculative decoding dflash",
    "p2p bandwidth",
    "iommu",
    "power limit",
    "gpu temperature fan",
    "deepseek v4 flash",
    "glm-5.2 fp8",
    "kimi k2.7 code",
    "mimo fp4",
    "triton kernel config",
    "b12x",
    "cuda graph capture",
    "expert parallel",
    "tp8 decode throughput",
    "context length 128k",
    "prefill throughput",
    "NCCL_P2P_LEVEL",
    "how do I fix an nccl deadlock on startup",
    "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
)

#: Parser syntax and hostile input that must come back at once, with or without hits.
BAD_QUERIES: tuple[str, ...] = (
    "*",
    "body:*",
    "[a TO z]",
    "(((",
    "x" * 5000,
    "",
    "\u200b",
    "ｎｃｃｌ ｄｅａｄｌｏｃｋ",
    'a* b? c~2 d^3 "e f" -g +h NOT i OR j AND k',
    " ".join(["cuda"] * 60),
)


class _StallMeter:
    """A thread sleeping 1 ms at a time; records the longest it woke up late."""

    def __init__(self) -> None:
        self.max_ms = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._interval = sys.getswitchinterval()

    def _tick(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            time.sleep(0.001)
            self.max_ms = max(self.max_ms, (time.perf_counter() - started - 0.001) * 1000)

    def __enter__(self) -> _StallMeter:
        sys.setswitchinterval(0.001)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._interval)


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _edited(wiki: Wiki) -> Wiki:
    """A copy of ``wiki`` with one page changed and one removed (in memory only)."""
    paths = sorted(wiki.pages)
    pages = dict(wiki.pages)
    if paths:
        victim = pages[paths[len(paths) // 2]]
        first = victim.sections[0] if victim.sections else None
        if first is not None:
            edited = dataclasses.replace(first, text=first.text + "\nbenchmark edit zyxwvut")
            victim = dataclasses.replace(
                victim, sections=(edited, *victim.sections[1:]), sha="bench-" + victim.sha
            )
        pages[victim.path] = victim
    if len(paths) > 1:
        pages.pop(paths[-1])
    return Wiki(root=wiki.root, pages=pages, skipped=list(wiki.skipped))


def _search_times(
    index: SearchIndex, queries: tuple[str, ...], rounds: int
) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each search (CPU time is steadier on a busy box)."""
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        for query in queries:
            started, started_cpu = time.perf_counter(), time.thread_time()
            index.search(query, limit=10)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
    return wall, cpu


def run(
    wiki_dir: Path, data_dir: Path, *, rounds: int = 10, rounds_of_builds: int = 3
) -> dict[str, float]:
    """Build, reopen, update and search an index of ``wiki_dir`` kept in ``data_dir``."""
    figures: dict[str, float] = {}
    started = time.perf_counter()
    wiki = load_wiki(wiki_dir)
    figures["load_wiki_s"] = time.perf_counter() - started
    figures["pages"] = float(len(wiki.pages))
    figures["sections"] = float(sum(len(p.sections) for p in wiki.pages.values()))

    index, stats = SearchIndex.open(wiki, data_dir)
    try:
        builds = [stats.seconds] if stats.mode == "full" else []
        builds += [index.rebuild(wiki).seconds for _ in range(2)]
        figures["build_s"] = statistics.median(builds)
        answers: dict[str, list[object]] = {}
        for way, in_child in (("in_process", False), ("in_child", True)):
            index.build_in_child = in_child
            seconds: list[float] = []
            stalls: list[float] = []
            for _ in range(rounds_of_builds):
                with _StallMeter() as meter:
                    seconds.append(index.rebuild(wiki).seconds)
                stalls.append(meter.max_ms)
            figures[f"build_{way}_s"] = statistics.median(seconds)
            figures[f"build_{way}_max_stall_ms"] = max(stalls)
            answers[way] = [index.search(query, limit=10) for query in QUERIES]
        figures["child_same_results"] = float(answers["in_process"] == answers["in_child"])
    finally:
        index.close()

    reopened: list[float] = []
    for _ in range(3):
        index, stats = SearchIndex.open(wiki, data_dir)
        if stats.mode != "reused":
            log.warning("expected a reused index, got %s", stats.mode)
        reopened.append(stats.seconds)
        index.close()
    figures["reuse_open_s"] = statistics.median(reopened)

    index, _ = SearchIndex.open(wiki, data_dir)
    try:
        edited = _edited(wiki)
        figures["incremental_s"] = index.update(edited).seconds
        figures["incremental_back_s"] = index.update(wiki).seconds

        # Searches run on the index as updates leave it (several segments).
        _search_times(index, QUERIES, 1)  # warm caches and the searcher pool
        wall, cpu = _search_times(index, QUERIES, rounds)
        figures["search_p50_ms"] = percentile(wall, 0.50)
        figures["search_p99_ms"] = percentile(wall, 0.99)
        figures["search_max_ms"] = max(wall)
        figures["search_cpu_p50_ms"] = percentile(cpu, 0.50)
        figures["search_cpu_p99_ms"] = percentile(cpu, 0.99)
        bad, _ = _search_times(index, BAD_QUERIES, 3)
        figures["bad_query_max_ms"] = max(bad)
    finally:
        index.close()
    return figures


def _default_wiki() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "wiki-snapshot"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=_default_wiki(), help="wiki folder")
    parser.add_argument("--data", type=Path, default=None, help="index folder (default: temp)")
    parser.add_argument("--rounds", type=int, default=10, help="search rounds over the queries")
    parser.add_argument(
        "--builds", type=int, default=3, help="full builds timed each way (in process, in child)"
    )
    args = parser.parse_args(argv)
    if not args.wiki.is_dir():
        print(f"wiki folder not found: {args.wiki}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="search-bench-") as tmp:
        data_dir = args.data or Path(tmp) / "index"
        figures = run(args.wiki, data_dir, rounds=args.rounds, rounds_of_builds=args.builds)
    width = max(len(name) for name in figures)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value:.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
