"""Scoring answers against judged help requests (knowledge.evaluation)."""

from __future__ import annotations

import json

import pytest

from knowledge.evaluation import (
    Answer,
    EvalRequest,
    EvalRequestError,
    calibration,
    load_requests,
    parse_requests,
    run,
)
from knowledge.wiki import load_wiki
from tests.support import SNAPSHOT


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
    # Precision counts the confident answer to the unanswerable "d" as wrong: 1 of 3.
    assert scores.confident_all == 3
    assert scores.precision == pytest.approx(1 / 3)
    assert scores.coverage == pytest.approx(2 / 2)
    assert scores.to_json()["precision"] == round(1 / 3, 4)
    levels = {level.confidence: level for level in calibration(outcomes)}
    assert list(levels) == ["high", "medium", "low"]
    assert (levels["high"].answers, levels["high"].right, levels["high"].unanswerable) == (2, 1, 1)
    assert (levels["medium"].answers, levels["medium"].right) == (1, 0)  # rank 5: not right
    assert (levels["low"].answers, levels["low"].right, levels["low"].unanswerable) == (1, 0, 1)


def test_calibration_counts_answers_without_a_word_as_none_and_keeps_unknown_words():
    requests = [EvalRequest("a", "q", expected=("x.md",)), EvalRequest("b", "q")]
    answers = {"a": Answer(("x.md",), "certain"), "b": Answer((), None)}
    _, outcomes = run(requests, {"t": lambda r: answers[r.id]})["t"]
    levels = calibration(outcomes)
    assert [(lv.confidence, lv.answers, lv.right) for lv in levels] == [
        ("none", 1, 0),
        ("certain", 1, 1),
    ]


def test_precision_and_coverage_are_absent_without_confident_answers():
    requests = [EvalRequest("a", "q", expected=("x.md",)), EvalRequest("b", "q")]
    scores, _ = run(requests, {"t": lambda r: Answer(("x.md",), "low")})["t"]
    assert scores.precision is None and scores.coverage == 0.0
    scores, _ = run(requests, {"t": lambda r: Answer(("x.md",), None)})["t"]
    assert scores.precision is None and scores.coverage is None


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


EVAL_DEV = SNAPSHOT.parent / "eval-dev"


@pytest.mark.parametrize(
    ("wiki", "requests", "size"),
    [
        (SNAPSHOT, EVAL_DEV / "requests.jsonl", 40),
        (SNAPSHOT.parent / "wiki-snapshot-2026-08-04", EVAL_DEV / "requests-2026-08-04.jsonl", 30),
    ],
)
def test_the_dev_sets_read_and_every_expected_page_exists(wiki, requests, size):
    if not wiki.is_dir() or not requests.is_file():
        pytest.skip(f"../shared/{wiki.name} or ../shared/eval-dev/{requests.name} is not present")
    found = load_requests(requests)
    pages = load_wiki(wiki).pages
    assert len(found) >= size
    for request in found:
        for path in request.expected_paths:
            assert path in pages, (request.id, path)
