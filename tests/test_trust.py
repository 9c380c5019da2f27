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


def _glm(catalogue: Catalogue):
    return next(f for f in catalogue.families if f.current_page == "models/glm5_v4.md")


def test_a_higher_version_than_the_current_page_is_reported(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    assert _catalogue(wiki).newer_pages(_glm(_catalogue(wiki))) == ()
    (wiki / "models" / "glm5_v5.md").write_text("# GLM-5 v5\n\nA newer run.\n")
    (wiki / "models" / "glm5_v12b.md").write_text("# not a version of the same series\n")
    (wiki / "models" / "glm5-v6.md").write_text("# other separator: another series\n")
    catalogue = _catalogue(wiki)
    assert [v.path for v in catalogue.newer_pages(_glm(catalogue))] == ["models/glm5_v5.md"]


def test_a_page_that_supersedes_the_current_one_is_reported(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    (wiki / "models" / "glm-next.md").write_text(
        "# GLM next\n\n## Status\n\nThis page supersedes [v4](glm5_v4.md) for new installs.\n"
    )
    (wiki / "models" / "glm-notes.md").write_text(
        "# GLM notes\n\n## Links\n\nSee [v4](glm5_v4.md) for the current launch.\n"
    )
    catalogue = _catalogue(wiki)
    newer = catalogue.newer_pages(_glm(catalogue))
    assert [(v.path, v.anchor) for v in newer] == [("models/glm-next.md", "status")]


def test_finding_newer_pages_reads_no_page_once_the_catalogue_is_built(tmp_path, monkeypatch):
    """The pages' facts are read once, with the catalogue (off the event loop): the
    first /runbook of each family then reads no page, however large the wiki."""
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    (wiki / "models" / "glm5_v5.md").write_text("# GLM-5 v5\n\nA newer run.\n")
    (wiki / "models" / "glm-next.md").write_text(
        "# GLM next\n\n## Status\n\nThis page supersedes [v4](glm5_v4.md) for new installs.\n"
    )
    catalogue = _catalogue(wiki)

    def read(page):
        raise AssertionError(f"{page.path} was read for its facts after the build")

    monkeypatch.setattr("knowledge.wiki.catalogue.facts_of", read)
    found = {f.key: [v.path for v in catalogue.newer_pages(f)] for f in catalogue.families}
    assert found[_glm(catalogue).key] == ["models/glm5_v5.md", "models/glm-next.md"]
