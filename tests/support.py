"""Paths and helpers shared by the test modules."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["DEMO", "ROOT", "SAMPLE_LOGS", "SNAPSHOT", "hang_guard", "needs_snapshot"]

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "knowledge" / "demo_wiki"
#: The real wiki and logs beside the project (absent on a bare clone: tests skip).
SNAPSHOT = ROOT.parent / "shared" / "wiki-snapshot"
SAMPLE_LOGS = ROOT.parent / "shared" / "sample-logs"

needs_snapshot = pytest.mark.skipif(
    not SNAPSHOT.is_dir(), reason="../shared/wiki-snapshot is not present"
)


@contextmanager
def hang_guard(seconds: int, what: str = "the call") -> Iterator[None]:
    """Fail with TimeoutError if the block runs longer than ``seconds`` (a hang, not speed)."""

    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
