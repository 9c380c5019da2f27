"""Answers a newcomer can trust: families match real words, typos get a "did you mean"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowledge.wiki import Catalogue, Glossary, find_front_page, load_wiki
from tests.support import DEMO


def _catalogue(root: Path) -> Catalogue:
    wiki = load_wiki(root)
    return Catalogue.from_wiki(wiki, Glossary.from_wiki(wiki, find_front_page(wiki)))


@pytest.fixture(scope="module")
def demo() -> Catalogue:
    return _catalogue(DEMO)


@pytest.mark.parametrize("query", ["a", "x", "k", "q", " e ", "a b"])
def test_a_single_letter_is_no_family(demo, query):
    match = demo.match(query)
    assert match.family is None and not match.ambiguous


def test_a_real_word_still_matches(demo):
    assert demo.match("qwen").family is not None
    assert demo.match("glm 5").family is not None


def test_front_page_rows_without_runbooks_are_not_families(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    front = wiki / "README.md"
    row = "| Legacy / secondary models |"
    extra = (
        "| Full Page Index | [Index](INDEX.md) | Every page. |\n"
        "| How To Ask | [Onboarding](docs/newcomer-onboarding.md) | Asking well. |\n"
    )
    front.write_text(front.read_text().replace(row, extra + row, 1))
    (wiki / "INDEX.md").write_text("# Index\n\n- [Issues](troubleshooting/common-issues.md)\n")
    names = {f.name for f in _catalogue(wiki).families}
    assert "Full Page Index" not in names and "How To Ask" not in names
    assert {f.name for f in _catalogue(DEMO).families} <= names


@pytest.mark.parametrize(("typo", "term"), [("dpc", "DCP"), ("mpt", "MTP"), ("pt", "TP")])
def test_swapped_letters_suggest_the_term_first(typo, term):
    wiki = load_wiki(DEMO)
    glossary = Glossary.from_wiki(wiki, find_front_page(wiki))
    if glossary.exact(term) is None:
        pytest.skip(f"the demo glossary has no {term}")
    found = glossary.lookup(typo)
    assert found.entry is None
    assert found.suggestions and found.suggestions[0].term == term
