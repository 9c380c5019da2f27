"""/ticket list and /ticket show: the staff's view of the tickets."""

from __future__ import annotations

import logging
from typing import Literal

import discord
from discord import app_commands

from bot import render
from bot.errors import Refused, safe_choices
from bot.respond import send
from knowledge.intake.desk import IntakeError
from knowledge.reply import Reply
from knowledge.text import escape_markdown

__all__ = ["StaffFlow"]

log = logging.getLogger(__name__)


class StaffFlow:
    """The /ticket commands of :class:`~._cog.SupportCog` (a mixin: the cog holds the state)."""

    ticket = app_commands.Group(
        name="ticket",
        description="Support tickets filed with /support (staff)",
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        allowed_installs=app_commands.AppInstallationType(guild=True),
        # Shown to members with Manage Threads; a server admin offers it to the staff
        # roles in Server Settings, Integrations (the bot still checks staff_role_ids).
        default_permissions=discord.Permissions(manage_threads=True),
    )

    # ----------------------------------------------------------------- /ticket

    async def _staff_only(self, interaction: discord.Interaction) -> None:
        if not self._staff(interaction):
            raise Refused(self.t("ticket.staff_only"))

    @ticket.command(name="list")
    @app_commands.describe(status="Only tickets in this state", family="Only this model family")
    async def ticket_list(
        self,
        interaction: discord.Interaction,
        status: Literal["open", "solved", "closed"] | None = None,
        family: str | None = None,
    ) -> None:
        """Support tickets, newest first (staff only)."""
        await self._staff_only(interaction)
        desk = await self.desk()
        if family and family.strip():  # typed, not picked: "GLM 5" finds the glm-5 tickets
            key, problem = desk.resolve_model(family)
            if key is None:
                await self._refuse(interaction, problem or self.t("ticket.list_empty"))
                return
            family = key
        tickets = await self.in_store(
            desk.store.list_tickets, status=status, family=family or None, limit=20
        )
        lines = [
            self.t(
                "ticket.list_line",
                id=t.id,
                status=desk.t(f"ticket.statuses.{t.status}"),
                family=t.family or "-",
                when=f"<t:{int(t.created_at)}:R>",
                title=discord.utils.escape_mentions(escape_markdown(t.title[:80])),
            )
            + (f" <#{t.thread_id}>" if t.thread_id else "")
            + (" · " + self.t("ticket.post_failed") if t.post_state == "failed" else "")
            for t in tickets
        ]
        await self._say(
            interaction,
            self.t("ticket.list_title"),
            "\n".join(lines) or self.t("ticket.list_empty"),
        )

    @ticket_list.autocomplete("family")
    async def family_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.family_choices(current))

    @ticket.command(name="show")
    @app_commands.describe(id="The ticket number")
    async def ticket_show(
        self, interaction: discord.Interaction, id: app_commands.Range[int, 1, 10**12]
    ) -> None:
        """One support ticket as its post shows it (staff only)."""
        await self._staff_only(interaction)
        desk = await self.desk()
        try:
            ticket = await self.in_store(desk.ticket, id)
        except IntakeError as exc:
            await self._refuse(interaction, str(exc))
            return
        post = desk.ticket_post(ticket)
        where = f"<#{ticket.thread_id}>" if ticket.thread_id else ticket.post_state
        text = f"{post.content.splitlines()[0]} · {where}"
        reply = Reply("ticket", post.reply.title, text, fields=post.reply.fields, ephemeral=True)
        await send(interaction, embed=render.embed(reply), ephemeral=True)
