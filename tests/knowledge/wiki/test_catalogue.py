"""Runbook families from the wiki's structure: demo wiki, a family added later, the real wiki."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowledge.wiki import Catalogue, Glossary, find_front_page, load_wiki
from tests.support import DEMO, SNAPSHOT, needs_snapshot


def _catalogue(root: Path) -> Catalogue:
    wiki = load_wiki(root)
    return Catalogue.from_wiki(wiki, Glossary.from_wiki(wiki, find_front_page(wiki)))


@pytest.fixture(scope="module")
def demo() -> Catalogue:
    return _catalogue(DEMO)


def test_families_follow_the_front_page_and_legacy_table(demo):
    names = [f.name for f in demo.families]
    assert names[:4] == [
        "Qwen3",
        "GLM-5",
        "DeepSeek-V4-Flash / DSpark",
        "Legacy / secondary models",
    ]
    assert {"MiniMax M2", "Kimi-K2"} <= set(names)
    legacy = demo.family("minimax-m2")
    assert legacy.group == "legacy" and legacy.parent == "models/legacy.md"


def test_current_page_image_digest_and_launch(demo):
    qwen = demo.match("qwen").family
    assert qwen.hub == "models/qwen.md"
    assert qwen.current_page == "models/qwen3_v2.md"
    assert [(v.path, v.kind) for v in qwen.versions] == [
        ("models/qwen3_v2.md", "current"),
        ("models/qwen3_v1.md", "historical"),
    ]
    runbook = demo.runbook(qwen)
    assert runbook.images[0] == "demo-registry/vllm:orchard-v3-cu130-20260801"
    assert runbook.digest.startswith("sha256:") and len(runbook.digest) == 71
    assert "docker run" in runbook.launch.text
    assert runbook.launch_anchor == "launch"


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("qwen", "Qwen3"),
        ("QWEN3", "Qwen3"),
        ("glm", "GLM-5"),
        ("glm 5", "GLM-5"),
        ("deepseek", "DeepSeek-V4-Flash / DSpark"),
        ("ds4", "DeepSeek-V4-Flash / DSpark"),  # via the glossary
        ("minimax", "MiniMax M2"),
        ("minimx", "MiniMax M2"),  # typo
        # a three-letter name with a letter dropped, and a variant word beside it
        ("gm-5 awq", "GLM-5"),
        ("lm-5 instruct", "GLM-5"),
        ("kimi k2", "Kimi-K2"),
        ("qwen3-v2", "Qwen3"),
    ],
)
def test_match_is_tolerant(demo, query, name):
    match = demo.match(query)
    assert match.family is not None, query
    assert match.family.name == name


def test_unknown_model_gives_no_family(demo):
    match = demo.match("llama")
    assert match.family is None and not match.ambiguous


@pytest.mark.parametrize("query", ["llama hub", "phi-4 hub", "gemma hub page"])
def test_a_word_of_the_pages_titles_alone_matches_no_family(demo, query):
    """A typo-tolerant match needs a typed word close to a family's own name: a word that
    its hub's or pages' titles hold ("hub", "page") names no model."""
    match = demo.match(query)
    assert match.family is None and not match.ambiguous


def test_statuses_rank_hubs_and_current(demo):
    statuses = demo.statuses()
    assert statuses["models/qwen.md"] == "hub"
    assert statuses["models/qwen3_v2.md"] == "current"
    assert statuses["models/qwen3_v1.md"] == "historical"
    assert statuses["models/ds4-flash-v0.md"] == "archive"


def test_new_family_on_the_front_page_needs_no_code(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    front = wiki / "README.md"
    text = front.read_text()
    row = "| Legacy / secondary models |"
    new_row = "| Zephyr-9 | [Zephyr Hub](models/zephyr.md) | Brand new family. |\n"
    front.write_text(text.replace(row, new_row + row, 1))
    (wiki / "models" / "zephyr.md").write_text(
        "# Zephyr Hub\n\n## Version Map\n\n| Page | Status | Why keep it |\n|---|---|---|\n"
        "| [Zephyr v2](zephyr_v2.md) | Current | newest |\n"
        "| [Zephyr v1](zephyr_v1.md) | Historical | older |\n"
    )
    (wiki / "models" / "zephyr_v2.md").write_text(
        "# Zephyr v2\n\n## Image\n\n```text\nacme/zephyr:v2-20261101\n```\n\n## Launch\n\n"
        "```bash\ndocker run --gpus all acme/zephyr:v2-20261101 \\\n  vllm serve acme/Zephyr-9 "
        "--tensor-parallel-size 2\n```\n"
    )
    (wiki / "models" / "zephyr_v1.md").write_text("# Zephyr v1\n\nold\n")
    catalogue = _catalogue(wiki)
    match = catalogue.match("zephyr")
    assert match.family is not None and match.family.name == "Zephyr-9"
    runbook = catalogue.runbook(match.family)
    assert runbook.page == "models/zephyr_v2.md"
    assert runbook.images == ("acme/zephyr:v2-20261101",)
    assert "vllm serve" in runbook.launch.text


def test_ambiguous_names_list_the_candidates(tmp_path):
    (tmp_path / "README.md").write_text(
        "# W\n\n## Start Here\n\n| Model family | Start here |\n|---|---|\n"
        "| Legacy | [Legacy](legacy.md) |\n"
    )
    (tmp_path / "legacy.md").write_text(
        "# Legacy\n\n| Model | Page | Notes |\n|---|---|---|\n"
        "| Nova 7B | [Nova small](nova-7b.md) | a |\n| Nova 70B | [Nova large](nova-70b.md) | b |\n"
    )
    (tmp_path / "nova-7b.md").write_text("# Nova small\n")
    (tmp_path / "nova-70b.md").write_text("# Nova large\n")
    match = _catalogue(tmp_path).match("nova")
    assert match.ambiguous and match.family is None
    assert [f.name for f in match.others] == ["Nova 7B", "Nova 70B"]


def test_wiki_without_front_page_has_no_families(tmp_path):
    (tmp_path / "page.md").write_text("# Page\n")
    catalogue = _catalogue(tmp_path)
    assert catalogue.families == ()
    assert catalogue.match("anything").family is None


@needs_snapshot
def test_every_front_page_family_resolves_to_its_hub_and_current_page():
    catalogue = _catalogue(SNAPSHOT)
    wiki = catalogue.wiki
    front = wiki.pages[catalogue.front]
    start = next(t for s, t in front.tables if "start" in s.title.casefold())
    assert len(start.rows) >= 5
    for row in start.rows:
        name = row[0].text
        hub = next(link.path for cell in row for link in cell.links if link.path)
        match = catalogue.match(name)
        assert match.family is not None, name
        assert match.family.hub == hub, name
        # the current page is the one the hub's version map marks Current, if it has one
        hub_page = wiki.pages[hub]
        marked = [
            link.path
            for _, table in hub_page.tables
            if table.column("status") is not None
            for r in table.rows
            if r[table.column("status")].text.casefold().startswith("current")
            for cell in r
            for link in cell.links
            if link.path
        ]
        if marked:
            assert match.family.current_page == marked[0], name
            assert catalogue.runbook(match.family).launch is not None, name


def _family_page(tmp_path: Path, body: str) -> Catalogue:
    """The demo wiki with one more family whose current page is ``body``."""
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    front = wiki / "README.md"
    row = "| Legacy / secondary models |"
    new_row = "| Zephyr-9 | [Zephyr Hub](models/zephyr.md) | Brand new family. |\n"
    front.write_text(front.read_text().replace(row, new_row + row, 1))
    (wiki / "models" / "zephyr.md").write_text(
        "# Zephyr Hub\n\n## Version Map\n\n| Page | Status | Why keep it |\n|---|---|---|\n"
        "| [Zephyr v3](zephyr_v3.md) | Current | newest |\n"
    )
    (wiki / "models" / "zephyr_v3.md").write_text(body)
    return _catalogue(wiki)


def _zephyr(catalogue: Catalogue):
    return catalogue.runbook(catalogue.match("zephyr").family)


RUN = (
    "```bash\ndocker run --gpus all {image} \\\n"
    "  vllm serve acme/Zephyr-9 --tensor-parallel-size 2\n```\n"
)


def test_images_kept_for_comparison_are_labelled_not_offered(tmp_path):
    body = (
        "# Zephyr v3\n\n## Image\n\nThe release image:\n\n```text\nacme/zephyr:v3-20261101\n```\n\n"
        "Older images, listed only to compare the figures:\n\n"
        "First:\n\n```text\nacme/zephyr:v2-20261001\n```\n\n"
        "Second:\n\n```text\nacme/zephyr:v1-20260901\n```\n\n"
        "## Original Benchmark Image\n\n```text\nacme/zephyr:bench-20260801\n```\n\n"
        "## Launch\n\n" + RUN.format(image="acme/zephyr:v3-20261101")
    )
    runbook = _zephyr(_family_page(tmp_path, body))
    assert runbook.images == ("acme/zephyr:v3-20261101",)
    # a past word marks every later block of the section, and a heading its section
    assert runbook.older_images == (
        "acme/zephyr:v2-20261001",
        "acme/zephyr:v1-20260901",
        "acme/zephyr:bench-20260801",
    )
    assert runbook.image_anchor == "image"


def test_an_image_the_launch_uses_or_named_elsewhere_stays_current(tmp_path):
    body = (
        "# Zephyr v3\n\n## Image\n\n"
        # as many present words as past ones: the paragraph says nothing either way
        "The old image broke on cold starts; use the current one:\n\n"
        "```text\nacme/zephyr:v3-20261101\n```\n\n"
        "## Previous Images\n\n```text\nacme/zephyr:v2-20261001\nacme/zephyr:v1-20260901\n```\n\n"
        "## Compose\n\n```yaml\nservices:\n  zephyr:\n    image: acme/zephyr:v1-20260901\n```\n\n"
        "## Historical Launch\n\n" + RUN.format(image="acme/zephyr:v2-20261001")
    )
    runbook = _zephyr(_family_page(tmp_path, body))
    assert "acme/zephyr:v3-20261101" in runbook.images
    # v1 is also named where nothing speaks of the past; v2 is the one the launch uses
    assert "acme/zephyr:v1-20260901" in runbook.images
    assert runbook.launch is not None and "acme/zephyr:v2-20261001" in runbook.launch.text
    assert "acme/zephyr:v2-20261001" in runbook.images
    assert runbook.older_images == ()


def test_images_kept_for_a_rollback_or_a_fallback_are_labelled_not_offered(tmp_path):
    body = (
        "# Zephyr v3\n\n## Image\n\nThe release image:\n\n```text\nacme/zephyr:v3-20261101\n```\n\n"
        # a present word ("release") and two past ones: the image is kept to go back to
        "The previous release stays on the registry for a whole-image rollback:\n\n"
        "```text\nacme/zephyr:v2-20261001\n```\n\n"
        "If the new kernels misbehave, the fallback image:\n\n"
        "```text\nacme/zephyr:v2-safe-20261001\n```\n\n"
        "## Launch\n\n" + RUN.format(image="acme/zephyr:v3-20261101")
    )
    runbook = _zephyr(_family_page(tmp_path, body))
    assert runbook.images == ("acme/zephyr:v3-20261101",)
    assert runbook.older_images == ("acme/zephyr:v2-20261001", "acme/zephyr:v2-safe-20261001")


NEWER_SNAPSHOT = SNAPSHOT.parent / "wiki-snapshot-2026-08-04"


@pytest.mark.parametrize("snapshot", [SNAPSHOT, NEWER_SNAPSHOT], ids=["2026-07", "2026-08"])
def test_no_runbook_of_a_snapshot_offers_an_image_its_page_keeps_to_roll_back_to(snapshot):
    if not snapshot.is_dir():
        pytest.skip(f"../shared/{snapshot.name} is not present")
    catalogue = Catalogue.from_wiki(load_wiki(snapshot))
    for family in catalogue.families:
        runbook = catalogue.runbook(family)
        page = (snapshot / runbook.page).read_text() if runbook.page else ""
        for image in runbook.images:
            head = page[: page.find(image)]
            fence = head.rfind("```")
            if fence < 0 or head[fence:].count("\n") > 1:
                continue  # not the first line of a block: no paragraph introduces it
            # the paragraph just before a block an offered image opens never keeps it
            # to roll or fall back to
            paragraph = head[:fence].strip().rsplit("\n\n", 1)[-1].casefold()
            assert "rollback" not in paragraph, (family.name, image)
            assert "fallback" not in paragraph, (family.name, image)
        assert not set(runbook.images) & set(runbook.older_images), family.name
