"""Wording lives in ``templates/*.yaml``: this module loads it and fills it in.

Keys are dotted (``acronym.not_found.title``); values are ``str.format``
strings. A missing key or placeholder is a programming error and raises at
load/format time in tests, never silently prints a blank.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from knowledge.safe_yaml import load_yaml

__all__ = ["Templates", "load_templates"]


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


@dataclass(frozen=True, slots=True)
class Templates:
    entries: dict[str, Any]

    def raw(self, key: str) -> Any:
        try:
            return self.entries[key]
        except KeyError:
            raise KeyError(f"no template {key!r}") from None

    def __call__(self, key: str, /, **values: Any) -> str:
        text = self.raw(key)
        if not isinstance(text, str):
            raise TypeError(f"template {key!r} is not a string")
        return text.format_map(values).rstrip()

    def plural(self, key: str, count: int, /, **values: Any) -> str:
        """``key.one`` when ``count`` is 1, else ``key.other``; ``count`` is passed on."""
        return self(f"{key}.{'one' if count == 1 else 'other'}", count=count, **values)

    def lines(self, key: str, rows: Iterable[Mapping[str, Any]]) -> str:
        """``key`` filled in once per row, one line each (a list inside a reply)."""
        return "\n".join(self(key, **row) for row in rows)

    def section(self, prefix: str) -> dict[str, Any]:
        return {
            key[len(prefix) + 1 :]: value
            for key, value in self.entries.items()
            if key.startswith(prefix + ".")
        }


def load_templates(name: str = "replies.yaml", directory: Path | None = None) -> Templates:
    """Load ``templates/<name>`` (or from ``directory``) with ``yaml.safe_load``."""
    if directory is not None:
        text = (directory / name).read_text(encoding="utf-8")
    else:
        text = resources.files("templates").joinpath(name).read_text(encoding="utf-8")
    data = load_yaml(text) or {}
    if not isinstance(data, dict):
        raise ValueError(f"template file {name} must hold a mapping")
    flat: dict[str, Any] = {}
    _flatten("", data, flat)
    return Templates(flat)
