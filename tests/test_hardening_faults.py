"""Faults injected for real through the command line: a FIFO page, skipped pages said
once per wiki change, huge integers in a request."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.answers.triage import triage_reply
from knowledge.cli.console import dispatch, render_text
from knowledge.service import KnowledgeBase
from knowledge.triage import triage
from tests.support import DEMO, ROOT

#: Generous guard against a hang (a FIFO read blocks forever); never a speed limit.
HANG_GUARD = 300


def wikibot(*args: str | Path, data: Path, stdin: bytes | None = None):
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        input=stdin,
        timeout=HANG_GUARD,
        env={"WIKIBOT_DATA": str(data), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )


@pytest.fixture
def fifo_wiki(tmp_path: Path) -> Path:
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    os.mkfifo(wiki / "models" / "pipe.md")
    return wiki


# ------------------------------------------------ a FIFO page, skipped pages said once


def test_a_fifo_page_hangs_neither_index_nor_ask_and_is_said_once_per_change(
    fifo_wiki: Path, tmp_path: Path
):
    data = tmp_path / "data"
    index = wikibot("index", "--wiki", fifo_wiki, data=data)
    assert index.returncode == 0, index.stderr
    out, err = index.stdout.decode(), index.stderr.decode()
    assert "models/pipe.md" in out and "not a regular file" in out  # the list, always
    assert "Traceback" not in err
    for _ in range(2):  # said by the index already: ask is quiet about it
        ask = wikibot("ask", "--wiki", fifo_wiki, "/runbook glm", data=data)
        assert ask.returncode == 0 and b"GLM" in ask.stdout
        assert b"pipe.md" not in ask.stderr
    (fifo_wiki / "models" / "glm5_v3.md").write_text(
        (DEMO / "models" / "glm5_v3.md").read_text("utf-8") + "\nOne more line.\n", "utf-8"
    )
    said = [wikibot("ask", "--wiki", fifo_wiki, "/runbook glm", data=data) for _ in range(2)]
    warnings = [r.stderr.decode().count("pipe.md") for r in said]
    assert warnings == [1, 0]  # once after the change, in one line, then quiet again
    (line,) = [x for x in said[0].stderr.decode().splitlines() if "pipe.md" in x]
    assert "1 file(s) of the wiki skipped" in line and "not a regular file" in line


def test_wiki_status_names_the_skipped_files(fifo_wiki: Path, tmp_path: Path):
    kb = KnowledgeBase.open(fifo_wiki, tmp_path / "data")
    try:
        reply = kb.status()
    finally:
        kb.close()
    fields = {f.name: f.value for f in reply.fields}
    assert fields["Skipped files"] == "1"
    assert fields["Files not read"] == "`models/pipe.md`: not a regular file"
    assert reply.meta["skipped"] == [{"path": "models/pipe.md", "reason": "not a regular file"}]


def test_without_skipped_files_status_has_no_list(tmp_path: Path):
    kb = KnowledgeBase.open(DEMO, tmp_path / "data")
    try:
        names = [f.name for f in kb.status().fields]
    finally:
        kb.close()
    assert "Files not read" not in names


# ------------------------------------------------------ integers of 5,000 digits


def test_a_json_request_with_a_5000_digit_number_is_one_line(tmp_path: Path):
    request = tmp_path / "request.json"
    request.write_text('{"text": "hangs", "gpus": ' + "8" * 5000 + "}", encoding="utf-8")
    run = wikibot("triage", request, data=tmp_path / "data")
    assert run.returncode == 2
    (line,) = run.stderr.decode().strip().splitlines()
    assert line.startswith("wikibot triage:") and "digits" in line


def test_5000_digit_numbers_inside_the_text_of_a_request_are_read_as_text(tmp_path: Path):
    big = "9" * 5000
    request = {
        "text": f"TP={big} DCP {big} on {big} GPUs",
        "settings": f"TP{big} DCP{big} MTP={big}",
        "gpus": f"{big}x RTX PRO 6000",
        "command": f"docker run -p {big}:8000 img:tag vllm serve m -tp {big} --max-model-len {big}",
        "log": f"INFO tensor_parallel_size={big}, max_model_len={big}\nKV cache size: {big} tokens",
    }
    kb = KnowledgeBase.open(DEMO, tmp_path / "data")
    try:
        result = triage(kb.triage_context, request)
        shown = render_text(triage_reply(result, kb.triage_context.templates))
        commands = (f"/runbook {big}", f"/acronym TP{big}", f"/explain TP{big} DCP{big}")
        replies = [render_text(dispatch(kb, command)) for command in commands]
    finally:
        kb.close()
    assert json.dumps(result.to_json()) and shown  # every number printable
    assert all(replies)
