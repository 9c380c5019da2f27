"""How sure a triage is: ``high``, ``medium``, ``low`` or ``none``.

``high`` when the wiki has a page written about exactly this (a known error quoted
in the log, unless the page ranker read the request and is not confident of any
page; or an error finding with a justifying section); otherwise, when the
page ranker read the request and its best page leads the suggestions, the
ranker's own confidence (from a matched error quote, a named family, the share of
the request's telling words the page holds, and names the wiki never mentions),
raised to ``medium`` by a family recognised by more than its name, or by a
known-error match when the ranker's best page is not one it doubts (a known error
with the ranker ``low`` or ``none`` on its first page stays ``low``: the page quotes
a line of the log but covers little of what the user asked). Without the ranker,
``medium`` needs one of those or a search hit sharing three quarters of the user's
words. ``low`` when the suggestions only
share some words; ``none`` without suggestions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from knowledge.triage.family import FamilyInfo
from knowledge.triage.known_errors import KnownErrorMatch
from knowledge.triage.rules import Finding
from knowledge.triage.suggest import Suggested

__all__ = ["CONFIDENCES", "STRONG_KINDS", "confidence"]

CONFIDENCES: Final = ("high", "medium", "low", "none")
#: Known-error match kinds that quote the error itself.
STRONG_KINDS: Final = frozenset({"error", "message", "last-line"})
#: Share of the user's words the best search hit must hold for ``medium``.
GOOD_COVERAGE: Final = 0.75


def confidence(
    known: Sequence[KnownErrorMatch],
    findings: Sequence[Finding],
    family: FamilyInfo | None,
    suggested: Suggested,
) -> str:
    """One of :data:`CONFIDENCES` for a triage's parts."""
    if not suggested.suggestions:
        return "none"
    # The ranker read the whole request: when it ranked first a page it is not
    # confident of, a page quoting a line of the log covers too little of what the
    # user asked (their setup, their subject) to be an answer with confidence.
    doubted = (
        suggested.ranked_first
        and suggested.ranking is not None
        and suggested.ranking.confidence in ("low", "none")
    )
    if any(k.kind in STRONG_KINDS for k in known):
        if suggested.ranking is None or suggested.ranking.confidence in ("high", "medium"):
            return "high"
        if doubted:
            return "low"
        return "medium"
    if any(f.severity == "error" and f.page for f in findings):
        return "high"
    if suggested.ranked_first and suggested.ranking is not None:
        if suggested.ranking.confidence in ("high", "medium"):
            return suggested.ranking.confidence
    elif suggested.ranking is None and suggested.coverage >= GOOD_COVERAGE:
        return "medium"
    if (known and not doubted) or (family is not None and family.how != "name"):
        return "medium"
    return "low"
