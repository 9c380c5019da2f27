"""templates/bot.yaml against bot/: every key the code names exists, every key is named."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import pytest

from bot.heartbeat import Health, Heartbeat, Status
from knowledge.templates import Templates, load_templates

ROOT = Path(__file__).resolve().parents[2]
_KEY = re.compile(r"^[a-z_]+(\.[a-z_]+)+$")
#: The head of a key built at run time, as in ``f"health.{verdict.status}"``.
_HEAD = re.compile(r"^[a-z_]+(\.[a-z_]+)*\.$")


def _trees() -> list[ast.AST]:
    return [ast.parse(f.read_text("utf-8")) for f in sorted((ROOT / "bot").rglob("*.py"))]


def _literals() -> set[str]:
    return {
        node.value
        for tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _heads() -> set[str]:
    heads = set()
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) and node.values:
                first = node.values[0]
                if isinstance(first, ast.Constant) and _HEAD.match(str(first.value)):
                    heads.add(str(first.value))
    return heads


@pytest.fixture(scope="module")
def bot_templates() -> Templates:
    return load_templates("bot.yaml")


def test_every_key_the_bot_names_exists(bot_templates):
    replies = load_templates()
    sections = {key.split(".")[0] for key in bot_templates.entries}
    named = {s for s in _literals() if _KEY.match(s) and s.split(".")[0] in sections}
    assert named, "no template keys found: the scan is broken"
    missing = named - bot_templates.entries.keys() - replies.entries.keys()
    assert sorted(missing) == []


def test_no_key_of_bot_yaml_is_dead(bot_templates):
    literals, heads = _literals(), _heads()
    assert heads, "no keys built at run time found: the scan is broken"

    def used(key: str) -> bool:
        return key in literals or any(
            key.startswith(head) and "." not in key[len(head) :] for head in heads
        )

    assert sorted(k for k in bot_templates.entries if not used(k)) == []


def test_every_health_verdict_is_worded(bot_templates):
    beat = Heartbeat(time=0.0, pid=7, revision="3f2a9c1b0d4e", guilds=1, connected=True)
    for status in typing.get_args(Status):
        verdict = Health(status, Path("heartbeat.json"), 120.0, beat, 5.0, "why")
        assert bot_templates(f"health.{status}", **verdict.values()), status
