"""/search on the demo wiki: ranking, highlighting, sections, hostile input, paging."""

from __future__ import annotations

import pytest

from knowledge import answers
from knowledge.gaps import unanswered
from knowledge.reply import LIMITS


def test_search_finds_the_section_and_pages(state, t):
    reply = answers.search(state, t, "NCCL calloc bytes")
    assert reply.kind == "search"
    assert reply.pages[0].path == "troubleshooting/common-issues.md"
    assert "**" in reply.fields[0].value  # highlighted words
    assert reply.fields[0].name.startswith("1. ")
    assert reply.meta["total"] >= 1


def test_search_category_filter_and_unknown_category(state, t):
    reply = answers.search(state, t, "nccl", category="optimization")
    assert reply.kind == "search"
    assert {p.path.split("/")[0] for p in reply.pages} == {"optimization"}
    assert reply.text.splitlines()[-1] == "Only in: optimization"
    bad = answers.search(state, t, "nccl", category="nope")
    assert bad.kind == "not_found" and "troubleshooting" in bad.text


def test_a_page_past_the_last_shows_the_first(state, t):
    first = answers.search(state, t, "nccl", per_page=2)
    past = answers.search(state, t, "nccl", page=999, per_page=2)
    assert past.meta["page"] == 1 and past.pages == first.pages
    second = answers.search(state, t, "nccl", page=2, per_page=2)
    assert second.fields[0].name.startswith("3. ")


@pytest.mark.parametrize(
    "query",
    ["*", "body:*", "[a TO z]", "(((", "x" * 5000, "", "q\u200bwen", "ＮＣＣＬ", "path:/etc"],
)
def test_hostile_search_queries_answer_cleanly(state, t, query):
    reply = answers.search(state, t, query)
    assert reply.kind in ("search", "not_found")
    assert reply.fitted().total_length() <= LIMITS.total


def test_fullwidth_and_zero_width_queries_still_find(state, t):
    assert answers.search(state, t, "ＮＣＣＬ calloc").kind == "search"
    assert answers.search(state, t, "NC\u200bCL calloc").kind == "search"


def test_section_choices_are_the_wiki_folders(state):
    assert ("troubleshooting", "troubleshooting") in answers.category_choices(state, "")
    assert answers.category_choices(state, "TROUB") == [("troubleshooting", "troubleshooting")]
    assert answers.category_choices(state, "nothing-like-it") == []


@pytest.mark.parametrize(
    "query",
    [
        " ".join(f"zorblax{n}" for n in range(40)),  # a long query that finds nothing
        "zorblax `` frobnicator " * 20,  # backticks: the code span grows its escapes
        "nccl p2p " + "x" * 150,  # under the words of a paste, as long as a query gets
        "zorblax " + "`" * 150,  # a search query, not a paste: backticks grow its span
        "nccl " + "*_" * 75,  # a search query with hits, its escapes doubling it
        "x" * 2000,  # a paste of one word: no word to show, yet a closed span
    ],
)
def test_a_title_shows_a_long_query_cut_whole_never_cut_by_discords_limit(state, t, query):
    """A title shows at most a short head of the query, cut at a word with "…": cut by
    Discord's 256-character limit instead, "Nothing found for `...`" lost its closing
    backtick and the title showed its Markdown raw."""
    reply = answers.search(state, t, query)
    assert len(reply.title) < 256 and reply.fitted().title == reply.title
    if reply.kind == "not_found":
        assert reply.title.endswith("`") and "…" in reply.title


@pytest.mark.parametrize(
    ("ranked", "text_key"),
    [(lambda *a, **k: None, "search.no_index"), (lambda *a, **k: 1 / 0, "search.failed")],
)
def test_a_search_failing_on_the_bots_side_says_so_and_blames_no_words(
    state, t, monkeypatch, ranked, text_key
):
    """No index yet, or the search raising: the answer said "Search needs words" above
    the index's own internal words; it now says the search is not available."""
    monkeypatch.setattr(type(state.index), "_rank_once", ranked)
    state.index.clear_cache()
    reply = answers.search(state, t, "nccl timeout after update")
    assert reply.kind == "error" and not reply.ok
    assert unanswered(reply) is None  # not recorded as a gap in the wiki
    assert (reply.title, reply.text) == (t("search.unavailable_title"), t(text_key))
