"""Who may import what: Whoosh stays inside knowledge/search, knowledge/ stays off Discord."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support import ROOT

#: Folders of the repository whose modules are checked.
SOURCES = ("bot", "knowledge", "benchmarks", "templates", "tests")
#: The only places that may import Whoosh (or the private module wrapping it).
WHOOSH_HOMES = (
    ROOT / "knowledge" / "search",
    ROOT / "tests" / "knowledge" / "search",
    # the search benchmark's reference: plain whoosh-ng on the same sections
    ROOT / "benchmarks" / "plain_whoosh.py",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(source: str, module: str, is_package: bool = False) -> set[str]:
    """Absolute names of every module ``source`` imports, wherever the import statement is."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *filter(None, [node.module])])
            else:
                target = node.module or ""
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def modules() -> Iterator[tuple[Path, set[str]]]:
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = module_name(path)
            source = path.read_text(encoding="utf-8")
            yield path, imported(source, name, is_package=path.name == "__init__.py")


def starts(name: str, *prefixes: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_the_import_reader_sees_plain_relative_and_nested_imports():
    source = (
        "import whoosh.index\n"
        "from .._whoosh import WhooshEngine\n"
        "def f():\n"
        "    from discord import Embed\n"
    )
    names = imported(source, "knowledge.search.sub.mod")
    assert "whoosh.index" in names
    assert "knowledge.search._whoosh" in names
    assert "discord" in names
    assert "knowledge.search.child" in imported(
        "from . import child", "knowledge.search", is_package=True
    )


def test_only_knowledge_search_imports_whoosh():
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path, names in modules()
        if not any(path.is_relative_to(home) for home in WHOOSH_HOMES)
        for name in sorted(names)
        if starts(name, "whoosh", "knowledge.search._whoosh")
    ]
    assert offenders == []


def test_knowledge_imports_no_discord_and_no_bot():
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path, names in modules()
        if path.is_relative_to(ROOT / "knowledge")
        for name in sorted(names)
        if starts(name, "discord", "bot")
    ]
    assert offenders == []
    assert any(path.is_relative_to(ROOT / "knowledge") for path, _ in modules())


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` (module -> modules it imports), or []."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_circle_finder_finds_a_circle_through_a_late_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_the_bot_package_has_no_import_circle():
    """``bot/`` modules import each other one way only, late imports inside functions
    included (components -> errors -> respond -> components was one)."""
    graph: dict[str, set[str]] = {}
    names = {module_name(path) for path in (ROOT / "bot").rglob("*.py")}
    for path, imported_names in modules():
        if path.is_relative_to(ROOT / "bot"):
            name = module_name(path)
            graph[name] = {n for n in imported_names if n in names and n != name}
    assert _cycle(graph) == []
