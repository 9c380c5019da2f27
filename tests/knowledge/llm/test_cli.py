"""``wikibot ask --llm-url URL --llm-model NAME "/ask QUESTION"`` and ``/ask`` in the console,
against the model stand-in, as separate processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from knowledge.templates import load_templates
from tests.llm_standin import Behaviour

ROOT = Path(__file__).resolve().parents[3]
T = load_templates("llm.yaml")


def wikibot(*args: str, tmp_path: Path, stdin: str | None = None, **env: str):
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "WIKIBOT_DATA": str(tmp_path), **env},
        cwd=ROOT,
        timeout=180,
    )


def test_ask_prints_the_answer_with_its_citations_and_json_has_cited_given_and_timings(
    tmp_path, llm_standin
):
    url = ("--llm-url", llm_standin.url, "--llm-model", "standin-model")
    text = wikibot("ask", *url, "/ask nccl calloc error at start", tmp_path=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "[1] " in text.stdout and "troubleshooting/" in text.stdout
    assert T("ask.footer") in text.stdout
    result = wikibot("ask", "--json", *url, "/ask nccl calloc error at start", tmp_path=tmp_path)
    data = json.loads(result.stdout)
    meta = data["meta"]
    assert data["kind"] == "answer" and meta["status"] == "answered"
    assert meta["cited"] == data["pages"] and all("#" in ref for ref in meta["cited"])
    assert {g["ref"] for g in meta["given"]} >= set(meta["cited"])
    assert {"retrieval", "first_token", "total"} <= meta["timings_ms"].keys()


def test_the_api_key_comes_from_the_variable_named_and_is_never_printed(tmp_path, llm_standin):
    llm_standin.behaviour = Behaviour(mode="500")
    args = ("--llm-url", llm_standin.url, "--llm-model", "m", "--llm-key-env", "MY_LLM_KEY")
    result = wikibot(
        "ask", "--json", *args, "/ask nccl calloc error", tmp_path=tmp_path, MY_LLM_KEY="sk-1234"
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["meta"]["reason"] == "server"
    assert "sk-1234" not in result.stdout + result.stderr


def test_ask_without_a_server_says_answering_is_off(tmp_path):
    result = wikibot("ask", "/ask nccl calloc error", tmp_path=tmp_path)
    assert result.returncode == 1 and T("ask.disabled_title") in result.stdout


def test_the_console_answers_ask_with_the_server_it_was_given(tmp_path, llm_standin):
    result = wikibot(
        "console",
        "--llm-url",
        llm_standin.url,
        "--llm-model",
        "standin-model",
        tmp_path=tmp_path,
        stdin="/ask nccl calloc error at start\n/ask what is the best pizza in Rome\n/quit\n",
    )
    assert result.returncode == 0, result.stderr
    assert T("ask.footer") in result.stdout and T("ask.declined_title") in result.stdout
    assert len(llm_standin.served) == 1, "the question the wiki does not cover asked no model"
