"""How long in_time waits before "thinking…": the configured patience, within Discord's
deadline (the end-to-end behaviour is in test_search, test_glossary and test_support)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from bot.respond import DEADLINE, MARGIN, _patience


def interaction(age: float, thinking_after: float = 1.0) -> SimpleNamespace:
    created = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age)
    config = SimpleNamespace(thinking_after=thinking_after)
    return SimpleNamespace(client=SimpleNamespace(config=config), created_at=created)


def test_a_fresh_interaction_waits_the_configured_patience():
    assert _patience(interaction(0.0, thinking_after=0.4)) == pytest.approx(0.4, abs=0.05)


def test_an_interaction_that_arrived_late_waits_less_and_never_past_the_deadline():
    late = DEADLINE - MARGIN - 0.3  # only 0.3 s of the waiting budget is left
    assert _patience(interaction(late, thinking_after=1.0)) == pytest.approx(0.3, abs=0.05)
    assert _patience(interaction(DEADLINE, thinking_after=1.0)) == 0.0


def test_a_clock_behind_discords_does_not_lengthen_the_wait():
    assert _patience(interaction(-5.0, thinking_after=1.0)) == pytest.approx(1.0, abs=0.05)


def test_zero_means_defer_at_once():
    assert _patience(interaction(0.0, thinking_after=0.0)) == 0.0
