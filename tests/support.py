"""Paths and helpers shared by the test modules."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = [
    "DEMO",
    "ROOT",
    "SAMPLE_LOGS",
    "SNAPSHOT",
    "file_solved_tickets",
    "hang_guard",
    "needs_snapshot",
]

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


def file_solved_tickets(data: Path, off_wiki: tuple[str, str]) -> None:
    """Two tickets filed on the demo wiki in ``data`` and solved with a marked answer:
    one whose answer is a wiki section's own text, and ``off_wiki`` (question, answer),
    whose answer no section holds."""
    from knowledge.intake.desk import SupportDesk
    from knowledge.intake.sqlite import SqliteTicketStore
    from knowledge.service import KnowledgeBase

    kb = KnowledgeBase.open(DEMO, data)
    desk = SupportDesk(kb.triage_context, SqliteTicketStore.in_folder(data))
    page = next(iter(kb.state.wiki.pages.values()))
    section = max(page.sections, key=lambda s: len(s.text))
    try:
        in_wiki = ("GLM-5 hangs at NCCL init", f"{section.title}\n{section.text}")
        for text, answer in (in_wiki, off_wiki):
            draft = desk.new_draft("discord:42").draft
            desk.save(draft.id, "discord:42", {"text": text})
            ticket = desk.file(draft.id, "discord:42", post=False).ticket
            desk.mark_answer(ticket.id, actor="discord:42", staff=False, answer=answer, url="")
    finally:
        desk.store.close()
        kb.close()
