"""Faults injected for real through the command line: a FIFO page, skipped pages said
once per wiki change, a long log numbered as in its file, huge integers in a request."""

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
from knowledge.triage.request import MAX_LOG_CHARS, LogPart, RequestReader, capped
from tests.support import DEMO, ROOT

ERROR = "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"
INFO = "(APIServer pid=1) INFO 05-15 03:30:49 [utils.py:306] still loading shard {}"
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


# ------------------------------------------------------------------ a long log


def _long_log(path: Path, lines: int, error_at: int) -> None:
    """A log of ``lines`` lines with the known error on line ``error_at`` (1-based)."""
    with path.open("w", encoding="utf-8") as fh:
        for number in range(1, lines + 1):
            fh.write(f"(EngineCore pid=310) ERROR 05-15 03:31:06 [core.py:109] {ERROR}\n"
                     if number == error_at else INFO.format(number) + "\n")  # fmt: skip


@pytest.fixture(scope="module")
def long_log(tmp_path_factory) -> tuple[Path, int, int]:
    """About 20 MB: more than the 8 MB read; the error sits near the end."""
    path = tmp_path_factory.mktemp("long-log") / "server.log"
    lines = 20 * 1024 * 1024 // (len(INFO) + 5)
    error_at = lines - 500
    _long_log(path, lines, error_at)
    return path, lines, error_at


def _first_line_read(path: Path) -> int:
    data = path.read_bytes()
    start = len(data) - MAX_LOG_CHARS
    return data.count(b"\n", 0, data.index(b"\n", start) + 1) + 1


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_long_log_is_numbered_as_in_its_file_and_says_what_was_read(
    long_log, tmp_path: Path, how: str
):
    path, _lines, error_at = long_log
    if how == "file":
        run = wikibot("triage", "--json", "--text", "server dies", "--log", path, data=tmp_path)
    else:
        run = wikibot(
            "triage", "--json", "--text", "dies", "--log", "-", data=tmp_path,
            stdin=path.read_bytes(),
        )  # fmt: skip
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    data = json.loads(run.stdout)
    first = _first_line_read(path)
    summary = data["log_summary"]
    assert summary["first_line"] == first
    assert summary["first_error_line"] == error_at
    (known,) = [k for k in data["known_errors"] if k["field"] == "log"]
    assert [line["number"] for line in known["lines"]] == [error_at]
    (said,) = [p for p in data["problems"] if "only its end was read" in p]
    assert f"from line {first:,} on" in said
    assert f"of {path.stat().st_size:,} bytes" in said
    text = data["reply"]
    assert f"line {error_at}" in json.dumps(text)


def test_a_short_log_says_nothing_about_parts(tmp_path: Path):
    path = tmp_path / "short.log"
    _long_log(path, 200, 150)
    text, part = RequestReader().read_log(str(path), MAX_LOG_CHARS)
    assert part == LogPart(total=path.stat().st_size) and not part.cut
    assert text == path.read_text("utf-8")


def test_a_log_pasted_longer_than_the_cap_is_numbered_from_the_part_kept(tmp_path: Path):
    lines = [INFO.format(n) for n in range(1, MAX_LOG_CHARS // len(INFO) + 2000)]
    error_at = len(lines) - 10
    lines[error_at - 1] = ERROR
    typed, codes = capped({"log": "\n".join(lines)})
    assert codes == ()  # said by the log part, not as a cut field
    part = typed.log_part
    assert part.cut and part.unit == "characters"
    assert typed.log.startswith(lines[part.first_line - 1])
    kb = KnowledgeBase.open(DEMO, tmp_path / "data")
    try:
        result = triage(kb.triage_context, {"log": "\n".join(lines)})
    finally:
        kb.close()
    assert result.log_summary.first_error_line == error_at
    assert result.log_summary.first_line == part.first_line
    assert any(f"from line {part.first_line:,} on" in p for p in result.problems)


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
