"""Full builds written by a child process: same results, progress, failures, kills."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
from whoosh import index as whoosh_index

from knowledge.processes import package_env
from knowledge.search import IndexBuildError, SearchIndex
from knowledge.search import child as index_child
from knowledge.search import index as index_module
from knowledge.search._whoosh import WhooshEngine
from knowledge.search.documents import section_document
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import PAGES, Boom, big_wiki, ids, manifest_path, write_wiki
from tests.support import ROOT

# --- full builds in a child process ------------------------------------------------

STATUSES = {
    "models/flux-new.md": "current",
    "models/flux-old.md": "historical",
    "guides/airships.md": "hub",
    "guides/misc.md": "archive",
}
QUERIES = (
    "zeppelin",
    "handbook",
    "flux capacitor warmup",
    "FluxError: capacitor temperature exceeded 451 kelvin",
    "frobnicator morning",
    "zeppelin fog quartermaster gondola",
    "sprocket",
    "ballast",
    "qwxzzyv",
)


class WroteHere(Exception):
    pass


def refuse_here(*args, **kwargs):
    raise WroteHere("the index was written in the test process")


def build_processes() -> list[int]:
    """Pids of this process's index build processes, read from /proc.

    Those still running (``-m knowledge.search.child`` on their command line) and
    any child that exited without being waited for (a zombie has no command line;
    nothing else in these tests leaves one).
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and (b"knowledge.search.child" in argv or state == "Z"):
            found.append(int(entry.name))
    return found


def test_build_processes_sees_a_running_build_process(wiki_dir, data_dir, index):
    # The helper the tests below rely on to see that no build process is left over.
    index.build_in_child = True
    seen: list[list[int]] = []
    index.rebuild(load_wiki(wiki_dir), progress=lambda *_: seen.append(build_processes()))
    assert len(seen) == 6
    # /proc is read while the child runs; on a loaded machine a read can race the
    # child's exec or exit, so one callback may see nothing, but never two children.
    assert all(len(pids) <= 1 for pids in seen)
    assert sum(len(pids) == 1 for pids in seen) >= 5
    assert build_processes() == []


def test_child_build_gives_the_same_index_as_an_in_process_build(wiki_dir, tmp_path):
    wiki = load_wiki(wiki_dir)
    here, here_stats = SearchIndex.open(wiki, tmp_path / "here", STATUSES, build_in_child=False)
    child, child_stats = SearchIndex.open(wiki, tmp_path / "child", STATUSES, build_in_child=True)
    try:
        assert here_stats.mode == child_stats.mode == "full"
        assert (child_stats.pages, child_stats.sections) == (here_stats.pages, here_stats.sections)
        for query in QUERIES:
            assert child.search(query, limit=20) == here.search(query, limit=20), query
        assert child.search("sprocket", limit=5, offset=5) == here.search(
            "sprocket", limit=5, offset=5
        )
        assert child.search("frobnicator", category="troubleshooting") == here.search(
            "frobnicator", category="troubleshooting"
        )
        # The same pages and versions; only the engine's file names and bytes differ.
        child_manifest, here_manifest = (
            json.loads(manifest_path(tmp_path / side).read_text()) for side in ("child", "here")
        )
        assert child_manifest.pop("files").keys() != here_manifest.pop("files").keys()
        assert child_manifest == here_manifest
    finally:
        here.close()
        child.close()


def test_child_build_writes_nothing_here_and_reports_progress(wiki_dir, data_dir, monkeypatch):
    # The child imports its own copy of the module: only an in-process build is refused.
    monkeypatch.setattr(WhooshEngine, "write", refuse_here)
    seen: list[tuple[int, int]] = []
    ix, stats = SearchIndex.open(
        load_wiki(wiki_dir),
        data_dir,
        progress=lambda done, total: seen.append((done, total)),
        build_in_child=True,
    )
    try:
        assert stats.mode == "full"
        assert seen == [(done, 6) for done in range(1, 7)]
        assert ids(ix.search("zeppelin"))[0] == "guides/airships.md#zeppelin-mooring"
        seen.clear()
        ix.rebuild(load_wiki(wiki_dir), progress=lambda done, total: seen.append((done, total)))
        assert seen == [(done, 6) for done in range(1, 7)]
        assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [ix.generation]
        assert build_processes() == []
    finally:
        ix.close()


def test_only_wikis_above_the_threshold_build_in_a_child(wiki_dir, data_dir, monkeypatch):
    monkeypatch.setattr(WhooshEngine, "write", refuse_here)
    with pytest.raises(WroteHere):  # the made-up wiki is far below the threshold
        SearchIndex.open(load_wiki(wiki_dir), data_dir)
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == []
    monkeypatch.setattr(index_module, "CHILD_BUILD_MIN_CHARS", 1)
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "full"
        assert ix.search("ballast").total == 1
        with pytest.raises(WroteHere):  # forced in process
            SearchIndex.open(load_wiki(wiki_dir), data_dir / "other", build_in_child=False)
    finally:
        ix.close()


@pytest.mark.parametrize("in_child", [True, False])
def test_update_that_would_rewrite_everything_rebuilds_where_builds_run(
    wiki_dir, data_dir, monkeypatch, in_child
):
    ix, _ = SearchIndex.open(load_wiki(wiki_dir), data_dir, build_in_child=in_child)
    try:
        generation = ix.generation
        write_wiki(wiki_dir, {"guides/misc.md": PAGES["guides/misc.md"] + "\nsmall edit\n"})
        assert ix.update(load_wiki(wiki_dir)).mode == "incremental"
        generation = ix.generation  # an update, too, is published as a new generation
        # Every made-up page changed: merging would rewrite every segment.
        for rel in PAGES:
            file = wiki_dir / rel
            file.write_text(file.read_text() + "\nappended line\n")
        if in_child:
            monkeypatch.setattr(WhooshEngine, "write", refuse_here)
        seen: list[tuple[int, int]] = []
        stats = ix.update(load_wiki(wiki_dir), progress=lambda *done_total: seen.append(done_total))
        assert stats.mode == ("full" if in_child else "incremental")
        assert ix.generation != generation
        assert seen[-1] == ((6, 6) if in_child else (5, 5))
        assert ix.search("appended").total >= len(PAGES)
        assert ix.search("small edit").total == 1
        live = whoosh_index.open_dir(str((data_dir / "current").resolve()))
        with live.reader() as reader:
            assert len(list(reader.leaf_readers())) == 1
        live.close()
        assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [ix.generation]
    finally:
        ix.close()


def test_a_big_wiki_builds_in_a_child_by_default_with_the_same_results(tmp_path, monkeypatch):
    # Well over what a pipe buffers: the sending side has to wait for the child.
    wiki = load_wiki(big_wiki(tmp_path / "wiki", index_module.CHILD_BUILD_MIN_CHARS))
    here, _ = SearchIndex.open(wiki, tmp_path / "here", build_in_child=False)
    monkeypatch.setattr(WhooshEngine, "write", refuse_here)
    seen: list[tuple[int, int]] = []
    child, stats = SearchIndex.open(
        wiki, tmp_path / "child", progress=lambda done, total: seen.append((done, total))
    )
    try:
        assert stats.mode == "full"
        assert stats.sections == sum(len(page.sections) for page in wiki.pages.values())
        assert seen == [(done, len(wiki.pages)) for done in range(1, len(wiki.pages) + 1)]
        rng = random.Random(3)
        words = sorted({w for p in wiki.pages.values() for s in p.sections for w in s.text.split()})
        queries = [" ".join(rng.sample(words, k)) for k in (1, 1, 2, 2, 3) for _ in range(4)]
        for query in queries:
            expected = here.search(query, limit=30)
            assert expected.total > 0, query
            assert child.search(query, limit=30) == expected, query
        assert child.search(queries[0], category="area3") == here.search(
            queries[0], category="area3"
        )
    finally:
        here.close()
        child.close()


#: A user's script: no ``if __name__ == "__main__":`` guard, builds at top level.
NO_GUARD_SCRIPT = """
import sys
from pathlib import Path
from knowledge.search import SearchIndex
from knowledge.search._whoosh import WhooshEngine
from knowledge.wiki import load_wiki

print("script ran", flush=True)

def refuse(*args, **kwargs):
    raise RuntimeError("the index was written in the script's own process")

WhooshEngine.write = refuse
wiki_dir, data_dir, query = sys.argv[1:4]
ix, stats = SearchIndex.open(load_wiki(Path(wiki_dir)), Path(data_dir))
print(stats.mode, stats.sections, ix.search(query).total, flush=True)
ix.close()
"""


def test_a_script_without_a_main_guard_builds_a_big_wiki_in_a_child(tmp_path):
    # Run as `python script.py` from another folder, with paths relative to it.
    wiki = load_wiki(big_wiki(tmp_path / "wiki", index_module.CHILD_BUILD_MIN_CHARS))
    sections = sum(len(page.sections) for page in wiki.pages.values())
    word = next(iter(wiki.pages.values())).sections[-1].text.split()[0]
    (tmp_path / "script.py").write_text(NO_GUARD_SCRIPT)
    run = subprocess.run(
        [sys.executable, "script.py", "wiki", "data", word],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    # Once: the build process never ran the script (a spawned one re-imports it).
    lines = run.stdout.splitlines()
    assert lines[0] == "script ran"
    mode, count, total = lines[1].split()
    assert (mode, int(count)) == ("full", sections)
    assert int(total) > 0
    assert len(lines) == 2
    assert [p.parent.name for p in (tmp_path / "data").glob("gen-*/manifest.json")] == [
        os.readlink(tmp_path / "data" / "current")
    ]


#: Runs from a checkout of the package that is not what this interpreter has installed.
CHECKOUT_SCRIPT = """
import os, sys
from pathlib import Path
import knowledge
from knowledge.search import SearchIndex
from knowledge.wiki import load_wiki

ix, stats = SearchIndex.open(load_wiki(Path(sys.argv[1])), Path(sys.argv[2]), build_in_child=True)
print(os.getpid(), stats.mode, ix.search("zeppelin").total, knowledge.__file__, flush=True)
ix.close()
"""

#: The package's __init__ in the checkout: notes each process that imports it.
MARKING_INIT = """
import os

if os.environ.get("KNOWLEDGE_COPY_MARKER"):
    with open(os.environ["KNOWLEDGE_COPY_MARKER"], "a", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\\n")
"""


def test_the_build_process_imports_the_callers_copy_of_the_package(wiki_dir, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(
        ROOT / "knowledge", checkout / "knowledge", ignore=shutil.ignore_patterns("__pycache__")
    )
    (checkout / "knowledge" / "__init__.py").write_text(MARKING_INIT)
    (checkout / "script.py").write_text(CHECKOUT_SCRIPT)
    # An unrelated folder called "knowledge" where the program runs.
    work = tmp_path / "work"
    (work / "knowledge").mkdir(parents=True)
    (work / "knowledge" / "__init__.py").write_text("raise SystemExit('wrong knowledge package')\n")
    marker = tmp_path / "imports.txt"
    run = subprocess.run(
        [sys.executable, str(checkout / "script.py"), str(wiki_dir), "data"],
        cwd=work,
        env={**os.environ, "KNOWLEDGE_COPY_MARKER": str(marker)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    pid, mode, total, package = run.stdout.split()
    assert (mode, int(total)) == ("full", 2)
    assert Path(package) == checkout / "knowledge" / "__init__.py"
    # The script's process and its build process both imported the checkout's copy.
    importers = marker.read_text().split()
    assert len(importers) == len(set(importers)) == 2
    assert pid in importers


def test_a_build_process_that_cannot_start_keeps_the_previous_index(
    wiki_dir, data_dir, index, monkeypatch
):
    before = index.generation
    index.build_in_child = True
    monkeypatch.setattr(sys, "executable", str(data_dir / "no-such-python"))
    with pytest.raises(IndexBuildError, match="build process could not be started") as failure:
        index.rebuild(load_wiki(wiki_dir))
    assert "previous index is still in use" in str(failure.value)
    assert index.generation == before
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]
    monkeypatch.undo()
    assert index.rebuild(load_wiki(wiki_dir)).mode == "full"
    assert build_processes() == []


def child_socket() -> tuple[Connection, int]:
    here, there = socket.socketpair()
    return Connection(here.detach()), there.detach()


def test_index_child_main_builds_what_it_is_sent(wiki_dir, tmp_path):
    # The build process's side of the protocol, run here (a small wiki fits in the
    # socket's buffer, so one thread can play both sides in turn).
    wiki = load_wiki(wiki_dir)
    pages = [
        [section_document(page, section, "other") for section in page.sections]
        for _, page in sorted(wiki.pages.items())
    ]
    gen_dir = tmp_path / "gen"
    gen_dir.mkdir()
    here, there = child_socket()
    with here:
        here.send(("engine", WhooshEngine()))
        for docs in pages:
            here.send(("page", docs))
        here.send(("write", None))
        assert index_child.main(["--fd", str(there), str(gen_dir)]) == 0
        messages = []
        with contextlib.suppress(EOFError):  # it closed its end when done
            while True:
                messages.append(here.recv())
    sections = sum(len(docs) for docs in pages)
    # Every page was waiting when it started: it says how far it got once, before the
    # commit (it speaks only when it has caught up with the parent).
    assert messages == [("progress", len(pages)), ("done", sections)]
    ix = whoosh_index.open_dir(str(gen_dir))
    try:
        assert ix.doc_count() == sections
    finally:
        ix.close()


def test_index_child_writes_each_page_as_it_arrives_and_says_so_when_caught_up(wiki_dir, tmp_path):
    """The build overlaps the sending: the child adds a prepared page before the next
    one (or "write") comes, and says how far it got whenever it has caught up."""
    engine = WhooshEngine()
    prepare = engine.preparer()
    wiki = load_wiki(wiki_dir)
    pages = [
        prepare([section_document(page, section, "other") for section in page.sections])
        for _, page in sorted(wiki.pages.items())
    ]
    gen_dir = tmp_path / "gen"
    gen_dir.mkdir()
    here, there = child_socket()
    codes: list[int] = []
    child = threading.Thread(
        target=lambda: codes.append(index_child.main(["--fd", str(there), str(gen_dir)]))
    )
    with here:
        here.send(("engine", engine))
        child.start()
        try:
            for done, page in enumerate(pages, start=1):
                here.send(("page", page))
                # Nothing more is sent until the child has written this page.
                assert here.poll(30), f"no word after page {done}"
                assert here.recv() == ("progress", done)
            here.send(("write", None))
            assert here.poll(30)
            assert here.recv() == ("done", sum(len(page.fields) for page in pages))
        finally:
            child.join(30)
    assert codes == [0]
    ix = whoosh_index.open_dir(str(gen_dir))
    try:
        assert ix.doc_count() == sum(len(page.fields) for page in pages)
    finally:
        ix.close()


def test_index_child_main_wants_the_engine_first_and_stops_when_the_parent_goes(tmp_path):
    here, there = child_socket()
    with here:
        here.send(("page", []))
        assert index_child.main(["--fd", str(there), str(tmp_path)]) == 1
        kind, message, _, environment = here.recv()
    assert (kind, message) == ("error", "ValueError: expected the engine first, got 'page'")
    assert environment is False  # a bug, not the machine: the parent logs its traceback
    here, there = child_socket()
    here.close()  # the parent is gone before it sent anything
    assert index_child.main(["--fd", str(there), str(tmp_path)]) == 1
    assert list(tmp_path.iterdir()) == []


class EndsTheStoringProcess:
    """A stored field value that ends the process that stores it, and only that one.

    Pickled to go down the socket, it arms itself; Whoosh pickles stored fields as
    each document is added, so the build process meets it mid-build. The build
    process can unpickle it because ``tests`` sits beside ``knowledge``, whose
    folder the build process gets on its PYTHONPATH.
    """

    def __init__(self, how: str, armed: bool = False) -> None:
        self.how = how
        self.armed = armed

    def __reduce__(self):
        if self.armed:
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif self.how == "exit":
                os._exit(3)
            else:
                raise Boom("stored value refused")
        return (EndsTheStoringProcess, (self.how, True))


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("kill", "build process was killed by SIGKILL before finishing"),
        ("exit", "build process exited with code 3 before finishing"),
        ("raise", "build process failed: Boom: stored value refused"),
    ],
)
def test_failed_build_process_keeps_the_previous_index(
    wiki_dir, data_dir, index, monkeypatch, how, message
):
    before = index.generation
    before_ids = ids(index.search("zeppelin"))
    write_wiki(wiki_dir, {"guides/extra.md": "# Extra\n\n## Zeppelin Extra\n\nzeppelin\n"})
    real = index_module.section_document
    calls = {"n": 0}

    def poisoned(*args, **kwargs):
        doc = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 5:
            doc = dataclasses.replace(doc, anchor=EndsTheStoringProcess(how))
        return doc

    monkeypatch.setattr(index_module, "section_document", poisoned)
    index.build_in_child = True
    seen: list[int] = []
    with pytest.raises(IndexBuildError, match=message) as failure:
        index.rebuild(load_wiki(wiki_dir), progress=lambda done, total: seen.append(done))
    assert "previous index is still in use" in str(failure.value)
    assert max(seen, default=0) < 7  # it died before the last page
    assert build_processes() == []
    assert index.generation == before
    assert ids(index.search("zeppelin")) == before_ids
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]
    monkeypatch.setattr(index_module, "section_document", real)
    # Another process finds the old index (and updates it); the next build works.
    again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "incremental"
        updated = again.generation
        assert updated != before
    finally:
        again.close()
    assert index.rebuild(load_wiki(wiki_dir)).mode == "full"
    assert index.generation not in (before, updated)
    assert "guides/extra.md#zeppelin-extra" in ids(index.search("zeppelin"))


def test_exception_in_progress_stops_the_build_process(wiki_dir, data_dir, index):
    before = index.generation
    index.build_in_child = True

    def fail_midway(done: int, total: int) -> None:
        if done == 3:
            raise Boom("stop")

    with pytest.raises(Boom):
        index.rebuild(load_wiki(wiki_dir), progress=fail_midway)
    assert build_processes() == []
    assert index.generation == before
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]
    assert ids(index.search("ballast")) == ["guides/airships.md#ballast"]


def test_unpicklable_document_stops_the_build_process(wiki_dir, data_dir, index, monkeypatch):
    before = index.generation
    real = index_module.section_document

    def unpicklable(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), anchor=threading.Lock())

    monkeypatch.setattr(index_module, "section_document", unpicklable)
    index.build_in_child = True
    with pytest.raises(TypeError, match="pickle"):
        index.rebuild(load_wiki(wiki_dir))
    assert build_processes() == []
    assert index.generation == before
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]


def test_the_build_process_loads_the_engine_not_the_wiki_parser_or_the_store():
    """Its start-up is part of every full build: nothing it does not use is imported."""
    code = (
        "import json, pickle, sys\n"
        "import knowledge.search.child\n"
        "from knowledge.search._whoosh import WhooshEngine\n"
        "pickle.loads(pickle.dumps(WhooshEngine()))\n"
        "heavy = ('markdown_it', 'pydantic', 'yaml', 'rapidfuzz', 'knowledge.wiki.parse',\n"
        "         'knowledge.wiki.cache', 'knowledge.search.index', 'knowledge.search.store')\n"
        "print(json.dumps([name for name in heavy if name in sys.modules]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-P", "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=package_env(),
        timeout=120,
        check=True,
    )
    assert json.loads(run.stdout) == []
