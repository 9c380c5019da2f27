"""``wikibot eval --answers``: citations that include an expected page, and declines on
the unanswerable requests, scored against the model stand-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.llm_standin import Behaviour

ROOT = Path(__file__).resolve().parents[3]


def run_eval(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    requests = tmp_path / "requests.jsonl"
    rows = [
        {
            "id": "a",
            "question": "the server dies at start with an NCCL calloc error",
            "error_lines": ["NCCL error: Failed to CUDA calloc 10485760 bytes"],
            "expected_pages": ["troubleshooting/common-issues.md#anything"],
        },
        {"id": "b", "question": "what is the best pizza topping in Rome", "expected_pages": []},
    ]
    requests.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli",
            "eval",
            "--answers",
            "--llm-url",
            url,
            "--llm-model",
            "standin-model",
            *extra,
            str(requests),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "WIKIBOT_DATA": str(tmp_path / "data")},
        cwd=ROOT,
        timeout=180,
    )


def test_eval_answers_scores_cited_expected_pages_and_declines(tmp_path, llm_standin):
    result = run_eval(tmp_path, llm_standin.url, "--json")
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert (scores["answerable"], scores["cited_expected"], scores["answered"]) == (1, 1, 1)
    assert (scores["unanswerable"], scores["declined"]) == (1, 1)
    assert len(llm_standin.served) == 1, "the unanswerable request asked no model"


def test_an_answer_citing_nothing_counts_as_a_decline_and_failures_by_kind(tmp_path, llm_standin):
    llm_standin.behaviour = Behaviour(text="NOT IN THE WIKI")
    scores = json.loads(run_eval(tmp_path, llm_standin.url, "--json").stdout)
    assert scores["cited_expected"] == 0 and scores["rows"][0]["declined"]
    llm_standin.behaviour = Behaviour(mode="500")
    text = run_eval(tmp_path, llm_standin.url).stdout
    assert "citations include an expected page 0/1" in text and "failures: server 1" in text
