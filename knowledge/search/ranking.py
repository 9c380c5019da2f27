"""How sections are ranked, whatever the engine: field weights, page status, word coverage.

A search needs every analysed term that the index holds somewhere. When no
section holds them all, sections holding any of them are ranked by their score
times the share of the terms they hold raised to :data:`COORD_POWER`, so a
section with most of the words beats one with a single word in its title.
Every score is then multiplied by the weight of the page's status
(:data:`knowledge.wiki.WEIGHTS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from knowledge.wiki import status_of, status_weight

__all__ = [
    "COORD_POWER",
    "FIELD_BOOSTS",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "RERANK_DEPTH",
    "SYMPTOM_B",
    "clamp",
    "coordinated",
    "indexed_status",
    "status_factor",
]

#: Query-time weight of each searched field.
FIELD_BOOSTS: Mapping[str, float] = {
    "page_title": 1.5,
    "section_title": 3.0,
    "headings": 1.5,
    "text": 1.0,
    "code": 0.6,
    "symptom": 1.5,
}
#: BM25F length normalisation of the symptom field. Most sections have no symptom
#: paragraph, so its average length is tiny and normalising would all but erase it
#: where it exists.
SYMPTOM_B = 0.0
#: OR fallback: how many top sections are re-ranked by the share of terms they hold.
RERANK_DEPTH = 100
COORD_POWER = 3.0
MAX_LIMIT = 100
MAX_OFFSET = 1000


def indexed_status(statuses: Mapping[str, str] | None, path: str) -> str:
    """The status a page is indexed with: its known status, else "other"."""
    return status_of(statuses.get(path) if statuses else None).value


def status_factor(status: str) -> float:
    """Score multiplier of a page status (``other`` for an unknown one)."""
    return status_weight(status)


def coordinated(
    scored: Iterable[tuple[float, int, int]], terms: int, need: int
) -> list[tuple[float, int]]:
    """The best ``need`` of (score, doc, terms matched) once scaled by the share matched."""
    ranked = [(score * (matched / terms) ** COORD_POWER, doc) for score, doc, matched in scored]
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return ranked[:need]


def clamp(limit: int, offset: int) -> tuple[int, int]:
    """``limit`` and ``offset`` within what one search may ask for."""
    return max(1, min(int(limit), MAX_LIMIT)), max(0, min(int(offset), MAX_OFFSET))
