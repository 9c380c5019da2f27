"""Default data folders: one root for a local wiki's folder and a fetched wiki's."""

from __future__ import annotations

from knowledge.paths import data_root, default_data_dir
from knowledge.source.follow import source_data_dir
from knowledge.source.spec import parse_source


def test_default_data_folders_share_one_root(tmp_path, monkeypatch):
    monkeypatch.delenv("WIKIBOT_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data_root() == tmp_path / "cache" / "wikibot"
    monkeypatch.setenv("WIKIBOT_DATA", str(tmp_path / "data"))
    assert data_root() == tmp_path / "data"
    local = default_data_dir(tmp_path / "wiki")
    fetched = source_data_dir(parse_source("github:owner/wiki"))
    assert local.parent == fetched.parent == tmp_path / "data"
    assert local.name.startswith("wiki-") and fetched.name.startswith("owner-wiki-")
    assert fetched != source_data_dir(parse_source("github:owner/wiki@v2")), "one per source"
