"""A runbook is safe to copy: launch commands never cut, stale hubs said, missing pages honest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowledge.cli.console import dispatch, render_text
from knowledge.reply import LIMITS
from knowledge.service import KnowledgeBase
from tests.bot.helpers import bot_factory, embed_of, make_config
from tests.discord_standin import DEFAULT_IDS
from tests.support import DEMO

LONG_FLAGS = "".join(f"    --flag-number-{n} value-{n} \\\n" for n in range(120))


def _long_launch_wiki(root: Path) -> Path:
    wiki = root / "wiki"
    shutil.copytree(DEMO, wiki)
    page = wiki / "models" / "glm5_v4.md"
    text = page.read_text()
    page.write_text(text.replace("    --served-model-name glm-5 \\\n", LONG_FLAGS, 1))
    return wiki


def _kb(wiki: Path, tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.open(wiki, tmp_path / "data")


def test_a_long_launch_command_is_attached_whole_never_cut(tmp_path):
    kb = _kb(_long_launch_wiki(tmp_path), tmp_path)
    reply = kb.runbook("glm")
    assert len(reply.files) == 1
    attached = reply.files[0]
    assert attached.name.startswith("launch-") and attached.name.endswith(".sh")
    assert "--flag-number-119 value-119" in attached.text
    assert attached.text.rstrip("\n").endswith(
        kb.catalogue.runbook(kb.catalogue.family(reply.meta["family"]))
        .launch.text.rstrip("\n")
        .splitlines()[-1]
    )
    # the embed shows no cut copy of it, and points at the file
    assert "--flag-number-" not in reply.fitted().text
    assert attached.name in reply.text
    fitted = reply.fitted()
    assert fitted.files == reply.files
    launch = kb.launch(reply.meta["family"])
    assert launch.files and launch.files[0].text == attached.text
    # the console prints it whole
    printed = render_text(dispatch(kb, "/runbook glm"))
    assert "--flag-number-119 value-119" in printed
    assert reply.to_json()["files"][0]["name"] == attached.name


def test_a_short_launch_command_stays_inline(tmp_path):
    kb = _kb(DEMO, tmp_path)
    reply = kb.runbook("glm")
    assert not reply.files
    assert "```bash" in reply.text and "--tensor-parallel-size 8" in reply.text
    assert len(reply.text) <= LIMITS.description


def test_pages_newer_than_the_current_one_are_named_with_both_links(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    (wiki / "models" / "glm5_v5.md").write_text("# GLM-5 v5\n\nNewer.\n")
    reply = _kb(wiki, tmp_path).runbook("glm")
    assert "models/glm5_v5.md" in reply.meta["newer"]
    shown = render_text(reply)
    assert "GLM-5 v5" in shown and "glm5_v4.md" in shown and "glm5_v5.md" in shown
    assert _kb(DEMO, tmp_path / "plain").runbook("glm").meta["newer"] == []


def test_a_missing_current_page_is_said_not_replaced(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    (wiki / "models" / "glm5_v4.md").unlink()
    reply = _kb(wiki, tmp_path).runbook("glm")
    assert reply.kind == "unavailable" and not reply.ok
    assert "glm5_v4.md" in reply.text
    assert reply.meta["missing"] is True
    assert all(p.path != "models/glm5_v3.md" for p in reply.pages), "no stand-in page"


@pytest.mark.parametrize("line", ["", "   ", "/"])
def test_an_empty_line_says_what_to_type(tmp_path, line):
    reply = dispatch(_kb(DEMO, tmp_path), line)
    assert "/runbook" in reply.text and not reply.ok


def test_a_line_without_a_slash_is_a_search(tmp_path):
    kb = _kb(DEMO, tmp_path)
    reply = dispatch(kb, "nccl calloc")
    assert reply.kind == "search"
    assert reply.pages == kb.search("nccl calloc").pages


def test_one_hit_is_one_section(tmp_path):
    kb = _kb(DEMO, tmp_path)
    reply = kb.search("calloc")
    if reply.meta.get("total") == 1:
        assert "1 section found" in reply.text
    many = kb.search("nccl")
    assert f"{many.meta['total']} sections found" in many.text


def test_the_bot_attaches_the_whole_launch_command(discord_standin, tmp_path):
    wiki = _long_launch_wiki(tmp_path)
    kb = _kb(wiki, tmp_path)

    async def scenario(standin):
        record = await standin.slash("runbook", model="glm")
        return record.response

    response = discord_standin.run(bot_factory(make_config(wiki), kb=kb), scenario)
    assert embed_of(response.message)["title"].startswith("GLM")
    assert len(response.files) == 1
    assert b"--flag-number-119 value-119" in response.files[0].data
    assert response.files[0].filename.startswith("launch-")
    assert DEFAULT_IDS.guild
