"""One YAML loader for everything a user can write: requests, rule files, config.

``yaml.safe_load`` builds plain data only, but it still lets a 400-byte document
expand into gigabytes: aliases (``*a``) re-use a node, so nine levels of ten
aliases each stand for a billion strings that any code walking the result (a
``str()``, a redaction pass, a search) expands for real. PyYAML also turns a
5,000-digit number into an ``int`` whose ``str()`` raises, and recurses once per
nesting level.

:func:`load_yaml` composes the document into nodes (with the C parser when
present), then measures the node graph *as if every alias were expanded*,
counting each shared node once per use (memoised, so the measuring itself costs
one pass over the distinct nodes), and refuses the document before a single
Python object is built when it is over any of the caps: alias uses, expanded
nodes, expanded characters, nesting depth, or digits of a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["YamlDuplicateKey", "YamlLimits", "YamlTooLarge", "load_yaml"]

_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_DIGITS = re.compile(r"[0-9]")


class YamlTooLarge(yaml.YAMLError):
    """A document over one of the caps of :class:`YamlLimits`; the text says which."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        #: As on PyYAML's own errors, for handlers that print ``exc.problem``.
        self.problem = problem


class YamlDuplicateKey(yaml.YAMLError):
    """A mapping gives one key twice (YAML keeps the last silently); ``key`` is its
    dotted path (``wiki.path``), ``lines`` where the two are (1-based)."""

    def __init__(self, key: str, lines: tuple[int, int]) -> None:
        super().__init__(f"{key} is given twice (lines {lines[0]} and {lines[1]})")
        self.key, self.lines = key, lines
        self.problem = str(self)


@dataclass(frozen=True, slots=True)
class YamlLimits:
    """Caps on one document, counted with every alias expanded."""

    #: Uses of an alias (``*name``); real configs and compose files use a handful.
    aliases: int = 100
    #: Nodes (scalars, lists and mappings) of the expanded document.
    nodes: int = 200_000
    #: Characters in all scalars of the expanded document.
    chars: int = 16 * 1024 * 1024
    #: Nesting of lists and mappings.
    depth: int = 64
    #: Digits of one number (Python refuses to print an int of more than 4,300).
    digits: int = 1000


@dataclass(slots=True)
class _Size:
    nodes: int
    chars: int


class _Measure:
    """The expanded size of a node graph, each distinct node measured once."""

    def __init__(self, limits: YamlLimits) -> None:
        self.limits = limits
        self.aliases = 0
        self.sizes: dict[int, _Size] = {}
        self.open: set[int] = set()

    def size(self, node: Node, depth: int) -> _Size:
        key = id(node)
        known = self.sizes.get(key)
        if known is not None:
            # A node met again is an alias use: it costs its whole size once more.
            self.aliases += 1
            if self.aliases > self.limits.aliases:
                raise YamlTooLarge(f"more than {self.limits.aliases} aliases (*name)")
            return known
        if key in self.open:
            raise YamlTooLarge("an alias refers to a node that contains it")
        if depth > self.limits.depth:
            raise YamlTooLarge(f"nested more than {self.limits.depth} levels deep")
        if isinstance(node, ScalarNode):
            value = node.value
            if (
                node.tag in (_INT_TAG, _FLOAT_TAG)
                and len(value) > self.limits.digits
                and len(_DIGITS.findall(value)) > self.limits.digits
            ):
                raise YamlTooLarge(
                    f"a number of more than {self.limits.digits} digits"
                    f" (line {node.start_mark.line + 1})"
                )
            size = _Size(1, len(value))
        else:
            self.open.add(key)
            size = _Size(1, 0)
            children: list[Node] = []
            if isinstance(node, SequenceNode):
                children = list(node.value)
            elif isinstance(node, MappingNode):
                children = [part for pair in node.value for part in pair]
            for child in children:
                inner = self.size(child, depth + 1)
                size.nodes += inner.nodes
                size.chars += inner.chars
                self._check(size)
            self.open.discard(key)
        self._check(size)
        self.sizes[key] = size
        return size

    def _check(self, size: _Size) -> None:
        if size.nodes > self.limits.nodes:
            raise YamlTooLarge(f"expands to more than {self.limits.nodes:,} values")
        if size.chars > self.limits.chars:
            raise YamlTooLarge(f"expands to more than {self.limits.chars:,} characters")


#: A UTF-16 surrogate pair written as two JSON escapes (``\uD83D\uDE00``, what
#: ``json.dumps`` writes for an emoji), after an even number of backslashes.
_SURROGATE_PAIR = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE
)


def _joined_pairs(text: str) -> str:
    """JSON text with each escaped surrogate pair written as the one character it stands
    for. YAML reads ``\\u`` escapes as code points, so it refuses a pair that JSON
    accepts; in a JSON document every escape is inside a double-quoted string, where
    the character means the same."""

    def join(m: re.Match[str]) -> str:
        high, low = int(m.group(2), 16), int(m.group(3), 16)
        return m.group(1) + chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))

    return _SURROGATE_PAIR.sub(join, text)


def load_yaml(
    text: str | bytes, limits: YamlLimits | None = None, *, unique_keys: bool = False
) -> Any:
    """Plain data from one YAML (or JSON) document, as ``yaml.safe_load`` gives it.

    Raises ``yaml.YAMLError`` for text that is not YAML and :class:`YamlTooLarge`
    (a subclass, with a message saying which cap) before building anything when the
    document is over ``limits``. A JSON document's escaped surrogate pairs are read
    as JSON reads them. With ``unique_keys``, a key given twice in one mapping is
    :class:`YamlDuplicateKey` (a subclass too) instead of the last one winning.
    """
    try:
        return _load(text, limits, unique_keys)
    except (YamlTooLarge, YamlDuplicateKey):
        raise
    except yaml.YAMLError:
        if not isinstance(text, str) or text.lstrip("\ufeff \t\r\n")[:1] not in ("{", "["):
            raise
        joined = _joined_pairs(text)
        if joined == text:
            raise
    return _load(joined, limits, unique_keys)


def _check_unique_keys(root: Node) -> None:
    """:class:`YamlDuplicateKey` for the first mapping that names a scalar key twice."""
    stack: list[tuple[Node, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:  # an alias: checked where it was defined
            continue
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(node.value))
        elif isinstance(node, MappingNode):
            first: dict[str, int] = {}
            for key, value in node.value:
                name = key.value if isinstance(key, ScalarNode) else None
                dotted = f"{path}.{name}" if path else str(name)
                if name is not None and key.tag != "tag:yaml.org,2002:merge":
                    line = key.start_mark.line + 1
                    if name in first:
                        raise YamlDuplicateKey(dotted[:200], (first[name], line))
                    first[name] = line
                stack.append((value, dotted))


def _load(text: str | bytes, limits: YamlLimits | None, unique_keys: bool = False) -> Any:
    limits = limits or YamlLimits()
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlTooLarge(f"nested more than {limits.depth} levels deep") from None
        if node is None:
            return None
        _Measure(limits).size(node, 0)
        if unique_keys:
            _check_unique_keys(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
