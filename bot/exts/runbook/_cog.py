"""/runbook: the current runbook of a model family, with buttons for more."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cooldowns import cooldown
from bot.errors import safe_choices
from bot.respond import send_reply

from ._views import LaunchButton, OlderVersionsButton, runbook_view

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["RunbookCog"]

log = logging.getLogger(__name__)


class RunbookCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        # Persistent buttons: any /runbook message, however old, dispatches to these.
        self.bot.add_dynamic_items(LaunchButton, OlderVersionsButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(LaunchButton, OlderVersionsButton)

    @app_commands.command(name="runbook")
    @app_commands.describe(
        model="A model family or alias, e.g. GLM-5 or DeepSeek (pick from the list)",
        private="Show the answer only to you (default: everyone in the channel sees it)",
        for_="Point the answer at someone in the channel (only they are mentioned)",
    )
    @app_commands.rename(for_="for")
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.allowed_installs(guilds=True, users=True)
    @cooldown()
    async def runbook(
        self,
        interaction: discord.Interaction,
        model: str,
        private: bool = False,
        for_: discord.User | None = None,
    ) -> None:
        """Current runbook of a model family: Docker image, launch command and older versions.

        The family is matched from the wiki's front page; the catalogue is in memory,
        so the answer is immediate (no defer needed).
        """
        kb = self.bot.kb
        reply = kb.runbook(model)
        view = runbook_view(reply, kb, self.bot.t) if reply.ok else None
        await send_reply(
            interaction, reply, kb, private=private, view=view, for_user=for_, deletable=True
        )

    @runbook.autocomplete("model")
    async def model_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.family_choices(current))
