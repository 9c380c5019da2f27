"""/wiki status (anyone), /wiki reindex and /wiki sync (admins; a global sync: the owner)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.errors import Refused, describe
from bot.respond import defer, send_reply
from knowledge.reply import Reply

from ._checks import admin_only

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["AdminCog"]

log = logging.getLogger(__name__)

#: Seconds between two "Reindexing: n/m pages" edits (edits are rate limited by Discord).
PROGRESS_EVERY = 2.0


class AdminCog(commands.Cog):
    wiki = app_commands.Group(
        name="wiki",
        description="The wiki behind the bot: its status, and admin actions",
        guild_only=True,
    )

    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    @wiki.command(name="status")
    @cooldown()
    async def status(self, interaction: discord.Interaction) -> None:
        """Which wiki revision the bot answers from: page, section and term counts, index age.

        Counts come from the loaded wiki in memory: answered at once.
        """
        kb = self.bot.kb
        await send_reply(interaction, kb.status(), kb, private=True)

    @wiki.command(name="reindex")
    @admin_only("admin.reindex_action")
    @cooldown()
    async def reindex(self, interaction: discord.Interaction) -> None:
        """Re-read the wiki and rebuild the search index (server admins only).

        Takes seconds on the real wiki: deferred, run in a worker thread (not the
        knowledge threads, so searches go on meanwhile), with progress shown by
        editing the "thinking" message now and then.
        """
        t = self.bot.t
        kb = self.bot.kb
        if self.bot.reload_lock.locked():  # a reindex, or the periodic refresh (upkeep)
            busy = Reply("unavailable", t("admin.reindex_busy_title"), t("admin.reindex_busy"))
            await send_reply(interaction, busy, kb, private=True)
            return
        async with self.bot.reload_lock:
            await defer(interaction, ephemeral=True)
            log.info("reindex started: %s", describe(interaction))
            progress: dict[str, int] = {}

            def on_progress(done: int, total: int) -> None:  # called in the worker thread
                progress["done"], progress["total"] = done, total

            reporter = asyncio.create_task(self._report_progress(interaction, progress))
            started = time.perf_counter()
            try:
                built = await asyncio.to_thread(kb.reload, force=True, progress=on_progress)
            finally:
                reporter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reporter
            took = time.perf_counter() - started
            self.bot.settle_memory(collect=False)  # no full GC pause while the admin waits
            state = kb.state
            text = t(
                "admin.reindex_result",
                pages=built.pages,
                sections=built.sections,
                terms=len(state.glossary.entries),
                seconds=took,
                revision=state.wiki.revision,
            )
            log.info("reindex done in %.2fs: %s", took, text)
            reply = Reply("reindex", t("admin.reindex_title"), text)
            await send_reply(interaction, reply, kb, private=True)

    async def _report_progress(
        self, interaction: discord.Interaction, progress: dict[str, int]
    ) -> None:
        shown = None
        while True:
            await asyncio.sleep(PROGRESS_EVERY)
            now = (progress.get("done"), progress.get("total"))
            if now == shown or not now[1]:
                continue
            shown = now
            text = self.bot.t("admin.reindex_progress", done=now[0], total=now[1])
            try:
                await interaction.edit_original_response(content=text)
            except discord.HTTPException as exc:
                log.info("could not show reindex progress: %s", exc)

    @wiki.command(name="sync")
    @app_commands.describe(scope="This server only (admins), or every server (the bot's owner)")
    @admin_only("admin.sync_action")
    @cooldown()
    async def sync(
        self, interaction: discord.Interaction, scope: Literal["server", "global"] = "server"
    ) -> None:
        """Register the bot's slash commands with Discord again (server admins only).

        A global sync reaches every server the bot is in, so only the owner may ask.
        """
        t = self.bot.t
        if scope == "global" and not await self.bot.is_owner(interaction.user):
            raise Refused(t("errors.owner_only", action=t("admin.global_sync_action")))
        await defer(interaction, ephemeral=True)
        guild_id = None if scope == "global" else interaction.guild_id
        count = await self.bot.sync_commands(guild_id)
        where = t("admin.sync_global") if guild_id is None else t("admin.sync_here")
        reply = Reply(
            "sync", t("admin.sync_title"), t("admin.sync_result", count=count, where=where)
        )
        await send_reply(interaction, reply, self.bot.kb, private=True)
