"""WikiState: its index given or opened on first use, and the retiring of its page ranker."""

from __future__ import annotations

import shutil
import weakref
from dataclasses import dataclass, field

from knowledge.answers._state import _empty_gradually
from knowledge.service import KnowledgeBase, demo_wiki_dir

QUESTION = "vllm serve hangs after loading the weights, NCCL calloc failed on 8 GPUs"


class _Dict(dict):
    """A dict that can be watched with a weak reference."""


class _List(list):
    """A list that can be watched with a weak reference."""


@dataclass
class _Part:
    rows: _List = field(default_factory=_List)


@dataclass
class _Whole:
    table: _Dict
    parts: _List
    shared: _Dict


def test_emptying_gradually_frees_what_is_its_own_and_leaves_what_is_shared():
    live = _Dict({"kept": _List([1, 2, 3])})  # also held by live data elsewhere
    part = _Part(_List(range(100)))
    whole = _Whole(_Dict({i: _List([i]) for i in range(50)}), _List([part]), live)
    watched = [weakref.ref(x) for x in (whole.table, whole.parts, part, part.rows)]
    del part
    _empty_gradually(whole)
    assert live == {"kept": [1, 2, 3]}, "a container someone else holds is never emptied"
    assert whole.shared is live
    del whole
    assert all(ref() is None for ref in watched)


def test_a_reload_of_the_same_pages_keeps_the_page_ranker(tmp_path):
    kb = KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data")
    try:
        ranker = kb.state.ranker
        kb.reload()
        assert kb.state.built_ranker is ranker, "nothing changed: not built again"
    finally:
        kb.close()


def test_retiring_a_state_leaves_a_ranker_still_in_use_whole(tmp_path):
    kb = KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data")
    try:
        state = kb.state
        ranker = state.ranker  # an answer still ranking with it
        before = ranker.rank(QUESTION)
        state.retire()
        assert state.built_ranker is None
        assert ranker.rank(QUESTION) == before and before.hits
        assert state.ranker.rank(QUESTION) == before, "built again if asked again"
    finally:
        kb.close()


@dataclass
class _Flat:
    name: str
    terms: frozenset[str]


def test_emptying_big_lists_by_chunks_still_spares_what_is_shared():
    """Runs of plain values and of flat dataclass instances are dropped a chunk at a time;
    a container among them is still emptied only when nothing else holds it."""
    live = _List([1, 2, 3])
    own = _List(range(10))
    big = _List(
        [(i, float(i)) for i in range(5000)]
        + [_Flat(str(i), frozenset({str(i)})) for i in range(3000)]
        + [_Part(live), _Part(own)]
        + [str(i) for i in range(3000)]
    )
    whole = _Whole(_Dict({i: i for i in range(3000)}), big, _Dict())
    watched = [weakref.ref(x) for x in (whole.table, big, own)]
    del big, own
    _empty_gradually(whole)
    assert live == [1, 2, 3], "held elsewhere: never emptied"
    assert whole.parts == [] and whole.table == {}
    del whole
    assert all(ref() is None for ref in watched)


def test_a_reload_after_an_edit_builds_the_ranker_from_the_pages_still_the_same(tmp_path):
    wiki_dir = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki_dir)
    kb = KnowledgeBase.open(wiki_dir, tmp_path / "data")
    try:
        old = kb.state.ranker
        edited = next(p for p in sorted(old.page_parts) if p.startswith("troubleshooting/"))
        with (wiki_dir / edited).open("a", encoding="utf-8") as out:
            out.write("\n## Quux\n\n**Error:** `zorblax quux frobnicated twice`\n")
        kb.reload()
        state = kb.state
        assert state.built_ranker is None and state.ranker_basis is old
        new = state.ranker
        assert state.ranker_basis is new, "built: the old ranker is no longer held"
        assert new.rank("zorblax quux frobnicated twice").hits[0].path == edited
        assert new.page_parts[edited].sections is not old.page_parts[edited].sections
        kept = [p for p in new.page_parts if p != edited]
        assert kept and all(new.page_parts[p].sections is old.page_parts[p].sections for p in kept)
    finally:
        kb.close()


def test_loads_that_never_build_a_ranker_keep_one_earlier_ranker_at_most(tmp_path):
    wiki_dir = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki_dir)
    kb = KnowledgeBase.open(wiki_dir, tmp_path / "data")
    try:
        old = kb.state.ranker
        page = wiki_dir / next(p for p in sorted(old.page_parts) if p.startswith("notes/"))
        for n in range(3):  # three edits, no question in between: nothing built
            page.write_text(page.read_text(encoding="utf-8") + f"\nedit {n}\n", encoding="utf-8")
            kb.reload()
            assert kb.state.built_ranker is None and kb.state.ranker_basis is old
        watched = weakref.ref(old.sections.ids)  # an array only that ranker holds
        del old
        new = kb.state.ranker  # built from the first: which is then let go
        assert watched() is None and new.page_parts
    finally:
        kb.close()
