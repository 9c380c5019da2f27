"""/search <query> [section]: the best wiki sections, a page at a time."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.errors import safe_choices
from bot.respond import in_time, send_reply

from ._views import (
    PageButton,
    SearchMemory,
    answer_search,
    remember,
    search_view,
    with_solved,
)

if TYPE_CHECKING:
    from bot.client import WikiBot
    from knowledge.reply import Reply

__all__ = ["SearchCog"]

log = logging.getLogger(__name__)


class SearchCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        # The folder is the knowledge base's data folder, known once the wiki is open.
        self.memory = SearchMemory(lambda: self.bot.kb.data_dir)
        # Persistent buttons: the pager of any /search message, however old, turns.
        self.bot.add_dynamic_items(PageButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(PageButton)

    @app_commands.command(name="search")
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.allowed_installs(guilds=True, users=True)
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

        A pasted question is answered on the event loop when the answer is at hand, any
        other search in a thread (answer_search); a search done within the bot's patience
        is answered in the first response, a slower one after a "thinking…" (in_time).
        """
        kb = self.bot.kb

        async def searched() -> tuple[Reply, str | None]:
            found = await answer_search(self.bot, query, section or None)
            key = await remember(self.bot, found) if found.ok else None
            return await with_solved(self.bot, interaction.guild_id, found, query), key

        reply, key = await in_time(interaction, searched(), ephemeral=private)
        view = None
        if key is not None:  # found: reply.ok
            public = not (private or reply.ephemeral)
            view = search_view(self.bot, reply, interaction.user.id, key, deletable=public)
        await send_reply(interaction, reply, kb, private=private, view=view)

    @search.autocomplete("section")
    async def section_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.category_choices(current))
