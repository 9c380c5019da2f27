"""/search with a pasted question or log excerpt: pages ranked as a whole."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.answers import is_pasted
from knowledge.answers._search import _highlight_first
from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.wiki import load_wiki
from knowledge.wiki.cache import StoredPage, sections_in_memory

PASTED = (
    "Hello, my server loads the weights and then stops with this, what is wrong?\n"
    "RuntimeError: NCCL error: Failed to CUDA calloc 10485760 bytes\n"
    "I run vllm serve with tensor parallel 8 on the demo cluster."
)


def test_short_words_search_sections_and_pasted_text_ranks_pages(demo_kb):
    assert not is_pasted("nccl calloc")
    assert is_pasted(PASTED) and is_pasted("word " * 20) and is_pasted("a\nb")
    short = demo_kb.search("nccl calloc")
    assert not short.meta.get("pasted")
    reply = demo_kb.search(PASTED)
    assert reply.kind == "search" and reply.meta["pasted"] is True
    assert reply.pages[0].path == "troubleshooting/common-issues.md"
    assert reply.pages[0].anchor == "nccl-cannot-allocate-its-buffers"
    assert reply.meta["confidence"] == "high"
    assert len({p.path for p in reply.pages}) == len(reply.pages), "a page appears once"
    assert "Failed to CUDA calloc" in reply.fields[0].value


def test_pasted_text_about_an_unknown_model_says_so(demo_kb):
    reply = demo_kb.search(
        "Has anyone got acme/Zephyrine-70B-Instruct running on two cards? It crashes at load."
    )
    assert reply.meta["confidence"] == "low"
    assert "acme/zephyrine-70b-instruct" in reply.meta["unknown"]
    assert "never mentions" in reply.text


def test_pasted_text_pages_and_category(demo_kb):
    first = demo_kb.search(PASTED, per_page=2)
    second = demo_kb.search(PASTED, page=2, per_page=2)
    assert first.meta["page"] == 1 and second.meta["page"] == 2
    assert not {p.path for p in first.pages} & {p.path for p in second.pages}
    limited = demo_kb.search(PASTED, category="hardware")
    assert all(p.path.startswith("hardware/") for p in limited.pages)


def test_a_fix_with_commands_shows_them(tmp_path):
    root = tmp_path / "wiki"
    root.mkdir()
    (root / "problems.md").write_text(
        "# Problems\n\n## Peer Lockups\n\n**Error**: `peer access lockup detected`\n\n"
        "**Cause**: the IOMMU blocks peer writes.\n\n**Fix (kernel)**:\n\n"
        "```bash\nsudo grubby --update-kernel=ALL --args=iommu=pt\nsudo reboot\n```\n"
    )
    base = KnowledgeBase.open(root, tmp_path / "data")
    try:
        reply = base.search("my cards freeze\npeer access lockup detected during the first request")
    finally:
        base.close()
    assert "iommu=pt" in reply.fields[0].value


def regex_highlight(t, text: str, needle: str) -> str:
    """What the snippet of a pasted hit did for each telling word: one ``re.sub``."""
    return re.sub(
        rf"(?i)(?<![\w*])({re.escape(needle)})(?![\w*])",
        lambda m: t("search.highlight", text=m.group(1)),
        text,
        count=1,
    )


#: Words, escaped as snippets are, beside the characters a case-blind match treats
#: specially (dotted and dotless i, long s, Kelvin sign), letters of other scripts,
#: digits and underscores (word characters) and stars (a highlight's edge).
_PIECES = st.sampled_from(
    [
        "nccl",
        "NCCL",
        "Nccl",
        "p2p",
        "P2P",
        "kv",
        "sm",
        "kill",
        "\\-",
        "\\_",
        "\\*",
        "**",
        " ",
        "  ",
        ".",
        "/",
        "é",
        "ß",
        "\u0130",
        "\u0131",
        "\u017f",
        "\u212a",
        "\u212aill",
        "S\u0130",
        "_",
        "9",
        "x",
        "ü",
        "—",
    ]
)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_PIECES, max_size=40).map("".join),
    st.sampled_from(["nccl", "p2p", "kill", "sm", "kv", "si", "p2p\\-nccl", "\\_x", "ss"]),
)
def test_a_word_is_highlighted_where_the_pattern_would(t, text, needle):
    shown = _highlight_first(t, text, needle)
    assert shown == regex_highlight(t, text, needle)
    # and again over a first highlight, as the snippet does with its next word
    assert _highlight_first(t, shown, needle) == regex_highlight(t, shown, needle)


def test_a_pasted_answer_is_at_hand_only_once_the_ranker_is_built(tmp_path, monkeypatch):
    """``search_at_hand`` answers what the event loop may answer itself: a pasted question,
    with the ranker built and the pages shown in memory; anything else is None."""
    kb = KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data")
    try:
        assert kb.search_at_hand(PASTED) is None, "the ranker is built on first use: seconds"
        assert kb.state.built_ranker is None, "asking did not build it"
        whole = kb.search(PASTED)  # builds the ranker
        assert kb.search_at_hand(PASTED) == whole
        assert kb.search_at_hand(PASTED, page=2, per_page=2) == kb.search(
            PASTED, page=2, per_page=2
        )
        assert kb.search_at_hand("nccl calloc") is None, "a words search reads the index"
        monkeypatch.setattr("knowledge.answers._search.sections_in_memory", lambda page: False)
        assert kb.search_at_hand(PASTED) is None, "a page to show is still on disk"
    finally:
        kb.close()


def test_the_sections_of_a_cached_page_are_in_memory_once_read(tmp_path):
    KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data").close()
    kb = KnowledgeBase.open(demo_wiki_dir(), tmp_path / "data")  # pages from the cache
    try:
        pages = list(kb.wiki.pages.values())
        assert all(isinstance(page, StoredPage) for page in pages)
        # The front page, hubs and glossary are read at load; the others are not.
        page = next(page for page in pages if not sections_in_memory(page))
        assert page.sections
        assert sections_in_memory(page)
        assert sections_in_memory(load_wiki(demo_wiki_dir()).pages[page.path]), "parsed pages"
    finally:
        kb.close()
