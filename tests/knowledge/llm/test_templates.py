"""templates/llm.yaml against the code: every key named exists, none is dead."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from knowledge.llm import FAILURE_KINDS
from knowledge.llm.ask import OUTCOME_REASONS
from knowledge.templates import load_templates

ROOT = Path(__file__).resolve().parents[3]
USERS = [
    ROOT / "knowledge" / "llm",
    ROOT / "knowledge" / "cli" / "ask_llm.py",
    ROOT / "knowledge" / "cli" / "eval_answers.py",
    ROOT / "bot" / "exts" / "ask",
    ROOT / "knowledge" / "answers" / "_format.py",  # link(): common.page_link, page_plain
]
REPLIES_ONLY = {"common.more", "common.separator"}
_KEY = re.compile(r"^(ask|llm|common)(\.[a-z_]+)+$")


def literals() -> set[str]:
    files = [f for p in USERS for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]
    return {
        node.value
        for f in files
        for node in ast.walk(ast.parse(f.read_text("utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_every_key_named_exists_and_every_failure_has_its_sentence():
    t = load_templates("llm.yaml")
    # common.* of _format.py other than link()'s are replies.yaml's (names() is not used here)
    named = {s for s in literals() if _KEY.match(s) and s != "llm.yaml" and s not in REPLIES_ONLY}
    assert named and sorted(named - t.entries.keys()) == []
    for reason in (*FAILURE_KINDS, *OUTCOME_REASONS):
        assert t(f"ask.fallback.{reason}")


def test_no_key_is_dead():
    t = load_templates("llm.yaml")
    used = literals() | {f"ask.fallback.{r}" for r in (*FAILURE_KINDS, *OUTCOME_REASONS)}
    assert sorted(t.entries.keys() - used) == []
