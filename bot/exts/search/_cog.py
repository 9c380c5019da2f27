"""/search <query> [section]: the best wiki sections, a page at a time."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.errors import safe_choices
from bot.respond import defer, send_reply

from ._views import SearchPager

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["SearchCog"]

log = logging.getLogger(__name__)


class SearchCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    @app_commands.command(name="search")
    @app_commands.describe(
        query="Words to look for, e.g. nccl p2p hang",
        section="Only search one part of the wiki, e.g. models or troubleshooting",
        private="Show the answer only to you (default: everyone in the channel sees it)",
    )
    @cooldown()
    async def search(
        self,
        interaction: discord.Interaction,
        query: str,
        section: str | None = None,
        private: bool = False,
    ) -> None:
        """Search every page of the wiki and page through the best matching sections.

        The index search is synchronous: defer, run it in a thread, then answer.
        """
        await defer(interaction, ephemeral=private)
        kb = self.bot.kb
        reply = await self.bot.in_thread(kb.search, query, category=section or None)
        pager = None
        if reply.ok and reply.meta.get("pages", 1) > 1:
            pager = SearchPager(
                self.bot, interaction.user.id, reply, timeout=self.bot.config.pager_timeout
            )
        message = await send_reply(interaction, reply, kb, private=private, view=pager)
        if pager is not None:
            pager.message = message

    @search.autocomplete("section")
    async def section_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.category_choices(current))
