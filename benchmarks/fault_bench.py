"""Faults measured, not asserted: how far a fetch overshoots its deadline against a
server trickling one byte every ``--pace`` seconds, and the peak RSS of
``wikibot triage`` on binary and long text logs.

    python -m benchmarks.fault_bench [--deadline 30] [--pace 10] [--skip-rss]

Each triage runs in its own process; its peak RSS is that process's ``ru_maxrss``.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.knowledge.source import test_deadline

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LOGS = ROOT.parent / "shared" / "sample-logs"


def fetch_overshoot(deadline: float, pace: float, mode: str) -> float:
    """Seconds ``wikibot wiki fetch`` ran past ``deadline`` against a trickling server."""
    from knowledge.source import FetchError, Follower, HttpSettings, SourceSettings, parse_source

    test_deadline.PACE = pace
    server = test_deadline.Trickle(mode)
    source = f"{server.url}/files/w.tar.gz" if mode in ("body", "headers") else "github:o/w"
    try:
        with tempfile.TemporaryDirectory() as data:
            settings = SourceSettings(
                parse_source(source),
                api_url=server.url,
                http=HttpSettings(api_url=server.url, download_seconds=deadline),
            )
            started = time.monotonic()
            with Follower(settings, Path(data)) as follower:
                try:
                    follower.fetch()
                except FetchError as exc:
                    print(f"  {mode:<8} {exc}")
            return time.monotonic() - started - deadline
    finally:
        server.close()


def _text_log(path: Path, size: int) -> None:
    lines = []
    for log in sorted(SAMPLE_LOGS.glob("*.log")):
        lines += log.read_text(errors="replace").splitlines()
    lines = lines or [
        f"INFO 12-01 10:00:00 [api_server.py:{n}] loading shard {n}" for n in range(99)
    ]
    rng = random.Random(7)
    with open(path, "w") as out:
        written = 0
        while written < size:
            line = rng.choice(lines) + "\n"
            out.write(line)
            written += len(line)


def triage_rss(log: str, data: Path) -> tuple[int, float, int]:
    """(peak RSS in MB, seconds, exit code) of ``wikibot triage --log LOG``."""
    script = (
        "import resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(peak, time.monotonic() - t, run.returncode)\n"
    )
    command = [sys.executable, "-m", "bot.cli", "triage", "--text", "server dies", "--log", log]
    run = subprocess.run(
        [sys.executable, "-c", script, *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "WIKIBOT_DATA": str(data)},
    )
    peak, seconds, code = run.stdout.split()
    return int(peak), float(seconds), int(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=30.0)
    parser.add_argument("--pace", type=float, default=10.0)
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--skip-fetch", action="store_true")
    parser.add_argument("--wiki", help="ignored (every area of `python -m benchmarks` gets it)")
    args = parser.parse_args(argv)
    if not args.skip_fetch:
        print(f"fetch deadline {args.deadline:.0f} s, one byte every {args.pace:.0f} s:")
        for mode in ("body", "headers", "sha", "tarball"):
            over = fetch_overshoot(args.deadline, args.pace, mode)
            print(f"  {mode:<8} ended {over:+.2f} s from the deadline")
    if not args.skip_rss:
        print("peak RSS of wikibot triage --log FILE:")
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            cases: list[tuple[str, str]] = []
            for mb in (5, 30):
                path = folder / f"random{mb}.bin"
                path.write_bytes(os.urandom(mb * 1024 * 1024))
                cases.append((f"{mb} MB random bytes", str(path)))
            text = folder / "text50.log"
            _text_log(text, 50 * 1024 * 1024)
            cases.append(("50 MB text log", str(text)))
            cases.append(("/dev/urandom", "/dev/urandom"))
            for label, log in cases:
                peak, seconds, code = triage_rss(log, folder / "data")
                print(f"  {label:<20} {peak:>5} MB  {seconds:6.1f} s  exit {code}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
