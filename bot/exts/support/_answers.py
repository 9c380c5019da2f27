"""Answers from tickets: "Mark as answer" on the message that solved a ticket.

A message command (right-click a message, Apps): in a ticket's thread its asker or
staff mark the message that solved it. The desk keeps the question and that answer,
redacted, with the message's link (:meth:`SupportDesk.mark_answer`); an open ticket
becomes solved and its post follows. The next request like it is offered "a similar
ticket was solved" beside the wiki's pages (:mod:`knowledge.intake.similar`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot import render
from bot.errors import report_failure
from bot.respond import send
from knowledge.intake.desk import IntakeError
from knowledge.reply import Reply
from knowledge.templates import Templates, load_templates

from ._helpers import is_staff, user_key

if TYPE_CHECKING:
    from bot.client import WikiBot

    from ._cog import SupportCog

__all__ = ["SolvedAnswers"]

log = logging.getLogger(__name__)


class SolvedAnswers(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        self.t: Templates = load_templates("support.yaml")
        # A context menu cannot be a cog method: made here, added to the tree at load.
        self.menu = app_commands.ContextMenu(
            name=self.t("marking.command")[:32],
            callback=self.mark_answer,
            type=discord.AppCommandType.message,
            allowed_contexts=app_commands.AppCommandContext(guild=True),
            allowed_installs=app_commands.AppInstallationType(guild=True),
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.menu.name, type=self.menu.type)

    async def mark_answer(self, interaction: discord.Interaction, message: discord.Message) -> None:
        try:
            await self._mark(interaction, message)
        except Exception as exc:
            await report_failure(interaction, exc)

    async def _say(self, interaction: discord.Interaction, text: str, kind: str = "ok") -> None:
        title = self.t("marking.title")
        embed = render.embed(Reply(kind, title, text, ephemeral=True))
        await send(interaction, embed=embed, ephemeral=True)

    async def _mark(self, interaction: discord.Interaction, message: discord.Message) -> None:
        support: SupportCog | None = self.bot.get_cog("SupportCog")  # type: ignore[assignment]
        if support is None:
            raise RuntimeError("the support extension is not loaded")
        desk = await support.desk()
        ticket = await support.in_store(desk.store.ticket_for_thread, message.channel.id)
        if ticket is None:
            await self._say(interaction, self.t("marking.not_a_ticket"), "not_found")
            return
        text = "\n".join(
            part
            for part in (message.content, *(e.description or "" for e in message.embeds))
            if part
        )
        staff = is_staff(interaction.user, support.config.staff_role_ids)
        was_open = ticket.status == "open"
        try:
            ticket = await support.in_store(
                desk.mark_answer,
                ticket.id,
                actor=user_key(interaction.user),
                staff=staff,
                answer=text,
                url=message.jump_url,
            )
        except IntakeError as exc:
            said = self.t("ticket.not_allowed") if exc.code == "not_allowed" else str(exc)
            await self._say(interaction, said, "not_found")
            return
        log.info("ticket %d: answer marked (message %d)", ticket.id, message.id)
        await interaction.response.send_message(
            self.t(
                "marking.marked", id=ticket.id, who=interaction.user.mention, link=message.jump_url
            ),
            allowed_mentions=discord.AllowedMentions.none(),
        )
        if was_open and ticket.status == "solved":
            try:
                thread = message.channel
                if isinstance(thread, discord.Thread):
                    await support.refresh_post(ticket, thread)
            except discord.HTTPException as exc:
                log.warning("ticket %d: solved, but its post did not follow: %s", ticket.id, exc)
