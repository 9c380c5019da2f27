"""A full build written the fast way answers exactly as one written the plain Whoosh way.

The engine hands Whoosh each text field already analysed (:class:`IndexTerms`, one
function instead of the analyzer chain) and the text to store beside it. The
reference here is what the engine did before: every field given to Whoosh as the
section's plain text, analysed by the schema's own analyzer. Both generations must
rank every query alike (same sections, same scores, same totals, with and without a
category) and hold the same stored fields, so an optimisation of the build that
drops, empties or analyses a field differently fails here.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import index as whoosh_index

from knowledge.search import SearchIndex, ranking
from knowledge.search._whoosh import IndexTerms, WhooshEngine, make_schema, make_term_analyzer
from knowledge.search.documents import section_document
from knowledge.search.engine import Document, Generation
from knowledge.wiki import Catalogue, Glossary, Wiki, find_front_page, load_wiki
from tests.support import DEMO

#: Every field of a Document, as the plain build gave them to Whoosh.
_FIELDS = (
    "path",
    "anchor",
    "page_title",
    "section_title",
    "headings",
    "text",
    "code",
    "symptom",
    "category",
    "status",
)


def _documents(wiki: Wiki) -> list[list[Document]]:
    glossary = Glossary.from_wiki(wiki, find_front_page(wiki))
    statuses = Catalogue.from_wiki(wiki, glossary).statuses()
    return [
        [
            section_document(page, section, ranking.indexed_status(statuses, path))
            for section in page.sections
        ]
        for path, page in sorted(wiki.pages.items())
    ]


def _plain_build(gen_dir: Path, pages: list[list[Document]]) -> None:
    """The build as it was: each field's plain text, analysed by Whoosh itself."""
    ix = whoosh_index.create_in(str(gen_dir), make_schema())
    writer = ix.writer()
    for doc in itertools.chain.from_iterable(pages):
        writer.add_document(id=doc.id, **{name: getattr(doc, name) for name in _FIELDS})
    writer.commit()
    ix.close()


def _queries(pages: list[list[Document]]) -> list[str]:
    """Queries made from the wiki itself: titles, words of every field, code lines, pairs."""
    queries: set[str] = set()
    for doc in itertools.chain.from_iterable(pages):
        for name in ("page_title", "section_title", "headings", "symptom"):
            if getattr(doc, name):
                queries.add(getattr(doc, name)[:200])
        words = doc.text.split()
        queries.update(" ".join(words[i : i + 3]) for i in range(0, min(len(words), 60), 7))
        queries.update(words[:40:5])
        queries.update(line.strip()[:120] for line in doc.code.splitlines()[:3] if line.strip())
    return sorted(query for query in queries if query.strip())


@pytest.fixture(scope="module")
def demo_pages() -> list[list[Document]]:
    return _documents(load_wiki(DEMO))


@pytest.fixture(scope="module")
def both(tmp_path_factory, demo_pages) -> tuple[Generation, Generation]:
    engine = WhooshEngine()
    plain_dir = tmp_path_factory.mktemp("plain")
    fast_dir = tmp_path_factory.mktemp("fast")
    _plain_build(plain_dir, demo_pages)
    assert engine.write(fast_dir, demo_pages) == sum(map(len, demo_pages))
    plain, fast = engine.open(plain_dir), engine.open(fast_dir)
    yield plain, fast
    plain.close()
    fast.close()


def test_index_terms_are_the_analyzers_on_every_field_of_the_demo_wiki(demo_pages):
    analyze, terms = make_term_analyzer(), IndexTerms()
    docs = list(itertools.chain.from_iterable(demo_pages))
    texts = [getattr(doc, name) for doc in docs for name in _FIELDS]
    assert sum(len(analyze(text)) for text in texts) > 1000
    for text in texts:
        assert terms(text) == analyze(text), text


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*"abcXYZ019._-/ :=\n\t", "Qwen3.5", "v2.28.9", "İ", "ß", "ﬁ", "é", "_x_", "a" * 70]
        ),
        max_size=40,
    ).map("".join)
    | st.text(max_size=80)
)
def test_index_terms_match_the_analyzer_on_any_text(text):
    assert IndexTerms()(text) == make_term_analyzer()(text)


def test_the_fast_build_ranks_every_query_as_the_plain_build(both, demo_pages):
    plain, fast = both
    engine = WhooshEngine()
    queries = _queries(demo_pages)
    categories = sorted({doc.category for doc in itertools.chain.from_iterable(demo_pages)})
    assert len(queries) > 200 and len(categories) > 1
    found = 0
    for query in queries:
        terms = engine.analyze(query)
        for category in (None, *categories[:2]):
            want = plain.rank(terms, need=50, category=category)
            got = fast.rank(terms, need=50, category=category)
            assert got == want, (query, category)
            found += bool(want[1])
    assert found > len(queries)  # most queries find something: the comparison means something


def test_the_fast_build_stores_every_field_as_the_plain_build(both, demo_pages):
    plain, fast = both
    count = sum(map(len, demo_pages))
    assert fast.doc_count() == plain.doc_count() == count
    for doc in range(count):
        assert fast.fetch(1.0, doc) == plain.fetch(1.0, doc)
    assert any(fast.fetch(1.0, doc).code for doc in range(count))


def test_an_index_opened_on_the_demo_wiki_answers_as_the_plain_build(tmp_path, both, demo_pages):
    """Through SearchIndex (the path the bot takes): the same hits, best first."""
    plain, _ = both
    wiki = load_wiki(DEMO)
    glossary = Glossary.from_wiki(wiki, find_front_page(wiki))
    statuses = Catalogue.from_wiki(wiki, glossary).statuses()
    index, stats = SearchIndex.open(wiki, tmp_path / "data", statuses=statuses)
    with index:
        assert stats.mode == "full"
        for query in _queries(demo_pages)[::5]:
            results = index.search(query, limit=10)
            total, ranked = plain.rank(index.prepare(query).terms, need=10, category=None)
            want = [plain.fetch(score, doc) for score, doc in ranked]
            assert results.total == total, query
            assert [(hit.path, hit.anchor, hit.score) for hit in results.hits] == [
                (found.path, found.anchor, found.score) for found in want
            ], query
