"""/search on the demo wiki: ranking, highlighting, sections, hostile input, paging."""

from __future__ import annotations

import pytest

from knowledge import answers
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
