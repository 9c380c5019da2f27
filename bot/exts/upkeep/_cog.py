"""Keeping the bot current and saying that it is alive; two background loops, no commands.

Refresh: every ``wiki.refresh_minutes`` (``WikiBot.refresh_interval`` seconds)
the wiki is brought up to date in a worker thread. With ``wiki.source`` the bot
follows the source itself (:meth:`knowledge.source.Follower.follow`): a check
costs a 304 when nothing changed; a new commit is downloaded, unpacked beside
the live generation, swapped in, and the index updated from the changed pages;
what users would notice is announced in ``wiki.announce_channel``. A rate limit
postpones the checks until GitHub's reset time. With ``wiki.path`` the folder
is read again by :meth:`KnowledgeBase.reload`.
Unchanged pages come from the parse cache and the index is updated
incrementally, so a quiet wiki costs little more than reading its files. The bot
never runs git: with ``wiki.path`` admins keep the folder current (a cron ``git
pull``, a mounted volume). A refresh and ``/wiki reindex`` hold ``WikiBot.reload_lock``: a tick
that finds a reload running is skipped, not queued. A failing refresh is logged
and the wiki already loaded goes on answering; the loop carries on.

Heartbeat: once the bot is ready, every ``WikiBot.heartbeat_interval`` seconds
(30), ``heartbeat.json`` (:mod:`bot.heartbeat`) in the knowledge base's data
folder, which is where ``wikibot health`` looks (``wiki.data_dir``, else the
per-wiki folder under ``$WIKIBOT_DATA``). The last one, written on shutdown,
says "disconnected".
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from discord.ext import commands, tasks

from bot.client import trim_heap
from bot.heartbeat import HEARTBEAT_EVERY, Heartbeat, heartbeat_path, write_heartbeat

from ._announce import post_announcement
from ._changes import PageChanges

if TYPE_CHECKING:
    from bot.client import WikiBot
    from knowledge.service import KnowledgeBase

__all__ = ["UpkeepCog"]

log = logging.getLogger(__name__)


class UpkeepCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        #: Whether the gateway connection is up, as the connect/disconnect events say.
        self.connected = False
        #: Refreshes failed in a row: the first is logged with its traceback, the rest in a line.
        self.failures = 0
        self._reload: asyncio.Task[Any] | None = None
        self._beating = False
        self._beat_failing = False
        #: One thread writes every heartbeat, in the order they were made: a loop's beat
        #: whose wait was cancelled at shutdown still finishes in its thread, and must not
        #: land after the last beat (which says "disconnected").
        self._beat_writer = ThreadPoolExecutor(1, thread_name_prefix="wikibot-heartbeat")

    async def cog_load(self) -> None:
        if self.bot.refresh_interval > 0:
            self.refresh.change_interval(seconds=self.bot.refresh_interval)
            self.refresh.start()
        else:
            log.info("the periodic wiki refresh is off (wiki.refresh_minutes: 0)")
        self.heartbeat.change_interval(seconds=self.bot.heartbeat_interval)
        self.heartbeat.start()

    async def cog_unload(self) -> None:
        self.refresh.cancel()
        self.heartbeat.cancel()
        reload = self._reload
        if reload is not None and not reload.done():
            # The index is closed right after this: let a running update finish first.
            log.info("waiting for the wiki refresh in progress to finish")
            # Bounded when the bot is stopping (SIGTERM): a swap is atomic, so one cut
            # short leaves the previous generation live for the next start.
            await asyncio.wait([reload], timeout=self.bot.time_left())
            if not reload.done():
                log.warning("the wiki refresh in progress did not finish before the stop")
            else:
                failed = None if reload.cancelled() else reload.exception()
                if failed is not None:
                    log.warning("the wiki refresh running at shutdown failed: %r", failed)
        if self._beating:
            self.connected = False
            await self._beat()
        self._beat_writer.shutdown(wait=False)

    # --- refresh -----------------------------------------------------------------

    @tasks.loop(minutes=10)  # the real interval is set in cog_load
    async def refresh(self) -> None:
        if self.refresh.current_loop == 0:
            return  # the first tick comes at once, and the wiki was loaded moments ago
        lock = self.bot.reload_lock
        if lock.locked():
            log.info("wiki refresh skipped: the wiki is being reloaded already (/wiki reindex)")
            return
        async with lock:
            # A load and the new ranker's build, with no automatic full GC over what they make.
            with self.bot.building():
                await self._refresh()

    @refresh.before_loop
    async def _before_refresh(self) -> None:
        await self.bot.wait_until_ready()

    async def _refresh(self) -> None:
        if self.bot.follower is not None:
            await self._follow()
            return
        kb = self.bot.kb
        old = kb.wiki
        self._reload = asyncio.create_task(asyncio.to_thread(kb.reload), name="wiki-refresh")
        try:
            # Shielded: a shutdown cancelling the loop must not abandon a half-done update.
            built = await asyncio.shield(self._reload)
        except Exception as exc:
            self.failures += 1
            if self.failures == 1:
                log.exception("wiki refresh failed; still answering from revision %s", old.revision)
            else:
                log.error("wiki refresh failed again (%d in a row): %r", self.failures, exc)
            return
        if self.failures:
            log.info("wiki refresh works again after %d failures", self.failures)
            self.failures = 0
        new = kb.wiki
        changes = PageChanges.between(old.pages, new.pages)
        if not changes:
            log.debug("wiki refresh: no change (revision %s, index %s)", new.revision, built.mode)
            return
        log.info(
            "wiki refreshed: revision %s -> %s, index %s in %.2f s; %s",
            old.revision,
            new.revision,
            built.mode,
            built.seconds,
            changes,
        )
        await self._prepare(kb)
        self.bot.settle_memory()

    @staticmethod
    async def _prepare(kb: KnowledgeBase) -> None:
        """Build the new wiki's page ranker now, in a worker thread, as at start-up: it is
        then frozen with the rest, and no pasted question waits seconds for it."""
        await asyncio.to_thread(lambda: kb.state.ranker)

    async def _follow(self) -> None:
        follower = self.bot.follower
        assert follower is not None
        kb = self.bot.kb
        state = await asyncio.to_thread(follower.state)
        if state.retry_at > time.time():
            log.info(
                "wiki check skipped: rate limited for %.0f s more", state.retry_at - time.time()
            )
            return
        old = kb.state.wiki.revision
        self._reload = asyncio.create_task(
            asyncio.to_thread(follower.follow, kb), name="wiki-follow"
        )
        try:
            # Shielded: a shutdown cancelling the loop must not abandon a half-done swap.
            result = await asyncio.shield(self._reload)
        except Exception as exc:
            self.failures += 1
            if self.failures == 1:
                log.warning("wiki check failed; still answering from revision %s: %s", old, exc)
            else:
                log.error("wiki check failed again (%d in a row): %s", self.failures, exc)
            return
        if self.failures:
            log.info("wiki checks work again after %d failures", self.failures)
            self.failures = 0
        if not result.outcome.changed:
            log.debug("wiki check: %s unchanged", follower.settings.source.text)
            return
        built = result.built
        log.info(
            "wiki now at %s: revision %s -> %s, index %s in %.2f s; %s",
            result.outcome.live.commit[:12] or result.outcome.live.id[:13],
            old,
            kb.state.wiki.revision,
            built.mode if built else "-",
            built.seconds if built else 0.0,
            result.changes.summary(),
        )
        if result.announcement is not None:
            await post_announcement(self.bot, result.announcement)
        await self._prepare(kb)
        self.bot.settle_memory()

    # --- heartbeat ---------------------------------------------------------------

    @tasks.loop(seconds=HEARTBEAT_EVERY)  # the real interval is set in cog_load
    async def heartbeat(self) -> None:
        self._beating = True
        await self._beat()

    @heartbeat.before_loop
    async def _before_heartbeat(self) -> None:
        await self.bot.wait_until_ready()

    async def _beat(self) -> None:
        bot = self.bot
        try:
            kb = bot.kb
        except RuntimeError:
            return  # no wiki open (``wikibot sync``): nothing to vouch for
        beat = Heartbeat(
            time=time.time(),
            pid=os.getpid(),
            revision=kb.wiki.revision,
            guilds=len(bot.guilds),
            connected=self.connected,
        )
        path = heartbeat_path(kb.data_dir)
        try:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._beat_writer, write_heartbeat, path, beat)
        except OSError as exc:
            if not self._beat_failing:
                log.warning("cannot write the heartbeat (health checks will fail): %s", exc)
                self._beat_failing = True
            return
        if self._beat_failing:
            log.info("the heartbeat is written again: %s", path)
            self._beat_failing = False
        # With each beat, the C heap's pages that answering freed go back to the system
        # (about 13 MB at 10x the wiki; a few ms, off the loop: ctypes drops the GIL).
        await loop.run_in_executor(self._beat_writer, trim_heap)

    @commands.Cog.listener()
    async def on_connect(self) -> None:
        self.connected = True

    @commands.Cog.listener()
    async def on_resumed(self) -> None:
        self.connected = True

    @commands.Cog.listener()
    async def on_disconnect(self) -> None:
        self.connected = False
