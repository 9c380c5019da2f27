"""Fixtures of the search index tests: a small made-up wiki and its index."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.search import SearchIndex
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import PAGES, SPROCKETS, write_wiki


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
