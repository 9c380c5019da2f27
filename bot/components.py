"""Buttons shared by several answers: the invoker's "Delete" under a public answer.

A :class:`discord.ui.DynamicItem` (``wikibot:del:<user id>``), so it keeps working
on any old message after a restart. Only the person who asked may press it; the
answer is deleted through the interaction's webhook, which needs no channel
permission (also where the app is only user-installed).
"""

from __future__ import annotations

import logging
from typing import Any

import discord

from . import render

__all__ = ["DeleteButton", "with_delete"]

log = logging.getLogger(__name__)


class DeleteButton(
    discord.ui.DynamicItem[discord.ui.Button], template=r"wikibot:del:(?P<owner>\d{1,20})"
):
    def __init__(self, owner_id: int, label: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.secondary,
                custom_id=f"wikibot:del:{owner_id}",
            )
        )
        self.owner_id = owner_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: Any, /
    ) -> DeleteButton:
        return cls(int(match["owner"]), item.label or interaction.client.t("answers.delete"))

    async def callback(self, interaction: discord.Interaction) -> None:
        from .errors import report_failure  # errors -> respond -> components: import late

        try:
            t = interaction.client.t
            if interaction.user.id != self.owner_id:
                embed = render.message_embed(
                    t("errors.refused_title"), t("answers.delete_not_yours"), kind="not_found"
                )
                await interaction.response.send_message(embed=embed, ephemeral=True)
                return
            await interaction.response.defer()  # then @original is the answer itself
            await interaction.delete_original_response()
            log.info("answer %s deleted by its invoker", getattr(interaction.message, "id", "?"))
        except Exception as exc:
            await report_failure(interaction, exc)


def with_delete(view: discord.ui.View | None, owner_id: int, label: str) -> discord.ui.View:
    """``view`` (or a new persistent one) with the invoker's Delete button added."""
    view = view or discord.ui.View(timeout=None)
    view.add_item(DeleteButton(owner_id, label))
    return view
