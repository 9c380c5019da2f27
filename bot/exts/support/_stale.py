"""Stale tickets, as python-discord's help forum handles quiet posts.

- A helper answered and the asker has said nothing for ``support.remind_after_days``:
  the asker is reminded in the thread, once per such wait.
- Nobody wrote in a ticket's thread for ``support.close_after_days``: the ticket is
  closed with the reason in the thread; the post is archived but not locked.
- The asker writes again in a thread closed so: the ticket reopens.

One schedule for all tickets, never a sleep per post: who wrote last in each open
ticket's thread, and when, is kept in memory (read once from each thread's last
message at start-up, then from the messages as they come: author and time only, no
Message Content intent), and one task wakes at the next time something is due.
What is due is decided in :mod:`knowledge.intake.stale` (``plan_stale``); this cog
reads Discord, carries out the plan and words it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from knowledge.intake.desk import IntakeError
from knowledge.intake.records import Ticket
from knowledge.intake.stale import (
    INACTIVE,
    LastWord,
    closed_for_inactivity,
    plan_stale,
    waiting_changed,
    who_wrote,
)
from knowledge.templates import Templates, load_templates

from ._helpers import WAITING_TAGS, user_id_of, user_key

if TYPE_CHECKING:
    from bot.client import WikiBot

    from ._cog import SupportCog

__all__ = ["INACTIVE", "StaleTickets"]

log = logging.getLogger(__name__)

#: Tickets closed for inactivity watched for their asker's return after a restart.
CLOSED_WATCHED = 500
#: Seconds before trying again after a round that failed.
RETRY_FAILED_ROUND = 3600.0


class StaleTickets(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        self.config = bot.config.support
        self.t: Templates = load_templates("support.yaml")
        #: thread id -> its last message (when, by whom).
        self.last: dict[int, LastWord] = {}
        #: threads of tickets closed for inactivity: their asker writing reopens them.
        self.closed: set[int] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tag_tasks: set[asyncio.Task[None]] = set()

    @property
    def remind_after(self) -> float:
        return self.config.remind_after_days * 86400.0

    @property
    def close_after(self) -> float:
        return self.config.close_after_days * 86400.0

    async def cog_load(self) -> None:
        if self.remind_after or self.close_after:
            self._task = asyncio.create_task(self._run(), name="support-stale")

    async def cog_unload(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _support(self) -> SupportCog:
        cog = self.bot.get_cog("SupportCog")
        if cog is None:
            raise RuntimeError("the support extension is not loaded")
        return cog  # type: ignore[return-value]

    # ----------------------------------------------------------------- the schedule

    async def _run(self) -> None:
        await self.bot.wait_until_ready()
        try:
            await self._rebuild()
        except Exception:
            log.exception("reading the ticket threads' last messages failed")
        while True:
            try:
                delay = await self._sweep()
            except Exception:
                log.exception("the stale-ticket round failed")
                delay = RETRY_FAILED_ROUND
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.01, delay))

    async def _rebuild(self) -> None:
        """Who wrote last in each open ticket's thread, from Discord, once at start-up;
        and the tickets closed for inactivity, to reopen when their asker writes."""
        support = self._support()
        desk = await support.desk()

        def tickets() -> tuple[list[Ticket], list[Ticket]]:
            store = desk.store
            opened = store.list_tickets(status="open", limit=5000)
            closed = store.list_tickets(status="closed", limit=CLOSED_WATCHED)
            return [t for t in opened if t.thread_id], [
                t for t in closed if t.thread_id and closed_for_inactivity(t)
            ]

        opened, closed = await support.in_store(tickets)
        self.closed.update(t.thread_id for t in closed if t.thread_id)
        for ticket in opened:
            assert ticket.thread_id is not None
            try:
                page = await self.bot.http.logs_from(ticket.thread_id, 1)
            except discord.HTTPException as exc:
                log.info("ticket %d: its thread's last message not read: %s", ticket.id, exc)
                continue
            if page:
                at = dt.datetime.fromisoformat(page[0]["timestamp"]).timestamp()
                self._note(ticket, int(page[0]["author"]["id"]), at)

    def _note(self, ticket: Ticket, author_id: int, at: float) -> None:
        assert ticket.thread_id is not None
        me = self.bot.user.id if self.bot.user else None
        who = who_wrote(author_id, bot_id=me, asker_id=user_id_of(ticket.user))
        before = self.last.get(ticket.thread_id)
        self.last[ticket.thread_id] = LastWord(at, who)
        self._wake.set()
        waiting = waiting_changed(before, who, ticket.status)
        if waiting is not None:
            task = asyncio.create_task(self._waiting_tag(ticket.thread_id, waiting))
            self._tag_tasks.add(task)
            task.add_done_callback(self._tag_tasks.discard)

    async def _waiting_tag(self, thread_id: int, waiting: bool) -> None:
        """The forum's "waiting for the asker" tag (if it has one) on the post while a
        helper wrote last, off once the asker writes."""
        try:
            thread = await self._thread(thread_id)
            if not isinstance(thread, discord.Thread) or not isinstance(
                thread.parent, discord.ForumChannel
            ):
                return
            tag = next(
                (t for t in thread.parent.available_tags if t.name.casefold() in WAITING_TAGS),
                None,
            )
            if tag is None or (tag in thread.applied_tags) == waiting or thread.archived:
                return
            others = [t for t in thread.applied_tags if t != tag]
            await thread.edit(applied_tags=([*others, tag] if waiting else others)[:5])
        except discord.HTTPException as exc:
            log.warning("thread %d: the waiting tag did not follow: %s", thread_id, exc)

    async def _sweep(self) -> float:
        """Carry out what is due now (closes, then reminders); seconds until the next."""
        support = self._support()
        desk = await support.desk()
        opened = await support.in_store(desk.store.list_tickets, status="open", limit=5000)
        now = discord.utils.utcnow().timestamp()
        plan = plan_stale(
            opened,
            self.last,
            now,
            remind_after_days=self.config.remind_after_days,
            close_after_days=self.config.close_after_days,
        )
        for ticket, silence in plan.close:
            await self._close(ticket, silence)
        for ticket, since in plan.remind:
            await self._remind(ticket, since)
        for thread_id in set(self.last) - plan.watched:  # solved, closed: no longer watched
            del self.last[thread_id]
        return plan.next_due - now

    async def _thread(self, thread_id: int) -> Any:
        return self.bot.get_channel(thread_id) or await self.bot.fetch_channel(thread_id)

    async def _remind(self, ticket: Ticket, since: float) -> None:
        assert ticket.thread_id is not None
        support = self._support()
        desk = await support.desk()
        asker = user_id_of(ticket.user)
        text = self.t(
            "stale.reminder", asker=f"<@{asker}>" if asker else "", when=f"<t:{int(since)}:R>"
        )
        try:
            thread = await self._thread(ticket.thread_id)
            await thread.send(
                text,
                allowed_mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(asker)] if asker else False
                ),
            )
        except discord.HTTPException as exc:
            log.warning("ticket %d: could not remind its asker: %s", ticket.id, exc)
            return
        now = discord.utils.utcnow().timestamp()
        await support.in_store(desk.store.record_event, ticket.id, "reminded", "bot", at=now)
        log.info("ticket %d: asker reminded", ticket.id)

    async def _close(self, ticket: Ticket, silence: float) -> None:
        assert ticket.thread_id is not None
        support = self._support()
        desk = await support.desk()
        try:
            ticket = await support.in_store(
                desk.set_status, ticket.id, "closed", actor=INACTIVE, staff=True
            )
        except IntakeError as exc:
            log.info("ticket %d: not closed for inactivity: %s", ticket.id, exc)
            return
        days = max(1, round(silence / 86400))
        asker = user_id_of(ticket.user)
        text = self.t(
            "stale.closed",
            days=self.t("stale.day") if days == 1 else self.t("stale.days", count=days),
            asker=f"<@{asker}>" if asker else "",
        )
        self.closed.add(ticket.thread_id)
        self.last.pop(ticket.thread_id, None)
        try:
            thread = await self._thread(ticket.thread_id)
            await thread.send(text, allowed_mentions=discord.AllowedMentions.none())
            await support.refresh_post(ticket, thread, lock=False)
        except discord.HTTPException as exc:
            log.warning("ticket %d: closed, but its post did not follow: %s", ticket.id, exc)
        log.info("ticket %d: closed after %.0f s of silence", ticket.id, silence)

    # ----------------------------------------------------------------- messages

    @commands.Cog.listener()
    async def on_ticket_posted(self, ticket_id: int, thread_id: int) -> None:
        """A new post (``SupportCog`` dispatches it): its silence is due to be watched."""
        self._wake.set()

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if not (self.remind_after or self.close_after):
            return  # off: nothing is watched (and without the intent, nothing comes)
        thread_id = message.channel.id
        if thread_id not in self.last and thread_id not in self.closed:
            if not isinstance(message.channel, discord.Thread):
                return
            if message.channel.parent_id != self.config.forum_channel_id:
                return
        support = self._support()
        desk = await support.desk()
        ticket = await support.in_store(desk.store.ticket_for_thread, thread_id)
        if ticket is None:
            return
        at = message.created_at.timestamp()
        if ticket.status == "open":
            self._note(ticket, message.author.id, at)
            return
        asker = user_id_of(ticket.user)
        if thread_id not in self.closed or message.author.id != asker:
            return
        try:
            ticket = await support.in_store(
                desk.set_status, ticket.id, "open", actor=user_key(message.author), staff=False
            )
        except IntakeError as exc:
            log.info("ticket %d: not reopened: %s", ticket.id, exc)
            return
        self.closed.discard(thread_id)
        self._note(ticket, message.author.id, at)
        try:
            thread = await self._thread(thread_id)
            await thread.send(
                self.t("stale.reopened"), allowed_mentions=discord.AllowedMentions.none()
            )
            await support.refresh_post(ticket, thread)
        except discord.HTTPException as exc:
            log.warning("ticket %d: reopened, but its post did not follow: %s", ticket.id, exc)
        log.info("ticket %d: reopened, its asker wrote again", ticket.id)
