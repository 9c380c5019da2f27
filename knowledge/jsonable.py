"""One way to turn the typed results of ``knowledge`` into plain JSON values.

Results are frozen dataclasses; ``--json`` output and tests want dicts, lists and
scalars. :func:`to_jsonable` walks dataclasses by their fields (as
:func:`dataclasses.asdict` does) but also turns tuples and sets into lists,
enums into their values, paths and other objects into text, and non-finite
floats into text, so the result always goes through :func:`json.dumps`. Depth
and sizes are capped because results can carry what a user pasted.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

__all__ = ["to_jsonable"]

_MAX_DEPTH = 12
_MAX_ITEMS = 2000
_MAX_TEXT = 2000


def to_jsonable(
    value: object,
    *,
    properties: Mapping[type, tuple[str, ...]] | None = None,
    _depth: int = 0,
) -> Any:
    """``value`` as JSON-ready data; ``properties`` adds computed attributes per class.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Hit:
    ...     page: str
    ...     lines: tuple[int, ...]
    >>> to_jsonable(Hit("a.md", (1, 2)))
    {'page': 'a.md', 'lines': [1, 2]}
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, _depth=_depth)
    if _depth > _MAX_DEPTH:
        return str(value)[:_MAX_TEXT]
    deeper = {"properties": properties, "_depth": _depth + 1}
    if is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_jsonable(getattr(value, f.name), **deeper) for f in fields(value)}
        for name in (properties or {}).get(type(value), ()):
            out[name] = to_jsonable(getattr(value, name), **deeper)
        return out
    if isinstance(value, Mapping):
        items = list(value.items())[:_MAX_ITEMS]
        return {str(k): to_jsonable(v, **deeper) for k, v in items}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v, **deeper) for v in list(value)[:_MAX_ITEMS]]
    return str(value)[:_MAX_TEXT]
