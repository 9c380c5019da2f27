"""The sections a suggestion names for the request's image (knowledge.triage.suggest).

The suggester finds them in the wiki's code laid end to end; each test compares with
the block-by-block reading it replaced: the first section of each page whose code
holds ``repository:tag``, current pages first, at most three.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.launch import ImageRef
from knowledge.templates import load_templates
from knowledge.triage.suggest import Suggester
from knowledge.wiki import Catalogue, load_wiki, status_weight
from tests.support import DEMO

TEMPLATES = load_templates("triage.yaml")


def reference(suggester: Suggester, image: ImageRef, limit: int = 3) -> list[str]:
    ref = f"{image.repository}:{image.tag}"
    found: list[tuple[float, str]] = []
    for page in suggester.wiki.pages.values():
        for section in page.sections:
            if any(ref in block.text for block in section.code):
                rank = -status_weight(suggester.statuses.get(page.path))
                found.append((rank, f"{page.path}#{section.anchor}"))
                break
    found.sort()
    return [ref for _, ref in found[:limit]]


def image(repository: str, tag: str) -> ImageRef:
    return ImageRef(raw=f"{repository}:{tag}", registry=None, repository=repository, tag=tag)


def test_the_demo_wikis_images_are_found_as_block_by_block():
    wiki = load_wiki(DEMO)
    suggester = Suggester.build(wiki, TEMPLATES, statuses=Catalogue.from_wiki(wiki).statuses())
    named = 0
    for page in wiki.pages.values():
        for section in page.sections:
            for block in section.code:
                for word in block.text.split():
                    if ":" not in word or "/" not in word.split(":")[0]:
                        continue
                    repository, _, tag = word.partition(":")
                    ref = image(repository, tag)
                    got = suggester._image_sections(ref)
                    assert got == reference(suggester, ref)
                    named += bool(got)
    assert named  # the demo wiki names images in its code


REPOS = ["team/vllm", "team/vllm-dev", "other/vllm", "team/sglang"]
TAGS = ["v1", "v1.2", "v10", "nightly", "v1-cu130"]


@st.composite
def wikis(draw) -> dict[str, str]:
    """Pages whose sections' code blocks name images, some several, some none."""
    pages: dict[str, str] = {}
    for number in range(draw(st.integers(1, 6))):
        parts = [f"# Page {number}\n"]
        for section in range(draw(st.integers(1, 4))):
            parts.append(f"\n## Part {section}\n\nText.\n")
            for _ in range(draw(st.integers(0, 2))):
                names = draw(
                    st.lists(
                        st.builds("{}:{}".format, st.sampled_from(REPOS), st.sampled_from(TAGS)),
                        max_size=3,
                    )
                )
                lines = [f"docker run {name}" for name in names] or ["echo none"]
                parts.append("\n```\n" + "\n".join(lines) + "\n```\n")
        pages[f"models/page{number}.md"] = "".join(parts)
    return pages


@settings(max_examples=60, deadline=None)
@given(wikis(), st.sampled_from(REPOS), st.sampled_from(TAGS), st.integers(1, 4))
def test_image_sections_are_the_block_by_block_readings(tmp_path_factory, pages, repo, tag, limit):
    root = tmp_path_factory.mktemp("wiki")
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    wiki = load_wiki(root)
    statuses = {path: ("current" if i % 2 else "historical") for i, path in enumerate(wiki.pages)}
    suggester = Suggester.build(wiki, TEMPLATES, statuses=statuses)
    ref = image(repo, tag)
    assert suggester._image_sections(ref, limit) == reference(suggester, ref, limit)


def test_only_a_pages_first_section_naming_the_image_counts(tmp_path):
    root = tmp_path / "wiki"
    root.mkdir()
    (root / "a.md").write_text(
        "# A\n\n## One\n\n```\nrun team/vllm:v1\n```\n\n## Two\n\n```\nrun team/vllm:v1\n```\n"
    )
    (root / "b.md").write_text("# B\n\n## Three\n\n```\nrun team/vllm:v1.2\n```\n")
    suggester = Suggester.build(load_wiki(root), TEMPLATES)
    assert suggester._image_sections(image("team/vllm", "v1")) == ["a.md#one", "b.md#three"]
