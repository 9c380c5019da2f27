"""After a global sync: offer to remove the per-server copies of the commands.

Going global leaves the per-server copies in place, and Discord then lists
every command twice there. A short-lived view, for the one who synced only.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot import render
from bot.errors import describe, report_failure
from bot.respond import in_time, update

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["ClearCopiesView"]

log = logging.getLogger(__name__)

#: Seconds the "Remove the server copies" button stays usable.
CLEAR_TIMEOUT = 300.0


class ClearCopiesView(discord.ui.View):
    def __init__(self, bot: WikiBot, owner_id: int, guild_ids: list[int]) -> None:
        super().__init__(timeout=CLEAR_TIMEOUT)
        self.bot = bot
        self.owner_id = owner_id
        self.guild_ids = guild_ids
        self.message: discord.InteractionMessage | discord.WebhookMessage | None = None
        self.clear.label = bot.t("admin.copies_button", count=len(guild_ids))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if interaction.user.id == self.owner_id:
            return True
        t = self.bot.t
        embed = render.message_embed(
            t("errors.refused_title"), t("admin.copies_not_yours"), kind="not_found"
        )
        await interaction.response.send_message(embed=embed, ephemeral=True)
        return False

    @discord.ui.button(style=discord.ButtonStyle.danger, custom_id="wikibot:admin:clear-copies")
    async def clear(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        clearing = self.bot.clear_guild_copies(self.guild_ids)  # requests to Discord: quick
        cleared = await in_time(interaction, clearing, update=True)
        log.info("cleared the guild copies of %s: %s", cleared, describe(interaction))
        button.disabled = True
        self.stop()
        t = self.bot.t
        embed = render.message_embed(
            t("admin.copies_cleared_title"),
            t("admin.copies_cleared", count=len(cleared), total=len(self.guild_ids)),
            kind="ok",
        )
        await update(interaction, embed=embed, view=self)

    async def on_timeout(self) -> None:
        for item in self.children:
            if isinstance(item, discord.ui.Button):
                item.disabled = True
        if self.message is not None:
            try:
                await self.message.edit(view=self)
            except discord.HTTPException as exc:
                log.info("could not disable the clear-copies button: %s", exc)

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        await report_failure(interaction, error)
