"""The fast ranker answers exactly as Whoosh's own query path: same sections, same
order, same scores (``==``), same totals, on the demo wiki for several hundred
queries, with and without a category, on a one-segment index and on one that an
update left with two segments and deleted sections."""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.search import SearchIndex, _bm25
from knowledge.search._bm25 import BM25Ranker
from knowledge.search.query import MAX_QUERY_TERMS
from knowledge.wiki import Catalogue, load_wiki
from tests.support import DEMO

_WORD = re.compile(r"[A-Za-z][\w.-]*")


def _queries(wiki, seed: int = 7) -> list[str]:
    """Queries made from the wiki's sections: titles, runs of words, code lines,
    mixes of words from unrelated sections (the all-words-missed fallback), and
    long pastes of up to sixteen terms."""
    rng = random.Random(seed)
    words: list[str] = []
    queries: list[str] = []
    for page in wiki.pages.values():
        for section in page.sections:
            queries.append(section.title)
            found = _WORD.findall(section.text)
            words.extend(found)
            if len(found) >= 3:
                start = rng.randrange(len(found) - 2)
                queries.append(" ".join(found[start : start + rng.randint(2, 3)]))
            for block in section.code[:1]:
                line = next((ln for ln in block.text.splitlines() if len(ln.strip()) > 10), "")
                if line:
                    queries.append(line.strip())
    unique = sorted(set(words))
    for _ in range(120):
        queries.append(" ".join(rng.sample(unique, rng.randint(2, 5))))
    for _ in range(40):
        queries.append(" ".join(rng.sample(unique, 2 * MAX_QUERY_TERMS)))
    queries += ["zzqx", "nccl zzqx", "the"]
    return queries


def _prepared(index: SearchIndex, queries: list[str]) -> Iterator[tuple[str, ...]]:
    for query in queries:
        prepared = index.prepare(query)
        if prepared.terms:
            yield prepared.terms


def _compare(index: SearchIndex, queries: list[str], categories: list[str | None]) -> dict:
    """Compare both paths for every query; count which path Whoosh took."""
    generation = index._live.generation
    searcher = generation._opened()
    ranker = generation._ranker
    assert isinstance(ranker, BM25Ranker)
    seen = {"all_terms": 0, "fallback": 0, "nothing": 0}
    for n, terms in enumerate(_prepared(index, queries)):
        # Each query unfiltered; every fourth also in each category.
        for category in categories if n % 4 == 0 else [None]:
            fast = generation.rank(terms, need=50, category=category)
            slow = generation.whoosh_rank(terms, need=50, category=category)
            assert fast == slow, (terms, category)
        # Which path Whoosh took, from its own answer: the fallback's scores are
        # scaled by the share of terms held, so they differ from an And's.
        total, ranked = fast
        if not ranked:
            seen["nothing"] += 1
        elif len(terms) > 1 and total > len(_and_docs(searcher, terms)):
            seen["fallback"] += 1
        else:
            seen["all_terms"] += 1
    return seen


def _and_docs(searcher, terms: tuple[str, ...]) -> set[int]:
    """Sections holding every term that the index holds somewhere (any field)."""
    reader = searcher.reader()
    docs: set[int] | None = None
    for term in terms:
        held: set[int] = set()
        for field in ("page_title", "section_title", "headings", "text", "code", "symptom"):
            if reader.doc_frequency(field, term):
                held.update(searcher.docs_for_query(_term(field, term)))
        if not held:
            continue
        docs = held if docs is None else docs & held
    return docs or set()


def _term(field: str, text: str):
    from whoosh.query import Term

    return Term(field, text)


@pytest.fixture
def demo_index(tmp_path: Path) -> Iterator[tuple[SearchIndex, Path]]:
    wiki_dir = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki_dir)
    wiki = load_wiki(wiki_dir)
    statuses = Catalogue.from_wiki(wiki).statuses()
    index, stats = SearchIndex.open(wiki, tmp_path / "data", statuses, build_in_child=False)
    assert stats.mode == "full"
    yield index, wiki_dir
    index.close()


def test_same_ranking_as_whoosh_on_the_demo_wiki(demo_index) -> None:
    index, wiki_dir = demo_index
    wiki = load_wiki(wiki_dir)
    queries = _queries(wiki)
    seen = _compare(index, queries, [None, *wiki.categories])
    # Both of Whoosh's paths were compared, many times each.
    assert seen["all_terms"] >= 60, seen
    assert seen["fallback"] >= 60, seen


def test_same_ranking_after_an_update_left_two_segments_and_deletions(demo_index) -> None:
    index, wiki_dir = demo_index
    wiki = load_wiki(wiki_dir)
    path = sorted(p for p, page in wiki.pages.items() if len(page.sections) > 2)[0]
    page_file = wiki_dir / path
    page_file.write_text(
        page_file.read_text(encoding="utf-8") + "\n\n## Late note\n\nNCCL retries after a hang.\n",
        encoding="utf-8",
    )
    wiki = load_wiki(wiki_dir)
    stats = index.update(wiki, Catalogue.from_wiki(wiki).statuses())
    assert stats.mode == "incremental"
    searcher = index._live.generation._opened()
    leaves = searcher.leaf_searchers()
    assert len(leaves) == 2
    assert any(sub.reader().has_deletions() for sub, _ in leaves)
    seen = _compare(index, _queries(wiki, seed=11), [None, *wiki.categories[:2]])
    assert seen["all_terms"] >= 60 and seen["fallback"] >= 60, seen


def test_a_small_term_cache_answers_the_same(demo_index) -> None:
    index, wiki_dir = demo_index
    generation = index._live.generation
    generation._opened()
    generation._ranker.cache_postings = 40  # evicts all the time
    queries = _queries(load_wiki(wiki_dir), seed=3)[:150]
    _compare(index, queries + queries[::-1], [None])
    assert generation._ranker._held <= 40 or len(generation._ranker._terms) == 1


def test_posting_lists_scored_with_numpy_answer_the_same(demo_index, monkeypatch) -> None:
    """Every posting list through the numpy path (the demo's lists are short, so the
    threshold is lowered to one): the same floats as Whoosh's scorer, on one segment
    and on two with deletions."""
    calls = []
    real = _bm25._vector_scores
    monkeypatch.setattr(_bm25, "_vector_scores", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(BM25Ranker, "vector_postings", 1)
    monkeypatch.setattr(BM25Ranker, "vector_postings_cold", 1)
    index, wiki_dir = demo_index
    wiki = load_wiki(wiki_dir)
    seen = _compare(index, _queries(wiki, seed=5), [None, *wiki.categories[:2]])
    assert seen["all_terms"] >= 60 and seen["fallback"] >= 60, seen
    assert len(calls) > 500
    test_same_ranking_after_an_update_left_two_segments_and_deletions(demo_index)
