"""``wikibot wiki fetch`` and the commands that use its data folder; kill -9 mid-fetch."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.service import demo_wiki_dir
from knowledge.source import Store
from knowledge.wiki import load_wiki
from tests.github_standin import Fault, github_standin, tarball, tree_files
from tests.support import ROOT


@pytest.fixture
def gh(monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    # What the CLI prints is asserted line by line: no handler of an earlier test
    # (nor a lower root level) may add log lines to it.
    monkeypatch.setattr(logging.root, "handlers", [])
    monkeypatch.setattr(logging.root, "level", logging.WARNING)
    with github_standin() as standin:
        yield standin


def fetch_args(gh, data: Path, source: str = "github:owner/wiki") -> list[str]:
    return ["wiki", "fetch", "--source", source, "--api-url", gh.url, "--data", str(data)]


def test_fetch_then_ask_and_index_answer_from_the_fetched_wiki(tmp_path, gh, capsys):
    files = tree_files(demo_wiki_dir())
    files["notes/fetched-only.md"] = b"# Fetched Only\n\nA page about yodelling marmots.\n"
    sha = gh.publish("owner", "wiki", "main", tarball(files))
    data = tmp_path / "data"
    assert main(fetch_args(gh, data)) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"fetched github:owner/wiki at {sha[:12]}: 20 pages") and not err
    assert len(out.splitlines()) == 1

    assert main(fetch_args(gh, data)) == 0
    assert capsys.readouterr().out.startswith(f"github:owner/wiki is unchanged at {sha[:12]}")

    assert main(["ask", "--data", str(data), "--json", "/search yodelling marmots"]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["pages"][0].startswith("notes/fetched-only.md")
    assert f"{gh.url}/owner/wiki/blob/{sha}/notes/fetched-only.md" in json.dumps(reply)

    assert main(["index", "--data", str(data)]) == 0
    assert capsys.readouterr().out.startswith("pages 20 ")


def test_fetch_then_console_answers_from_the_fetched_wiki(tmp_path, gh, capsys, monkeypatch):
    files = tree_files(demo_wiki_dir())
    files["notes/fetched-only.md"] = b"# Fetched Only\n\nA page about yodelling marmots.\n"
    sha = gh.publish("owner", "wiki", "main", tarball(files))
    data = tmp_path / "data"
    assert main(fetch_args(gh, data)) == 0
    capsys.readouterr()

    monkeypatch.setattr("sys.stdin", io.StringIO("/search yodelling marmots\n/quit\n"))
    assert main(["console", "--data", str(data)]) == 0
    out = capsys.readouterr().out
    live = Store(data).live()
    assert live is not None and live.commit == sha
    banner = out.splitlines()[0]
    assert banner.startswith("wikibot console: ") and str(live.path) in banner, banner
    assert "(20 pages, " in banner, banner
    assert "Fetched Only" in out
    assert f"{gh.url}/owner/wiki/blob/{sha}/notes/fetched-only.md" in out
    assert (data / "console_history").is_file()


def test_a_failed_fetch_is_one_line_and_leaves_the_live_wiki(tmp_path, gh, capsys):
    files = tree_files(demo_wiki_dir())
    sha = gh.publish("owner", "wiki", "main", tarball(files))
    data = tmp_path / "data"
    assert main(fetch_args(gh, data)) == 0
    capsys.readouterr()
    gh.publish("owner", "wiki", "main", tarball({**files, "../evil.md": b"# x\n"}, prefix=""))
    assert main(fetch_args(gh, data)) == 1
    out, err = capsys.readouterr()
    assert not out and len(err.splitlines()) == 1
    assert err.startswith("wikibot wiki fetch: member name with '..'")
    assert err.rstrip().endswith("(the live wiki is unchanged)")
    assert Store(data).live().commit == sha

    assert main(fetch_args(gh, data, "github:owner/wiki@nope")) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no branch, tag or commit 'nope'" in err

    assert main(fetch_args(gh, data, "github:not a source")) == 2
    assert capsys.readouterr().err.startswith("wikibot wiki fetch: not github:OWNER/REPO")


# --- kill -9 ------------------------------------------------------------------------------

#: Runs ``wikibot`` with os.replace patched to SIGKILL the process right before or right
#: after the ``live`` pointer is swapped.
KILL_AT_SWAP = """
import os, signal, sys
when = sys.argv.pop(1)
real = os.replace
def replace(src, dst, *args, **kwargs):
    if str(dst).endswith(os.sep + "live"):
        if when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *args, **kwargs)
os.replace = replace
from bot.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_cli(args: list[str], *, prefix: list[str] | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    command = prefix or [sys.executable, "-m", "bot.cli"]
    return subprocess.Popen(
        [*command, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def two_commits(gh) -> tuple[str, str, dict[str, bytes]]:
    files = tree_files(demo_wiki_dir())
    first = gh.publish("owner", "wiki", "main", tarball(files))
    changed = {**files, "notes/second.md": b"# Second\n\nOnly in the second commit.\n"}
    return first, gh.publish("owner", "wiki", "main", tarball(changed)), changed


def assert_serves(data: Path, commit: str, pages: int) -> None:
    live = Store(data).live()
    assert live is not None and live.commit == commit
    assert len(load_wiki(live.path).pages) == pages


def test_kill_9_during_the_download_leaves_the_last_good_generation(tmp_path, gh):
    files = tree_files(demo_wiki_dir())
    first = gh.publish("owner", "wiki", "main", tarball(files))
    data = tmp_path / "data"
    assert main(fetch_args(gh, data)) == 0
    second = gh.publish("owner", "wiki", "main", tarball({**files, "notes/n.md": b"# N\n"}))
    gh.fault("codeload", Fault(hold=True))
    proc = run_cli(fetch_args(gh, data))
    try:
        assert gh.holding.wait(60), "the download never started"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        gh.release.set()
        if proc.poll() is None:
            proc.kill()
    assert_serves(data, first, len(files))
    leftovers = [p.name for p in (data / "fetched").iterdir() if p.name.startswith(".tmp-")]
    assert leftovers, "the killed download left its work folder"
    assert main(fetch_args(gh, data)) == 0
    assert_serves(data, second, len(files) + 1)
    assert not [p for p in (data / "fetched").iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.parametrize("when", ["before", "after"])
def test_kill_9_during_the_swap_leaves_one_whole_generation_live(tmp_path, gh, when):
    first, second, changed = two_commits(gh)
    data = tmp_path / "data"
    gh.repos[("owner", "wiki")].refs["main"] = first
    assert main(fetch_args(gh, data)) == 0
    gh.repos[("owner", "wiki")].refs["main"] = second
    proc = run_cli(fetch_args(gh, data), prefix=[sys.executable, "-c", KILL_AT_SWAP, when])
    assert proc.wait(120) == -signal.SIGKILL, proc.stderr.read().decode()
    if when == "before":
        assert_serves(data, first, len(changed) - 1)
    else:
        assert_serves(data, second, len(changed))
    # The next check puts everything right: the second commit live, the state current.
    assert main(fetch_args(gh, data)) == 0
    assert_serves(data, second, len(changed))
    assert Store(data).state().etag == f'"{second}"'
    assert main(fetch_args(gh, data)) == 0
    assert gh.requests[-1].headers.get("If-None-Match") == f'"{second}"'
