"""/acronym <term> and the message context menu "Explain acronyms"."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.errors import safe_choices
from bot.respond import in_time, send_reply

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["GlossaryCog"]

log = logging.getLogger(__name__)


class GlossaryCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        # Context menus cannot be declared inside a cog with a decorator (discord.py #7823).
        self.explain_menu = app_commands.ContextMenu(
            name="Explain acronyms",
            callback=self.explain_message,
            allowed_contexts=app_commands.AppCommandContext(
                guild=True, dm_channel=True, private_channel=True
            ),
            allowed_installs=app_commands.AppInstallationType(guild=True, user=True),
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.explain_menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.explain_menu.name, type=self.explain_menu.type)

    @app_commands.command(name="acronym")
    @app_commands.describe(
        term="A term from the glossary, e.g. TP, DCP4 or a meaning like tensor parallel",
        private="Show the answer only to you (default: everyone in the channel sees it)",
        for_="Point the answer at someone in the channel (only they are mentioned)",
    )
    @app_commands.rename(for_="for")
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.allowed_installs(guilds=True, users=True)
    @cooldown()
    async def acronym(
        self,
        interaction: discord.Interaction,
        term: str,
        private: bool = False,
        for_: discord.User | None = None,
    ) -> None:
        """Expand a term from the wiki's glossary (DCP4, TP8 and meanings work too).

        A known term is a dictionary lookup and answered at once. An unknown one
        also searches the index for pages that mention it, in a thread; when that
        outlasts the bot's patience it is deferred, privately ("not found" is only
        shown to the asker).
        """
        kb = self.bot.kb
        if kb.glossary.lookup(term).entry is None:
            reply = await in_time(interaction, self.bot.in_thread(kb.acronym, term), ephemeral=True)
        else:
            reply = kb.acronym(term)
        await send_reply(interaction, reply, kb, private=private, for_user=for_, deletable=True)

    @acronym.autocomplete("term")
    async def term_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.term_choices(current))

    @cooldown()
    async def explain_message(
        self, interaction: discord.Interaction, message: discord.Message
    ) -> None:
        """Every glossary term in a message, privately for the one who asked."""
        text = message.content or ""
        for embed in message.embeds:
            text += "\n" + (embed.title or "") + "\n" + (embed.description or "")
        work = self.bot.in_thread(self.bot.kb.explain, text)
        reply = await in_time(interaction, work, ephemeral=True)
        await send_reply(interaction, reply, self.bot.kb, private=True)
