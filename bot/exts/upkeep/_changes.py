"""Which pages a reload added, removed or changed: one line for the log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from knowledge.wiki import Page

__all__ = ["PageChanges"]

#: Paths named per kind in the log line; the rest are counted.
SHOWN = 5


@dataclass(frozen=True, slots=True)
class PageChanges:
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    @classmethod
    def between(cls, old: Mapping[str, Page], new: Mapping[str, Page]) -> PageChanges:
        return cls(
            added=tuple(sorted(new.keys() - old.keys())),
            removed=tuple(sorted(old.keys() - new.keys())),
            changed=tuple(sorted(p for p in old.keys() & new.keys() if old[p].sha != new[p].sha)),
        )

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def __str__(self) -> str:
        parts = []
        kinds = (("changed", self.changed), ("added", self.added), ("removed", self.removed))
        for kind, paths in kinds:
            if paths:
                more = f" (+{len(paths) - SHOWN} more)" if len(paths) > SHOWN else ""
                parts.append(f"{kind} {', '.join(paths[:SHOWN])}{more}")
        return "; ".join(parts) or "no page changed"
