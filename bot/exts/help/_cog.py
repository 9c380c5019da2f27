"""/help: what the bot can do, in two short paragraphs."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.respond import send_reply

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["HelpCog", "mention_commands"]


class HelpCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    @app_commands.command(name="help")
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.allowed_installs(guilds=True, users=True)
    @cooldown()
    async def help(self, interaction: discord.Interaction) -> None:
        """How to use the wiki bot: its commands and the message menu, in two short paragraphs.

        Shown only to the asker: the channel does not need to read it too.
        """
        ids = dict(await self.bot.registered_commands(None))
        if interaction.guild_id is not None:
            ids.update(await self.bot.registered_commands(interaction.guild_id))
        reply = self.bot.kb.help()
        text = reply.text
        if self.bot.get_cog("AskCog") is not None:  # /ask exists only with ``llm`` on
            text = f"{text.rstrip()}\n{self.bot.kb.t('help.ask')}"
        reply = dataclasses.replace(reply, text=mention_commands(text, ids))
        await send_reply(interaction, reply, self.bot.kb, private=True)


#: A command written as inline code: `/name` or `/name <args>`.
_COMMAND_CODE = re.compile(r"`/([-_\w]{1,32})((?: [^`\n]*)?)`")


def mention_commands(text: str, ids: dict[str, int]) -> str:
    """Turn `/name <args>` into Discord's clickable </name:id> (arguments stay code);
    commands Discord has no id for stay as they were."""

    def swap(match: re.Match[str]) -> str:
        name, rest = match[1], match[2].strip()
        command_id = ids.get(name)
        if command_id is None:
            return match[0]
        return f"</{name}:{command_id}>" + (f" `{rest}`" if rest else "")

    return _COMMAND_CODE.sub(swap, text)
