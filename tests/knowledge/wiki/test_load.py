"""Reading a folder: only regular files, and the parsed-page cache between runs."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from knowledge.wiki import PageCache, load_wiki
from knowledge.wiki.cache import PAGE_CACHE_FILE
from tests.support import hang_guard


def _wiki(root: Path) -> Path:
    root.mkdir()
    (root / "a.md").write_text("# A\n\n## Setup\n\nInstall it.\n", encoding="utf-8")
    return root


def test_a_fifo_named_like_a_page_is_skipped_without_blocking(tmp_path: Path):
    root = _wiki(tmp_path / "wiki")
    os.mkfifo(root / "pipe.md")
    with hang_guard(10, "loading a wiki with a FIFO"):
        wiki = load_wiki(root)
    assert list(wiki.pages) == ["a.md"]
    assert dict(wiki.skipped) == {"pipe.md": "not a regular file"}


def test_cached_pages_are_reused_and_a_stale_cache_is_not(tmp_path: Path):
    wiki = load_wiki(_wiki(tmp_path / "wiki"))
    cache = PageCache.in_folder(tmp_path / "data")
    assert dict(cache.read()) == {}
    assert cache.write(wiki.pages) == 1
    assert cache.path.name == PAGE_CACHE_FILE
    with cache.read() as cached:
        assert dict(cached) == wiki.pages
        again = load_wiki(tmp_path / "wiki", cache=cached)
        assert again.pages["a.md"] is cached["a.md"]
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE meta SET value = '0/old' WHERE key = 'version'")
    db.close()
    assert dict(cache.read()) == {}
    cache.path.write_bytes(b"not a database" * 100)
    assert dict(cache.read()) == {}
