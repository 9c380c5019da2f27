"""/runbook on the demo wiki: the current page, its image and launch, versions, typos."""

from __future__ import annotations

from knowledge import answers

from .conftest import LINK_BASE


def test_runbook_gives_current_page_image_and_launch(state, t):
    reply = answers.runbook(state, t, "qwen")
    assert reply.kind == "runbook" and not reply.ephemeral
    assert reply.title == "Qwen3: current runbook"
    fields = {f.name: f.value for f in reply.fields}
    assert "demo-registry/vllm:orchard-v3-cu130-20260801" in fields["Docker image"]
    # the previous image the page lists for comparison is labelled, never the release
    older = fields[t("runbook.older_images")]
    assert older == "`demo-registry/vllm:orchard-v1-cu129-20260412`"
    assert "orchard-v1" not in fields["Docker image"]
    assert f"{LINK_BASE}models/qwen3_v2.md" in fields["Current page"]
    assert "```bash\ndocker run" in reply.text
    assert reply.pages[0].ref == "models/qwen3_v2.md#launch"
    assert "models/qwen3_v1.md" in [p.path for p in reply.pages]
    assert reply.meta["family"] == "qwen3" and reply.meta["older"] == 1
    assert reply.meta["url"] == f"{LINK_BASE}models/qwen3_v2.md"


def test_runbook_versions_and_launch_views(state, t):
    versions = answers.versions(state, t, "qwen3")
    assert "Current" in versions.text and "Historical" in versions.text
    # one line per version, each a link to its page
    lines = versions.text.splitlines()
    assert len(lines) == len(versions.pages) >= 2
    assert all(line.startswith("- [") and LINK_BASE in line for line in lines)
    launch = answers.launch(state, t, "qwen3")
    assert launch.meta["command"].startswith("docker run")
    assert launch.text.count("```") == 2


def test_runbook_unknown_and_empty_are_helpful(state, t):
    missing = answers.runbook(state, t, "llama")
    assert missing.kind == "not_found" and missing.ephemeral
    assert "Qwen3" in missing.text  # lists what exists
    typo = answers.runbook(state, t, "glmm")
    assert typo.kind == "runbook" or "GLM-5" in typo.suggestions
    assert answers.runbook(state, t, "   \u200b ").kind == "not_found"


def test_unknown_family_key_falls_back_to_a_runbook_search(state, t):
    assert answers.versions(state, t, "qwen").meta["family"] == "qwen3"
    assert answers.launch(state, t, "no-such-family").kind == "not_found"


def test_family_choices_are_capped_and_best_first(state):
    assert answers.family_choices(state, "")[0] == ("Qwen3", "qwen3")
    assert answers.family_choices(state, "qwen")[0] == ("Qwen3", "qwen3")
    assert len(answers.family_choices(state, "")) <= answers.AUTOCOMPLETE_LIMIT


def test_a_hub_without_a_runbook_of_its_own_lists_its_models(state, t):
    families = state.catalogue.families
    groups = [
        f for f in families if not f.current and f.hub and any(c.parent == f.hub for c in families)
    ]
    assert groups, "the demo wiki has a hub grouping several models"
    group = groups[0]
    children = [f for f in families if f.parent == group.hub]
    reply = answers.runbook(state, t, group.key)
    assert reply.kind == "runbook" and reply.meta["family"] == group.key
    intro, *lines = reply.text.splitlines()
    assert intro.endswith("ask for one of them by name:")
    assert len(lines) == len(children)
    assert all(line.startswith("- **") and LINK_BASE in line for line in lines)


def test_a_query_full_of_backticks_keeps_the_titles_code_span_closed(state, t):
    """The query is shown in a code span, whose escapes grow with its backticks: 200 of
    them made a title of over 400 characters, cut open by Discord's 256."""
    for query in ("`" * 200, "zorblax " * 25):
        reply = answers.runbook(state, t, query)
        assert reply.kind == "not_found"
        assert len(reply.title) < 256 and reply.title.endswith("`"), reply.title
