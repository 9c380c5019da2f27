"""The four commands end to end on the demo wiki: replies, bad input, limits, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.cli.console import dispatch, render_text
from knowledge.reply import LIMITS, Field, Reply
from knowledge.service import KnowledgeBase, demo_wiki_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    base = KnowledgeBase.open(
        demo_wiki_dir(),
        tmp_path_factory.mktemp("data"),
        link_base="https://github.com/example/wiki/blob/main/",
    )
    yield base
    base.close()


def test_runbook_gives_current_page_image_and_launch(kb):
    reply = kb.runbook("qwen")
    assert reply.kind == "runbook" and not reply.ephemeral
    assert reply.title == "Qwen3: current runbook"
    fields = {f.name: f.value for f in reply.fields}
    assert "demo-registry/vllm:orchard-v3-cu130-20260801" in fields["Docker image"]
    assert "https://github.com/example/wiki/blob/main/models/qwen3_v2.md" in fields["Current page"]
    assert "```bash\ndocker run" in reply.text
    assert reply.pages[0].ref == "models/qwen3_v2.md#launch"
    assert "models/qwen3_v1.md" in [p.path for p in reply.pages]
    assert reply.meta["family"] == "qwen3" and reply.meta["older"] == 1


def test_runbook_versions_and_launch_views(kb):
    versions = kb.versions("qwen3")
    assert "Current" in versions.text and "Historical" in versions.text
    launch = kb.launch("qwen3")
    assert launch.meta["command"].startswith("docker run")


def test_runbook_unknown_and_empty_are_helpful(kb):
    missing = kb.runbook("llama")
    assert missing.kind == "not_found" and missing.ephemeral
    assert "Qwen3" in missing.text  # lists what exists
    typo = kb.runbook("glmm")
    assert typo.kind == "runbook" or "GLM-5" in typo.suggestions
    assert kb.runbook("   \u200b ").kind == "not_found"


def test_acronym_exact_composite_and_missing(kb):
    dcp = kb.acronym("DCP")
    assert dcp.kind == "acronym" and "Decode Context Parallelism" in dcp.text
    assert dcp.pages[0].path == "GLOSSARY.md" and dcp.pages[0].anchor
    four = kb.acronym("DCP4")
    assert "**4**" in four.text
    missing = kb.acronym("NCCLX")
    assert missing.kind == "not_found" and missing.ephemeral
    assert "NCCL" in missing.suggestions


def test_acronym_echo_is_escaped_and_cannot_ping(kb):
    reply = kb.acronym("@everyone **bold** `x`")
    assert reply.kind == "not_found"
    assert "\\*\\*bold\\*\\*" in reply.title
    assert "@everyone" not in reply.title.replace("\\", "") or "`" in reply.title


def test_search_finds_the_section_and_pages(kb):
    reply = kb.search("NCCL calloc bytes")
    assert reply.kind == "search"
    assert reply.pages[0].path == "troubleshooting/common-issues.md"
    assert "**" in reply.fields[0].value  # highlighted words
    assert reply.meta["total"] >= 1


def test_search_category_filter_and_unknown_category(kb):
    reply = kb.search("nccl", category="optimization")
    assert reply.kind == "search"
    assert {p.path.split("/")[0] for p in reply.pages} == {"optimization"}
    bad = kb.search("nccl", category="nope")
    assert bad.kind == "not_found" and "troubleshooting" in bad.text


@pytest.mark.parametrize(
    "query",
    ["*", "body:*", "[a TO z]", "(((", "x" * 5000, "", "q\u200bwen", "ＮＣＣＬ", "path:/etc"],
)
def test_hostile_search_queries_answer_cleanly(kb, query):
    reply = kb.search(query)
    assert reply.kind in ("search", "not_found")
    assert reply.fitted().total_length() <= LIMITS.total


def test_fullwidth_and_zero_width_queries_still_find(kb):
    assert kb.search("ＮＣＣＬ calloc").kind == "search"
    assert kb.search("NC\u200bCL calloc").kind == "search"


def test_explain_lists_each_term_once(kb):
    reply = kb.explain(
        "Our TP8 DCP4 box with MTP and MTP again, NVFP4 weights, see https://x.y/DCP"
    )
    assert reply.kind == "explain"
    assert reply.meta["terms"] == ["TP", "DCP", "MTP", "NVFP4"]
    assert kb.explain("nothing relevant here").kind == "not_found"


def test_status_counts(kb):
    reply = kb.status()
    assert reply.meta["pages"] == len(kb.wiki.pages)
    assert reply.meta["terms"] >= 25


def test_section_choices_are_the_wiki_folders(kb):
    assert ("troubleshooting", "troubleshooting") in kb.category_choices("")
    assert kb.category_choices("TROUB") == [("troubleshooting", "troubleshooting")]
    assert kb.category_choices("nothing-like-it") == []


def test_autocomplete_is_capped(kb):
    assert kb.family_choices("")[0] == ("Qwen3", "qwen3")
    assert len(kb.term_choices("")) == 25
    assert all(len(name) <= 100 for name, _ in kb.term_choices("c"))


def test_fitted_reply_respects_every_limit():
    huge = Reply(
        "search",
        "t" * 400,
        "d" * 9000,
        fields=tuple(Field("n" * 300, "v" * 2000) for _ in range(40)),
        footer="f" * 3000,
    ).fitted()
    assert len(huge.title) <= LIMITS.title
    assert len(huge.text) <= LIMITS.description
    assert len(huge.fields) <= LIMITS.fields
    assert all(len(f.name) <= 256 and len(f.value) <= 1024 for f in huge.fields)
    assert len(huge.footer) <= LIMITS.footer
    assert huge.total_length() <= LIMITS.total


def test_console_dispatch_and_render(kb):
    text = render_text(dispatch(kb, "/acronym DCP"))
    assert text.startswith("DCP\n===")
    assert "Decode Context Parallelism" in text
    unknown = dispatch(kb, "/frobnicate")
    assert unknown.kind == "error" and "/runbook" in unknown.text
    assert dispatch(kb, "/runbook glm versions").kind == "versions"
    assert dispatch(kb, "/runbook glm launch").kind == "launch"
    assert dispatch(kb, "/search nccl in:optimization page:1").kind == "search"


def test_wiki_without_glossary_says_so(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "README.md").write_text("# Front\n\nNothing else.\n")
    base = KnowledgeBase.open(tmp_path / "wiki", tmp_path / "data")
    try:
        reply = base.acronym("DCP")
        assert reply.kind == "unavailable" and "glossary" in reply.text
        assert base.runbook("qwen").kind == "unavailable"
    finally:
        base.close()


def _wikibot(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WIKIBOT_DATA": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_cli_ask_json_lists_cited_pages(tmp_path):
    result = _wikibot("ask", "--json", "/runbook qwen", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kind"] == "runbook"
    assert data["pages"][0] == "models/qwen3_v2.md#launch"
    missing = _wikibot("ask", "/acronym zzqq", tmp_path=tmp_path)
    assert missing.returncode == 1 and "not in the glossary" in missing.stdout


def test_cli_console_reads_commands_until_quit(tmp_path):
    env = {**os.environ, "WIKIBOT_DATA": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "console"],
        input="/acronym TP8\n/search nccl\n/quit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Tensor Parallelism" in result.stdout
    assert "Search: nccl" in result.stdout


def test_cli_index_prints_a_summary(tmp_path):
    result = _wikibot("index", "--full", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pages 19" in result.stdout and "index full" in result.stdout
    again = _wikibot("index", tmp_path=tmp_path)
    assert "index reused" in again.stdout


def test_parsed_pages_are_cached_and_a_damaged_cache_is_ignored(tmp_path):
    import shutil

    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    data = tmp_path / "data"
    KnowledgeBase.open(wiki, data).close()
    cache = data / "pages.pickle"
    assert cache.is_file()
    # an edited page is parsed again, the rest come from the cache
    page = wiki / "GLOSSARY.md"
    page.write_text(page.read_text().rstrip("\n") + "\n| ZQX | Zed Queue X | added later |\n")
    base = KnowledgeBase.open(wiki, data)
    assert base.acronym("ZQX").kind == "acronym"
    base.close()
    cache.write_bytes(b"not a pickle")
    base = KnowledgeBase.open(wiki, data)
    assert base.acronym("ZQX").kind == "acronym"
    base.close()


@pytest.mark.parametrize("command", ["ask", "index", "console"])
def test_cli_names_a_missing_wiki_folder(tmp_path, command):
    args = [command, "--wiki", str(tmp_path / "nope")] + (["/status"] if command == "ask" else [])
    result = _wikibot(*args, tmp_path=tmp_path)
    assert result.returncode != 0
    assert "wiki folder not found" in result.stderr and "Traceback" not in result.stderr
