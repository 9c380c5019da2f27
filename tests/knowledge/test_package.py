"""The package's shape: a lazy public API, and imports that go one way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import knowledge

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "knowledge"


def _imports(path: Path) -> set[str]:
    """Every ``knowledge.*`` module a file imports (module level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {name for name in found if name.startswith("knowledge.")}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_public_name_resolves():
    for name in knowledge.__all__:
        assert getattr(knowledge, name) is not None, name
    assert set(knowledge.__all__) <= set(dir(knowledge))


def test_importing_the_package_loads_nothing_heavy():
    code = "import sys, knowledge; print(sorted(m for m in sys.modules if 'knowledge' in m))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "['knowledge']"


def test_answers_never_import_the_service_or_the_cli():
    for path in (PACKAGE / "answers").rglob("*.py"):
        bad = {m for m in _imports(path) if m.startswith(("knowledge.service", "knowledge.cli"))}
        assert not bad, f"{path.name} imports {bad}"


def _cycles(folder: str) -> tuple[list[str], dict[str, set[str]]]:
    """Modules of ``knowledge/<folder>`` that reach themselves through the imports of its
    other modules (its ``__init__``, which only re-exports, left out), and the graph."""
    modules = {_module(p): p for p in (PACKAGE / folder).glob("*.py") if p.name != "__init__.py"}
    graph = {name: _imports(path) & modules.keys() for name, path in modules.items()}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == target or (nxt not in seen and reaches(nxt, target, seen | {nxt})):
                return True
        return False

    return [name for name in graph if reaches(name, name, {name})], graph


def test_cli_modules_import_each_other_one_way():
    """No cycle among knowledge.cli's modules (main -> console/triage -> options)."""
    cycles, graph = _cycles("cli")
    assert cycles == []
    assert graph["knowledge.cli.main"] >= {"knowledge.cli.console", "knowledge.cli.triage"}


def test_wiki_modules_import_each_other_one_way():
    """No cycle among knowledge.wiki's modules: the load starts the parse helper, and
    both read pages through the page file module, which needs neither."""
    cycles, graph = _cycles("wiki")
    assert cycles == []
    assert "knowledge.wiki.helper" in graph["knowledge.wiki.load"]
    assert "knowledge.wiki.pagefile" in graph["knowledge.wiki.helper"]
