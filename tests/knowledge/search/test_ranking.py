"""Ranking: which sections come first, filters, paging, the fields of a hit, the real wiki."""

from __future__ import annotations

from knowledge.search import MAX_QUERY_CHARS, SearchIndex
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import ids, write_wiki
from tests.support import SNAPSHOT, needs_snapshot

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


# --- the real wiki ----------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


@needs_snapshot
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
