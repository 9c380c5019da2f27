"""Snippets: plain excerpts of a hit with the words the query matched marked."""

from __future__ import annotations

from knowledge.search import SearchIndex
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import write_wiki


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
