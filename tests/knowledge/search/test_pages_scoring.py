"""The page ranker's shortcuts give, bit for bit, what a loop over every posting gives.

The reference functions below are the plain loops the ranker used before its postings
became arrays: a dictionary filled term by term (``out[doc] += weight * idf * value``),
each page's best section the first one of the highest score in that dictionary's order.
Error lines are matched against the quotes and code lines as a count over every
posting of every term of the line would match them. Floats are compared with ``==``:
the ranking, its ties and the scores shown must not move.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.search import pages as pages_module
from knowledge.search.pages import (
    _MAX_SECTION_SHARE,
    _SECTION_SHARE,
    MAX_ERROR_LINES,
    PAGE_PRIORS,
    PageRanker,
    _Bm25,
    _clean_error_line,
    _error_tokens,
    _tokens,
)
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import demo_ranker

WIKI, CATALOGUE, RANKER = demo_ranker()
#: Terms held by few sections and by many (so the share cap is crossed), and unknown ones.
TERMS = sorted(RANKER.sections.numbers, key=RANKER.sections.frequency)
SAMPLE = TERMS[:: max(1, len(TERMS) // 150)] + TERMS[-20:] + ["notawikiterm"]


def reference_scores(bm25: _Bm25, query, max_share: float = 1.0) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    count = len(bm25.docs)
    max_docs = max(20, int(max_share * count)) if max_share < 1.0 else count
    for term, weight in query.items():
        posting = bm25.postings(term)
        if not posting or len(posting) > max_docs:
            continue
        factor = weight * bm25.idf[term]
        for i, value in posting:
            out[i] += factor * value
    return dict(out)


def reference_fused(ranker: PageRanker, query, section_query):
    section_scores = reference_scores(ranker.sections, section_query, _MAX_SECTION_SHARE)
    page_scores = reference_scores(ranker.pages, query)
    best_section: dict[str, tuple[float, int]] = {}
    for i, score in section_scores.items():
        path = ranker.sections.docs[i].path
        if score > best_section.get(path, (0.0, -1))[0]:
            best_section[path] = (score, i)
    top_section = max((s for s, _ in best_section.values()), default=0.0) or 1.0
    top_page = max(page_scores.values(), default=0.0) or 1.0
    fused = {}
    for i, score in page_scores.items():
        path = ranker.pages.docs[i].path
        sec = best_section.get(path, (0.0, -1))[0]
        value = _SECTION_SHARE * sec / top_section + (1 - _SECTION_SHARE) * score / top_page
        fused[path] = value * PAGE_PRIORS.get(ranker.kinds.get(path, "reference"), 1.0)
    return fused, {path: i for path, (_, i) in best_section.items()}


def assert_same_scores(bm25: _Bm25, query, max_share: float = 1.0) -> None:
    expected = reference_scores(bm25, query, max_share)
    scores, first = bm25.scores(query, max_share)
    held = [i for i in range(len(bm25.docs)) if first[i] < len(query)]
    # the documents held, in the order the dictionary lists them, with the same floats
    order = sorted(held, key=lambda i: (int(first[i]), i))
    assert order == list(expected)
    assert [float(scores[i]) for i in order] == list(expected.values())
    assert all(scores[i] == 0.0 for i in range(len(bm25.docs)) if i not in expected)


def assert_same_fused(ranker: PageRanker, query, section_query) -> None:
    fused = ranker._fused(query, section_query)
    expected_fused, expected_best = reference_fused(ranker, query, section_query)
    paths = [doc.path for doc in ranker.pages.docs]
    held = [page for page in range(len(paths)) if fused.held[page]]
    assert {paths[page]: float(fused.scores[page]) for page in held} == expected_fused
    # every page's best section at once, and in any order and subset, is the loop's
    numbers = fused.best_sections(range(len(paths)))
    best = {paths[page]: number for page, number in enumerate(numbers) if number >= 0}
    assert best == expected_best
    some = list(reversed(range(0, len(paths), 3)))
    assert fused.best_sections(some) == [numbers[page] for page in some]
    # the best pages: by score, then path, as a sort of the loop's dictionary
    ranked = sorted(expected_fused.items(), key=lambda kv: (-kv[1], kv[0]))
    for limit in (1, 5, len(paths)):
        top = [(paths[page], score) for page, score in fused.top(limit)]
        assert top == ranked[:limit]


weights = st.sampled_from([0.5, 1.0, 1.6, 2.0])
queries = st.dictionaries(st.sampled_from(SAMPLE), weights, max_size=40)


@settings(max_examples=300, deadline=None)
@given(queries, st.sampled_from([1.0, _MAX_SECTION_SHARE, 0.01]))
def test_array_scores_are_the_loops_scores_bit_for_bit(query, max_share):
    assert_same_scores(RANKER.sections, query, max_share)
    assert_same_scores(RANKER.pages, query, max_share)


@settings(max_examples=200, deadline=None)
@given(queries, st.integers(min_value=1, max_value=48))
def test_fused_page_scores_and_best_sections_are_the_loops(query, keep):
    section_query = dict(list(query.items())[:keep])
    assert_same_fused(RANKER, query, section_query)


@settings(max_examples=200, deadline=None)
@given(
    queries,
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(RANKER.pages.docs) - 1),
            st.sampled_from([0.35, 0.6, 0.48, 0.3 * 5 / 6]),
        ),
        max_size=6,
    ),
)
def test_bonuses_and_the_best_pages_are_the_dictionarys(query, bonuses):
    """An Error quote's or a named family's bonus is added to a page's score (to 0.0 for a
    page holding no query term), and the best pages are those of the sorted dictionary."""
    fused = RANKER._fused(query, query)
    expected, _ = reference_fused(RANKER, query, query)
    paths = [doc.path for doc in RANKER.pages.docs]
    for page, bonus in bonuses:
        fused.add(page, bonus)
        expected[paths[page]] = expected.get(paths[page], 0.0) + bonus
    ranked = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))
    assert [(paths[page], score) for page, score in fused.top(len(paths))] == ranked


def test_sections_tied_on_score_keep_the_one_the_first_query_term_reached(tmp_path):
    """Two sections of one page, equal in length and score, each holding one query word:
    the best is the one holding the query's first word, though the other comes first."""
    root = tmp_path / "wiki"
    root.mkdir()
    (root / "page.md").write_text(
        "# Widgets\n\n## Red\n\nthe zorblax dial\n\n## Tan\n\nthe quuxite dial\n"
    )
    ranker = PageRanker.build(load_wiki(root))
    query = {"quuxite": 1.0, "zorblax": 1.0}
    scores, _ = ranker.sections.scores(query)
    held = [i for i in range(len(ranker.sections.docs)) if scores[i] > 0]
    assert len(held) == 2 and scores[held[0]] == scores[held[1]]
    assert_same_fused(ranker, query, query)
    (best,) = ranker._fused(query, query).best_sections([0])
    assert ranker.sections.docs[best].title == "Tan"
    hit = ranker.rank("quuxite zorblax").hits[0]
    assert hit.anchor == "tan"


def reference_quote_hits(ranker: PageRanker, errors) -> dict[str, tuple[float, str, str]]:
    """Every posting of every term of a line counted, as the ranker did before it read
    only the rarest terms' code lines."""
    postings: dict[str, list[int]] = defaultdict(list)
    for number, quote in enumerate(ranker.quotes):
        for term in quote.terms:
            postings[term].append(number)
    lines = [line for line in errors if line.strip()][:MAX_ERROR_LINES]
    found: dict[str, tuple[float, str, str]] = {}
    # each line's terms in the order they first appear in it (ties go to the earliest)
    line_terms = [list(dict.fromkeys(t for t, _ in _error_tokens(line))) for line in lines]
    for terms in [t for t in line_terms if len(t) >= 2]:
        counts: Counter[int] = Counter()
        for term in terms:
            counts.update(postings.get(term, ()))
        for number, shared in counts.items():
            if shared < 2:
                continue
            entry = ranker.quotes[number]
            if entry.quote:
                inside = shared / len(entry.terms)
                if inside < 0.8:
                    continue
                strength, shown = 0.6 * inside, entry.text
            else:
                if shared < 3 or shared / len(terms) < 0.8 or shared / len(entry.terms) < 0.5:
                    continue
                strength, shown = 0.3 * shared / len(terms), entry.text.strip()[:200]
            if strength > found.get(entry.path, (0.0, "", ""))[0]:
                found[entry.path] = (strength, entry.anchor, shown)
    return found


CODE_LINES = [quote.text for quote in RANKER.quotes]
LINE_WORDS = sorted({word for line in CODE_LINES for word in line.split()})


@st.composite
def error_line(draw) -> str:
    """A line of the wiki's code or Error quotes, some words dropped, others added."""
    words = draw(st.sampled_from(CODE_LINES)).split()
    kept = [w for w in words if draw(st.integers(0, 9)) > 0]
    extra = draw(st.lists(st.sampled_from(LINE_WORDS), max_size=3))
    return " ".join(kept + extra)


@settings(max_examples=300, deadline=None)
@given(st.lists(error_line(), min_size=1, max_size=MAX_ERROR_LINES + 2))
def test_quote_hits_read_from_the_rarest_terms_are_every_postings_hits(lines):
    assert RANKER._quote_hits(lines, "") == reference_quote_hits(RANKER, lines)


def test_a_code_line_is_found_from_its_rarest_words_alone(tmp_path):
    """A log line repeating a code line of the wiki among common words: found whole."""
    root = tmp_path / "wiki"
    root.mkdir()
    common = ["vllm", "serve", "model", "port", "host"]
    pages = {
        f"p{i}.md": f"# Page {i}\n\n## Run\n\n```\n{' '.join(common)} --flag{i}\n```\n"
        for i in range(30)
    }
    pages["target.md"] = "# Target\n\n## Crash\n\n```\nfrobnicate quuxite zorblax failed\n```\n"
    for name, text in pages.items():
        (root / name).write_text(text)
    ranker = PageRanker.build(load_wiki(root))
    line = "frobnicate quuxite zorblax failed"
    hits = ranker._quote_hits([line, " ".join(common) + " --flag7"], "")
    assert hits == reference_quote_hits(ranker, [line, " ".join(common) + " --flag7"])
    assert hits["target.md"][1] == "crash"
    assert "p7.md" in hits


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CODE_LINES + LINE_WORDS[:200] + ["OOMs", "0xdeadbeef1234"])))
def test_terms_read_with_a_memo_shared_across_texts_are_each_texts_own(texts):
    memo: dict = {}
    for text in texts:
        assert _tokens(text, memo) == _tokens(text)


def reference_clean(line: str) -> str:
    line = re.sub(
        r"(?:/[\w.\-]+){2,}/?", lambda m: " " + m.group().rstrip("/").rsplit("/", 1)[-1], line
    )
    line = re.sub(r"\b0x[0-9a-fA-F]+\b", " ", line)
    return re.sub(r"\b\d{5,}\b", " ", line)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["/opt/a/b.py", "0x7f3a", "0X1F", "123456", "a/b", "x0x1", "//"]),
            st.text(alphabet="/0x1aF._- ", max_size=12),
        ),
        max_size=10,
    ).map("".join)
)
def test_an_error_line_is_cleaned_as_by_every_pattern(line):
    assert _clean_error_line(line) == reference_clean(line)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.sampled_from(CODE_LINES + LINE_WORDS[:300]), max_size=12), min_size=2))
def test_words_remembered_from_earlier_requests_change_no_ranking(requests):
    ranker = dataclasses.replace(RANKER, words={})
    for words in requests:
        text = " ".join(words)
        fresh = dataclasses.replace(RANKER, words={})
        assert ranker.rank(text, words[:2]) == fresh.rank(text, words[:2])
    ranker.rank("nccl timeout")
    assert "nccl" in ranker.words  # remembered, so the equality above was put to the test


TIED_QUOTES = """# Trouble

## First Problem

**Error**: `frobnic wibbleton`

**Fix**: one thing.

## Second Problem

**Error**: `quuxite zorblax`

**Fix**: another.
"""

SHOW_TIED = """
import sys
from pathlib import Path
from knowledge.search.pages import PageRanker
from knowledge.wiki import load_wiki
ranker = PageRanker.build(load_wiki(Path(sys.argv[1])))
print(ranker._quote_hits(["quuxite zorblax frobnic wibbleton"], "")["trouble.md"][1])
"""


def test_of_two_equal_quotes_the_one_holding_the_lines_first_word_is_shown_in_every_run(
    tmp_path,
):
    """Two Error quotes of one page match a log line equally well: the one holding the
    line's earliest word is shown, whatever the interpreter's string hashing (a set's
    order used to decide, so two runs of the bot could show different sections)."""
    import os
    import subprocess
    import sys

    root = tmp_path / "wiki"
    root.mkdir()
    (root / "trouble.md").write_text(TIED_QUOTES)
    shown = set()
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run(
            [sys.executable, "-c", SHOW_TIED, str(root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        shown.add(done.stdout.strip())
    assert shown == {"second-problem"}


def reference_postings(docs) -> tuple[dict[str, int], list[list[tuple[int, float]]], list[float]]:
    """BM25's postings made one posting at a time: term numbers in order of first
    appearance, each term's (doc, weight) in doc order, and each term's idf."""
    import math

    k1, b = 1.2, 0.75
    n = max(1, len(docs))
    avg = max(1.0, sum(d.length for d in docs) / n if docs else 1.0)
    numbers: dict[str, int] = {}
    postings: list[list[tuple[int, float]]] = []
    for i, doc in enumerate(docs):
        norm = k1 * (1 - b + b * doc.length / avg)
        for term, count in doc.tf.items():
            if term not in numbers:
                numbers[term] = len(numbers)
                postings.append([])
            postings[numbers[term]].append((i, count * (k1 + 1) / (count + norm)))
    idfs = [math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for p in postings]
    return numbers, postings, idfs


def assert_postings_are_the_loops(bm25: _Bm25) -> None:
    numbers, postings, idfs = reference_postings(bm25.docs)
    assert bm25.numbers == numbers
    assert bm25.bounds.tolist() == [0, *itertools.accumulate(len(p) for p in postings)]
    assert list(zip(bm25.ids.tolist(), bm25.weights.tolist(), strict=True)) == [
        one for p in postings for one in p
    ]
    assert bm25.idfs.tolist() == idfs and list(bm25.idf.values()) == idfs


@pytest.mark.parametrize("run_docs", [1, 7, 256])
def test_the_postings_arrays_are_the_per_posting_loops_to_the_last_bit(monkeypatch, run_docs):
    """The demo wiki's sections and pages, in runs of one, seven and 256 documents."""
    monkeypatch.setattr(pages_module, "_RUN_DOCS", run_docs)
    assert_postings_are_the_loops(_Bm25.of(RANKER.sections.docs))
    assert_postings_are_the_loops(_Bm25.of(RANKER.pages.docs))
    assert_postings_are_the_loops(RANKER.sections)


@given(
    st.lists(
        st.dictionaries(st.sampled_from(SAMPLE[:40]), st.integers(1, 50), max_size=12),
        max_size=40,
    )
)
@settings(max_examples=60, deadline=None)
def test_postings_of_any_documents_are_the_loops(tfs):
    docs = [
        dataclasses.replace(RANKER.sections.docs[0], tf=tf, length=sum(tf.values()) + 3)
        for tf in tfs
    ]
    bm25 = _Bm25.of(docs)
    assert_postings_are_the_loops(bm25)
    assert bm25.ids.dtype.itemsize == 4 and bm25.bounds.dtype.itemsize == 8
    # counts are kept in two bytes a posting, not a float64 weight in eight
    assert bm25.counts.dtype.itemsize == 2


def test_a_count_beyond_two_bytes_keeps_four_and_the_same_weights():
    counts = {SAMPLE[0]: 70_000, SAMPLE[1]: 3}
    docs = [
        dataclasses.replace(RANKER.sections.docs[0], tf=counts, length=70_010),
        RANKER.sections.docs[1],
    ]
    bm25 = _Bm25.of(docs)
    assert_postings_are_the_loops(bm25)
    assert bm25.counts.dtype.itemsize == 4 and 70_000 in bm25.counts.tolist()


def test_term_counts_take_two_bytes_each_unless_one_needs_four():
    from knowledge.search.pages import _Counts, _SortedCounts

    for kind in (_Counts, _SortedCounts):
        small, big = kind({"b": 3, "a": 65_535}), kind({"b": 65_536, "a": 1})
        assert small.counts.typecode == "H" and big.counts.typecode == "I"
        assert dict(small.items()) == {"b": 3, "a": 65_535}
        assert dict(big.items()) == {"b": 65_536, "a": 1}
