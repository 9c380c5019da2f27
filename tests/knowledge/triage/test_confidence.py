"""How sure a triage is (knowledge.triage.confidence): one test per rule.

Each test changes one input across the line a rule draws, so a change to the rule
(a kind or severity counted differently, a threshold moved or its comparison
flipped, a level dropped, a condition left out) fails here.
"""

from __future__ import annotations

import pytest

from knowledge.search.pages import PageHit, PageRanking
from knowledge.triage.confidence import CONFIDENCES, GOOD_COVERAGE, STRONG_KINDS, confidence
from knowledge.triage.family import FamilyInfo
from knowledge.triage.known_errors import KINDS, KnownErrorMatch
from knowledge.triage.rules import Finding
from knowledge.triage.suggest import Suggested, Suggestion

PAGE = "troubleshooting/problems.md"
OTHER = "guides/other.md"


def _suggested(
    first: str = PAGE,
    *,
    coverage: float = 0.0,
    ranked: str | None = None,
    ranking_confidence: str = "low",
) -> Suggested:
    """Suggestions led by ``first``; with ``ranked``, a page ranking led by that page."""
    suggestions = (
        Suggestion(f"{first}#fix", "First", ("why",), 0.9),
        Suggestion(f"{OTHER}#more", "Other", ("why",), 0.5),
    )
    ranking = None
    if ranked is not None:
        hit = PageHit(ranked, "fix", "Ranked", "Fix", 1.0, "troubleshooting")
        ranking = PageRanking((hit,), ranking_confidence)
    return Suggested(suggestions, coverage=coverage, ranking=ranking)


def _known(kind: str) -> KnownErrorMatch:
    return KnownErrorMatch(PAGE, "Problem", "Fix it.", "log", kind, "sig", (), 1.0)


def _finding(severity: str, page: str | None = f"{PAGE}#fix") -> Finding:
    return Finding("rule", severity, "message", page)


def _family(how: str) -> FamilyInfo:
    # confidence reads only how the family was recognised
    return FamilyInfo(family=None, runbook=None, how=how)  # type: ignore[arg-type]


def test_no_suggestions_is_none_whatever_else_was_found():
    empty = Suggested(())
    assert confidence([_known("error")], [_finding("error")], _family("page"), empty) == "none"


@pytest.mark.parametrize("kind", KINDS)
def test_a_known_error_quoting_the_error_is_high_a_weaker_match_medium(kind):
    expected = "high" if kind in STRONG_KINDS else "medium"
    assert confidence([_known(kind)], [], None, _suggested()) == expected


@pytest.mark.parametrize("kind", sorted(STRONG_KINDS))
def test_a_quoted_error_is_high_unless_the_ranker_doubts_its_first_page(kind):
    for level in ("high", "medium"):
        agreeing = _suggested(ranked=PAGE, ranking_confidence=level)
        assert confidence([_known(kind)], [], None, agreeing) == "high", level
    for level in ("low", "none"):
        # the ranker read the whole request and doubts the page it put first
        doubting = _suggested(ranked=PAGE, ranking_confidence=level)
        assert confidence([_known(kind)], [], None, doubting) == "low", level
        # its doubt is about another page than the one the triage leads with
        elsewhere = _suggested(ranked=OTHER, ranking_confidence=level)
        assert confidence([_known(kind)], [], None, elsewhere) == "medium", level


def test_the_strong_kinds_are_those_that_quote_the_error_itself():
    assert frozenset({"error", "message", "last-line"}) == STRONG_KINDS
    assert {"phrase", "prose"} == set(KINDS) - STRONG_KINDS


def test_an_error_finding_with_its_section_is_high_a_warning_or_info_one_is_not():
    assert confidence([], [_finding("error")], None, _suggested()) == "high"
    assert confidence([], [_finding("warning")], None, _suggested()) == "low"
    assert confidence([], [_finding("info")], None, _suggested()) == "low"
    # an error finding no section of the wiki justifies says nothing of the wiki
    assert confidence([], [_finding("error", page=None)], None, _suggested()) == "low"


@pytest.mark.parametrize("level", ["high", "medium"])
def test_the_rankers_confident_level_is_kept_when_its_page_leads(level):
    suggested = _suggested(ranked=PAGE, ranking_confidence=level)
    assert confidence([], [], None, suggested) == level


def test_the_rankers_low_is_low_even_with_good_word_coverage():
    suggested = _suggested(ranked=PAGE, ranking_confidence="low", coverage=1.0)
    assert confidence([], [], None, suggested) == "low"


@pytest.mark.parametrize("level", ["high", "medium"])
def test_the_rankers_level_counts_only_when_its_best_page_is_first(level):
    # the first suggestion is another page (a known error or a runbook put it there)
    suggested = _suggested(first=OTHER, ranked=PAGE, ranking_confidence=level)
    assert not suggested.ranked_first
    assert confidence([], [], None, suggested) == "low"
    # ... and the share of words a section search found does not stand in for it
    suggested = _suggested(first=OTHER, ranked=PAGE, ranking_confidence=level, coverage=1.0)
    assert confidence([], [], None, suggested) == "low"


def test_without_the_ranker_medium_needs_three_quarters_of_the_words():
    assert GOOD_COVERAGE == 0.75
    assert confidence([], [], None, _suggested(coverage=0.75)) == "medium"
    assert confidence([], [], None, _suggested(coverage=0.9)) == "medium"
    assert confidence([], [], None, _suggested(coverage=0.74)) == "low"
    assert confidence([], [], None, _suggested(coverage=0.5)) == "low"


@pytest.mark.parametrize("how", ["page", "model", "image"])
def test_a_family_recognised_by_more_than_its_name_raises_low_to_medium(how):
    assert confidence([], [], _family(how), _suggested()) == "medium"
    ranked_low = _suggested(ranked=PAGE, ranking_confidence="low")
    assert confidence([], [], _family(how), ranked_low) == "medium"


def test_a_family_matched_only_by_name_raises_nothing():
    assert confidence([], [], _family("name"), _suggested()) == "low"
    ranked_low = _suggested(ranked=PAGE, ranking_confidence="low")
    assert confidence([], [], _family("name"), ranked_low) == "low"


def test_a_weaker_known_error_raises_to_medium_never_to_high_nor_past_the_rankers_doubt():
    assert confidence([_known("phrase")], [], None, _suggested()) == "medium"
    ranked_low = _suggested(ranked=PAGE, ranking_confidence="low")
    assert confidence([_known("phrase")], [], None, ranked_low) == "low"
    ranked_low_elsewhere = _suggested(ranked=OTHER, ranking_confidence="low")
    assert confidence([_known("phrase")], [], None, ranked_low_elsewhere) == "medium"
    ranked_first_elsewhere = _suggested(first=OTHER, ranked=PAGE, ranking_confidence="high")
    assert confidence([_known("prose")], [], None, ranked_first_elsewhere) == "medium"


def test_every_answer_is_one_of_the_levels():
    cases = [
        confidence([], [], None, Suggested(())),
        confidence([], [], None, _suggested()),
        confidence([_known("phrase")], [], None, _suggested()),
        confidence([_known("error")], [], None, _suggested()),
    ]
    assert cases == ["none", "low", "medium", "high"]
    assert set(cases) == set(CONFIDENCES)
