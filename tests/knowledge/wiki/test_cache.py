"""The parsed-page cache: data only, checked, per page, and rebuilt when damaged."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pickle
import shutil
import sqlite3
import time
import weakref
from dataclasses import replace
from pathlib import Path

import pytest

from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.wiki import Page, PageCache, load_wiki
from knowledge.wiki import load as load_module
from knowledge.wiki.cache import PAGE_CACHE_FILE, CachedPages, StoredPage
from knowledge.wiki.facts import facts_of, page_facts


def _rows(cache: PageCache) -> dict[str, tuple[str, str, bytes]]:
    db = sqlite3.connect(cache.path)
    try:
        return {
            path: (sha, checksum, data)
            for path, sha, checksum, data in db.execute(
                "SELECT path, sha, checksum, data FROM pages"
            )
        }
    finally:
        db.close()


def _set_row(cache: PageCache, path: str, data: bytes, checksum: str | None = None) -> None:
    db = sqlite3.connect(cache.path)
    try:
        if checksum is None:
            db.execute("UPDATE pages SET data = ? WHERE path = ?", (data, path))
        else:
            db.execute(
                "UPDATE pages SET data = ?, checksum = ? WHERE path = ?", (data, checksum, path)
            )
        db.commit()
    finally:
        db.close()


@pytest.fixture
def wiki_dir(tmp_path: Path) -> Path:
    target = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), target)
    return target


def test_every_page_of_the_demo_wiki_comes_back_equal(wiki_dir: Path, tmp_path: Path):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    assert cache.write(wiki.pages) == len(wiki.pages)
    with cache.read() as cached:
        assert set(cached) == set(wiki.pages)
        for path, page in wiki.pages.items():
            assert cached[path] == page
            assert cached.sha(path) == page.sha
        # decoded once: the same object on every lookup
        path = next(iter(wiki.pages))
        assert cached[path] is cached[path]
    # rows hold JSON, never a pickle
    for _sha, _checksum, data in _rows(cache).values():
        assert isinstance(json.loads(data), list)


def test_only_pages_parsed_anew_and_removed_pages_are_written(wiki_dir: Path, tmp_path: Path):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages)
    before = _rows(cache)
    assert cache.update(wiki.pages) == 0
    edited, removed = sorted(wiki.pages)[:2]
    page = wiki_dir / edited
    page.write_text(page.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    (wiki_dir / removed).unlink()
    with cache.read() as cached:
        again = load_wiki(wiki_dir, cache=cached)
        fresh = [p for p, pg in again.pages.items() if pg is not cached.get(p)]
    assert fresh == [edited]
    assert cache.update(again.pages, fresh) == 1
    after = _rows(cache)
    assert removed not in after
    assert after[edited] != before[edited]
    assert {p: r for p, r in after.items() if p != edited} == {
        p: r for p, r in before.items() if p not in (edited, removed)
    }


def test_a_tampered_row_is_ignored_and_rewritten(
    wiki_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    data = tmp_path / "data"
    KnowledgeBase.open(wiki_dir, data).close()
    cache = PageCache.in_folder(data)
    rows = _rows(cache)
    glossary = next(p for p in rows if p.casefold().startswith("glossary"))
    forged = rows[glossary][2].replace(b"DCP", b"XYZ")
    assert forged != rows[glossary][2]
    _set_row(cache, glossary, forged)  # checksum left as it was
    with caplog.at_level(logging.WARNING, logger="knowledge.wiki.cache"):
        base = KnowledgeBase.open(wiki_dir, data)
    try:
        assert "damaged page cache entry" in caplog.text
        assert base.acronym("DCP").kind == "acronym"  # parsed again from the file
    finally:
        base.close()
    assert _rows(cache)[glossary] == rows[glossary]  # and written again


def test_a_row_with_a_matching_checksum_but_foreign_shape_is_ignored(
    wiki_dir: Path, tmp_path: Path
):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages)
    path = sorted(wiki.pages)[0]
    for forged in (b'{"__class__": "os.system"}', b"[1, 2, 3]", b"not json", b'["x"]'):
        import hashlib

        _set_row(cache, path, forged, hashlib.sha256(forged).hexdigest())
        with cache.read(wiki_dir) as cached:
            assert cached.damaged == []  # not read yet
            page = cached[path]
            # read when used: the row is refused and the page parsed again from its file
            assert page.sections == wiki.pages[path].sections
            assert cached.damaged == [path]
            assert cached.take_damaged() == [path]
            assert cached.take_damaged() == []
            again = load_wiki(wiki_dir, cache=cached)
        assert again.pages[path] == wiki.pages[path]


def test_a_file_that_is_not_a_database_is_replaced(
    wiki_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    data = tmp_path / "data"
    data.mkdir()
    cache = PageCache.in_folder(data)
    cache.path.write_bytes(b"\x00garbage" * 512)
    with caplog.at_level(logging.WARNING, logger="knowledge.wiki.cache"):
        base = KnowledgeBase.open(wiki_dir, data)
    try:
        assert base.acronym("DCP").kind == "acronym"
    finally:
        base.close()
    assert "page cache" in caplog.text
    with cache.read() as cached:
        assert set(cached) == set(load_wiki(wiki_dir).pages)


def test_the_old_pickle_is_never_loaded_and_is_removed(wiki_dir: Path, tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    marker = tmp_path / "ran"
    legacy = data / "pages.pickle"
    # A pickle that would create the marker file if anything unpickled it.
    payload = pickle.dumps(_Trap(str(marker)))
    legacy.write_bytes(payload)
    KnowledgeBase.open(wiki_dir, data).close()
    assert not marker.exists()
    assert not legacy.exists()
    assert (data / PAGE_CACHE_FILE).is_file()


class _Trap:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_an_unwritable_data_folder_only_costs_a_warning(
    wiki_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    wiki = load_wiki(wiki_dir)
    blocker = tmp_path / "file"
    blocker.write_text("a file where the data folder should be")
    cache = PageCache(blocker / "data" / PAGE_CACHE_FILE)
    with caplog.at_level(logging.WARNING, logger="knowledge.wiki.cache"):
        assert cache.write(wiki.pages) == 0
    assert "could not write page cache" in caplog.text
    assert dict(cache.read()) == {}


def test_a_full_disk_keeps_the_cache_it_had(
    wiki_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages)
    before = _rows(cache)

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(PageCache, "_update", full)
    with caplog.at_level(logging.WARNING, logger="knowledge.wiki.cache"):
        assert cache.write(wiki.pages) == 0
    assert "could not write page cache" in caplog.text
    monkeypatch.undo()
    assert _rows(cache) == before


def test_an_empty_cache_file_counts_as_no_cache_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    cache = PageCache.in_folder(tmp_path)
    cache.path.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="knowledge.wiki.cache"):
        assert dict(cache.read()) == {}
    assert caplog.text == ""


class _Later:
    """``time`` as a load sees it a minute after the files were written: their status
    is then old enough to vouch for their bytes (see FileStat.vouches_for)."""

    @staticmethod
    def time_ns() -> int:
        return time.time_ns() + 60 * 10**9


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The page files read from now on (by their path)."""
    read: list[str] = []
    real = load_module.read_bytes

    def reading(file: Path):
        read.append(file.name)
        return real(file)

    monkeypatch.setattr(load_module, "read_bytes", reading)
    return read


def _sections_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cached pages whose sections are read from the cache from now on."""
    read: list[str] = []
    real = CachedPages.sections_of

    def reading(self: CachedPages, page: StoredPage):
        read.append(page.path)
        return real(self, page)

    monkeypatch.setattr(CachedPages, "sections_of", reading)
    return read


def test_a_warm_start_reads_no_file_and_only_the_pages_it_shows(
    wiki_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    data = tmp_path / "data"
    monkeypatch.setattr(load_module, "time", _Later)
    eager = KnowledgeBase.open(wiki_dir, data)
    expected = eager.runbook("qwen")
    eager.close()
    files = _reads(monkeypatch)
    sections = _sections_read(monkeypatch)
    kb = KnowledgeBase.open(wiki_dir, data, lazy_index=True)
    try:
        assert files == []  # every file's status vouched for the page cached
        assert all(isinstance(page, StoredPage) for page in kb.wiki.pages.values())
        assert kb.runbook("qwen") == expected
        shown = set(sections)
        # the front page, the glossary, the hubs, the runbook: not every page
        assert 0 < len(shown) < len(kb.wiki.pages) // 2
        assert expected.pages[0].path in shown
    finally:
        kb.close()


def test_a_file_whose_status_changed_is_read_again(
    wiki_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(load_module, "time", _Later)
    data = tmp_path / "data"
    KnowledgeBase.open(wiki_dir, data).close()
    glossary = wiki_dir / "GLOSSARY.md"
    text = glossary.read_text(encoding="utf-8")
    # Same size and modification time, other bytes: only the change time tells.
    info = glossary.stat()
    glossary.write_text(text.replace("| DCP |", "| ZCP |", 1), encoding="utf-8")
    os.utime(glossary, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert glossary.stat().st_size == info.st_size
    files = _reads(monkeypatch)
    kb = KnowledgeBase.open(wiki_dir, data, lazy_index=True)
    try:
        assert files == ["GLOSSARY.md"]
        assert kb.acronym("ZCP").kind == "acronym"
        kb.reload()  # its status is recorded: the next load need not read it either
        assert files == ["GLOSSARY.md"]
    finally:
        kb.close()
    with PageCache.in_folder(data).read() as cached:
        assert cached.stats["GLOSSARY.md"].sha == cached.sha("GLOSSARY.md")


def test_a_file_changed_just_before_it_was_read_is_read_again(wiki_dir: Path, tmp_path: Path):
    """Within the file system's timestamp granularity a status vouches for nothing."""
    data = tmp_path / "data"
    KnowledgeBase.open(wiki_dir, data).close()  # the files were written just now
    wiki = load_wiki(wiki_dir)
    for path, known in wiki.stats.items():
        assert not known.vouches_for((wiki_dir / path).lstat())
        old = replace(known, read_ns=max(known.mtime_ns, known.ctime_ns) + 3 * 10**9)
        assert old.vouches_for((wiki_dir / path).lstat())


def test_stored_facts_are_the_facts_of_the_parsed_page(wiki_dir: Path, tmp_path: Path):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages, wiki.stats)
    with cache.read(wiki_dir) as cached:
        for path, page in wiki.pages.items():
            stored = cached[path]
            assert isinstance(stored, StoredPage)
            assert facts_of(stored) == page_facts(page)
        assert cached.stats == wiki.stats
    # and nothing had to be read to answer: the sections of every page are still unread
    with cache.read(wiki_dir) as cached:
        assert [facts_of(cached[path]) for path in wiki.pages] == [
            page_facts(page) for page in wiki.pages.values()
        ]
        assert all(_unread(cached[path]) for path in wiki.pages)


def _unread(page: StoredPage) -> bool:
    try:
        Page.__dict__["sections"].__get__(page, Page)
    except AttributeError:
        return True
    return False


def test_a_stored_page_equals_hashes_and_pickles_as_the_page(wiki_dir: Path, tmp_path: Path):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages)
    with cache.read(wiki_dir) as cached:
        path = sorted(wiki.pages)[0]
        page = wiki.pages[path]
        assert page == cached[path] and cached[path] == page
        assert hash(cached[path]) == hash(page)
        assert pickle.loads(pickle.dumps(cached[path])) == page
        with pytest.raises(dataclasses.FrozenInstanceError):
            cached[path].sections = ()  # type: ignore[misc]


def test_the_cache_keeps_no_page_that_no_load_holds(wiki_dir: Path, tmp_path: Path):
    """A long-running bot's edited pages are freed: the cache does not hold their old
    versions (decoded sections and all) for the rest of the run."""
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages)
    with cache.read(wiki_dir) as cached:
        path = sorted(wiki.pages)[0]
        page = cached[path]
        assert page.sections == wiki.pages[path].sections
        gone = weakref.ref(page)
        del page
        assert gone() is None
        assert cached[path] == wiki.pages[path]  # made again when asked for


def test_a_damaged_file_status_only_means_reading_the_file(wiki_dir: Path, tmp_path: Path):
    wiki = load_wiki(wiki_dir)
    cache = PageCache.in_folder(tmp_path / "data")
    cache.write(wiki.pages, wiki.stats)
    path, other = sorted(wiki.pages)[:2]
    db = sqlite3.connect(cache.path)
    try:
        db.execute("UPDATE pages SET stat = 'x:1:2' WHERE path = ?", (path,))
        db.commit()
    finally:
        db.close()
    with cache.read(wiki_dir) as cached:
        assert path not in cached.stats and cached.stats[other] == wiki.stats[other]
        again = load_wiki(wiki_dir, cache=cached, stats=cached.stats)
        assert again.pages[path] is cached[path]  # read, hashed, found unchanged
