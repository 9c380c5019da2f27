"""Query cleaning: untrusted text becomes a short, bounded list of index terms."""

from __future__ import annotations

import functools
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.search._whoosh import MAX_TERM_CHARS, make_term_analyzer
from knowledge.search.query import (
    MAX_QUERY_CHARS,
    MAX_QUERY_TERMS,
    PROBLEM_EMPTY,
    PROBLEM_NO_WORDS,
    prepare_query,
)
from knowledge.text import clean_user_text
from tests.knowledge.search.helpers import ids

#: The query text as searched: cleaned and cut at the query cap.
clean_text = functools.partial(clean_user_text, limit=MAX_QUERY_CHARS)


@pytest.fixture(scope="module")
def analyzer():
    return make_term_analyzer()


def terms(analyzer, text: str) -> tuple[str, ...]:
    return prepare_query(text, analyzer).terms


def test_fullwidth_letters_fold_to_ascii():
    assert clean_text("ｎｃｃｌ　ｄｅａｄｌｏｃｋ") == "nccl deadlock"


def test_zero_width_space_inside_a_word_is_dropped(analyzer):
    assert clean_text("qw\u200ben") == "qwen"
    assert terms(analyzer, "qw\u200ben\u200d deadlock") == terms(analyzer, "qwen deadlock")


def test_control_characters_and_runs_of_spaces_become_one_space():
    assert clean_text("cuda\x00\x07out\n\n\tof   memory\u2028now") == "cuda out of memory now"


def test_long_text_is_cut_at_a_word_boundary():
    text = clean_text("word " * 100)
    assert len(text) <= MAX_QUERY_CHARS
    assert text.split() == ["word"] * len(text.split())


def test_long_query_is_marked_truncated(analyzer):
    prepared = prepare_query("nccl " + "x" * 5000, analyzer)
    assert prepared.truncated
    assert len(prepared.text) <= MAX_QUERY_CHARS
    assert prepared.terms == ("nccl",)


@pytest.mark.parametrize("raw", ["", "   ", "\u200b", "\u200b\u200d\ufeff", "\n\t"])
def test_empty_queries_say_so(analyzer, raw):
    prepared = prepare_query(raw, analyzer)
    assert prepared.terms == ()
    assert prepared.problem == PROBLEM_EMPTY


@pytest.mark.parametrize(
    "raw", ["*", "(((", "[a TO z]", "?", "AND OR NOT", "- + ~ ^ :", "the of a"]
)
def test_syntax_and_stop_words_alone_have_no_searchable_words(analyzer, raw):
    prepared = prepare_query(raw, analyzer)
    assert prepared.terms == ()
    assert prepared.problem == PROBLEM_NO_WORDS
    assert prepared.text  # the cleaned text is still reported back


def test_field_syntax_is_only_words(analyzer):
    # "body:*" must not become a field query: it is the plain word "body".
    assert terms(analyzer, "body:*") == terms(analyzer, "body")
    assert terms(analyzer, "path:models title:[a TO z]") == terms(analyzer, "path models title")


def test_terms_are_stemmed_lower_case_and_unique(analyzer):
    assert terms(analyzer, "Crashes CRASH crashed") == terms(analyzer, "crash")
    assert len(terms(analyzer, "Crashes CRASH crashed")) == 1


def test_identifiers_split_on_dots_and_underscores_but_versions_stay_whole(analyzer):
    found = terms(analyzer, "torch.AcceleratorError NCCL_P2P_LEVEL nccl==2.28.9")
    assert terms(analyzer, "AcceleratorError")[0] in found
    assert "p2p" in found
    assert "2.28.9" in found


def test_versioned_names_keep_the_version_and_add_the_name(analyzer):
    assert terms(analyzer, "Qwen3.5") == ("qwen3.5", "qwen3")
    assert terms(analyzer, "Kimi-K2.7-Code") == ("kimi", "k2.7", "k2", "code")
    assert terms(analyzer, "nccl 2.28.9") == ("nccl", "2.28.9")
    assert terms(analyzer, "GLM-5.2") == ("glm", "5.2")


def test_no_more_than_the_term_limit(analyzer):
    words = " ".join(f"word{i}" for i in range(40))
    prepared = prepare_query(words, analyzer)
    assert len(prepared.terms) == MAX_QUERY_TERMS
    assert prepared.truncated


def test_overlong_tokens_are_not_terms(analyzer):
    assert terms(analyzer, "a" * (MAX_TERM_CHARS + 1) + " gpu") == terms(analyzer, "gpu")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gives_bounded_clean_output(raw):
    prepared = prepare_query(raw, make_term_analyzer())
    assert len(prepared.text) <= MAX_QUERY_CHARS
    assert len(prepared.terms) <= MAX_QUERY_TERMS
    assert all(0 < len(t) <= MAX_TERM_CHARS for t in prepared.terms)
    assert not any(unicodedata.category(c) == "Cf" for c in prepared.text)
    assert (prepared.problem is None) == bool(prepared.terms)


# --- through the index ---------------------------------------------------------


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


def test_a_failing_analysis_logs_the_querys_size_never_its_words(caplog):
    from knowledge.search.query import PROBLEM_NO_WORDS, prepare_query

    def broken(text):
        raise RuntimeError("analyzer bug")

    with caplog.at_level("ERROR", logger="knowledge.search.query"):
        prepared = prepare_query("my private question", broken)
    assert prepared.problem == PROBLEM_NO_WORDS
    assert "private" not in caplog.text and "19 characters" in caplog.text
