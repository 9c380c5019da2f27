"""Scoring answers against judged help requests (knowledge.evaluation)."""

from __future__ import annotations

import json

import pytest

from knowledge.evaluation import (
    Answer,
    EvalRequest,
    EvalRequestError,
    load_requests,
    parse_requests,
    run,
)
from knowledge.wiki import load_wiki
from tests.support import SNAPSHOT, needs_snapshot


def test_scores_count_hits_mrr_and_confidence():
    requests = [
        EvalRequest("a", "q", expected=("x.md#s", "y.md")),
        EvalRequest("b", "q", expected=("z.md",)),
        EvalRequest("c", "q"),
        EvalRequest("d", "q"),
    ]
    answers = {
        "a": Answer(("y.md#t", "x.md"), "high"),
        "b": Answer(("q.md", "r.md", "s.md", "t.md", "z.md"), "medium"),
        "c": Answer(("x.md",), "low"),
        "d": Answer(("x.md",), "high"),
    }
    scores, outcomes = run(requests, {"t": lambda r: answers[r.id]})["t"]
    assert [o.rank for o in outcomes] == [1, 5, None, None]
    assert (scores.hit1, scores.hit3, scores.hit5) == (1, 1, 2)
    assert scores.mrr5 == pytest.approx((1 + 1 / 5) / 2)
    assert (scores.unanswerable, scores.declined) == (2, 1)
    assert (scores.confident, scores.confident_right) == (2, 1)


def test_repeated_pages_count_once_in_the_ranking():
    requests = [EvalRequest("a", "q", expected=("z.md",))]
    answer = Answer(("x.md#1", "x.md#2", "x.md#3", "z.md"), None)
    scores, outcomes = run(requests, {"t": lambda r: answer})["t"]
    assert outcomes[0].rank == 2
    assert not scores.has_confidence


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 1: not JSON"),
        ("[1, 2]", "line 1: each line must be a JSON object"),
        ('{"id": "a", "question": ""}', "line 1: `question` is empty"),
        ('{"id": "a", "question": "q", "error_lines": "x"}', "`error_lines` must be a list"),
        ('{"id": "a", "question": 5}', "`question` must be text"),
    ],
)
def test_bad_request_lines_name_the_line(line, message):
    with pytest.raises(EvalRequestError, match=message):
        parse_requests([line], "req.jsonl")


def test_duplicate_ids_and_missing_files_are_refused(tmp_path):
    line = json.dumps({"id": "a", "question": "q"})
    with pytest.raises(EvalRequestError, match="used twice"):
        parse_requests([line, line])
    with pytest.raises(EvalRequestError, match="no such file"):
        load_requests(tmp_path / "missing.jsonl")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * (8 * 1024 * 1024 + 2))
    with pytest.raises(EvalRequestError, match="larger than"):
        load_requests(big)


EVAL_DEV = SNAPSHOT.parent / "eval-dev" / "requests.jsonl"


@needs_snapshot
@pytest.mark.skipif(not EVAL_DEV.is_file(), reason="../shared/eval-dev is not present")
def test_the_dev_set_reads_and_every_expected_page_exists():
    requests = load_requests(EVAL_DEV)
    wiki = load_wiki(SNAPSHOT)
    assert len(requests) >= 40
    for request in requests:
        for path in request.expected_paths:
            assert path in wiki.pages, (request.id, path)
