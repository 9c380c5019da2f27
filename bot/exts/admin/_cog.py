"""/wiki status (anyone); /wiki stats, reindex, lint, gaps and sync (admins; a global sync:
the owner)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.errors import Refused, describe
from bot.exts.stats._reply import stats_reply
from bot.exts.upkeep._announce import post_announcement
from bot.respond import defer, in_time, send_reply
from knowledge.lint import CHECKS
from knowledge.reply import Field, Reply
from knowledge.search import BuildStats, IndexBuildError
from knowledge.source import ArchiveError, CheckFailed, FetchError, StoreBusy
from knowledge.wiki import WikiFolderError

from ._checks import admin_only
from ._views import ClearCopiesView

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["AdminCog"]

log = logging.getLogger(__name__)

#: What a failed wiki check raises; /wiki reindex then rebuilds from the live generation.
SOURCE_ERRORS = (FetchError, ArchiveError, CheckFailed, StoreBusy, OSError)

#: Seconds between two "Reindexing: n/m pages" edits (edits are rate limited by Discord).
PROGRESS_EVERY = 2.0


class AdminCog(commands.Cog):
    wiki = app_commands.Group(
        name="wiki",
        description="The wiki behind the bot: its status, and admin actions",
        # Server admins only see it (each server can change that in its settings; the
        # checks below still apply); never in DMs, never as a user-installed app.
        default_permissions=discord.Permissions(manage_guild=True),
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        allowed_installs=app_commands.AppInstallationType(guild=True),
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
        reply = kb.status()
        failures = self.bot.sync_failures
        if failures:
            t = self.bot.t
            lines = "\n".join(
                t("admin.sync_failure_line", id=guild_id, why=why)
                for guild_id, why in sorted(failures.items())
            )
            field = Field(t("admin.sync_failures_title"), lines[:1024])
            reply = dataclasses.replace(reply, fields=(*reply.fields, field))
        support = self.bot.get_cog("SupportCog")
        if support is not None:  # open and pending tickets, where the checklist came from
            reply = dataclasses.replace(reply, fields=(*reply.fields, await support.status_field()))
        ask = self.bot.get_cog("AskCog")
        if ask is not None:  # answers in words: on, with which model, how it went lately
            reply = dataclasses.replace(reply, fields=(*reply.fields, ask.status_field()))
        if self.bot.follower is not None:  # source, commit, fetched, last checked, last error
            reply = self.bot.follower.status(reply)
        await send_reply(interaction, reply, kb, private=True)

    @wiki.command(name="stats")
    @admin_only("stats.action")
    @cooldown()
    async def stats(self, interaction: discord.Interaction) -> None:
        """The bot's figures: commands, support requests, tickets, wiki, errors, memory (admins).

        Read from the bot's metrics registry (the same figures Prometheus scrapes, when
        metrics.port is set), plus a few counts from the ticket store: in a thread.
        """
        snapshot = await asyncio.to_thread(self.bot.metrics.snapshot)
        reply = stats_reply(snapshot, self.bot.t)
        await send_reply(interaction, reply, self.bot.kb, private=True)

    @wiki.command(name="reindex")
    @admin_only("admin.reindex_action")
    @cooldown()
    async def reindex(self, interaction: discord.Interaction) -> None:
        """Fetch and re-read the wiki, then rebuild the search index (server admins only).

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
            fetch_note = None
            try:
                with self.bot.building():
                    if self.bot.follower is None:
                        built = await asyncio.to_thread(kb.reload, force=True, progress=on_progress)
                    else:
                        built, fetch_note = await self._fetch_and_rebuild(on_progress)
            except (IndexBuildError, WikiFolderError, OSError) as exc:
                # A full disk, a folder gone: the previous wiki and index keep serving
                # (the error says whether an index is kept); the admin gets one sentence.
                log.warning("reindex failed: %s (%s)", exc, describe(interaction))
                why = t("admin.reindex_failed", why=exc)
                failed = Reply("unavailable", t("admin.reindex_failed_title"), why)
                await send_reply(interaction, failed, kb, private=True)
                return
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
            if fetch_note:
                text += "\n" + fetch_note
            log.info("reindex done in %.2fs: %s", took, text)
            reply = Reply("reindex", t("admin.reindex_title"), text)
            await send_reply(interaction, reply, kb, private=True)

    async def _fetch_and_rebuild(self, on_progress) -> tuple[BuildStats, str]:
        """Check the source first; rebuild from what is live whether or not that worked."""
        follower = self.bot.follower
        assert follower is not None
        kb = self.bot.kb
        t = follower.t
        try:
            result = await asyncio.to_thread(follower.follow, kb, force=True, progress=on_progress)
        except SOURCE_ERRORS as exc:
            log.warning("reindex: the wiki check failed: %s", exc)
            built = await asyncio.to_thread(kb.reload, force=True, progress=on_progress)
            return built, t("reindex.fetch_failed", error=" ".join(str(exc).split())[:500])
        live = result.outcome.live
        commit = live.commit[:12] or live.id[:13]
        if result.announcement is not None:
            await post_announcement(self.bot, result.announcement)
        key = "reindex.fetched" if result.outcome.changed else "reindex.unchanged"
        assert result.built is not None  # force=True always rebuilds
        return result.built, t(key, commit=commit)

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

    @wiki.command(name="lint")
    @app_commands.describe(check="Run one check only (default: all of them)")
    @app_commands.choices(check=[app_commands.Choice(name=name, value=name) for name in CHECKS])
    @admin_only("admin.lint_action")
    @cooldown()
    async def lint(self, interaction: discord.Interaction, check: str | None = None) -> None:
        """What the wiki gets wrong: broken links, stale hubs, glossary gaps (server admins only).

        Runs on the wiki loaded now, in the knowledge threads (about a second on the
        real wiki); the embed shows the first findings per check, the file all of them.
        """
        only = [check] if check else None
        work = self.bot.in_thread(self.bot.kb.lint, only)
        reply = await in_time(interaction, work, ephemeral=True)
        await send_reply(interaction, reply, self.bot.kb, private=True)

    @wiki.command(name="gaps")
    @app_commands.describe(days="Only the requests of the last this many days (default: all kept)")
    @admin_only("admin.gaps_action")
    @cooldown()
    async def gaps(
        self, interaction: discord.Interaction, days: app_commands.Range[int, 1, 3650] | None = None
    ) -> None:
        """What people asked that the wiki did not answer, grouped: pages worth writing (admins).

        Reads the requests recorded in the data folder (never who asked) and groups them
        in the knowledge threads; private to the admin.
        """
        work = self.bot.in_thread(self.bot.kb.gaps_report, days)
        reply = await in_time(interaction, work, ephemeral=True)
        await send_reply(interaction, reply, self.bot.kb, private=True)

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
        guild_id = None if scope == "global" else interaction.guild_id

        async def synced() -> tuple[int, list[int]]:  # requests to Discord: usually quick
            count = await self.bot.sync_commands(guild_id)
            if guild_id is not None:
                return count, []
            candidates = sorted({*self.bot.config.guild_ids, *(g.id for g in self.bot.guilds)})
            return count, await self.bot.guilds_with_copies(candidates)

        count, copies = await in_time(interaction, synced(), ephemeral=True)
        where = t("admin.sync_global") if guild_id is None else t("admin.sync_here")
        text = t("admin.sync_result", count=count, where=where)
        view = None
        if copies:
            text += "\n" + t("admin.copies_found", count=len(copies))
            view = ClearCopiesView(self.bot, interaction.user.id, copies)
        reply = Reply("sync", t("admin.sync_title"), text)
        message = await send_reply(interaction, reply, self.bot.kb, private=True, view=view)
        if view is not None:
            view.message = message
