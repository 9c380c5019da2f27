"""templates/replies.yaml against the code: no key missing, none dead, layout filled in."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from knowledge.templates import Templates, load_templates

ROOT = Path(__file__).resolve().parents[2]
#: The code that words its replies with templates/replies.yaml.
USERS = [ROOT / "knowledge" / p for p in ("answers", "cli", "service.py")]
_KEY = re.compile(r"^[a-z_]+(\.[a-z_]+)+$")


def _files(*paths: Path) -> list[Path]:
    return [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]


def _string_literals(files: list[Path]) -> set[str]:
    return {
        node.value
        for f in files
        for node in ast.walk(ast.parse(f.read_text("utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


@pytest.fixture(scope="module")
def replies() -> Templates:
    return load_templates()


def test_every_key_the_code_names_exists(replies):
    sections = {key.split(".")[0] for key in replies.entries}
    named = {
        s for s in _string_literals(_files(*USERS)) if _KEY.match(s) and s.split(".")[0] in sections
    }
    assert named, "no template keys found: the scan is broken"
    plurals = {k.rsplit(".", 1)[0] for k in replies.entries if k.endswith((".one", ".other"))}
    assert sorted(named - replies.entries.keys() - plurals) == []


def test_no_key_is_dead(replies):
    used = _string_literals(_files(ROOT / "knowledge", ROOT / "bot"))
    # a plural form is used when its base key is (Templates.plural picks one or other)
    used |= {f"{key}.{form}" for key in used for form in ("one", "other")}
    assert sorted(replies.entries.keys() - used) == []


def test_lines_fills_one_line_per_row():
    t = Templates({"x.line": "- {name}: {value}"})
    assert t.lines("x.line", [{"name": "a", "value": 1}, {"name": "b", "value": 2}]) == (
        "- a: 1\n- b: 2"
    )
    assert t.lines("x.line", []) == ""


def test_plural_picks_one_or_other():
    t = Templates({"x.hits.one": "1 hit", "x.hits.other": "{count} hits in {where}"})
    assert t.plural("x.hits", 1, where="a") == "1 hit"
    assert t.plural("x.hits", 0, where="a") == "0 hits in a"
    assert t.plural("x.hits", 7, where="b") == "7 hits in b"
