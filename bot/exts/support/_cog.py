"""/support: the onboarding checklist as a form, the wiki's answer first, then a forum post.

The intake itself is :class:`knowledge.intake.desk.SupportDesk` (drafts, triage,
tickets, the SQLite store); this cog only opens modals, shows answers and posts.

- ``/support [model]`` opens step 1 of the form (or offers the user's draft);
  each step's submit is stored, then a "Continue" button opens the next step (a
  modal cannot answer a modal). After the last step the triage is shown privately
  with "This solved it" / "Edit" / "File the ticket".
- Filing creates a post in the configured help forum (title, tags, the checklist as
  fields, the launch command and log tail as files, only the asker mentioned). A
  post that fails stays pending in the store and is retried by a background task;
  ``/wiki status`` shows how many wait.
- Solved / Close / Reopen buttons on the post (asker and staff) set the ticket's
  status, the post's tags and its archive state. ``/ticket list`` and ``/ticket
  show`` are for staff.
- New posts made in the forum without ``/support`` get a pointer to it; with
  ``support.nudge`` on (needs the Message Content intent) the missing checklist
  items and suggested pages instead.

Nothing slow runs on the event loop. The triage (the wiki's search) runs in the bot's
knowledge threads (``bot.in_thread``); drafts (redaction, SQLite writes) in the cog's
own store threads; filing and posting (the ticket's record, the post's body, the
post's outcome) in a filing thread of their own, so "File the ticket" never queues
behind the triages or the drafts of twenty other requests, nor in asyncio's default
pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord.ext import commands

from bot import render
from bot.respond import send
from knowledge.intake.desk import IntakeSettings, SupportDesk
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.intake.store import RateLimit
from knowledge.intake.validate import MAX_LOG_CHARS, MAX_UPLOAD_BYTES, human_size
from knowledge.reply import Field, Reply
from knowledge.templates import Templates, load_templates

from ._filing import FilingFlow
from ._helpers import require_tag_problem
from ._intake import IntakeFlow
from ._lifecycle import LifecycleFlow
from ._staff import StaffFlow
from ._views import FeedbackButton, FlowButton, TicketButton

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["SupportCog"]

log = logging.getLogger(__name__)

#: Threads for the ticket store: SQLite serialises writes on one connection anyway; a
#: second thread redacts the next request while the first waits on the disk.
STORE_THREADS = 2
#: One thread of its own for filing and posting tickets (short writes and the post's
#: body): "File the ticket" never queues behind the redaction of other users' drafts.
FILING_THREADS = 1

T = TypeVar("T")


class SupportCog(IntakeFlow, FilingFlow, LifecycleFlow, StaffFlow, commands.Cog):
    """The support desk on Discord: one cog, its flows in sibling modules (``_intake``,
    ``_filing``, ``_lifecycle``, ``_staff``); the store, the desk and the answers here."""

    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        self.config = bot.config.support
        self.t: Templates = load_templates("support.yaml")
        self.store: SqliteTicketStore | None = None
        self._desk: SupportDesk | None = None
        self._desk_state: object = None
        self._desk_lock = asyncio.Lock()
        self._retry_task: asyncio.Task[None] | None = None
        self._posting: set[int] = set()
        self._store_pool = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="wikibot-tickets")
        self._filing_pool = ThreadPoolExecutor(FILING_THREADS, thread_name_prefix="wikibot-filing")
        #: Trips to the knowledge threads that write to the store (see ``in_thread_storing``).
        self._storing: set[Future[Any]] = set()
        #: Set when the cog unloads: no new trip that writes to the store may start.
        self._closing = False

    # ----------------------------------------------------------------- set-up

    async def cog_load(self) -> None:
        # The store and desk open at first use: ``wikibot sync`` loads this cog without a wiki.
        self.bot.add_dynamic_items(FlowButton, TicketButton, FeedbackButton)
        self._retry_task = asyncio.create_task(self._retry_loop(), name="support-retry")

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(FlowButton, TicketButton, FeedbackButton)
        self._closing = True  # on the loop, as in_thread_storing: no trip starts after it
        if self._retry_task is not None:
            self._retry_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retry_task
        # Filings and draft saves already handed to the threads finish before the store
        # closes (they would fail on a closed database); a post made but not yet recorded
        # is found again by its key after the restart.
        closing = asyncio.get_running_loop().run_in_executor(None, self._close_store)
        try:  # bounded when the bot is stopping (SIGTERM); SQLite keeps what was committed
            await asyncio.wait_for(closing, self.bot.time_left())
        except TimeoutError:
            log.warning("the ticket store was still busy when the stop's time ran out")

    def _close_store(self) -> None:
        self._filing_pool.shutdown(wait=True)
        self._store_pool.shutdown(wait=True)
        wait_futures(list(self._storing))
        if self.store is not None:
            self.store.close()

    async def in_store(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a (blocking) draft or ticket call in the store threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._store_pool, functools.partial(func, *args, **kwargs)
        )

    async def in_thread_storing(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a (blocking) call that writes to the store, then works on the wiki, in the
        bot's knowledge threads: a form's last step, saved and checked in one trip (a
        trip wakes a thread and the loop, which costs more than the step's save). The
        store is closed only after it, as after the store threads' own work; once the cog
        unloads, a new trip is refused as the store threads refuse new work."""
        if self._closing:
            raise RuntimeError("the ticket store is closing: no new work")
        future = self.bot.submit(func, *args, **kwargs)
        self._storing.add(future)
        future.add_done_callback(self._storing.discard)
        return await asyncio.wrap_future(future)

    async def in_filing(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a (blocking) filing or posting call in the filing thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._filing_pool, functools.partial(func, *args, **kwargs)
        )

    def _settings(self) -> IntakeSettings:
        c = self.config
        return IntakeSettings(
            draft_ttl=c.draft_hours * 3600,
            rate=RateLimit(c.rate_count, c.rate_minutes * 60),
        )

    async def desk(self) -> SupportDesk:
        """The desk over the wiki as loaded now (rebuilt after a refresh changed it)."""
        state = self.bot.kb.state
        if self._desk is not None and self._desk_state is state:
            return self._desk
        async with self._desk_lock:
            if self._desk is None or self._desk_state is not state:
                store = await self._open_store()
                context = await self.bot.in_thread(lambda: self.bot.kb.triage_context)
                self._desk = SupportDesk(
                    context, store, settings=self._settings(), links=self.bot.kb.links
                )
                self._desk_state = state
        return self._desk

    async def _open_store(self) -> SqliteTicketStore:
        if self.store is None:
            data_dir = self.bot.kb.data_dir
            store = await self.in_store(SqliteTicketStore.in_folder, data_dir)
            if self.store is None:  # two first uses at once: one store
                self.store = store
            elif store is not self.store:
                await self.in_store(store.close)
        return self.store

    def home_guilds(self) -> set[int]:
        """The servers whose members may see the tickets' threads: the one of the help
        forum (and of the private tickets' channel), and the configured servers."""
        homes = set(self.bot.config.guild_ids)
        for channel_id in (self.config.forum_channel_id, self.config.private_channel_id):
            channel = self.bot.get_channel(channel_id) if channel_id else None
            guild = getattr(channel, "guild", None)
            if guild is not None:
                homes.add(guild.id)
        return homes

    async def solved_like(self, text: str) -> Field | None:
        """ "A similar ticket was solved" for ``text`` (a /search), as the /support check
        offers it: the desk's solved tickets, similarity and threshold; None when none is
        near enough. Costs nothing on the event loop while no ticket is solved; a desk
        not prepared yet (the first seconds after start or a wiki refresh) is prepared
        only when a solved ticket exists."""
        state = self.bot.kb.state
        desk = self._desk if self._desk is not None and self._desk_state is state else None
        if desk is None:
            store = await self._open_store()
            if not await self.in_store(store.solved_answers, 1, public=True):
                return None
            desk = await self.desk()
        if desk.nothing_solved():
            return None
        return await self.in_store(desk.similar_field_for, text)

    # ----------------------------------------------------------------- answers

    async def _say(
        self,
        interaction: discord.Interaction,
        title: str,
        text: str,
        *,
        kind: str = "ok",
        view: discord.ui.View | None = None,
        fields: tuple[Field, ...] = (),
    ) -> None:
        embed = render.embed(Reply(kind, title, text, fields=fields, ephemeral=True))
        await send(interaction, embed=embed, ephemeral=True, view=view or discord.utils.MISSING)

    async def _refuse(self, interaction: discord.Interaction, text: str) -> None:
        await self._say(interaction, self.t("errors.title"), text, kind="not_found")

    # ----------------------------------------------------------------- status

    async def status_field(self) -> Field:
        """One field for /wiki status: open and pending tickets, the checklist's source."""
        desk = await self.desk()

        def counts() -> tuple[int, int, str, int]:
            opened = desk.store.count_tickets(status="open")
            waiting = desk.store.posts_due(float("inf"), limit=50)
            error = next((t.post_error for t in reversed(waiting) if t.post_error), "")
            return opened, desk.pending_count(), error, desk.failed_count()

        opened, pending, error, failed = await self.in_store(counts)
        source = desk.form.source or self.t("status.builtin")
        failing = self.t("status.failing", error=error) if pending and error else ""
        logs = self.t("status.logs", upload=human_size(MAX_UPLOAD_BYTES), chars=MAX_LOG_CHARS)
        problem = ""
        with contextlib.suppress(discord.HTTPException):
            forum = await self._forum()
            key = require_tag_problem(forum, self.config.default_tag) if forum else None
            if key:
                text = self.t(f"tag_problems.{key}", tag=self.config.default_tag)
                problem = self.t("status.problem", text=text)
        return Field(
            self.t("status.field"),
            self.t(
                "status.value",
                open=opened,
                pending=pending,
                failing=failing,
                failed=self.t("status.failed", count=failed) if failed else "",
                source=source,
                problem=problem,
                logs=logs,
            ),
        )
