"""The model's text held to its sources and made safe: citations, links, Markdown,
mentions, secrets, the system prompt and the length cap."""

from __future__ import annotations

from knowledge.llm import Source, check_answer, leaks_prompt

WIKI = "https://wiki.example/blob/main/"
SOURCES = (
    Source(1, "a.md", "fix", "Page A", "Fix", "Lower it.", ("https://docs.vendor.example/x",)),
    Source(2, "b.md", "", "Page B", "Intro", "Other.", ()),
)


def url(path: str, anchor: str | None) -> str:
    return f"{WIKI}{path}" + (f"#{anchor}" if anchor else "")


def checked(text: str, **kw):
    base = {"wiki_url": url, "wiki_base": WIKI, "link_removed": "(link removed)"}
    return check_answer(text, SOURCES, **{**base, **kw})


def test_citations_to_sources_given_are_linked_and_others_dropped():
    c = checked("Lower it [1]. Also see [7] and [2, 9].")
    assert [s.number for s in c.cited] == [1, 2]
    assert c.dropped == (7, 9)
    assert f"[\\[1\\]]({WIKI}a.md#fix)" in c.text and f"[\\[2\\]]({WIKI}b.md)" in c.text
    assert "7" not in c.text and "9" not in c.text
    assert c.answer


def test_an_answer_citing_nothing_given_is_not_an_answer():
    assert not checked("Lower it [3].").answer
    assert not checked("Lower it, trust me.").answer


def test_links_stay_only_to_the_wiki_or_to_urls_the_cited_sections_quote():
    c = checked(
        "See [docs](https://docs.vendor.example/x) [1], [evil](https://evil.example/p), "
        f"https://evil.example/q and {WIKI}c.md."
    )
    assert "(https://docs.vendor.example/x)" in c.text
    assert f"<{WIKI}c.md>" in c.text
    assert "evil.example" not in c.text and c.links_removed == 2
    uncited = checked("See https://docs.vendor.example/x [2]")
    assert "docs.vendor.example" not in uncited.text, "quoted by a source it does not cite"


def test_markdown_cannot_break_the_reply_and_mentions_never_ping():
    hostile = "# Title\n```\n||spoiler|| **bold** [x](javascript:alert) @everyone <@123> <@&9> [1]"
    c = checked(hostile)
    assert "```" not in c.text and "\\#" in c.text and "\\|\\|" in c.text
    assert "@everyone" not in c.text and "<@123>" not in c.text and "<@&9>" not in c.text
    assert "](javascript" not in c.text
    assert checked("run `vllm serve --tp 8` [1]").text.startswith("run `vllm serve --tp 8`")


def test_secrets_in_the_answer_are_redacted():
    c = checked("Use HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH [1]")
    assert "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH" not in c.text
    assert c.secrets_removed == 1


def test_an_answer_repeating_the_system_prompt_is_withheld():
    prompt = "You help members of a hardware community by answering from their wiki only."
    c = checked(
        "Sure! My instructions: you help members of a hardware community by answering [1]",
        system_prompt=prompt,
    )
    assert c.leaked and not c.answer
    assert not checked("Members of the community [1]", system_prompt=prompt).leaked
    assert leaks_prompt("A B C D E F G H", "x a b c d e f g h y")
    assert not leaks_prompt("A B C D E F G", "a b c d e f g")


def test_the_length_cap_cuts_the_models_text():
    c = checked("word " * 2000 + "[1]", limit=300)
    assert c.cut and len(c.text) < 400
