"""On joining a server where none of the bot's commands are registered, say how to fix it.

Slash commands exist only once synced: globally, or per server (``discord.guild_ids``).
A server added later has neither, and nobody can run ``/wiki sync`` there. The
owner gets one short pointer in the server's system channel, mentioning only
them, if the bot may post there; otherwise the bot only logs it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["WelcomeCog"]

log = logging.getLogger(__name__)


class WelcomeCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        if await self.bot.registered_commands(guild.id) or await self.bot.registered_commands(None):
            return
        channel = guild.system_channel
        me = guild.me
        if channel is None or me is None:
            log.info("joined guild %s without commands and without a system channel", guild.id)
            return
        permissions = channel.permissions_for(me)
        if not (permissions.view_channel and permissions.send_messages):
            log.info("joined guild %s without commands; may not post in #%s", guild.id, channel)
            return
        owner = discord.Object(id=guild.owner_id) if guild.owner_id else None
        text = self.bot.t(
            "welcome.no_commands",
            owner=f"<@{guild.owner_id}>" if owner else "",
            guild_id=guild.id,
        )
        mentions = discord.AllowedMentions(
            everyone=False, roles=False, users=[owner] if owner else False, replied_user=False
        )
        try:
            await channel.send(text.strip(), allowed_mentions=mentions)
        except discord.HTTPException as exc:
            log.info("could not post the welcome pointer in guild %s: %s", guild.id, exc)
        log.info("joined guild %s without commands: pointed the owner at wikibot sync", guild.id)
