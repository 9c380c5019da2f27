"""/help: what the bot can do, in two short paragraphs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.respond import send_reply

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["HelpCog"]


class HelpCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    @app_commands.command(name="help")
    @cooldown()
    async def help(self, interaction: discord.Interaction) -> None:
        """How to use the wiki bot: its commands and the message menu, in two short paragraphs.

        Shown only to the asker: the channel does not need to read it too.
        """
        await send_reply(interaction, self.bot.kb.help(), self.bot.kb, private=True)
