"""An earlier attempt's post, recognised: which thread a retried filing made before.

A ticket's post is begun (``SupportDesk.start_post``) before the request leaves, so when
the bot stops, or Discord made the post but answered with an error, the retry does not
know whether the post exists. It looks before posting again, and these functions decide
what it sees, over plain facts the Discord layer reads (:class:`ThreadSeen`,
:class:`MessageSeen`):

- which threads to read at all (:func:`candidates`): the bot's own threads of the right
  kind, made since the ticket was filed;
- when a newest-first listing can stop (:func:`listed_past`);
- what a thread is (:func:`judge`): the post (a message of the bot's whose embed footer
  carries the ticket's key), an empty thread of this ticket (a private thread made but
  left without the post: the post goes there instead of a second thread), or neither;
- whether the found post carried the helpers' ping (:func:`pinged_at`), so the ping's
  quiet window counts it;
- which message of a private thread is the ticket's post (:func:`post_of`), the one whose
  buttons follow the ticket's status.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from knowledge.intake.stale import snowflake_seconds

__all__ = [
    "CLOCK_SLACK",
    "MessageSeen",
    "ThreadSeen",
    "Verdict",
    "candidates",
    "carries_key",
    "judge",
    "listed_past",
    "pinged_at",
    "post_of",
    "search_since",
]

#: Seconds before the ticket's filing that still count: Discord's clock and the host's
#: may differ.
CLOCK_SLACK: Final = 60.0

Verdict = Literal["posted", "empty", "other"]


@dataclass(frozen=True, slots=True)
class ThreadSeen:
    """A thread as a listing shows it: its id (a snowflake: when it was made), who made
    it, its name, and whether it is a private thread."""

    id: int
    owner_id: int | None
    name: str
    private: bool


@dataclass(frozen=True, slots=True)
class MessageSeen:
    """One of a thread's first messages: its id (when it was sent), its author, its text,
    the footer text of each of its embeds, and the role ids Discord lists as mentioned."""

    id: int
    author_id: int
    content: str = ""
    footers: tuple[str, ...] = ()
    role_mentions: tuple[int, ...] = ()


def search_since(filed_at: float) -> float:
    """The earliest time (UTC seconds) an earlier attempt's thread can have been made."""
    return filed_at - CLOCK_SLACK


def listed_past(at: float, since: float) -> bool:
    """True once a newest-first listing reached a thread made (or archived) at ``at``,
    before ``since``: every thread after it is older still, so the listing can stop."""
    return at < since


def candidates(
    threads: Iterable[ThreadSeen], *, me: int | None, since: float, private: bool
) -> list[ThreadSeen]:
    """The threads worth reading, oldest first: made by the bot (``me``) since ``since``,
    and private threads when the ticket is private (public posts otherwise). Each thread
    once, however many listings named it."""
    seen: dict[int, ThreadSeen] = {}
    for thread in threads:
        if me is None or thread.owner_id != me or thread.private is not private:
            continue
        if snowflake_seconds(thread.id) < since:
            continue
        seen.setdefault(thread.id, thread)
    return sorted(seen.values(), key=lambda t: t.id)


def carries_key(message: MessageSeen, key: str) -> bool:
    """The message's embed footer carries the ticket's key (an empty key matches nothing)."""
    return bool(key) and any(key in footer for footer in message.footers)


def post_of(first: Sequence[MessageSeen], *, me: int | None, key: str) -> MessageSeen | None:
    """The ticket's post among a thread's ``first`` messages: the first of the bot's
    whose embed carries ``key``. In a private thread (no starter message) it is the
    message that holds the ticket's buttons."""
    return next(
        (m for m in first if me is not None and m.author_id == me and carries_key(m, key)), None
    )


def judge(
    thread: ThreadSeen,
    first: Sequence[MessageSeen],
    *,
    me: int | None,
    key: str,
    empty_name: str | None = None,
) -> Verdict:
    """What ``thread`` is to a ticket whose post carries ``key``, from its ``first``
    messages (a forum post's starter message; a private thread's first few):

    - ``"posted"``: a message of the bot's carries the key: the post is up;
    - ``"empty"``: no message of the bot's, and the thread bears ``empty_name`` (the name
      the bot gives a private ticket's thread, numbered): made for this ticket, the post
      never sent. The post goes there. Without ``empty_name`` (a forum post, whose
      starter message is the post itself) no thread is ever empty;
    - ``"other"``: anything else (another ticket's thread, or one somebody wrote in)."""
    mine = [m for m in first if me is not None and m.author_id == me]
    if post_of(mine, me=me, key=key) is not None:
        return "posted"
    if empty_name is not None and not mine and thread.name == empty_name:
        return "empty"
    return "other"


def pinged_at(post: MessageSeen, role_id: int | None) -> float | None:
    """When the helpers were pinged by ``post`` (the time it was sent, UTC seconds), or
    None when it did not carry the ping: Discord lists the role as mentioned, or the text
    holds the role's mention unescaped. The bot writes the mention only in a post that
    pings; a mention inside the asker's text is escaped (``\\<@&…``) and pinged nobody."""
    if role_id is None:
        return None
    unescaped = re.compile(rf"(?<!\\)<@&{role_id}>")
    if role_id in post.role_mentions or unescaped.search(post.content):
        return snowflake_seconds(post.id)
    return None
