"""Page status: one enum, one weight table, and the ranking it gives search."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.search.index import SearchIndex
from knowledge.wiki import WEIGHTS, Catalogue, PageStatus, load_wiki, status_of, status_weight
from tests.support import DEMO

PREFERENCE = [
    PageStatus.HUB,
    PageStatus.CURRENT,
    PageStatus.OTHER,
    PageStatus.LEGACY,
    PageStatus.HISTORICAL,
    PageStatus.ARCHIVE,
]


def test_every_status_has_its_own_weight_in_order():
    assert set(WEIGHTS) == set(PageStatus)
    weights = [WEIGHTS[status] for status in PREFERENCE]
    assert weights == sorted(weights, reverse=True)
    assert len(set(weights)) == len(weights)  # legacy is not silently ranked as other


@pytest.mark.parametrize("value", ["weird", "", None, "HUB"])
def test_unknown_status_is_other(value):
    assert status_of(value) is PageStatus.OTHER
    assert status_weight(value) == WEIGHTS[PageStatus.OTHER]


def test_statuses_are_strings_for_the_index_and_json():
    assert status_of("legacy") == "legacy"
    assert [s for s in PageStatus if not s.notable] == [PageStatus.OTHER]


def test_demo_catalogue_gives_every_status_but_other():
    statuses = Catalogue.from_wiki(load_wiki(DEMO)).statuses()
    assert all(isinstance(status, PageStatus) for status in statuses.values())
    assert set(statuses.values()) == set(PageStatus) - {PageStatus.OTHER}


def test_search_orders_equal_sections_by_page_status(tmp_path: Path):
    root = tmp_path / "wiki"
    root.mkdir()
    body = "# Notes\n\n## Warmup\n\nThe capacitor warmup takes nine minutes.\n"
    for status in PageStatus:
        (root / f"{status.value}.md").write_text(body, encoding="utf-8")
    statuses = {f"{status.value}.md": status for status in PageStatus}
    ix, _ = SearchIndex.open(load_wiki(root), tmp_path / "data", statuses=statuses)
    try:
        hits = ix.search("capacitor warmup").hits
        assert [hit.status for hit in hits] == [status.value for status in PREFERENCE]
    finally:
        ix.close()
