"""Parsing with a helper process: the same wiki as parsing alone, whatever the helper does."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from knowledge.wiki import helper as parse_helper
from knowledge.wiki import load_wiki, read_page
from tests.support import DEMO


@pytest.fixture
def two_cpus(monkeypatch):
    """The helper is used only with two usable CPUs; the tests run it anywhere."""
    monkeypatch.setattr(parse_helper, "_usable_cpus", lambda: 2)


@pytest.fixture
def odd_wiki(tmp_path: Path) -> Path:
    """The demo wiki plus pages that are skipped, each for its own reason."""
    root = tmp_path / "wiki"
    shutil.copytree(DEMO, root)
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "binary.md").write_bytes(b"# Bin\x00ary\n")
    (root / "notes" / "busy.md").write_text("# Busy\n\n" + "*_" * 30_000, encoding="utf-8")
    (root / "notes" / "latin1.md").write_bytes("# Caf\xe9\n\nText.\n".encode("latin-1"))
    os.symlink(root / "README.md", root / "notes" / "link.md")
    return root


def _view(wiki):
    return list(wiki.pages.items()), wiki.skipped


def test_a_load_with_the_helper_is_the_load_without(odd_wiki, two_cpus):
    alone = load_wiki(odd_wiki)
    helped = load_wiki(odd_wiki, helper_min_bytes=0)
    assert _view(helped) == _view(alone)
    assert {path for path, _ in alone.skipped} == {
        "notes/binary.md",
        "notes/busy.md",
        "notes/link.md",
    }
    assert "notes/latin1.md" in alone.pages


def test_pages_in_the_cache_are_not_parsed_again(odd_wiki, two_cpus, monkeypatch):
    first = load_wiki(odd_wiki)
    (odd_wiki / "notes" / "new.md").write_text("# New\n\nFresh words.\n", encoding="utf-8")
    sent: list[list[str]] = []
    real = parse_helper.parse_files

    def recording(root, files, parse_here, **kwargs):
        sent.append([file.relative_to(root).as_posix() for file in files])
        return real(root, files, parse_here, **kwargs)

    monkeypatch.setattr(parse_helper, "parse_files", recording)
    again = load_wiki(odd_wiki, first.pages, helper_min_bytes=0)
    # A page refused by the parser is tried again (it is not cached); cached ones are not.
    assert sent == [["notes/busy.md", "notes/new.md"]]
    assert again.pages["README.md"] is first.pages["README.md"]
    assert "notes/new.md" in again.pages


def test_below_the_threshold_no_helper_is_started(odd_wiki, two_cpus, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("no helper below the threshold")

    monkeypatch.setattr(parse_helper, "parse_files", refuse)
    assert _view(load_wiki(odd_wiki, helper_min_bytes=10**9)) == _view(load_wiki(odd_wiki))


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.md"))


def _alone(root: Path) -> list:
    return [read_page(root, file) for file in _files(root)]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(lambda fd, root: [sys.executable, "-c", "raise SystemExit(3)"], id="dies"),
        pytest.param(lambda fd, root: ["/nonexistent/python"], id="cannot-start"),
        pytest.param(
            lambda fd, root: [
                sys.executable,
                "-c",
                "import os, sys\nfrom multiprocessing.connection import Connection\n"
                f"c = Connection({fd})\nc.recv()\nc.send(('nonsense', 0, None, None))\n"
                "import time; time.sleep(30)",
            ],
            id="talks-nonsense",
        ),
    ],
)
def test_a_helper_that_fails_leaves_the_pages_to_this_process(odd_wiki, two_cpus, command):
    files = _files(odd_wiki)
    parsed = parse_helper.parse_files(
        odd_wiki, files, lambda file: read_page(odd_wiki, file), command=command
    )
    assert parsed == _alone(odd_wiki)


def test_the_helper_parses_every_page_last_first_as_read_page_does(odd_wiki):
    files = _files(odd_wiki)
    here, there = socket.socketpair()
    parent, child = Connection(here.detach()), Connection(there.detach())
    worker = threading.Thread(target=parse_helper.serve, args=(child, odd_wiki))
    worker.start()
    parent.send(("files", [file.relative_to(odd_wiki).as_posix() for file in files]))
    got = [parent.recv() for _ in files]
    worker.join(timeout=60)
    parent.close()
    assert [index for _, index, _, _ in got] == list(range(len(files) - 1, -1, -1))
    assert [(page, reason) for _, _, page, reason in reversed(got)] == _alone(odd_wiki)


def test_a_helper_process_parses_pages_for_a_load(odd_wiki, two_cpus, monkeypatch):
    """With the real helper process: whichever pages it parsed, the wiki is the same."""
    files = _files(odd_wiki)
    slow: list[Path] = []

    def parse_here(file: Path):
        slow.append(file)
        return read_page(odd_wiki, file)

    parsed = parse_helper.parse_files(odd_wiki, files, parse_here)
    assert parsed == _alone(odd_wiki)
    assert slow  # this process parses at least the first page
