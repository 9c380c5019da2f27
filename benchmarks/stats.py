"""Figures from samples, the same way in every benchmark."""

from __future__ import annotations

import resource

__all__ = ["peak_rss_mb", "percentile"]


def percentile(samples: list[float], share: float) -> float:
    """The sample at ``share`` (0..1) of the sorted samples, nearest rank; NaN if none."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
