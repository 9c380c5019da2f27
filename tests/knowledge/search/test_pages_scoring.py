"""The page ranker's array scoring gives, bit for bit, what a loop over the postings gives.

The reference functions below are the plain loops the ranker used before its postings
became arrays: a dictionary filled term by term (``out[doc] += weight * idf * value``),
each page's best section the first one of the highest score in that dictionary's order.
Floats are compared with ``==``: the ranking, its ties and the scores shown must not move.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.search.pages import (
    _MAX_SECTION_SHARE,
    _SECTION_SHARE,
    PAGE_PRIORS,
    PageRanker,
    _Bm25,
)
from knowledge.wiki import Catalogue, Glossary, load_wiki
from tests.support import DEMO

WIKI = load_wiki(DEMO)
CATALOGUE = Catalogue.from_wiki(WIKI)
RANKER = PageRanker.build(
    WIKI,
    CATALOGUE.statuses(),
    catalogue=CATALOGUE,
    glossary=Glossary.from_wiki(WIKI, CATALOGUE.wiki.find_page("README.md")),
)
#: Terms held by few sections and by many (so the share cap is crossed), and unknown ones.
TERMS = sorted(RANKER.sections.spans, key=RANKER.sections.frequency)
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
    fused, best_number = ranker._fused(query, section_query)
    expected_fused, expected_best = reference_fused(ranker, query, section_query)
    assert fused == expected_fused
    best = {
        ranker.pages.docs[page].path: int(number)
        for page, number in enumerate(best_number)
        if number >= 0
    }
    assert best == expected_best


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
    _, best_number = ranker._fused(query, query)
    assert ranker.sections.docs[int(best_number[0])].title == "Tan"
    hit = ranker.rank("quuxite zorblax").hits[0]
    assert hit.anchor == "tan"
