"""A fresh build's segment written by :class:`FreshSegmentWriter` is the one Whoosh's own
writer writes, byte for byte.

Both are given the same documents (the engine's analysed fields), with the
segment's random name fixed, and every file inside the compound segment and the
table of contents are compared: the format, the scores and every search answer are
then Whoosh's. A file's modification time (in the compound directory) is the only
thing allowed to differ.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import whoosh.codec.base
from whoosh import index as whoosh_index
from whoosh.fields import ID, TEXT, Schema
from whoosh.filedb.compound import CompoundStorage
from whoosh.filedb.filestore import FileStorage

from knowledge.search._segment import FreshSegmentWriter
from knowledge.search._whoosh import IndexTerms, WhooshEngine, _fields
from knowledge.search.engine import Document
from knowledge.wiki import load_wiki
from tests.knowledge.search.test_build_equivalence import _documents
from tests.support import DEMO, SNAPSHOT, needs_snapshot

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
def fixed_segment_name(monkeypatch):
    monkeypatch.setattr(
        whoosh.codec.base.Segment, "_random_id", classmethod(lambda cls, size=16: "s" * size)
    )


def _build(gen_dir: Path, pages: list[list[Document]], *, fresh: bool) -> None:
    ix = whoosh_index.create_in(str(gen_dir), WhooshEngine().schema)
    writer = FreshSegmentWriter(ix) if fresh else ix.writer()
    terms = IndexTerms()
    for doc in itertools.chain.from_iterable(pages):
        writer.add_document(**_fields(doc, terms))
    writer.commit(merge=False)
    ix.close()


def _contents(gen_dir: Path) -> dict[str, bytes]:
    """Every file of the index, and of each compound segment the files inside it."""
    storage = FileStorage(str(gen_dir))
    out: dict[str, bytes] = {}
    for name in sorted(storage.list()):
        if name.endswith(".seg"):
            inner = CompoundStorage(storage.open_file(name))
            out[name] = repr(inner.list()).encode()
            for part in inner.list():
                out[f"{name}/{part}"] = inner.open_file(part).read()
            inner.close()
        else:
            with storage.open_file(name) as f:
                out[name] = f.read()
    return out


def _assert_same(tmp_path: Path, pages: list[list[Document]]) -> dict[str, bytes]:
    (tmp_path / "whoosh").mkdir()
    (tmp_path / "fresh").mkdir()
    _build(tmp_path / "whoosh", pages, fresh=False)
    _build(tmp_path / "fresh", pages, fresh=True)
    want, got = _contents(tmp_path / "whoosh"), _contents(tmp_path / "fresh")
    assert list(got) == list(want)
    for name in want:
        assert got[name] == want[name], name
    return want


def test_the_demo_wikis_segment_is_whooshs_byte_for_byte(tmp_path, fixed_segment_name):
    files = _assert_same(tmp_path, _documents(load_wiki(DEMO)))
    # Postings, terms, stored fields and field lengths were all compared.
    assert {name.rsplit(".", 1)[-1] for name in files} >= {"pst", "trm", "col", "toc"}
    assert len(files["MAIN_" + "s" * 16 + ".seg/MAIN_" + "s" * 16 + ".pst"]) > 1000


@needs_snapshot
def test_the_real_wikis_segment_is_whooshs_byte_for_byte(tmp_path, fixed_segment_name):
    _assert_same(tmp_path, _documents(load_wiki(SNAPSHOT)))


def test_plain_text_values_and_unstored_fields_match_too(tmp_path, fixed_segment_name):
    """Values Whoosh analyses itself (a string in a text field), a field left out of a
    document, an empty list and an ID field take the general path: still the same."""
    schema = Schema(key=ID(stored=True), body=TEXT(stored=True), note=TEXT(phrase=False))
    docs = [
        {"key": "a", "body": "Water ballast keeps the gondola level", "note": ["x", "y", "x"]},
        {"key": "b", "body": "", "note": []},
        {"key": "c", "note": ["y"], "_stored_note": "why"},
        {"key": "d", "body": "level level gondola"},
    ]
    for name in ("whoosh", "fresh"):
        (tmp_path / name).mkdir()
        ix = whoosh_index.create_in(str(tmp_path / name), schema)
        writer = FreshSegmentWriter(ix) if name == "fresh" else ix.writer()
        for fields in docs:
            writer.add_document(**fields)
        writer.commit(merge=False)
        ix.close()
    assert _contents(tmp_path / "fresh") == _contents(tmp_path / "whoosh")


def test_it_refuses_an_index_that_holds_segments_and_boosts(tmp_path):
    schema = Schema(key=ID(stored=True))
    ix = whoosh_index.create_in(str(tmp_path), schema)
    with ix.writer() as writer:
        writer.add_document(key="a")
    with pytest.raises(ValueError, match="empty index"):
        FreshSegmentWriter(ix)
    # The refused writer let go of the lock: a plain writer can still write.
    with ix.writer() as writer:
        writer.add_document(key="b")
    assert ix.doc_count() == 2
    (tmp_path / "empty").mkdir()
    fresh = FreshSegmentWriter(whoosh_index.create_in(str(tmp_path / "empty"), schema))
    with pytest.raises(ValueError, match="boosts"):
        fresh.add_document(key="c", _boost=2.0)
    fresh.cancel()
