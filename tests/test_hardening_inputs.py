"""Hostile input, for real: an alias bomb and a 5,000-digit number in every YAML a
user writes (request, rule file, config, compose), and a page built to make the
Markdown parser work without end."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.config import ConfigError, load_config
from knowledge.launch import parse_launch
from knowledge.safe_yaml import YamlLimits, YamlTooLarge, load_yaml
from knowledge.triage.rules import RuleError, RuleSet
from knowledge.wiki import load_wiki
from knowledge.wiki.parse import MAX_INLINE_MARKUP, PageTooComplex, parse_page

ROOT = Path(__file__).resolve().parents[1]


def laughs(levels: int = 9, width: int = 9, key: str = "text") -> str:
    """The classic: each level a list of ``width`` aliases to the level before."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{refs}]")
    lines.append(f"{key}: *l{levels - 1}")
    return "\n".join(lines) + "\n"


def test_the_bomb_is_small_and_refused_before_anything_is_built():
    bomb = laughs()
    assert len(bomb) < 600
    with pytest.raises(YamlTooLarge, match="expands to more than"):
        load_yaml(bomb)
    # Counting alias uses alone also stops it, with a lower cap.
    with pytest.raises(YamlTooLarge, match="aliases"):
        load_yaml(bomb, YamlLimits(aliases=10))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("n: " + "9" * 5000, "digits"),
        ("n: -" + "1" * 5000 + ".5", "digits"),
        ("x: " + "[" * 500 + "]" * 500, "nested"),
        ("x: &a [1, *a]", "contains it"),
    ],
)
def test_other_hostile_documents_are_refused_with_the_reason(text, why):
    with pytest.raises(YamlTooLarge, match=why):
        load_yaml(text)


def test_ordinary_yaml_and_json_load_as_safe_load_does():
    text = "base: &base {image: x, env: [A=1]}\nsvc:\n  <<: *base\n  n: 12345678901234567890\n"
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml('{"a": [1, 2.5, null, "s"]}') == {"a": [1, 2.5, None, "s"]}
    assert load_yaml("") is None
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [unclosed")
    with pytest.raises(Exception, match="tag"):
        load_yaml("!!python/object/apply:os.system ['true']")


def _triage(tmp_path: Path, request: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "request.yaml"
    path.write_text(request, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "triage", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"WIKIBOT_DATA": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize(
    ("request_text", "why"),
    [
        (laughs(), "expands to more than"),
        ("text: my server hangs\ngpus: " + "7" * 5000 + "\n", "digits"),
    ],
)
def test_triage_answers_a_hostile_request_with_one_line(tmp_path, request_text, why):
    result = _triage(tmp_path, request_text)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("wikibot triage:") and why in line


def test_a_rule_file_with_a_bomb_is_a_rule_error():
    with pytest.raises(RuleError, match="expands to more than"):
        RuleSet.from_texts([("bomb.yaml", laughs(key="rules"))])


def test_a_config_with_a_bomb_names_the_file(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(laughs(key="guild_ids"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config\.yaml") as caught:
        load_config(path)
    assert "expands to more than" in str(caught.value)


def test_a_pasted_compose_file_with_a_bomb_is_a_problem_not_a_hang():
    compose = laughs(key="x-bomb") + "services:\n  vllm:\n    image: x\n"
    launch = parse_launch(compose)
    assert any("expands to more than" in p for p in launch.problems), launch.problems


# --- the Markdown parser -----------------------------------------------------------


def test_a_page_of_emphasis_runs_is_skipped_with_its_reason(tmp_path, caplog):
    (tmp_path / "index.md").write_text("# Home\n\nA page.\n", encoding="utf-8")
    # 2 MB: under the size cap, and 15 s and ~1 GB of inline parsing before.
    (tmp_path / "bomb.md").write_text("*_" * 1_000_000, encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger="knowledge.wiki.load"):
        wiki = load_wiki(tmp_path)
    assert list(wiki.pages) == ["index.md"]
    ((path, reason),) = wiki.skipped
    assert path == "bomb.md" and "too much inline markup" in reason
    assert any("bomb.md" in r.getMessage() for r in caplog.records)


def test_markup_inside_code_blocks_does_not_count():
    code = "```\n" + "a_b*c " * (MAX_INLINE_MARKUP // 2 + 10) + "\n```\n"
    title, sections, _ = parse_page("log.md", "# Log\n\n" + code)
    assert title == "Log" and sections[0].code
    with pytest.raises(PageTooComplex):
        parse_page("log.md", "# Log\n\n" + code.strip("`\n"))
