"""Glossary lookups on the demo wiki, and every row of the real glossary."""

from __future__ import annotations

import pytest

from knowledge.wiki import Glossary, find_front_page, load_wiki
from tests.support import DEMO, SNAPSHOT, needs_snapshot


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    wiki = load_wiki(DEMO)
    return Glossary.from_wiki(wiki, find_front_page(wiki))


def test_found_through_the_front_page_link(glossary):
    assert glossary.page == "GLOSSARY.md"
    assert len(glossary.entries) >= 25
    dcp = glossary.exact("dcp")
    assert dcp is not None and "context" in dcp.meaning.casefold()
    assert dcp.section and dcp.anchor


@pytest.mark.parametrize(
    ("query", "term", "how", "number"),
    [
        ("DCP", "DCP", "exact", None),
        ("dcp", "DCP", "exact", None),
        ("  `MTP`  ", "MTP", "exact", None),
        ("DCP4", "DCP", "composite", "4"),
        ("TP8", "TP", "composite", "8"),
        ("mtp3", "MTP", "composite", "3"),
        ("TP=8", "TP", "composite", "8"),
        ("cc64", "cc1 / cc64", "exact", None),
        ("cc32", "CC", "composite", "32"),
        ("ctx0", "ctx0 / 100k", "exact", None),
        ("W4A16", "W4A16", "exact", None),
        ("AG+RS", "AG+RS", "exact", None),
        ("ＤＣＰ", "DCP", "exact", None),  # fullwidth letters
        ("D\u200bCP", "DCP", "exact", None),  # zero-width space
    ],
)
def test_lookup_forms(glossary, query, term, how, number):
    found = glossary.lookup(query)
    assert found.entry is not None, query
    assert (found.entry.term, found.how, found.number) == (term, how, number)


def test_reverse_lookup_by_meaning(glossary):
    dcp = glossary.exact("DCP")
    found = glossary.lookup(dcp.meaning.lower())
    assert found.entry is dcp and found.how == "meaning"
    # a word prefix of the meaning is enough when it is unique
    tp = glossary.exact("TP")
    assert glossary.lookup("tensor parallel").entry is tp


def test_typos_get_suggestions_not_answers(glossary):
    found = glossary.lookup("DSprak")
    assert found.entry is None
    assert "DSpark" in [s.term for s in found.suggestions]
    assert glossary.lookup("zzqqxx").suggestions == ()


def test_scan_finds_each_term_once_in_order(glossary):
    text = (
        "Running TP8 with dcp4 and `--speculative-config` MTP=3; MTP again. AG+RS policy, "
        "see https://example.org/DCP/NVFP4 and image sha256:0123456789abcdef0123 or commit "
        "0d1ad037bd1be895f552c596f2fb8507c2584494. CUDA graph capture on."
    )
    found = [(m.written, m.entry.term, m.number) for m in glossary.scan(text)]
    assert found == [
        ("TP8", "TP", "8"),
        ("dcp4", "DCP", "4"),
        ("MTP=3", "MTP", "3"),
        ("AG+RS", "AG+RS", None),
        ("CUDA graph", "CUDA Graph", None),
    ]


def test_scan_leaves_ordinary_lowercase_words_alone(glossary):
    # "ep", "pp", "kv" and "rs" as plain lower-case words are not acronyms
    assert glossary.scan("an ep of the pp show, kv and rs words") == []


def test_wiki_without_glossary_loads(tmp_path):
    (tmp_path / "README.md").write_text("# Front\n\nNo glossary here.\n")
    wiki = load_wiki(tmp_path)
    glossary = Glossary.from_wiki(wiki, find_front_page(wiki))
    assert not glossary.available
    assert glossary.lookup("DCP").entry is None


def test_fallback_to_glossary_file_without_front_link(tmp_path):
    (tmp_path / "GLOSSARY.md").write_text(
        "# G\n\n## Terms\n\n| Term | Meaning |\n|---|---|\n| XYZ | Ex Why Zed |\n"
    )
    wiki = load_wiki(tmp_path)
    glossary = Glossary.from_wiki(wiki, None)
    assert glossary.lookup("xyz").entry.meaning == "Ex Why Zed"


@needs_snapshot
def test_every_real_glossary_row_is_found():
    wiki = load_wiki(SNAPSHOT)
    glossary = Glossary.from_wiki(wiki, find_front_page(wiki))
    page = wiki.pages[glossary.page]
    rows = [
        row[0].text
        for _, table in page.tables
        if table.column("acronym", "term") is not None
        for row in table.rows
    ]
    assert len(rows) >= 50
    for term in rows:
        for spelling in [term, *[p.strip() for p in term.split(" / ")]]:
            found = glossary.lookup(spelling)
            assert found.entry is not None and term in (found.entry.term,), spelling
