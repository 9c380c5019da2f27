"""/wiki status and /help."""

from __future__ import annotations

import pytest

from knowledge import answers


def test_status_counts(state, t):
    reply = answers.status(state, t, now=state.loaded_at + 90)
    assert reply.meta["pages"] == len(state.wiki.pages)
    assert reply.meta["terms"] >= 25
    fields = {f.name: f.value for f in reply.fields}
    assert fields["Index"].endswith("built 90s ago")


@pytest.mark.parametrize(
    ("seconds", "shown"), [(-5, "0s"), (119, "119s"), (120, "2m"), (7199, "119m"), (7200, "2h")]
)
def test_age_is_shown_in_its_largest_sensible_unit(t, seconds, shown):
    assert answers.age(t, seconds) == shown


def test_help_on_discord_and_at_the_console(t):
    assert "/runbook" in answers.help_reply(t).text
    console = answers.help_reply(t, console=True)
    assert console.kind == "help" and "/quit" in console.text
