"""``wikibot console``, ``ask`` and ``index`` as a person or a script runs them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.cli.console import dispatch, render_text
from knowledge.cli.options import progress_bar
from knowledge.service import KnowledgeBase, demo_wiki_dir

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    base = KnowledgeBase.open(demo_wiki_dir(), tmp_path_factory.mktemp("data"))
    yield base
    base.close()


def test_console_dispatch_and_render(kb):
    text = render_text(dispatch(kb, "/acronym DCP"))
    assert text.startswith("DCP\n===")
    assert "Decode Context Parallelism" in text
    assert "\nPages: GLOSSARY.md#" in text
    unknown = dispatch(kb, "/frobnicate")
    assert unknown.kind == "error" and "/runbook" in unknown.text
    assert dispatch(kb, "/runbook glm versions").kind == "versions"
    assert dispatch(kb, "/runbook glm launch").kind == "launch"
    assert dispatch(kb, "/search nccl in:optimization page:1").kind == "search"
    assert "/quit" in dispatch(kb, "/help").text


def _wikibot(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WIKIBOT_DATA": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_cli_ask_json_lists_cited_pages(tmp_path):
    result = _wikibot("ask", "--json", "/runbook qwen", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kind"] == "runbook"
    assert data["pages"][0] == "models/qwen3_v2.md#launch"
    missing = _wikibot("ask", "/acronym zzqq", tmp_path=tmp_path)
    assert missing.returncode == 1 and "not in the glossary" in missing.stdout


def test_cli_console_reads_commands_until_quit(tmp_path):
    env = {**os.environ, "WIKIBOT_DATA": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "console"],
        input="/acronym TP8\n/search nccl\n/quit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("wikibot console: ")
    assert "Tensor Parallelism" in result.stdout
    assert "Search: nccl" in result.stdout


def test_cli_index_prints_a_summary_and_no_progress_bar_off_a_terminal(tmp_path):
    result = _wikibot("index", "--full", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pages 19" in result.stdout and "index full" in result.stdout
    assert result.stderr == ""  # stderr is a pipe here: no bar drawn into logs
    again = _wikibot("index", tmp_path=tmp_path)
    assert "index reused" in again.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal_only(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_bar("indexing") as progress:
        for done in range(4):
            progress(done, 3)
    assert "indexing" in terminal.getvalue() and "3/3" in terminal.getvalue()

    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with progress_bar("indexing") as progress:
        progress(3, 3)
    assert pipe.getvalue() == ""


def test_progress_bar_draws_nothing_when_nothing_is_built(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_bar("indexing"):
        pass
    assert terminal.getvalue() == ""


@pytest.mark.parametrize("command", ["ask", "index", "console"])
def test_cli_names_a_missing_wiki_folder(tmp_path, command):
    args = [command, "--wiki", str(tmp_path / "nope")] + (["/status"] if command == "ask" else [])
    result = _wikibot(*args, tmp_path=tmp_path)
    assert result.returncode != 0
    assert "wiki folder not found" in result.stderr and "Traceback" not in result.stderr


# --- first-run papercuts ------------------------------------------------------------


def _console(kb, monkeypatch, lines, capsys, tmp_path):
    """Run the console on ``lines`` (an item that is an exception is raised by input())."""
    from knowledge.cli import console

    feed = iter(lines)

    def fake_input(prompt: str = "") -> str:
        item = next(feed)
        if isinstance(item, BaseException):
            raise item
        return item

    monkeypatch.setattr("builtins.input", fake_input)
    console.run_console(kb, str(tmp_path / "history"))
    return capsys.readouterr().out


def test_ctrl_c_at_the_prompt_drops_the_line_and_the_console_goes_on(
    kb, monkeypatch, capsys, tmp_path
):
    out = _console(
        kb, monkeypatch, [KeyboardInterrupt(), "/acronym DCP", "/quit"], capsys, tmp_path
    )
    assert "Decode Context Parallelism" in out, "the next command still ran"


def test_ctrl_c_during_a_command_stops_that_command_only(kb, monkeypatch, capsys, tmp_path):
    from knowledge.cli import console

    real = console.dispatch
    calls = iter([KeyboardInterrupt(), None])

    def interrupted_once(kb_, line, *rest):
        failure = next(calls)
        if failure is not None:
            raise failure
        return real(kb_, line, *rest)

    monkeypatch.setattr(console, "dispatch", interrupted_once)
    out = _console(kb, monkeypatch, ["/search nccl", "/acronym DCP", "/quit"], capsys, tmp_path)
    assert "Stopped." in out and "Decode Context Parallelism" in out


@pytest.mark.parametrize("word", ["help", "?", "HELP", "/help"])
def test_bare_help_and_question_mark_show_the_help(kb, word):
    reply = dispatch(kb, word)
    assert reply.text == dispatch(kb, "/help").text and "/quit" in reply.text
    assert dispatch(kb, "help with nccl").kind == "search", "a question is still a search"


@pytest.mark.parametrize(
    ("line", "title"),
    [("/acronym", "/acronym needs a term"), ("/runbook  ", "/runbook needs a model family")],
)
def test_an_empty_argument_names_the_command_typed(kb, line, title):
    reply = dispatch(kb, line)
    assert reply.title == title and "``" not in reply.title and "`?`" not in reply.title


def test_a_failing_command_logs_its_name_never_what_was_typed(
    kb, monkeypatch, capsys, tmp_path, caplog
):
    from knowledge.cli import console

    def broken(kb_, line):
        raise ValueError("broken")

    monkeypatch.setattr(console, "dispatch", broken)
    lines = ["/search my-secret-words", "pasted question words", "/zzz private", "/quit"]
    with caplog.at_level("ERROR", logger="knowledge.cli.console"):
        _console(kb, monkeypatch, lines, capsys, tmp_path)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "command failed: /search",
        "command failed: /search",
        "command failed: an unknown command",
    ]
    assert "secret" not in caplog.text and "pasted" not in caplog.text
