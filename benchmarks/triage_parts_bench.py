"""Time the triage building blocks: redaction, log summary, launch parsing.

Run from the repository root::

    .venv/bin/python -m benchmarks.triage_parts_bench [--logs DIR] [--rounds N]

Inputs: the first 300 lines of a real startup log, a ~5 MB log made by repeating
that log, and a long generated ``docker run`` command (300 ``-e`` options, a
``bash -lc`` script with a long ``vllm serve``). Without the shared sample logs a
generated log of the same shape is used, and the output says so. Each figure is the
median of ``--rounds`` runs in milliseconds; figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from knowledge.launch import parse_launch
from knowledge.triage.logs import normalise_line, summarise_log
from knowledge.triage.redact import redact

__all__ = ["DEFAULT_LOGS", "build_inputs", "long_launch", "main", "run"]

log = logging.getLogger(__name__)

DEFAULT_LOGS = Path(__file__).resolve().parents[2] / "shared" / "sample-logs"
SAMPLE_NAME = "vllm-glm51-dcp4-mtp1-startup.log"
BIG_LOG_BYTES = 5 * 1024 * 1024
SHORT_LOG_LINES = 300


def _generated_log(lines: int) -> str:
    """A vLLM-shaped startup log for machines without the shared samples."""
    out = [
        "(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: "
        "{'model': 'org/bench', 'tensor_parallel_size': 8, 'decode_context_parallel_size': 2}",
    ]
    for i in range(lines - 1):
        rank = i % 8
        out.append(
            f"(Worker_TP{rank} pid={300 + rank}) INFO 01-01 00:00:{i % 60:02d} "
            f"[runner.py:{i}] step {i} took {i * 0.37:.2f} s on /cache/rank_{rank}/x"
        )
    return "\n".join(out) + "\n"


def long_launch(env_vars: int = 300) -> str:
    """A long ``docker run`` command with a nested ``vllm serve`` and one fake token."""
    lines = ["docker run -d --rm --gpus all --ipc=host --network host \\"]
    lines += [f"  -e BENCH_SETTING_{i}=value_{i} \\" for i in range(env_vars)]
    lines += [
        "  -e HF_TOKEN=hf_" + "b3nchT0k3n" * 4 + " \\",
        "  -v /models:/models:ro -v /cache:/cache \\",
        "  team/vllm:bench \\",
        "  bash -lc 'exec vllm serve org/bench-model \\",
        "    --tensor-parallel-size 8 --decode-context-parallel-size 4 \\",
        '    --speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":3}" \\',
        '    --hf-overrides "{\\"index_topk_pattern\\":\\"' + "FS" * 200 + '\\"}" \\',
    ]
    lines += [f"    --bench-flag-{i} {i} \\" for i in range(100)]
    lines.append("    --trust-remote-code'")
    return "\n".join(lines) + "\n"


def build_inputs(logs_dir: Path) -> tuple[dict[str, str], str]:
    """The inputs timed, and where the log came from."""
    sample = logs_dir / SAMPLE_NAME
    if sample.is_file():
        text = sample.read_text(encoding="utf-8")
        source = str(sample)
    else:
        text = _generated_log(2000)
        source = "generated (sample log not found)"
    short = "".join(text.splitlines(keepends=True)[:SHORT_LOG_LINES])
    big = text * (BIG_LOG_BYTES // len(text.encode()) + 1)
    return {"log_300_lines": short, "log_5mb": big, "launch_long": long_launch()}, source


def _median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run(logs_dir: Path = DEFAULT_LOGS, *, rounds: int = 5) -> dict[str, float]:
    """Median milliseconds per operation, plus input sizes (``*_kb``, ``*_lines``)."""
    inputs, _ = build_inputs(logs_dir)
    short, big, launch = inputs["log_300_lines"], inputs["log_5mb"], inputs["launch_long"]
    short_lines = short.splitlines()
    return {
        "log_300_lines_kb": len(short.encode()) / 1024,
        "log_5mb_kb": len(big.encode()) / 1024,
        "log_5mb_lines": float(big.count("\n")),
        "launch_long_kb": len(launch.encode()) / 1024,
        "redact_300_lines_ms": _median_ms(lambda: redact(short, "log"), rounds),
        "summarise_300_lines_ms": _median_ms(lambda: summarise_log(short), rounds),
        "normalise_300_lines_ms": _median_ms(
            lambda: [normalise_line(line) for line in short_lines], rounds
        ),
        "redact_5mb_ms": _median_ms(lambda: redact(big, "log"), rounds),
        "summarise_5mb_ms": _median_ms(lambda: summarise_log(big), rounds),
        "redact_then_summarise_5mb_ms": _median_ms(
            lambda: summarise_log(redact(big, "log").text), rounds
        ),
        "redact_launch_long_ms": _median_ms(lambda: redact(launch, "command"), rounds),
        "parse_launch_long_ms": _median_ms(lambda: parse_launch(launch), rounds),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=DEFAULT_LOGS, help="sample-logs folder")
    parser.add_argument("--rounds", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--wiki", type=Path, help=argparse.SUPPRESS)  # passed by benchmarks/
    args = parser.parse_args(argv)
    if args.rounds < 1:
        print("--rounds must be at least 1", file=sys.stderr)
        return 2
    _, source = build_inputs(args.logs)
    print(f"log: {source}; rounds: {args.rounds}")
    figures = run(args.logs, rounds=args.rounds)
    width = max(map(len, figures))
    for name, value in figures.items():
        shown = str(int(value)) if value.is_integer() else f"{value:.4g}"
        print(f"{name:<{width}}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
