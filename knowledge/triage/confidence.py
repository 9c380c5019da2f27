"""How sure a triage is: ``high``, ``medium``, ``low`` or ``none``.

``high`` when the wiki has a page written about exactly this (a known error quoted
in the log, or an error finding with a justifying section); ``medium`` when the
pages fit the request (a weaker known-error match, the family recognised by more
than its name, or a search hit sharing three quarters of the user's words);
``low`` when the suggestions only share some words; ``none`` without suggestions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from knowledge.triage.family import FamilyInfo
from knowledge.triage.known_errors import KnownErrorMatch
from knowledge.triage.rules import Finding
from knowledge.triage.suggest import Suggestion

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
    suggestions: Sequence[Suggestion],
    coverage: float,
) -> str:
    """One of :data:`CONFIDENCES` for a triage's parts."""
    if not suggestions:
        return "none"
    if any(k.kind in STRONG_KINDS for k in known):
        return "high"
    if any(f.severity == "error" and f.page for f in findings):
        return "high"
    if known or (family is not None and family.how != "name") or coverage >= GOOD_COVERAGE:
        return "medium"
    return "low"
