"""/acronym and /explain on the demo wiki's glossary."""

from __future__ import annotations

from knowledge import answers


def test_acronym_exact_composite_and_missing(state, t):
    dcp = answers.acronym(state, t, "DCP")
    assert dcp.kind == "acronym" and "Decode Context Parallelism" in dcp.text
    assert dcp.pages[0].path == "GLOSSARY.md" and dcp.pages[0].anchor
    four = answers.acronym(state, t, "DCP4")
    assert "**4**" in four.text
    missing = answers.acronym(state, t, "NCCLX")
    assert missing.kind == "not_found" and missing.ephemeral
    assert "NCCL" in missing.suggestions
    first, second = missing.text.splitlines()
    assert first.startswith("Did you mean ") and "`NCCL`" in first
    assert second == "The glossary has no entry for it."


def test_acronym_by_meaning_names_the_term_then_its_meaning(state, t):
    reply = answers.acronym(state, t, "decode context parallelism")
    assert reply.meta["how"] == "meaning"
    first, second = reply.text.splitlines()
    assert "**DCP**" in first and second.startswith("**DCP**: ")


def test_missing_term_lists_pages_that_mention_it(state, t):
    reply = answers.acronym(state, t, "calloc")
    assert reply.kind == "not_found"
    hits = {f.name: f.value for f in reply.fields}["Pages that mention it"]
    assert hits.startswith("- [") and " › " in hits
    assert reply.pages and reply.pages[0].path == "troubleshooting/common-issues.md"


def test_acronym_echo_is_shown_as_code_as_typed(state, t):
    reply = answers.acronym(state, t, "@everyone **bold** `x`")
    assert reply.kind == "not_found"
    # In a code span nothing renders (no emphasis, no mention) and an escape would show.
    assert reply.title.startswith("`` @everyone **bold** `x")
    assert "\\" not in reply.title


def test_explain_lists_each_term_once(state, t):
    reply = answers.explain(
        state, t, "Our TP8 DCP4 box with MTP and MTP again, NVFP4 weights, see https://x.y/DCP"
    )
    assert reply.kind == "explain"
    assert reply.meta["terms"] == ["TP", "DCP", "MTP", "NVFP4"]
    assert len(reply.text.splitlines()) == 1 + 4  # the count, then one line per term
    assert answers.explain(state, t, "nothing relevant here").kind == "not_found"
    assert answers.explain(state, t, "   ").kind == "not_found"


def test_term_choices_are_capped(state, t):
    assert len(answers.term_choices(state, t, "")) == answers.AUTOCOMPLETE_LIMIT
    assert all(len(name) <= 100 for name, _ in answers.term_choices(state, t, "c"))
    assert answers.term_choices(state, t, "dcp")[0][1] == "DCP"


def test_a_missing_term_full_of_backticks_keeps_the_titles_code_span_closed(state, t):
    reply = answers.acronym(state, t, "z" + "`" * 117 + "z")  # the span grows it to 266
    assert reply.kind == "not_found"
    assert len(reply.title) < 256 and reply.title.startswith("`"), reply.title
