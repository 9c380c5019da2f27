"""Figures from samples, the same way in every benchmark."""

from __future__ import annotations

__all__ = ["percentile"]


def percentile(samples: list[float], share: float) -> float:
    """The sample at ``share`` (0..1) of the sorted samples, nearest rank; NaN if none."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]
