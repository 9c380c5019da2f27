"""The section search index: ranking, filters, snippets, bad queries, storage and crashes."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
from whoosh import index as whoosh_index

from knowledge.search import child as index_child
from knowledge.search import index as index_module
from knowledge.search.index import (
    BuildStats,
    IndexBuildError,
    IndexLockedError,
    SearchIndex,
    SearchResults,
)
from knowledge.search.query import MAX_QUERY_CHARS, PROBLEM_EMPTY, PROBLEM_NO_WORDS
from knowledge.wiki import load_wiki

REPO = Path(__file__).parents[1]
SNAPSHOT = REPO.parent / "shared" / "wiki-snapshot"

# A small made-up wiki: each page exercises one ranking rule.
PAGES = {
    "guides/airships.md": """\
# Airship Handbook

Intro text about lighter than air craft and their crews.

## Zeppelin Mooring

How to tie the craft to a mast in wind.

## Ballast

Water ballast keeps the gondola level. Drop it slowly.
""",
    "guides/misc.md": """\
# Assorted Notes

## Weather

A zeppelin drifts; a zeppelin in fog is hard to see, and zeppelin crews hate fog.
Quartermaster duties include checking the frobnicator every morning before launch.
The handbook says so, and the handbook is always right about the handbook.
""",
    "models/flux-old.md": """\
# Flux Runbook Old

## Launch

Start the flux capacitor with the standard warmup and wait for the green lamp.
""",
    "models/flux-new.md": """\
# Flux Runbook New

## Launch

Start the flux capacitor with the standard warmup and wait for the green lamp.
""",
    "troubleshooting/faults.md": """\
# Fault Catalogue

## Capacitor Overheat

**Error**:
```
FluxError: capacitor temperature exceeded 451 kelvin in stage three
```

**Fix**: Lower the warmup rate.

## Lamp Stays Red

**Error**: lamp stays red after warmup, the frobnicator clicks twice

**Fix**: Replace the frobnicator.
""",
}

#: Sections that all mention "sprocket", to page through.
SPROCKETS = "# Sprocket Index\n\n" + "".join(
    f"## Sprocket Part {i}\n\nThe sprocket number {i} turns the wheel.\n\n" for i in range(12)
)


def write_wiki(root: Path, pages: dict[str, str]) -> Path:
    for rel, text in pages.items():
        file = root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def wiki_dir(tmp_path: Path) -> Path:
    return write_wiki(tmp_path / "wiki", {**PAGES, "parts/sprockets.md": SPROCKETS})


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def index(wiki_dir: Path, data_dir: Path):
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    assert stats.mode == "full"
    yield ix
    ix.close()


def ids(results: SearchResults) -> list[str]:
    return [hit.id for hit in results.hits]


# --- ranking -------------------------------------------------------------------


def test_section_title_beats_body_mentions(index):
    results = index.search("zeppelin")
    assert results.problem is None
    assert ids(results)[0] == "guides/airships.md#zeppelin-mooring"
    assert "guides/misc.md#weather" in ids(results)


def test_page_title_beats_body_mentions(index):
    # "handbook" is the title of the airships page and said three times in a body.
    found = ids(index.search("handbook"))
    body = "guides/misc.md#weather"
    assert body in found
    assert found[0].startswith("guides/airships.md#")
    assert all(hit.startswith("guides/airships.md#") for hit in found[: found.index(body)])


def test_current_and_hub_pages_rank_above_historical_and_archive(wiki_dir, data_dir):
    wiki = load_wiki(wiki_dir)
    new, old = "models/flux-new.md#launch", "models/flux-old.md#launch"
    statuses = {"models/flux-new.md": "current", "models/flux-old.md": "historical"}
    ix, _ = SearchIndex.open(wiki, data_dir, statuses=statuses)
    try:
        found = ids(ix.search("flux capacitor warmup"))
        assert found.index(new) < found.index(old)
        # Swapped statuses swap the order: the status decides, not the page order.
        swapped = {"models/flux-new.md": "archive", "models/flux-old.md": "hub"}
        stats = ix.update(wiki, statuses=swapped)
        assert stats.mode == "incremental"
        assert stats.changed_pages == 2
        results = ix.search("flux capacitor warmup")
        found = ids(results)
        assert found.index(old) < found.index(new)
        by_id = {hit.id: hit for hit in results.hits}
        assert by_id[old].status == "hub"
        assert by_id[new].status == "archive"
    finally:
        ix.close()


def test_unknown_status_counts_as_other(wiki_dir, data_dir):
    ix, _ = SearchIndex.open(load_wiki(wiki_dir), data_dir, statuses={"guides/misc.md": "weird"})
    try:
        assert {hit.status for hit in ix.search("zeppelin").hits} == {"other"}
    finally:
        ix.close()


def test_error_paragraph_is_found_by_its_message(index):
    results = index.search("FluxError: capacitor temperature exceeded 451 kelvin")
    assert ids(results)[0] == "troubleshooting/faults.md#capacitor-overheat"


def test_versions_narrow_and_names_widen(tmp_path):
    pages = {
        "a.md": "# Widget3.5 Tuning\n\n## Setup\n\nInstall Widget3.5 first.\n",
        "b.md": "# Widget3 Notes\n\n## Setup\n\nInstall Widget3 first.\n",
    }
    ix, _ = SearchIndex.open(load_wiki(write_wiki(tmp_path / "w", pages)), tmp_path / "d")
    try:
        assert {hit.path for hit in ix.search("widget3 install").hits} == {"a.md", "b.md"}
        hits = ix.search("widget3.5 install").hits
        assert [hit.id for hit in hits] == ["a.md#setup"]
        assert ("Widget3.5", True) in hits[0].snippet
    finally:
        ix.close()


def test_words_missing_from_the_wiki_do_not_empty_the_results(index):
    results = index.search("zeppelin qwxzzyv")
    assert ids(results)[0] == "guides/airships.md#zeppelin-mooring"


def test_when_no_section_has_every_word_the_one_with_most_words_wins(index):
    # No section holds all four words; the weather section holds three of them.
    results = index.search("zeppelin fog quartermaster gondola")
    assert results.total >= 2
    assert ids(results)[0] == "guides/misc.md#weather"


# --- filters, paging, hits -----------------------------------------------------


def test_category_filter(index):
    everywhere = index.search("frobnicator")
    assert {hit.category for hit in everywhere.hits} == {"guides", "troubleshooting"}
    only = index.search("frobnicator", category="troubleshooting")
    assert only.total == 1
    assert ids(only) == ["troubleshooting/faults.md#lamp-stays-red"]
    assert index.search("frobnicator", category="nowhere").total == 0


def test_offset_pages_through_all_results(index):
    whole = index.search("sprocket", limit=20)
    assert whole.total == 13  # the page's own heading and its twelve parts
    first = index.search("sprocket", limit=5)
    second = index.search("sprocket", limit=5, offset=5)
    third = index.search("sprocket", limit=5, offset=10)
    assert first.total == second.total == third.total == whole.total
    paged = ids(first) + ids(second) + ids(third)
    assert paged == ids(whole)
    assert len(set(paged)) == len(paged)
    assert index.search("sprocket", limit=5, offset=50).hits == ()


def test_hit_fields(index):
    hit = index.search("ballast").hits[0]
    assert hit.path == "guides/airships.md"
    assert hit.anchor == "ballast"
    assert hit.id == "guides/airships.md#ballast"
    assert hit.page_title == "Airship Handbook"
    assert hit.section_title == "Ballast"
    assert hit.category == "guides"
    assert hit.status == "other"
    assert hit.score > 0


def test_snippet_marks_the_matched_words(index):
    hit = index.search("frobnicator morning").hits[0]
    assert hit.id == "guides/misc.md#weather"
    marked = [text for text, is_match in hit.snippet if is_match]
    assert [m.lower() for m in marked] == ["frobnicator", "morning"]
    assert "*" not in hit.snippet_text and "`" not in hit.snippet_text
    assert "checking the frobnicator every morning" in hit.snippet_text


def test_snippet_marks_inflected_forms_and_stays_short(tmp_path):
    long_text = "filler words here. " * 80 + "The turbines were crashing nightly. " + "tail " * 80
    wiki = write_wiki(tmp_path / "w", {"a.md": f"# Plant\n\n## Turbines\n\n{long_text}\n"})
    ix, _ = SearchIndex.open(load_wiki(wiki), tmp_path / "d")
    try:
        hit = ix.search("turbine crash").hits[0]
        marked = [text for text, is_match in hit.snippet if is_match]
        assert marked == ["turbines", "crashing"]
        assert len(hit.snippet_text) <= 310
        assert hit.snippet_text.startswith("…") and hit.snippet_text.endswith("…")
    finally:
        ix.close()


def test_snippet_comes_from_code_when_only_code_matches(index):
    hit = index.search("kelvin").hits[0]
    assert hit.id == "troubleshooting/faults.md#capacitor-overheat"
    assert ("kelvin", True) in hit.snippet


# --- bad queries ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("", PROBLEM_EMPTY),
        ("   ", PROBLEM_EMPTY),
        ("\u200b", PROBLEM_EMPTY),
        ("*", PROBLEM_NO_WORDS),
        ("(((", PROBLEM_NO_WORDS),
        ("[a TO z]", PROBLEM_NO_WORDS),
        ("x" * 5000, PROBLEM_NO_WORDS),
    ],
)
def test_queries_with_nothing_to_search_say_why(index, raw, problem):
    results = index.search(raw)
    assert results.hits == ()
    assert results.total == 0
    assert results.problem == problem
    assert len(results.query) <= MAX_QUERY_CHARS


def test_field_and_wildcard_syntax_is_searched_as_words(index):
    # "body:*" is the word "body", which the wiki does not have: nothing, not everything.
    results = index.search("body:*")
    assert results.total == 0
    assert results.problem is None
    assert index.search("text:zeppelin*").total == index.search("text zeppelin").total
    assert index.search("path:guides").total == index.search("guides").total


def test_fullwidth_and_zero_width_queries_find_the_plain_words(index):
    plain = ids(index.search("zeppelin mooring"))
    assert ids(index.search("ｚｅｐｐｅｌｉｎ ｍｏｏｒｉｎｇ")) == plain
    assert ids(index.search("zep\u200bpelin moor\u200bing")) == plain


def test_long_query_runs_on_its_first_words(index):
    results = index.search("frobnicator " + "word " * 1000)
    assert results.problem is None
    assert len(results.query) <= MAX_QUERY_CHARS
    assert results.total >= 1


def test_limit_and_offset_are_clamped(index):
    assert len(index.search("sprocket", limit=0).hits) == 1
    assert len(index.search("sprocket", limit=10_000).hits) == 13
    assert index.search("sprocket", offset=-5).hits == index.search("sprocket").hits


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


def manifest_path(data_dir: Path) -> Path:
    return data_dir / "current" / "manifest.json"


@pytest.mark.parametrize("key", ["whoosh_version", "schema_version"])
def test_full_rebuild_when_versions_in_the_manifest_differ(wiki_dir, data_dir, index, key):
    index.close()
    manifest = json.loads(manifest_path(data_dir).read_text())
    manifest[key] = "0.0.1" if key == "whoosh_version" else manifest[key] + 100
    manifest_path(data_dir).write_text(json.dumps(manifest))
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert stats.mode == "full"
        assert ix.search("zeppelin").total >= 2
        again = json.loads(manifest_path(data_dir).read_text())
        assert again["whoosh_version"] == whoosh_index.__version_string__
    finally:
        ix.close()


@pytest.mark.parametrize("garbage", ["{not json", "[]", '{"pages": {"a.md": 5}}', ""])
def test_corrupt_manifest_means_a_rebuild(wiki_dir, data_dir, index, garbage):
    index.close()
    manifest_path(data_dir).write_text(garbage)
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
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


class Boom(RuntimeError):
    pass


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
    real = index_module._document

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise Boom("bad section")
        return real(*args, **kwargs)

    monkeypatch.setattr(index_module, "_document", flaky)
    with pytest.raises(Boom):
        index.rebuild(load_wiki(wiki_dir))
    monkeypatch.setattr(index_module, "_document", real)
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
from knowledge.search import index as index_module
from knowledge.wiki import load_wiki

wiki_dir, data_dir, when = sys.argv[1:4]
ix, _ = index_module.SearchIndex.open(load_wiki(wiki_dir), Path(data_dir))
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
    index_module._fsync_tree = die
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
        cwd=REPO,
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


def test_whoosh_writer_lock_gives_a_clear_error(wiki_dir, data_dir, index):
    (wiki_dir / "guides" / "misc.md").write_text("# Assorted Notes\n\n## Other\n\nchanged\n")
    held = whoosh_index.open_dir(str((data_dir / "current").resolve())).writer()
    try:
        with pytest.raises(IndexLockedError, match="locked"):
            SearchIndex.update(index, load_wiki(wiki_dir))
    finally:
        held.cancel()
    assert index.update(load_wiki(wiki_dir)).mode == "incremental"


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
    assert all(len(pids) == 1 for pids in seen)
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
        assert json.loads(manifest_path(tmp_path / "child").read_text()) == json.loads(
            manifest_path(tmp_path / "here").read_text()
        )
    finally:
        here.close()
        child.close()


def test_child_build_writes_nothing_here_and_reports_progress(wiki_dir, data_dir, monkeypatch):
    # The child imports its own copy of the module: only an in-process build is refused.
    monkeypatch.setattr(index_module, "_write_generation", refuse_here)
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
    monkeypatch.setattr(index_module, "_write_generation", refuse_here)
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
        assert ix.generation == generation
        # Every made-up page changed: merging would rewrite every segment.
        for rel in PAGES:
            file = wiki_dir / rel
            file.write_text(file.read_text() + "\nappended line\n")
        if in_child:
            monkeypatch.setattr(index_module, "_write_generation", refuse_here)
        seen: list[tuple[int, int]] = []
        stats = ix.update(load_wiki(wiki_dir), progress=lambda *done_total: seen.append(done_total))
        assert stats.mode == ("full" if in_child else "incremental")
        assert (ix.generation != generation) is in_child
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


def big_wiki(root: Path, chars: int) -> Path:
    """Made-up pages with at least ``chars`` characters of section text in all."""
    rng = random.Random(20)
    syllables = ["ka", "lo", "mi", "ten", "dra", "vo", "zu", "rek", "pa", "sil", "or", "nex"]
    vocabulary = ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(3000)]
    pages: dict[str, str] = {}
    written = 0
    while written < chars:
        sections = []
        for n in range(4):
            text = " ".join(rng.choices(vocabulary, k=rng.randint(40, 160)))
            sections.append(f"## {' '.join(rng.choices(vocabulary, k=2))} {n}\n\n{text}\n")
            written += len(text)
        pages[f"area{len(pages) % 7}/page{len(pages)}.md"] = f"# Page {len(pages)}\n\n" + "\n".join(
            sections
        )
    return write_wiki(root, pages)


def test_a_big_wiki_builds_in_a_child_by_default_with_the_same_results(tmp_path, monkeypatch):
    # Well over what a pipe buffers: the sending side has to wait for the child.
    wiki = load_wiki(big_wiki(tmp_path / "wiki", index_module.CHILD_BUILD_MIN_CHARS))
    here, _ = SearchIndex.open(wiki, tmp_path / "here", build_in_child=False)
    monkeypatch.setattr(index_module, "_write_generation", refuse_here)
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
from knowledge.search import index as index_module
from knowledge.wiki import load_wiki

print("script ran", flush=True)

def refuse(*args, **kwargs):
    raise RuntimeError("the index was written in the script's own process")

index_module._write_generation = refuse
wiki_dir, data_dir, query = sys.argv[1:4]
ix, stats = index_module.SearchIndex.open(load_wiki(Path(wiki_dir)), Path(data_dir))
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
from knowledge.search.index import SearchIndex
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
        REPO / "knowledge", checkout / "knowledge", ignore=shutil.ignore_patterns("__pycache__")
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
    schema = SearchIndex(tmp_path / "unused").schema
    pages = [
        [index_module._document(page, section, "other") for section in page.sections]
        for _, page in sorted(wiki.pages.items())
    ]
    gen_dir = tmp_path / "gen"
    gen_dir.mkdir()
    here, there = child_socket()
    with here:
        here.send(("schema", schema))
        for docs in pages:
            here.send(("page", docs))
        here.send(("write", None))
        assert index_child.main(["--fd", str(there), str(gen_dir)]) == 0
        messages = []
        with contextlib.suppress(EOFError):  # it closed its end when done
            while True:
                messages.append(here.recv())
    sections = sum(len(docs) for docs in pages)
    assert messages == [("progress", n) for n in range(1, len(pages) + 1)] + [("done", sections)]
    ix = whoosh_index.open_dir(str(gen_dir))
    try:
        assert ix.doc_count() == sections
    finally:
        ix.close()


def test_index_child_main_wants_the_schema_first_and_stops_when_the_parent_goes(tmp_path):
    here, there = child_socket()
    with here:
        here.send(("page", []))
        assert index_child.main(["--fd", str(there), str(tmp_path)]) == 1
        kind, message, _ = here.recv()
    assert (kind, message) == ("error", "ValueError: expected the schema first, got 'page'")
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
    real = index_module._document
    calls = {"n": 0}

    def poisoned(*args, **kwargs):
        doc = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 5:
            doc["anchor"] = EndsTheStoringProcess(how)
        return doc

    monkeypatch.setattr(index_module, "_document", poisoned)
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
    monkeypatch.setattr(index_module, "_document", real)
    # Another process finds the old index (and updates it); the next build works.
    again, stats = SearchIndex.open(load_wiki(wiki_dir), data_dir)
    try:
        assert (stats.mode, again.generation) == ("incremental", before)
    finally:
        again.close()
    assert index.rebuild(load_wiki(wiki_dir)).mode == "full"
    assert index.generation != before
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
    real = index_module._document

    def unpicklable(*args, **kwargs):
        return {**real(*args, **kwargs), "anchor": threading.Lock()}

    monkeypatch.setattr(index_module, "_document", unpicklable)
    index.build_in_child = True
    with pytest.raises(TypeError, match="pickle"):
        index.rebuild(load_wiki(wiki_dir))
    assert build_processes() == []
    assert index.generation == before
    assert [p.name for p in data_dir.iterdir() if p.name.startswith("gen-")] == [before]


# --- the real wiki ----------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


@pytest.mark.skipif(not SNAPSHOT.is_dir(), reason=f"real wiki snapshot not found at {SNAPSHOT}")
def test_error_sections_of_the_real_wiki_are_found_by_their_error_text(tmp_path):
    """Each **Error** section is the top hit for its own error text.

    Where the wiki quotes the very same error under **Error** in more than one
    section, the query cannot tell them apart; then every section ranked above
    the expected one must be such a duplicate (its own error text contains the
    query), and the expected one must still be on the first page.
    """
    wiki = load_wiki(SNAPSHOT)
    ix, _ = SearchIndex.open(wiki, tmp_path / "data")
    probe = ix.prepare
    error_texts: dict[str, str] = {}
    cases: list[tuple[str, str]] = []
    for page in wiki.pages.values():
        for section in page.sections:
            label = section.label("Error")
            if label is None:
                continue
            sid = f"{page.path}#{section.anchor}"
            error_texts[sid] = _norm("\n".join((label.text, *label.code)))
            query = label.text
            if not probe(query).terms and label.code:
                query = label.code[0]
            cases.append((query, sid))
    assert cases, "the snapshot has no **Error** sections any more"
    try:
        not_first = []
        for query, sid in cases:
            found = ids(ix.search(query))
            assert sid in found, f"{sid} not on the first page for {query!r}: {found}"
            above = found[: found.index(sid)]
            wanted = _norm(query)[:MAX_QUERY_CHARS]
            for other in above:
                assert wanted in error_texts.get(other, ""), (
                    f"{other} ranks above {sid} for {query!r} without quoting that error"
                )
            if above:
                not_first.append(sid)
        # Duplicates are the exception, not the rule.
        assert len(not_first) <= len(cases) // 4, not_first
    finally:
        ix.close()
