"""The ticket-numbered buttons (Solved/Close/... and the feedback Yes/No) share one
custom_id scheme, made and read in one place; pressing them end to end is in
test_support.py and test_support_staff.py."""

from __future__ import annotations

import asyncio

import discord
import pytest

from bot.exts.support._views import FeedbackButton, TicketButton


@pytest.mark.parametrize(
    ("cls", "choice", "ticket", "custom_id"),
    [
        (TicketButton, "close", 12, "wikibot:tk:close:12"),
        (TicketButton, "release", 999999999999, "wikibot:tk:release:999999999999"),
        (FeedbackButton, "yes", 7, "wikibot:fb:yes:7"),
        (FeedbackButton, "no", 1, "wikibot:fb:no:1"),
    ],
)
def test_a_button_made_is_read_back_from_its_custom_id(cls, choice, ticket, custom_id):
    made = cls(choice, ticket, label="Press")
    assert made.custom_id == custom_id
    match = cls.__discord_ui_compiled_template__.fullmatch(custom_id)
    assert match is not None
    read = asyncio.run(cls.from_custom_id(None, made.item, match))  # type: ignore[arg-type]
    assert (type(read), read.choice, read.ticket, read.item.label) == (cls, choice, ticket, "Press")


@pytest.mark.parametrize(
    "custom_id",
    [
        "wikibot:tk:yes:1",  # a feedback choice under the ticket namespace
        "wikibot:fb:close:1",  # and the other way round
        "wikibot:tk:close:",  # no number
        "wikibot:tk:close:1234567890123",  # 13 digits
        "wikibot:tk:close:12x",
        "wikibot:sp:file:ab12:0",  # a /support flow button
    ],
)
def test_an_id_of_another_scheme_matches_neither_button(custom_id):
    for cls in (TicketButton, FeedbackButton):
        assert cls.__discord_ui_compiled_template__.fullmatch(custom_id) is None


def test_a_button_with_a_choice_its_scheme_lacks_is_refused_when_made():
    with pytest.raises(ValueError, match="must match the template"):
        TicketButton("yes", 1)
    with pytest.raises(ValueError, match="must match the template"):
        FeedbackButton("maybe", 1)
    assert FeedbackButton("yes", 1).item.style is discord.ButtonStyle.secondary
