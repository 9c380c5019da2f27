"""What is announced between two generations of a wiki, and how it is worded."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

from knowledge.answers._format import link
from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.source import Snapshot, WikiChanges, announcement
from knowledge.templates import load_templates
from tests.github_standin import tree_files
from tests.source_edits import invisible_edit, visible_edits


def snapshot_of(
    tmp_path: Path, files: dict[str, bytes], name: str
) -> tuple[Snapshot, KnowledgeBase]:
    root = tmp_path / name
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    kb = KnowledgeBase.open(
        root, tmp_path / f"{name}-data", link_base="https://example.org/blob/x/"
    )
    state = kb.state
    return Snapshot.of(state.wiki, state.glossary, state.catalogue), kb


def test_visible_edits_are_found_and_worded(tmp_path):
    files = tree_files(demo_wiki_dir())
    old, kb_old = snapshot_of(tmp_path, files, "old")
    new, kb = snapshot_of(tmp_path, visible_edits(files), "new")
    changes = WikiChanges.between(old, new)
    (update,) = changes.updated
    assert (update.new.key, update.old.page, update.new.page) == (
        "qwen3",
        "models/qwen3_v2.md",
        "models/qwen3_v3.md",
    )
    assert update.images_changed and update.new.images == (
        "demo-registry/vllm:orchard-v4-cu130-20261101",
    )
    assert [f.name for f in changes.new_families] == ["Wombat-9"]
    assert [t.term for t in changes.new_terms] == ["ZQX"]
    assert [e.title for e in changes.new_errors] == ["Common Issues › Quokka Overflow"]

    reply = announcement(
        changes,
        load_templates("source.yaml"),
        partial(link, kb.t, kb.links),
        commit="a" * 40,
        commit_url="https://example.org/commit/aaa",
    )
    assert reply is not None and reply.title == "The wiki changed"
    fields = {f.name: f.value for f in reply.fields}
    runbooks = fields["Runbooks"]
    assert (
        "**Qwen3**: [Qwen3 v3](https://example.org/blob/x/models/qwen3_v3.md)"
        " is now current (was Qwen3 v2)." in runbooks
    )
    assert (
        "New image `demo-registry/vllm:orchard-v4-cu130-20261101`"
        " (was `demo-registry/vllm:orchard-v3-cu130-20260801`)." in runbooks
    )
    assert fields["New runbook families"] == (
        "**Wombat\\-9**: [Wombat v1](https://example.org/blob/x/models/wombat_v1.md)"
    )
    assert (
        fields["New glossary terms"].startswith("[ZQX](https://example.org/blob/x/GLOSSARY.md#")
        and "Zonal Quokka Exchange" in fields["New glossary terms"]
    )
    assert "quokka-overflow" in fields["New known errors"]
    assert "[`aaaaaaaaaaaa`](https://example.org/commit/aaa)" in reply.text
    assert reply.fitted() == reply, "within Discord's limits as it is"
    kb.close()
    kb_old.close()


def test_an_invisible_edit_announces_nothing(tmp_path):
    files = tree_files(demo_wiki_dir())
    old, kb_old = snapshot_of(tmp_path, files, "old")
    new, kb = snapshot_of(tmp_path, invisible_edit(files), "new")
    changes = WikiChanges.between(old, new)
    assert not changes
    assert (
        announcement(changes, load_templates("source.yaml"), partial(link, kb.t, kb.links)) is None
    )
    kb.close()
    kb_old.close()


def test_a_long_list_is_cut_to_whole_lines_within_a_field(tmp_path):
    files = tree_files(demo_wiki_dir())
    old, kb_old = snapshot_of(tmp_path, files, "old")
    rows = "".join(f"| QQ{i} | Quite Queer Quantity number {i} | x |\n" for i in range(80))
    edited = dict(files)
    edited["GLOSSARY.md"] = (
        files["GLOSSARY.md"].decode().replace("| TP | Tensor", rows + "| TP | Tensor", 1).encode()
    )
    new, kb = snapshot_of(tmp_path, edited, "new")
    reply = announcement(
        WikiChanges.between(old, new), load_templates("source.yaml"), partial(link, kb.t, kb.links)
    )
    (field,) = reply.fields
    assert len(field.value) <= 1024 and field.value.splitlines()[-1].startswith("… and ")
    assert all(line.startswith("[QQ") for line in field.value.splitlines()[:-1])
    kb.close()
    kb_old.close()
    shutil.rmtree(tmp_path, ignore_errors=True)
