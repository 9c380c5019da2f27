"""``wikibot serve`` / ``python -m bot`` without a token or config: one clear line, no crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_serve_without_a_token_prints_one_line_and_exits(monkeypatch, capsys):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert main(["serve"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "DISCORD_TOKEN" in lines[0] and "export DISCORD_TOKEN=" in lines[0]
    assert "wikibot console" in lines[0]


def test_python_m_bot_without_a_token_says_the_same(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "bot"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "DISCORD_TOKEN" in line and "wikibot console" in line


def test_serve_with_a_token_but_a_bad_config_names_the_file_and_key(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DISCORD_TOKEN", "not.a.real-token")
    config = tmp_path / "config.yaml"
    config.write_text("wiki:\n  path: nowhere\n", encoding="utf-8")
    assert main(["serve", "--config", str(config)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(config) in line and "wiki.path" in line
    assert "not.a.real-token" not in line

    assert main(["sync", "--config", str(tmp_path / "missing.yaml")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "missing.yaml" in line and "config file not found" in line
