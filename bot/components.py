"""Buttons shared by several answers: the invoker's "Delete" under a public answer.

A :class:`discord.ui.DynamicItem` (``wikibot:del:<user id>``), so it keeps working
on any old message after a restart. Only the person who asked may press it; the
answer is deleted through the interaction's webhook, which needs no channel
permission (also where the app is only user-installed).

:func:`detached` keeps discord.py from holding a copy of every view the bot sends
when nothing needs it: the bot's buttons are dynamic items, found again from their
``custom_id``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, TypeVar

import discord

from . import render
from .describe import describe

__all__ = ["DeleteButton", "detached", "with_delete"]

log = logging.getLogger(__name__)

V = TypeVar("V", bound=discord.ui.view.BaseView)


def detached(view: V) -> V:
    """``view``, stopped before it is sent when none of its items needs it kept.

    discord.py stores every view it sends that is not finished: one entry per message,
    kept for ever when the view has no timeout (and a view with a button that is not a
    dynamic item is kept whole), and for an ephemeral message a 15-minute timeout task
    besides; each answer pays for it on the event loop and in memory. A view whose
    buttons and selects are all dynamic items (dispatched from their ``custom_id`` by
    the classes the bot registered) or cannot be used (disabled) needs none of that:
    it is stopped, and discord.py sends its components without keeping it. A view with
    a live callback of its own is returned untouched. Modals work the same way:
    their submits are read by the cogs from the modal's ``custom_id``.
    """
    for item in view.walk_children():
        if isinstance(item, discord.ui.DynamicItem) or getattr(item, "disabled", False):
            continue
        if item.is_dispatchable() and not view.__discord_ui_modal__:
            return view
    view.stop()
    return view


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
        except Exception:
            # Said here, not by bot.errors (errors -> respond -> components: no circle).
            log.exception("%s failed", describe(interaction))
            with contextlib.suppress(discord.HTTPException):
                t = interaction.client.t
                embed = render.message_embed(t("errors.title"), t("errors.generic"), kind="error")
                if interaction.response.is_done():
                    await interaction.followup.send(embed=embed, ephemeral=True)
                else:
                    await interaction.response.send_message(embed=embed, ephemeral=True)


def with_delete(view: discord.ui.View | None, owner_id: int, label: str) -> discord.ui.View:
    """``view`` (or a new persistent one) with the invoker's Delete button added."""
    view = view or discord.ui.View(timeout=None)
    view.add_item(DeleteButton(owner_id, label))
    return view
