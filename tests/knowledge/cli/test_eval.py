"""``wikibot eval`` on a small set of requests judged by hand against the demo wiki."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.evaluation import load_requests
from knowledge.wiki import load_wiki
from tests.support import DEMO

REQUESTS = Path(__file__).with_name("demo_requests.jsonl")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("eval-data")


def wikibot_eval(capsys, data_dir: Path, *args: str) -> tuple[int, str, str]:
    code = main(["eval", "--data", str(data_dir), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_demo_set_names_pages_of_the_demo_wiki():
    wiki = load_wiki(DEMO)
    requests = load_requests(REQUESTS)
    assert any(r.answerable for r in requests) and any(not r.answerable for r in requests)
    for request in requests:
        for path in request.expected_paths:
            assert path in wiki.pages, (request.id, path)


def test_json_scores_both_paths_on_every_request(capsys, data_dir):
    code, out, _ = wikibot_eval(capsys, data_dir, "--json", str(REQUESTS))
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"triage", "search"}
    for name, result in data.items():
        scores = result["scores"]
        assert (scores["answerable"], scores["unanswerable"]) == (5, 2), name
        outcomes = {o["id"]: o for o in result["requests"]}
        assert len(outcomes) == 7
        # An error line the wiki quotes finds its entry first, and says so with confidence.
        for ident in ("demo-01", "demo-02", "demo-05"):
            assert outcomes[ident]["rank"] == 1, (name, ident, outcomes[ident])
            assert outcomes[ident]["confident"], (name, ident)
        # A model the wiki never names, and a question off the wiki's topic, are declined.
        for ident in ("demo-06", "demo-07"):
            assert not outcomes[ident]["confident"], (name, ident, outcomes[ident])
        assert scores["declined"] == 2
        assert scores["hit5"] == 5, (name, outcomes)
        assert scores["confident_right"] == scores["confident"], name


def test_table_and_one_line_per_request(capsys, data_dir):
    code, out, _ = wikibot_eval(capsys, data_dir, "--verbose", str(REQUESTS))
    assert code == 0
    lines = out.splitlines()
    per_request = [line for line in lines if line.startswith("demo-")]
    assert len(per_request) == 14  # seven requests, two paths
    assert any("demo-06" in line and "(none expected)" in line for line in per_request)
    header = next(line for line in lines if "hit@1" in line)
    assert all(word in header for word in ("hit@3", "hit@5", "MRR@5", "declined", "confident"))
    rows = {line.split()[0]: line for line in lines if line.split()[:1] in (["triage"], ["search"])}
    assert set(rows) == {"triage", "search"}
    assert "2/2" in rows["triage"] and "5/5" in rows["search"]


def test_a_bad_request_file_names_the_line(capsys, data_dir, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "fine"}\n{"id": "b", "question": 7}\n')
    code, out, err = wikibot_eval(capsys, data_dir, str(bad))
    assert code == 2 and not out
    assert "line 2" in err and "`question` must be text" in err
    code, _, err = wikibot_eval(capsys, data_dir, str(tmp_path / "absent.jsonl"))
    assert code == 2 and "no such file" in err
