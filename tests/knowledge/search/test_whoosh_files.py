"""A search index on disk is read in place: Whoosh's parts of a compound segment are
views of its memory map, not copies of it on the heap."""

from __future__ import annotations

import io
import pickle
import tracemalloc

import pytest

from knowledge.search._whoosh import WhooshEngine, _ViewFile
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import big_wiki
from tests.knowledge.search.test_build_equivalence import _documents

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

DATA = b"first line\nsecond\n\nno newline at the end" + pickle.dumps({"a": [1, 2.5, "x"]})

#: (method, arguments) in turn, on a fresh file each.
CALLS = [
    [("read", ()), ("read", ()), ("tell", ())],
    [("read", (4,)), ("tell", ()), ("read", (0,)), ("read", (3,))],
    [("readline", ()), ("readline", ()), ("readline", ()), ("readline", (5,)), ("tell", ())],
    [("seek", (-7, 2)), ("read", (3,)), ("seek", (2, 1)), ("read", ())],
    [("seek", (500,)), ("read", (2,)), ("tell", ()), ("seek", (3,)), ("readline", (-1,))],
    [("read", (None,)), ("seek", (0,)), ("read", (10_000,))],
]


@pytest.mark.parametrize("calls", CALLS)
def test_a_view_file_reads_as_a_bytes_file_does(calls):
    view, copy = _ViewFile(memoryview(DATA)), io.BytesIO(DATA)
    for name, args in calls:
        assert getattr(view, name)(*args) == getattr(copy, name)(*args), (name, args)


def test_a_pickle_is_read_from_a_view_file():
    f = _ViewFile(memoryview(DATA))
    f.seek(DATA.index(b"\x80"))
    assert pickle.load(f) == {"a": [1, 2.5, "x"]}


def test_searching_an_index_on_disk_copies_none_of_its_segment(tmp_path):
    wiki = load_wiki(big_wiki(tmp_path / "wiki", 1_500_000))
    gen_dir = tmp_path / "gen"
    gen_dir.mkdir()
    engine = WhooshEngine()
    engine.write(gen_dir, _documents(wiki))
    segment = sum(p.stat().st_size for p in gen_dir.glob("*.seg"))
    assert segment > 1_000_000
    generation = engine.open(gen_dir)
    section = max(next(iter(wiki.pages.values())).sections, key=lambda s: len(s.text))
    words = engine.analyze(section.text)[:3]
    tracemalloc.start()
    try:
        total, ranked = generation.rank(words, need=10, category=None)
        found = [generation.fetch(score, doc) for score, doc in ranked]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        generation.close()
    assert total > 0 and found
    # Whoosh's BytesIO of each part held the whole segment again (terms, postings,
    # stored fields): more than its size.
    assert held < segment / 4, (held, segment)
