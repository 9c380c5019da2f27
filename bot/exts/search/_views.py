"""The /search pager: Previous / Next, for the person who searched, until it times out.

A short-lived view: an explicit timeout (``search.pager_timeout``), an
``interaction_check`` that politely refuses anyone but the invoker, and an
``on_timeout`` that disables the buttons by editing the message.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot import render
from bot.errors import describe, report_failure

if TYPE_CHECKING:
    from bot.client import WikiBot
    from knowledge.reply import Reply

__all__ = ["SearchPager"]

log = logging.getLogger(__name__)


class SearchPager(discord.ui.View):
    """Pages of one search; ``reply`` is the page shown now."""

    def __init__(self, bot: WikiBot, owner_id: int, reply: Reply, *, timeout: float) -> None:
        super().__init__(timeout=timeout)
        self.bot = bot
        self.owner_id = owner_id
        self.query: str = reply.meta["query"]
        self.category: str | None = reply.meta.get("category")
        self.message: discord.InteractionMessage | discord.WebhookMessage | None = None
        self.previous.label = bot.t("search.previous")
        self.next.label = bot.t("search.next")
        self._show(reply)

    def _show(self, reply: Reply) -> None:
        self.page = int(reply.meta.get("page", 1))
        self.pages = int(reply.meta.get("pages", 1))
        self.previous.disabled = self.page <= 1
        self.next.disabled = self.page >= self.pages
        self.counter.label = self.bot.t("search.page", page=self.page, pages=self.pages)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if interaction.user.id == self.owner_id:
            return True
        await interaction.response.send_message(
            embed=render.message_embed(
                self.bot.t("errors.refused_title"), self.bot.t("search.not_yours"), kind="not_found"
            ),
            ephemeral=True,
        )
        return False

    async def _turn(self, interaction: discord.Interaction, page: int) -> None:
        await interaction.response.defer()  # the search runs in a thread: acknowledge first
        kb = self.bot.kb
        reply = await self.bot.in_thread(kb.search, self.query, category=self.category, page=page)
        if reply.ok:
            self._show(reply)
        else:  # the wiki changed under us (reindex) and this search has no results any more
            self._disable()
            self.stop()
        await interaction.edit_original_response(
            embed=render.embed(reply, url=render.page_url(reply, kb)), view=self
        )

    @discord.ui.button(style=discord.ButtonStyle.secondary, label="<")
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._turn(interaction, self.page - 1)

    @discord.ui.button(style=discord.ButtonStyle.secondary, label="-", disabled=True)
    async def counter(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.defer()  # a disabled label: Discord never sends a press

    @discord.ui.button(style=discord.ButtonStyle.primary, label=">")
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._turn(interaction, self.page + 1)

    def _disable(self) -> None:
        for item in self.children:
            if isinstance(item, discord.ui.Button):
                item.disabled = True

    async def on_timeout(self) -> None:
        self._disable()
        if self.message is None:
            return
        try:
            await self.message.edit(view=self)
        except discord.HTTPException as exc:  # deleted meanwhile, or the token expired
            log.info("could not disable the pager of message %s: %s", self.message.id, exc)

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        log.debug("pager item %r failed for %s", item, describe(interaction))
        await report_failure(interaction, error)
