"""What a wiki page is to its model family, and how much that counts when ranking.

The runbook catalogue gives each page a status from the wiki's own tables: the hub of
a model family, its current page, the newest page of a model that left the front page
(legacy), an older version (historical) or a retired one (archive); every other page
is ``other``. ``WEIGHTS`` is the one table of what a status is worth: search multiplies
a hit's score by it, and triage prefers pages by it. Every status has a row, so a new
status cannot fall silently to ``other``.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Final

__all__ = ["WEIGHTS", "PageStatus", "status_of", "status_weight"]


class PageStatus(StrEnum):
    """A page's place in its model family; the value is what indexes and JSON store."""

    HUB = "hub"
    CURRENT = "current"
    LEGACY = "legacy"
    OTHER = "other"
    HISTORICAL = "historical"
    ARCHIVE = "archive"

    @property
    def notable(self) -> bool:
        """Worth telling a reader next to a search hit (every status but ``other``)."""
        return self is not PageStatus.OTHER


#: Ranking weight per status, 1.0 for a page with no family. Hubs lead a search (they
#: point at everything about a model), current pages next; a legacy page is the newest
#: page of a model no longer on the front page: still the right page for that model,
#: so above superseded versions, but below current pages and the neutral guides when a
#: question names no model.
WEIGHTS: Final[Mapping[PageStatus, float]] = MappingProxyType(
    {
        PageStatus.HUB: 1.25,
        PageStatus.CURRENT: 1.2,
        PageStatus.OTHER: 1.0,
        PageStatus.LEGACY: 0.9,
        PageStatus.HISTORICAL: 0.8,
        PageStatus.ARCHIVE: 0.7,
    }
)


def status_of(value: str | None) -> PageStatus:
    """``value`` as a status; an unknown or missing one is ``other``."""
    try:
        return PageStatus(value)
    except ValueError:
        return PageStatus.OTHER


def status_weight(value: str | None) -> float:
    """The ranking weight of a status given as a string (``other`` when unknown)."""
    return WEIGHTS[status_of(value)]
