"""Post the "wiki changed" announcement to ``wiki.announce_channel``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from bot.render import embed
from knowledge.reply import Reply

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["post_announcement"]

log = logging.getLogger(__name__)


async def post_announcement(bot: WikiBot, reply: Reply) -> discord.Message | None:
    """Send ``reply`` as one embed to the configured channel; None when not posted."""
    channel_id = bot.config.announce_channel
    if channel_id is None:
        log.info("wiki changes not announced: no wiki.announce_channel in the config")
        return None
    channel = bot.get_channel(channel_id)
    try:
        if channel is None:
            channel = await bot.fetch_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            log.warning("wiki.announce_channel %s is not a channel messages go to", channel_id)
            return None
        url = reply.meta.get("commit_url")
        return await channel.send(
            embed=embed(reply, url=url if isinstance(url, str) else None),
            allowed_mentions=discord.AllowedMentions.none(),
        )
    except discord.HTTPException as exc:
        log.warning("could not post the wiki announcement to %s: %s", channel_id, exc)
        return None
