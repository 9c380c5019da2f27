"""The gaps: recording unanswered requests (redacted, no user, kept N days) and grouping them."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.gaps import (
    GapRecord,
    GapRecorder,
    GapSettings,
    GapStore,
    TermWeights,
    gaps_report,
    named_terms,
    unanswered,
)
from knowledge.gaps.recorder import MAX_QUEUED_CHARS
from knowledge.reply import PageRef, Reply
from knowledge.service import KnowledgeBase
from knowledge.wiki import load_wiki
from tests.support import DEMO

TOKEN = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7"
DAY = dt.date(2026, 11, 30)


def record(query: str, command: str = "/search", pages: tuple[str, ...] = ()) -> GapRecord:
    return GapRecord(command, query, "none", DAY, pages)


@pytest.fixture(scope="module")
def weights() -> TermWeights:
    return TermWeights.of(load_wiki(DEMO))


def test_only_what_found_nothing_or_was_not_confident_is_unanswered():
    assert unanswered(Reply("not_found", "t")) == "none"
    assert unanswered(Reply("search", "t", meta={"confidence": "low"})) == "low"
    assert unanswered(Reply("search", "t", meta={"confidence": "high"})) is None
    assert unanswered(Reply("search", "t")) is None  # hits, no confidence: answered
    assert unanswered(Reply("acronym", "t")) is None
    assert unanswered(Reply("error", "t")) is None  # the bot's side, not a gap in the wiki


def test_the_store_keeps_query_command_confidence_and_day_and_nothing_about_the_user(tmp_path):
    recorder = GapRecorder.in_folder(tmp_path, GapSettings())
    assert recorder is not None
    reply = Reply("not_found", "t", pages=(PageRef("a.md"), PageRef("b.md")))
    assert recorder.note("/search", f"Zorblax crashes, my token is {TOKEN}", reply)
    assert not recorder.note("/search", "nccl", Reply("search", "t"))
    assert recorder.flush()
    recorder.close()
    (row,) = GapStore.read(tmp_path)
    assert row.command == "/search" and row.confidence == "none" and row.pages == ("a.md", "b.md")
    assert TOKEN not in row.query and "Zorblax crashes" in row.query
    assert TOKEN.encode() not in (tmp_path / "gaps.sqlite3").read_bytes()
    db = sqlite3.connect(tmp_path / "gaps.sqlite3")
    columns = {r[1] for r in db.execute("PRAGMA table_info(gaps)")}
    assert columns == {"id", "day", "command", "confidence", "query", "pages"}
    assert (tmp_path / "gaps.sqlite3").stat().st_mode & 0o077 == 0  # private to the bot


def test_a_query_that_its_cut_empties_is_not_recorded(tmp_path):
    """A query with no break in its first MAX_QUEUED_CHARS characters is cut to
    nothing (never a piece of a word, which redaction may not know): no empty row."""
    recorder = GapRecorder.in_folder(tmp_path, GapSettings())
    assert recorder is not None
    assert not recorder.note_outcome("/support", "x" * (MAX_QUEUED_CHARS + 1), "none")
    assert recorder.note_outcome("/support", "zorblax " + "x" * MAX_QUEUED_CHARS, "none")
    assert recorder.flush()
    recorder.close()
    assert [row.query for row in GapStore.read(tmp_path)] == ["zorblax"]


def test_off_records_nothing(tmp_path):
    assert GapRecorder.in_folder(tmp_path, GapSettings(enabled=False)) is None
    kb = KnowledgeBase.open(DEMO, tmp_path / "data")
    try:
        kb.record_gaps(GapSettings(enabled=False))
        kb.search("zorblax frobnicator")
        assert kb.gaps is None
        assert not (tmp_path / "data" / "gaps.sqlite3").exists()
    finally:
        kb.close()


def test_requests_older_than_the_retention_are_deleted(tmp_path):
    store = GapStore.in_folder(tmp_path, keep_days=90)
    old, recent = DAY - dt.timedelta(days=91), DAY - dt.timedelta(days=89)
    store.add(
        [GapRecord("/acronym", "OLDX", "none", old), GapRecord("/acronym", "NEWX", "none", recent)]
    )
    assert [r.query for r in store.since(None, today=DAY)] == ["OLDX", "NEWX"]
    assert store.purge(today=DAY) == 1
    assert [r.query for r in store.since(None, today=DAY)] == ["NEWX"]
    assert store.since(30, today=DAY) == []
    store.close()


def test_noting_never_waits_for_the_store(tmp_path):
    """The caller (the event loop, for /search at hand) only puts on a queue."""
    release = threading.Event()

    def slow_store() -> GapStore:
        release.wait(10)
        return GapStore.in_folder(tmp_path)

    recorder = GapRecorder(slow_store)
    for n in range(50):
        assert recorder.note("/acronym", f"QQ{n}X", Reply("not_found", "t"))
    assert not (tmp_path / "gaps.sqlite3").exists()  # nothing written while the store hangs
    release.set()
    assert recorder.flush()
    recorder.close()
    assert len(GapStore.read(tmp_path)) == 50


def test_the_knowledge_base_notes_each_command_once(tmp_path):
    kb = KnowledgeBase.open(DEMO, tmp_path / "data")
    try:
        kb.record_gaps(GapSettings())
        kb.search("zorblax frobnicator")
        kb.search("zorblax frobnicator", page=2)  # turning pages is not asking again
        kb.search("nccl calloc")  # found
        kb.acronym("QQZX")
        kb.acronym("DCP")  # found
        kb.runbook("zorblax")
        kb.runbook("glm")  # found
        assert kb.gaps is not None and kb.gaps.flush()
        rows = GapStore.read(kb.data_dir)
    finally:
        kb.close()
    assert [(r.command, r.query) for r in rows] == [
        ("/search", "zorblax frobnicator"),
        ("/acronym", "QQZX"),
        ("/runbook", "zorblax"),
    ]


def test_a_triage_that_is_not_confident_is_noted(tmp_path):
    class Result:
        confidence = "low"
        suggestions = ()

    recorder = GapRecorder.in_folder(tmp_path, GapSettings())
    assert recorder is not None
    assert recorder.note_triage("/support", "Zorblax hangs", Result())
    Result.confidence = "high"
    assert not recorder.note_triage("/support", "nccl hangs", Result())
    recorder.close()
    assert [r.query for r in GapStore.read(tmp_path)] == ["Zorblax hangs"]


def test_named_terms_are_names_not_ordinary_words():
    terms = named_terms("Running Qwen3-VL on Proxmox, the execution phase crashes. Any ideas?")
    assert {"qwen3-vl", "qwen3", "proxmox"} <= set(terms)
    assert not {"execution", "phase", "running", "ideas"} & set(terms)
    assert named_terms("zorblax") == ["zorblax"]  # a short query names what it asks for


def test_requests_are_grouped_by_the_terms_that_tell_them_apart(weights):
    records = [
        record("Zorblax-9 hangs at start on two cards", pages=("models/glm.md",)),
        record("How do I serve Zorblax-9 with FP8 weights?", pages=("models/glm.md",)),
        record("zorblax", "/runbook"),
        record(
            "GSP firmware fault after an hour, Xid 119 in dmesg", pages=("hardware/topology.md",)
        ),
        record("My card falls off the bus: Xid 79, GSP timeout"),
        # Shares only ordinary words (execution, phase) and terms the wiki is full of.
        record("the execution phase of vLLM with NCCL is slow"),
        record("execution phase stalls with NCCL on vLLM"),
    ]
    report = gaps_report(records, weights, since_days=7)
    groups = {g.terms[0]: g for g in report.groups if g.terms}
    assert groups["zorblax"].count == 3 and "/runbook" in groups["zorblax"].commands
    assert groups["zorblax"].pages[0] == "models/glm.md"
    assert len(groups["zorblax"].examples) == 3
    gsp = next(g for g in report.groups if {"gsp", "xid"} & set(g.terms))
    assert gsp.count == 2
    assert report.requests == 7 and sum(g.count for g in report.groups) == 7
    # No group joins the two "execution phase" requests with each other or anything else.
    assert all(g.count == 1 for g in report.groups if "execution" in " ".join(g.examples))
    assert [g.count for g in report.groups] == sorted(
        (g.count for g in report.groups), reverse=True
    )


def test_the_command_prints_the_groups(tmp_path, capsys):
    store = GapStore.in_folder(tmp_path, keep_days=None)
    today = dt.date.today()
    store.add(
        [
            GapRecord("/search", "Zorblax-9 hangs", "none", today, ("models/glm.md",)),
            GapRecord("/runbook", "zorblax", "none", today),
            GapRecord("/acronym", "QQZX", "none", today - dt.timedelta(days=40)),
        ]
    )
    store.close()
    assert main(["gaps", "--data", str(tmp_path), "--json", "--since", "30"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["requests"] == 2 and data["since_days"] == 30
    (group,) = data["groups"]
    assert group["terms"][0] == "zorblax" and group["count"] == 2
    assert group["pages"] == ["models/glm.md"]
    assert main(["gaps", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3 unanswered request(s)" in out and "QQZX" in out
    with pytest.raises(SystemExit):
        main(["gaps", "--data", str(tmp_path), "--since", "0"])


def test_nothing_recorded_is_said_plainly(tmp_path, capsys):
    assert main(["gaps", "--data", str(Path(tmp_path))]) == 0
    assert "No unanswered request" in capsys.readouterr().out
    assert not (tmp_path / "gaps.sqlite3").exists()


def test_solved_tickets_whose_answer_no_page_holds_are_listed_too(tmp_path, capsys):
    """A helper's answer marked on a solved ticket that no wiki section is near is a page
    worth writing, said by the people who answer: `wikibot gaps` lists it beside the
    unanswered requests; an answer the wiki already holds is not listed."""
    from tests.support import file_solved_tickets

    data = tmp_path / "data"
    file_solved_tickets(data, ("the card whines under load", "Undervolt with a curve, not a cap."))
    args = ["gaps", "--data", str(data), "--wiki", str(DEMO)]
    assert main([*args, "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["solved_not_in_wiki"]
    assert listed["title"] == "the card whines under load" and listed["nearest"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "1 solved ticket(s)" in out and "the card whines under load" in out
    assert "GLM-5 hangs at NCCL init" not in out, "an answer the wiki holds is no gap"
