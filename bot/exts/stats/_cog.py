"""Feeds :class:`bot.metrics.BotMetrics` from discord.py's events; no commands of its own
(``/wiki stats`` lives with the other ``/wiki`` commands, in the admin extension).

- A command that ended without an error (``app_command_completion``) is counted with
  its time; one that failed is counted by the tree's error handler (``bot.errors``).
- The first helper reply of a ticket: the first message in the ticket's forum post by
  someone other than the asker and bots, timed from the post's creation. Only tickets
  filed since the bot started are timed (their earlier messages were all seen); a
  post is looked up once, in the ticket store, then remembered.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot.errors import count_command
from bot.exts.support._helpers import user_key

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["StatsCog"]

log = logging.getLogger(__name__)


class StatsCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        self.started = time.time()
        #: Ticket posts whose first helper reply was seen (or that are not timed).
        self._settled: set[int] = set()

    @commands.Cog.listener()
    async def on_app_command_completion(self, interaction: discord.Interaction, _: Any) -> None:
        count_command(interaction, "ok")

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        channel = message.channel
        forum_id = self.bot.config.support.forum_channel_id
        if (
            forum_id is None
            or message.author.bot
            or not isinstance(channel, discord.Thread)
            or channel.parent_id != forum_id
            or channel.id in self._settled
        ):
            return
        support: Any = self.bot.get_cog("SupportCog")
        if support is None:
            return
        desk = await support.desk()
        ticket = await support.in_store(desk.store.ticket_for_thread, channel.id)
        if channel.id in self._settled:  # another message of the post was looked at meanwhile
            return
        if ticket is None:
            self._settled.add(channel.id)  # a post made without /support
            return
        if ticket.created_at < self.started:
            self._settled.add(channel.id)  # its earlier messages were not seen
            return
        if ticket.user == user_key(message.author):
            return  # the asker adding to the question
        self._settled.add(channel.id)
        posted = discord.utils.snowflake_time(channel.id)
        seconds = (message.created_at - posted).total_seconds()
        self.bot.metrics.first_reply.observe(max(0.0, seconds))
        log.info("ticket %d: first helper reply after %.0f s", ticket.id, seconds)
