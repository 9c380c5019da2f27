"""KnowledgeBase: loading, the parsed-page cache, reloads, and its commands."""

from __future__ import annotations

import shutil

import pytest

from knowledge import answers
from knowledge.service import KnowledgeBase, demo_wiki_dir

LINK_BASE = "https://github.com/example/wiki/blob/main/"


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    base = KnowledgeBase.open(demo_wiki_dir(), tmp_path_factory.mktemp("data"), link_base=LINK_BASE)
    yield base
    base.close()


def test_commands_answer_from_the_current_state(kb):
    """Each command is the answer of the same name on the loaded state, as the bot calls it."""
    state, t = kb.state, kb.t
    assert kb.runbook("qwen") == answers.runbook(state, t, "qwen")
    assert kb.versions("qwen3") == answers.versions(state, t, "qwen3")
    assert kb.launch("qwen3") == answers.launch(state, t, "qwen3")
    assert kb.acronym("DCP4") == answers.acronym(state, t, "DCP4")
    assert kb.search("nccl", page=2, per_page=2) == answers.search(
        state, t, "nccl", page=2, per_page=2
    )
    assert kb.explain("TP8 and DCP") == answers.explain(state, t, "TP8 and DCP")
    assert kb.help() == answers.help_reply(t)
    assert kb.family_choices("gl") == answers.family_choices(state, "gl")
    assert kb.term_choices("d") == answers.term_choices(state, t, "d")
    assert kb.category_choices("") == answers.category_choices(state, "")
    assert kb.status().meta["pages"] == len(kb.wiki.pages)


def test_links_and_raw_hits(kb):
    assert kb.url("models/qwen3_v2.md", "launch") == f"{LINK_BASE}models/qwen3_v2.md#launch"
    assert kb.link_base == LINK_BASE
    hits = kb.search_sections("NCCL calloc", limit=2)
    assert hits is not None and hits.hits[0].path == "troubleshooting/common-issues.md"


def test_nothing_answers_before_the_wiki_is_loaded(tmp_path):
    base = KnowledgeBase(demo_wiki_dir(), tmp_path)
    assert base.search_sections("nccl") is None
    with pytest.raises(RuntimeError):
        base.runbook("qwen")


def test_a_reload_swaps_the_whole_state_and_the_old_one_still_answers(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    base = KnowledgeBase.open(wiki, tmp_path / "data")
    try:
        before = base.state
        page = wiki / "GLOSSARY.md"
        page.write_text(page.read_text().rstrip("\n") + "\n| ZQX | Zed Queue X | added later |\n")
        base.reload()
        assert base.state is not before
        assert base.acronym("ZQX").kind == "acronym"
        assert answers.acronym(before, base.t, "ZQX").kind == "not_found"
    finally:
        base.close()


def test_wiki_without_glossary_says_so(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "README.md").write_text("# Front\n\nNothing else.\n")
    base = KnowledgeBase.open(tmp_path / "wiki", tmp_path / "data")
    try:
        reply = base.acronym("DCP")
        assert reply.kind == "unavailable" and "glossary" in reply.text
        assert base.runbook("qwen").kind == "unavailable"
        assert base.explain("DCP").kind == "unavailable"
    finally:
        base.close()


def test_parsed_pages_are_cached_and_a_damaged_cache_is_ignored(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    data = tmp_path / "data"
    KnowledgeBase.open(wiki, data).close()
    cache = data / "pages.sqlite3"
    assert cache.is_file()
    # an edited page is parsed again, the rest come from the cache
    page = wiki / "GLOSSARY.md"
    page.write_text(page.read_text().rstrip("\n") + "\n| ZQX | Zed Queue X | added later |\n")
    base = KnowledgeBase.open(wiki, data)
    assert base.acronym("ZQX").kind == "acronym"
    base.close()
    cache.write_bytes(b"not a database")
    base = KnowledgeBase.open(wiki, data)
    assert base.acronym("ZQX").kind == "acronym"
    base.close()


def test_a_lazy_index_is_opened_by_the_first_answer_that_needs_it(tmp_path):
    """``wikibot ask``'s load: with an index in the data folder, it is left unopened until
    an answer searches, then brought up to date as a load would have (the wiki changed)."""
    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    data = tmp_path / "data"
    KnowledgeBase.open(wiki, data).close()
    page = wiki / "troubleshooting" / "common-issues.md"
    page.write_text(page.read_text() + "\n\n## Quokka fault\n\nA quokkafault word.\n")
    eager = KnowledgeBase.open(wiki, tmp_path / "eager")
    lazy = KnowledgeBase.open(wiki, data, lazy_index=True)
    try:
        assert not lazy.state.index_opened
        assert lazy.runbook("qwen") == eager.runbook("qwen")
        assert lazy.acronym("DCP4") == eager.acronym("DCP4")
        assert not lazy.state.index_opened, "neither answer needs the index"
        assert lazy.search("quokkafault") == eager.search("quokkafault")
        assert lazy.state.index_opened and lazy.state.built.mode == "incremental"
        assert lazy.status().meta["index_mode"] == "incremental"
    finally:
        lazy.close()
        eager.close()


def test_a_lazy_index_is_opened_at_once_without_an_index_to_reuse(tmp_path):
    """A first run builds it during the load, as before (and says so, if it cannot)."""
    kb = KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data", lazy_index=True)
    try:
        assert kb.state.index_opened and kb.state.built.mode == "full"
    finally:
        kb.close()


def test_a_big_first_load_parses_in_two_processes_into_the_same_wiki(tmp_path, monkeypatch):
    from knowledge import service
    from knowledge.wiki import helper, load_wiki

    calls: list[int] = []
    real = helper.parse_files

    def recording(root, files, parse_here, **kwargs):
        calls.append(len(files))
        return real(root, files, parse_here, **kwargs)

    monkeypatch.setattr(helper, "parse_files", recording)
    monkeypatch.setattr(helper, "_usable_cpus", lambda: 2)
    monkeypatch.setattr(service, "HELPER_MIN_BYTES", 1)  # every wiki counts as big here
    kb = KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data")
    try:
        alone = load_wiki(demo_wiki_dir())
        assert calls == [len(alone.pages)]
        assert list(kb.wiki.pages.items()) == list(alone.pages.items())
        assert kb.search("nccl").pages
        # The next load finds every page in the cache: nothing to parse, no helper.
        kb.reload()
        assert calls == [len(alone.pages)]
    finally:
        kb.close()


def test_the_page_cache_is_written_once_the_index_has_every_page(tmp_path, monkeypatch):
    """A full build in a child commits while this process writes the page cache (not
    while it analyses pages the child waits for); a failed build still leaves the cache."""
    from knowledge.search import index as index_module
    from knowledge.search.engine import IndexBuildError
    from knowledge.wiki import PageCache

    events: list[str] = []
    real_update = PageCache.update

    def update(self, *args, **kwargs):
        events.append("cache")
        return real_update(self, *args, **kwargs)

    monkeypatch.setattr(PageCache, "update", update)
    kb = KnowledgeBase.open(
        demo_wiki_dir(),
        tmp_path / "data",
        progress=lambda done, total: events.append(f"{done}/{total}"),
    )
    kb.close()
    pages = len(kb.wiki.pages)
    assert events[-2:] == [f"{pages}/{pages}", "cache"]
    assert events.count("cache") == 1 and len(events) == pages + 1

    def fail(*args, **kwargs):
        raise IndexBuildError("disk full", previous_kept=False)

    events.clear()
    monkeypatch.setattr(index_module.SearchIndex, "_full", fail)
    with pytest.raises(IndexBuildError):
        KnowledgeBase.open(demo_wiki_dir(), tmp_path / "other")
    assert events == ["cache"] and (tmp_path / "other" / "pages.sqlite3").is_file()


_IMPORT_AHEAD_PROBE = """
import sys, time
from pathlib import Path
from knowledge import service

assert "knowledge.search.index" not in sys.modules
real = service.load_wiki
seen = []

def load_wiki(*args, **kwargs):
    # While the wiki is read, the search engine arrives without this thread asking.
    deadline = time.monotonic() + 20
    while "knowledge.search.index" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.01)
    seen.append("knowledge.search.index" in sys.modules)
    return real(*args, **kwargs)

service.load_wiki = load_wiki
kb = service.KnowledgeBase.open(None, Path(sys.argv[1]))
print(seen, kb.search("nccl").pages != ())
kb.close()
"""


def test_a_load_that_opens_the_index_imports_the_engine_while_it_reads_the_wiki(tmp_path):
    import subprocess
    import sys

    from tests.support import ROOT

    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_AHEAD_PROBE, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert result.stdout.split() == ["[True]", "True"]
