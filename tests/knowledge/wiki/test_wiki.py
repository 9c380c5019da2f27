"""Reading pages: golden parse, anchors, and pages that are broken or odd."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from knowledge.wiki import MAX_PAGE_BYTES, WikiFolderError, github_anchor, load_wiki, parse_page
from tests.support import DEMO, SNAPSHOT, needs_snapshot

HERE = Path(__file__).parent


def _section_view(section) -> dict:
    view = {
        "anchor": section.anchor,
        "level": section.level,
        "title": section.title,
        "code": [[c.lang, c.text] for c in section.code],
        "links": [[link.text, link.path, link.anchor] for link in section.links],
        "labelled": [[lab.label, lab.text, list(lab.code)] for lab in section.labelled],
    }
    if section.tables:
        view["tables"] = [
            [list(t.header), [[c.text for c in row] for row in t.rows]] for t in section.tables
        ]
    return view


def test_golden_page_parses_as_recorded():
    source = (HERE / "golden" / "odd_page.md").read_text()
    expected = json.loads((HERE / "golden" / "odd_page.json").read_text())
    title, sections, problems = parse_page("golden/odd_page.md", source)
    assert title == expected["title"]
    assert problems == []
    assert [_section_view(s) for s in sections] == expected["sections"]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("NCCL Deadlock on Startup", "nccl-deadlock-on-startup"),
        ("CUDA Device-Side Assert (MTP + Radix Cache)", "cuda-device-side-assert-mtp--radix-cache"),
        ("1. MTP >3 Crashes (vLLM)", "1-mtp-3-crashes-vllm"),
        ("GLM-5.2 v15 NVFP4 / Online FP8-MXFP8", "glm-52-v15-nvfp4--online-fp8-mxfp8"),
        ("snake_case_name", "snake_case_name"),
    ],
)
def test_github_anchor(heading, anchor):
    assert github_anchor(heading) == anchor


def test_demo_wiki_loads_every_page():
    wiki = load_wiki(DEMO)
    assert wiki.skipped == []
    assert "README.md" in wiki.pages
    assert {"models", "troubleshooting", "general"} <= set(wiki.categories)
    odd = wiki.pages["notes/no-heading.md"]
    assert odd.title  # degraded, not dropped
    assert odd.problems


def test_bad_files_are_skipped_or_degraded_with_a_reason(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="knowledge.wiki.load")
    (tmp_path / "good.md").write_text("# Good\n\ntext\n")
    (tmp_path / "binary.md").write_bytes(b"# x\x00\x01\x02")
    (tmp_path / "latin1.md").write_bytes("# Caf\xe9\n\nna\xefve\n".encode("latin-1"))
    (tmp_path / "huge.md").write_bytes(b"# Huge\n" + b"a" * (MAX_PAGE_BYTES + 1))
    (tmp_path / "empty.md").write_text("")
    # A page kept beside the images is still a page; installed tool files are not.
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "guide.md").write_text("# A guide kept with its pictures\n")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "README.md").write_text("# not the wiki\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_text("# hidden\n")
    (tmp_path / "link.md").symlink_to(tmp_path / "good.md")
    wiki = load_wiki(tmp_path)
    skipped = dict(wiki.skipped)
    assert set(wiki.pages) == {"good.md", "latin1.md", "empty.md", "images/guide.md"}
    assert "binary" in skipped["binary.md"]
    assert "too large" in skipped["huge.md"]
    assert "symbolic link" in skipped["link.md"]
    assert "invalid UTF-8 replaced" in wiki.pages["latin1.md"].problems
    assert wiki.pages["empty.md"].title == "empty"
    assert "skipped binary.md" in caplog.text


def test_missing_wiki_folder_is_a_clear_error(tmp_path):
    with pytest.raises(WikiFolderError, match="wiki folder not found") as failure:
        load_wiki(tmp_path / "nope")
    assert failure.value.problem == "missing"


def test_revision_changes_with_content(tmp_path):
    (tmp_path / "a.md").write_text("# A\n")
    first = load_wiki(tmp_path).revision
    assert load_wiki(tmp_path).revision == first
    (tmp_path / "a.md").write_text("# A\n\nchanged\n")
    assert load_wiki(tmp_path).revision != first


@needs_snapshot
def test_every_snapshot_page_loads():
    wiki = load_wiki(SNAPSHOT)
    on_disk = {
        p.relative_to(SNAPSHOT).as_posix()
        for p in SNAPSHOT.rglob("*.md")
        if not any(part.startswith(".") for part in p.parts)
    }
    assert wiki.skipped == []
    assert set(wiki.pages) == on_disk
    for page in wiki.pages.values():
        assert page.title, page.path
        assert page.sections, page.path


@pytest.mark.parametrize("path", sorted(DEMO.rglob("*.md")), ids=lambda p: p.name)
def test_the_page_is_parsed_once_into_what_markdown_it_would_give(path):
    """The markup bound splits markdown-it's parse in two; the tokens must not change."""
    from knowledge.wiki.parse import _markdown, _tokens

    text = path.read_text(encoding="utf-8")

    def shape(tokens):
        children = [[(c.type, c.content) for c in t.children or ()] for t in tokens]
        return [(t.type, t.tag, t.content, t.map, t.attrs) for t in tokens], children

    assert shape(_tokens(_markdown(), text, 10**9)) == shape(_markdown().parse(text))


def test_a_code_block_keeps_the_prose_just_before_it():
    source = (
        "# Page\n\n## Image\n\nFirst paragraph.\n\nThe image:\n\n```text\na/b:1\n```\n\n"
        "```text\na/b:2\n```\n\n**Fix:** run it\n\n```bash\nfix\n```\n\n"
        "## Next\n\n```text\nx\n```\n"
    )
    _, sections, _ = parse_page("p.md", source)
    image, following = sections[1], sections[2]
    assert [b.intro for b in image.code] == ["First paragraph.\nThe image:", "", "Fix: run it"]
    assert following.code[0].intro == "", "the heading starts afresh"
    long = "# P\n\n" + "".join(f"Paragraph {i} " + "word " * 60 + "\n\n" for i in range(5))
    (block,) = parse_page("p.md", long + "```text\nx\n```\n")[1][0].code
    assert len(block.intro) <= 400 and block.intro.rstrip().endswith("word")
    assert "Paragraph 0" not in block.intro, "only the last paragraphs are kept"
