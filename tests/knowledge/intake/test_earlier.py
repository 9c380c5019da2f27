"""Recognising an earlier attempt's post (knowledge.intake.earlier): plain facts in, a
decision out, no Discord."""

from __future__ import annotations

from knowledge.intake.earlier import (
    CLOCK_SLACK,
    MessageSeen,
    ThreadSeen,
    candidates,
    carries_key,
    judge,
    listed_past,
    pinged_at,
    post_of,
    search_since,
)
from knowledge.intake.stale import snowflake_seconds

BOT = 1001
ASKER = 2002
HELPERS = 3003
FILED = 1_790_000_000.0  # when the ticket was filed (UTC seconds)
KEY = "ref 78e4e9a11aac7684"


def snowflake(at: float, n: int = 0) -> int:
    """A Discord id made at ``at`` (UTC seconds); ``n`` tells ids of one instant apart."""
    return (round(at * 1000) - 1420070400000) << 22 | n


def thread(at: float, *, owner: int | None = BOT, name: str = "#1 GPU", private=False, n=0):
    return ThreadSeen(snowflake(at, n), owner, name, private)


def message(author: int = BOT, *, footer: str = f"Ticket #1 · {KEY}", content="", roles=()):
    return MessageSeen(snowflake(FILED + 5), author, content, (footer,) if footer else (), roles)


def test_snowflakes_made_here_tell_their_time():
    assert abs(snowflake_seconds(snowflake(FILED)) - FILED) < 0.001


def test_only_the_bots_threads_of_the_right_kind_made_since_the_filing_are_read():
    since = search_since(FILED)
    assert since == FILED - CLOCK_SLACK
    mine = thread(FILED + 1, n=1)
    early_by_clock_skew = thread(FILED - 30, n=2)  # Discord's clock a little behind
    before = thread(FILED - CLOCK_SLACK - 1, n=3)
    someone_elses = thread(FILED + 2, owner=ASKER, n=4)
    private = thread(FILED + 3, private=True, n=5)
    listed = [private, someone_elses, before, mine, early_by_clock_skew, mine]
    assert candidates(listed, me=BOT, since=since, private=False) == [early_by_clock_skew, mine]
    assert candidates(listed, me=BOT, since=since, private=True) == [private]
    assert candidates(listed, me=None, since=since, private=False) == [], "no bot user: none"


def test_a_newest_first_listing_stops_at_the_first_thread_older_than_the_ticket():
    since = search_since(FILED)
    assert not listed_past(FILED, since)
    assert not listed_past(since, since)
    assert listed_past(since - 0.001, since)


def test_the_post_is_the_bots_message_whose_embed_carries_the_key():
    post = thread(FILED + 1)
    assert judge(post, [message()], me=BOT, key=KEY) == "posted"
    assert judge(post, [message(footer="Ticket #1 · ref 0000")], me=BOT, key=KEY) == "other"
    assert judge(post, [message(ASKER)], me=BOT, key=KEY) == "other", "someone else's copy"
    assert judge(post, [message()], me=BOT, key="") == "other", "an empty key finds nothing"
    assert judge(post, [message()], me=None, key=KEY) == "other"
    assert carries_key(message(), KEY) and not carries_key(message(footer=""), KEY)


def test_a_private_thread_of_the_ticket_without_the_bots_post_is_empty_and_gets_it():
    made = thread(FILED + 1, private=True, name="#1 GPU")
    assert judge(made, [], me=BOT, key=KEY, empty_name="#1 GPU") == "empty"
    # The asker wrote there first: still no post of the bot's, so the post goes there.
    assert judge(made, [message(ASKER, footer="")], me=BOT, key=KEY, empty_name="#1 GPU") == (
        "empty"
    )
    assert judge(made, [], me=BOT, key=KEY, empty_name="#2 GPU") == "other", "another ticket's"
    # The bot's message without the key (a note, not the post): the thread is not empty.
    note = message(footer="")
    assert judge(made, [note], me=BOT, key=KEY, empty_name="#1 GPU") == "other"
    # A forum post is never "empty": its starter message is the post.
    assert judge(made, [], me=BOT, key=KEY) == "other"
    assert judge(made, [note, message()], me=BOT, key=KEY, empty_name="#1 GPU") == "posted"


def test_the_found_post_says_whether_it_pinged_the_helpers_and_when():
    head = f"<@{ASKER}>\n<@&{HELPERS}>: a new request.\nTicket #1 · open\n\nmy words"
    post = message(content=head)
    assert pinged_at(post, HELPERS) == snowflake_seconds(post.id)
    assert pinged_at(post, None) is None, "no helpers' role configured"
    assert pinged_at(post, HELPERS + 1) is None, "another role"
    quiet = message(content=f"<@{ASKER}>\nTicket #1 · open\n\nmy words")
    assert pinged_at(quiet, HELPERS) is None
    # The asker typed the role's mention: the post escapes it, and it pinged nobody.
    typed = message(content=f"<@{ASKER}>\nTicket #1 · open\n\nhelp \\<@&{HELPERS}\\> please")
    assert pinged_at(typed, HELPERS) is None
    typed_half = message(content=f"Ticket #1\n\n\\<@&{HELPERS}>")
    assert pinged_at(typed_half, HELPERS) is None
    # Discord's own list of the roles mentioned counts too.
    listed = message(content="Ticket #1", roles=(HELPERS,))
    assert pinged_at(listed, HELPERS) == snowflake_seconds(listed.id)


def test_the_post_of_a_private_thread_is_the_bots_first_message_with_the_key():
    asker_first = message(ASKER, footer="")
    note = message(footer="")
    post = message()
    later = message(footer=f"Ticket #1 · {KEY} (again)")
    assert post_of([asker_first, note, post, later], me=BOT, key=KEY) is post
    assert post_of([asker_first, note], me=BOT, key=KEY) is None
    assert post_of([message(ASKER)], me=BOT, key=KEY) is None, "a copy by someone else"
    assert post_of([post], me=None, key=KEY) is None
