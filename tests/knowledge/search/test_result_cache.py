"""The result cache: repeated questions and next pages do not ask the engine again,
answer exactly as the engine would, and never outlive the wiki they were ranked on."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from knowledge.search import SearchIndex
from knowledge.search._whoosh import WhooshEngine
from knowledge.search.engine import Generation
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import PAGES, SPROCKETS, write_wiki


class _Counting(Generation):
    """A generation that counts how often it is asked to rank."""

    def __init__(self, inner: Generation, calls: list[tuple[str, ...]]) -> None:
        self.inner = inner
        self.calls = calls

    def doc_count(self) -> int:
        return self.inner.doc_count()

    @property
    def searching(self) -> bool:
        return self.inner.searching

    def rank(self, terms: Sequence[str], *, need: int, category: str | None) -> Any:
        self.calls.append(tuple(terms))
        return self.inner.rank(terms, need=need, category=category)

    def fetch(self, score: float, doc: int) -> Any:
        return self.inner.fetch(score, doc)

    def update(self, changes: Any, *, rewrite_ok: bool, timeout: float) -> None:
        self.inner.update(changes, rewrite_ok=rewrite_ok, timeout=timeout)

    def close(self) -> None:
        self.inner.close()


class _CountingEngine(WhooshEngine):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, ...]] = []
        self.generations: list[Generation] = []

    def open(self, gen_dir: Path) -> Generation:
        generation = super().open(gen_dir)
        self.generations.append(generation)
        return _Counting(generation, self.calls)


@pytest.fixture
def counted(tmp_path: Path):
    wiki_dir = write_wiki(tmp_path / "wiki", {**PAGES, "parts/sprockets.md": SPROCKETS})
    engine = _CountingEngine()
    index, _ = SearchIndex.open(load_wiki(wiki_dir), tmp_path / "data", engine=engine)
    yield index, engine, wiki_dir
    index.close()


def _ids(results) -> list[str]:
    return [hit.id for hit in results.hits]


def test_a_repeated_question_and_its_next_pages_rank_once(counted):
    index, engine, _ = counted
    first = index.search("sprocket wheel", limit=5)
    assert first.total == 12 and len(first.hits) == 5
    again = index.search("  Sprocket   WHEEL ", limit=5)  # normalised to the same terms
    second = index.search("sprocket wheel", limit=5, offset=5)
    third = index.search("sprocket wheel", limit=5, offset=10)
    assert len(engine.calls) == 1
    assert (again.hits, again.total) == (first.hits, first.total)
    assert len(second.hits) == 5 and len(third.hits) == 2
    assert not set(_ids(first)) & set(_ids(second))
    index.search("sprocket wheel", limit=5, category="parts")  # another question
    assert len(engine.calls) == 2


def test_cached_pages_are_what_the_engine_answers_for_that_page(counted):
    index, engine, _ = counted
    queries = ["sprocket", "zeppelin fog", "frobnicator kelvin nowhereword", "flux lamp"]
    for query in queries:
        for limit, offset in ((5, 0), (5, 5), (3, 2), (1, 11), (10, 0)):
            cached = index.search(query, limit=limit, offset=offset)
            direct_total, direct = engine.generations[-1].search(
                index.prepare(query).terms, limit=limit, offset=offset, category=None
            )
            assert cached.total == direct_total
            assert [(h.path, h.anchor, h.score) for h in cached.hits] == [
                (f.path, f.anchor, f.score) for f in direct
            ]
    index.clear_cache()
    before = len(engine.calls)
    index.search("sprocket", limit=5)
    assert len(engine.calls) == before + 1


def test_a_changed_wiki_is_never_answered_from_the_cache(counted):
    index, engine, wiki_dir = counted
    assert index.search("quasar", limit=5).total == 0
    page = wiki_dir / "guides" / "misc.md"
    page.write_text(page.read_text() + "\n## Quasar\n\nA quasar sighting.\n")
    index.update(load_wiki(wiki_dir))
    found = index.search("quasar", limit=5)
    assert [hit.section_title for hit in found.hits] == ["Quasar"]
    index.rebuild(load_wiki(wiki_dir))
    calls = len(engine.calls)
    assert _ids(index.search("quasar", limit=5)) == _ids(found)
    assert len(engine.calls) == calls + 1


def test_the_same_question_asked_while_it_is_ranked_waits_for_that_ranking(counted):
    """Two users asking the same thing at once: the second shares the first ranking
    instead of queueing for the search lock to rank it again."""
    index, engine, _ = counted
    generation = engine.generations[-1]
    inner_rank = generation.rank
    entered, release = threading.Event(), threading.Event()

    def gated(terms, *, need, category):
        if len(engine.calls) == 1:  # only the first ranking is held back
            entered.set()
            assert release.wait(30)
        return inner_rank(terms, need=need, category=category)

    generation.rank = gated
    results: dict[str, object] = {}

    def ask(name: str) -> None:
        results[name] = index.search("sprocket wheel", limit=5)

    first = threading.Thread(target=ask, args=("first",))
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=ask, args=("second",))
    second.start()
    second.join(1.0)
    assert second.is_alive()  # waiting for the first ranking, not ranking again
    release.set()
    first.join(30)
    second.join(30)
    assert len(engine.calls) == 1
    assert _ids(results["second"]) == _ids(results["first"])
    assert results["first"].total == 12
    # Another question is not held up by it.
    index.search("flux lamp", limit=5)
    assert len(engine.calls) == 2
