"""The index on disk: reuse, updates in place, rebuilds, crashes, kills and locks."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import whoosh
from whoosh import index as whoosh_index

from knowledge.search import BuildStats, IndexLockedError, SearchIndex
from knowledge.search import index as index_module
from knowledge.search.store import Store
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import PAGES, Boom, ids, manifest_path, write_wiki
from tests.support import ROOT

# --- storage: reuse, incremental, rebuild ---------------------------------------


def test_reused_when_the_wiki_is_unchanged(wiki_dir, data_dir, index):
    generation = index.generation
    again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats == BuildStats("reused", 6, stats.sections, 0, stats.seconds)
        assert again.generation == generation
        assert ids(again.search("zeppelin")) == ids(index.search("zeppelin"))
    finally:
        again.close()


def test_incremental_when_a_page_changes(wiki_dir, data_dir, index):
    index.close()
    (wiki_dir / "guides" / "misc.md").write_text(
        "# Assorted Notes\n\n## Harbour\n\nThe dirigible waits in the harbour.\n"
    )
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "incremental"
        assert stats.changed_pages == 1
        assert ix.search("quartermaster").total == 0
        assert "guides/misc.md#weather" not in ids(ix.search("zeppelin fog"))
        assert ids(ix.search("dirigible")) == ["guides/misc.md#harbour"]
    finally:
        ix.close()


def test_incremental_when_a_page_is_removed_or_added(wiki_dir, data_dir, index):
    (wiki_dir / "guides" / "misc.md").unlink()
    write_wiki(wiki_dir, {"guides/new.md": "# New\n\n## Blimps\n\nA blimp has no frame.\n"})
    stats = index.update(load_wiki(wiki_dir))
    assert stats.mode == "incremental"
    assert stats.changed_pages == 2
    assert all(hit.path != "guides/misc.md" for hit in index.search("zeppelin").hits)
    assert index.search("quartermaster").total == 0
    assert ids(index.search("blimp")) == ["guides/new.md#blimps"]
    # And the result survives a reopen as "reused".
    again, reopened = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert reopened.mode == "reused"
        assert ids(again.search("blimp")) == ["guides/new.md#blimps"]
    finally:
        again.close()


def test_repeated_updates_keep_at_most_two_segments(wiki_dir, data_dir, index):
    # A big first segment, as on a real wiki, then small updates one after another.
    many = "# Many\n\n" + "".join(f"## Item {i}\n\nitem {i}\n\n" for i in range(300))
    write_wiki(wiki_dir, {"parts/many.md": many})
    index.rebuild(load_wiki(wiki_dir))
    for i in range(6):
        write_wiki(wiki_dir, {f"guides/page{i}.md": f"# Page {i}\n\n## Gear {i}\n\ncog{i}\n"})
        write_wiki(wiki_dir, {"guides/misc.md": PAGES["guides/misc.md"] + f"\nrevision{i}\n"})
        assert index.update(load_wiki(wiki_dir)).mode == "incremental"
        live = whoosh_index.open_dir(str((data_dir / "current").resolve()))
        with live.reader() as reader:
            assert len(list(reader.leaf_readers())) <= 2, f"after update {i}"
        live.close()
    assert [index.search(f"cog{i}").total for i in range(6)] == [1] * 6
    assert index.search("revision5").total == 1
    assert index.search("revision4").total == 0


def test_exception_mid_update_changes_nothing(wiki_dir, data_dir, index):
    write_wiki(wiki_dir, {"guides/new.md": "# New\n\n## Blimps\n\nA blimp has no frame.\n"})
    (wiki_dir / "guides" / "misc.md").unlink()

    def fail(done: int, total: int) -> None:
        if done == 2:
            raise Boom("interrupted")

    with pytest.raises(Boom):
        index.update(load_wiki(wiki_dir), progress=fail)
    assert index.search("blimp").total == 0
    assert index.search("quartermaster").total == 1
    stats = index.update(load_wiki(wiki_dir))
    assert (stats.mode, stats.changed_pages) == ("incremental", 2)
    assert index.search("blimp").total == 1
    assert index.search("quartermaster").total == 0


def test_update_with_nothing_changed_is_reused(wiki_dir, index):
    assert index.update(load_wiki(wiki_dir)).mode == "reused"


def test_many_changed_pages_mean_a_full_rebuild(wiki_dir, data_dir, index):
    index.close()
    for rel in PAGES:
        file = wiki_dir / rel
        file.write_text(file.read_text() + "\nappended line\n")
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "full"
        assert ix.search("appended").total >= len(PAGES)
    finally:
        ix.close()


@pytest.mark.parametrize("key", ["engine_version", "schema_version"])
def test_full_rebuild_when_versions_in_the_manifest_differ(wiki_dir, data_dir, index, key):
    index.close()
    manifest = json.loads(manifest_path(data_dir).read_text())
    manifest[key] = "0.0.1" if key == "engine_version" else manifest[key] + 100
    manifest_path(data_dir).write_text(json.dumps(manifest))
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "full"
        assert ix.search("zeppelin").total >= 2
        again = json.loads(manifest_path(data_dir).read_text())
        assert again["engine_version"] == whoosh.versionstring()
    finally:
        ix.close()


@pytest.mark.parametrize(
    "garbage",
    [
        "{not json",
        "[]",
        '{"pages": {"a.md": 5}}',
        "",
        '{"schema_version": 2, "whoosh_version": "2.7", "pages": {}}',
    ],
)
def test_corrupt_manifest_means_a_rebuild(wiki_dir, data_dir, index, garbage, caplog):
    index.close()
    manifest_path(data_dir).write_text(garbage)
    with caplog.at_level(logging.WARNING, logger="knowledge.search.store"):
        ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    said = [r.getMessage() for r in caplog.records if "manifest" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0] and "pydantic" not in said[0]
    try:
        assert stats.mode == "full"
        assert ids(ix.search("zeppelin"))[0] == "guides/airships.md#zeppelin-mooring"
    finally:
        ix.close()


def test_corrupt_index_files_mean_a_rebuild(wiki_dir, data_dir, index):
    index.close()
    live = (data_dir / "current").resolve()
    for file in live.iterdir():
        if file.suffix in (".seg", ".toc"):
            file.write_bytes(b"\x00garbage")
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "full"
        assert ix.search("zeppelin").total >= 2
    finally:
        ix.close()


def test_missing_generation_means_a_rebuild(wiki_dir, data_dir, index):
    index.close()
    target = (data_dir / "current").resolve()
    for file in target.iterdir():
        file.unlink()
    target.rmdir()
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "full"
    finally:
        ix.close()


def test_rebuild_swaps_generations_and_removes_the_old_one(wiki_dir, data_dir, index):
    before = index.generation
    seen: list[tuple[int, int]] = []
    stats = index.rebuild(
        load_wiki(wiki_dir), progress=lambda done, total: seen.append((done, total))
    )
    assert stats.mode == "full"
    assert stats.pages == 6
    assert seen[-1] == (6, 6)
    assert [done for done, _ in seen] == list(range(1, 7))
    assert index.generation != before
    assert (data_dir / "current").is_symlink()
    generations = [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")]
    assert generations == [index.generation]
    assert ids(index.search("zeppelin"))[0] == "guides/airships.md#zeppelin-mooring"


# --- crashes and locks ----------------------------------------------------------


def test_exception_mid_rebuild_keeps_the_previous_index(wiki_dir, data_dir, index):
    before_ids = ids(index.search("zeppelin"))
    before = index.generation
    write_wiki(wiki_dir, {"guides/extra.md": "# Extra\n\n## Zeppelin Extra\n\nzeppelin\n"})

    def fail_midway(done: int, total: int) -> None:
        if done == 3:
            raise Boom("disk on fire")

    with pytest.raises(Boom):
        index.rebuild(load_wiki(wiki_dir), progress=fail_midway)
    assert index.generation == before
    assert ids(index.search("zeppelin")) == before_ids
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]
    # A fresh process sees the old index, finds the wiki changed and updates it.
    again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "incremental"
        assert "guides/extra.md#zeppelin-extra" in ids(again.search("zeppelin"))
    finally:
        again.close()


def test_exception_while_writing_documents_keeps_the_previous_index(
    wiki_dir, data_dir, index, monkeypatch
):
    before = index.generation
    calls = {"n": 0}
    real = index_module.section_document

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise Boom("bad section")
        return real(*args, **kwargs)

    monkeypatch.setattr(index_module, "section_document", flaky)
    with pytest.raises(Boom):
        index.rebuild(load_wiki(wiki_dir))
    monkeypatch.setattr(index_module, "section_document", real)
    assert index.generation == before
    assert ids(index.search("ballast")) == ["guides/airships.md#ballast"]
    again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "reused"
    finally:
        again.close()


KILLER = """
import os, signal, sys
from pathlib import Path
from knowledge.search import SearchIndex, store
from knowledge.wiki import load_wiki

wiki_dir, data_dir, when = sys.argv[1:4]
ix, _ = SearchIndex.open(load_wiki(wiki_dir), Path(data_dir))
ix.build_in_child = when.startswith("child-")
when = when.removeprefix("child-")

def die(*args, **kwargs):
    for entry in Path("/proc").iterdir():  # a build process left behind
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"knowledge.search.child" in argv:
            print("build process", entry.name, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

def at_third_page(done, total):
    if done == 3:
        die()

if when == "before-swap":
    store.fsync_tree = die
ix.rebuild(load_wiki(wiki_dir), progress=at_third_page if when == "adding" else None)
"""


def process_ended(pid: int) -> bool:
    """Wait (up to a minute) for a process that is not our child to exit."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):  # exited, not reaped yet
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("when", ["adding", "before-swap", "child-adding", "child-before-swap"])
def test_killed_rebuild_leaves_the_previous_index_serving(wiki_dir, data_dir, index, when):
    before = index.generation
    expected = ids(index.search("zeppelin"))
    index.close()
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLER), str(wiki_dir), str(data_dir), when],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    # A build process whose parent was killed notices (its socket breaks) and exits.
    orphans = [
        int(line.removeprefix("build process "))
        for line in child.stdout.decode().split("\n")
        if line
    ]
    # Killed mid-build, the parent leaves one behind; killed later, it has waited for it.
    assert len(orphans) == (1 if when == "child-adding" else 0), child.stdout.decode()
    for pid in orphans:
        assert process_ended(pid), f"build process {pid} outlived its parent"
    leftovers = [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")]
    assert len(leftovers) == 2  # the live one and the half-built one
    again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "reused"
        assert again.generation == before
        assert ids(again.search("zeppelin")) == expected
        # The half-built generation is cleaned up once nobody is building.
        assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]
    finally:
        again.close()


def test_rebuild_by_another_instance_does_not_break_searches(wiki_dir, data_dir, index):
    expected = ids(index.search("zeppelin"))  # this instance now has a searcher open
    other, _ = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    waiting, _ = SearchIndex.open(load_wiki(wiki_dir), data_dir)  # no searcher yet
    try:
        other.rebuild(load_wiki(wiki_dir))  # removes the generation the others opened
        assert ids(index.search("zeppelin")) == expected
        assert ids(waiting.search("zeppelin")) == expected
        assert waiting.generation == other.generation
        assert index.update(load_wiki(wiki_dir)).mode == "reused"
        assert index.generation == other.generation
    finally:
        other.close()
        waiting.close()


def test_held_build_lock_gives_a_clear_error_not_a_hang(wiki_dir, data_dir, index):
    index.close()
    (wiki_dir / "guides" / "misc.md").write_text("# Assorted Notes\n\n## Other\n\nchanged\n")
    fd = os.open(data_dir / "build.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(IndexLockedError, match="another process"):
            SearchIndex.open(load_wiki(wiki_dir), data_dir, lock_timeout=0.2)
        # A zero timeout fails at once.
        with pytest.raises(IndexLockedError):
            SearchIndex.open(load_wiki(wiki_dir), data_dir, lock_timeout=0)
    finally:
        os.close(fd)
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir, lock_timeout=0.2)
    try:
        assert stats.mode == "incremental"
    finally:
        ix.close()


def test_reader_needs_no_lock(wiki_dir, data_dir, index):
    fd = os.open(data_dir / "build.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir, lock_timeout=0)
        assert stats.mode == "reused"
        assert again.search("zeppelin").total >= 2
        again.close()
    finally:
        os.close(fd)


def test_update_never_writes_the_live_generation(wiki_dir, data_dir, index, monkeypatch):
    # A Whoosh writer holding the live generation does not matter: updates fill a copy.
    monkeypatch.setattr(Store, "clean_old", lambda self: None)  # keep the old one to look at
    live = (data_dir / "current").resolve()
    before = {file.name: file.read_bytes() for file in live.iterdir() if file.is_file()}
    (wiki_dir / "guides" / "misc.md").write_text("# Assorted Notes\n\n## Other\n\nchanged\n")
    held = whoosh_index.open_dir(str(live)).writer()
    try:
        assert index.update(load_wiki(wiki_dir)).mode == "incremental"
        after = {file.name: file.read_bytes() for file in live.iterdir() if file.is_file()}
    finally:
        held.cancel()
    assert {name: after[name] for name in before} == before
    assert (data_dir / "current").resolve() != live
    assert index.search("changed").total == 1


def test_closed_index_refuses_searches(index):
    index.close()
    with pytest.raises(RuntimeError, match="closed"):
        index.search("zeppelin")


def test_concurrent_searches_during_updates(wiki_dir, data_dir, index):
    expected = ids(index.search("ballast"))
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        try:
            while not stop.is_set():
                results = index.search("ballast")
                assert results.problem is None
                assert ids(results) == expected
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        wiki = load_wiki(wiki_dir)
        for i in range(3):
            write_wiki(wiki_dir, {"guides/extra.md": f"# Extra\n\n## Note\n\nrevision {i}\n"})
            index.update(load_wiki(wiki_dir))
        index.rebuild(wiki)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert errors == []


def test_held_build_lock_names_its_holder_and_is_free_again_after(data_dir):
    holder, other = Store(data_dir), Store(data_dir)
    with (
        holder.lock(0),
        pytest.raises(IndexLockedError, match=rf"\(pid {os.getpid()}\)"),
        other.lock(0),
    ):
        pass
    with Store(data_dir).lock(0):
        pass
