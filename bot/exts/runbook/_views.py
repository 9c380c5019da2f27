"""Buttons under a /runbook answer that keep working after a restart.

The family key travels in the ``custom_id`` (``wikibot:rb:launch:<family-key>``),
so :class:`discord.ui.DynamicItem` rebuilds the button from any old message and
no view has to be kept in memory. Each press answers ephemerally: the command
block or the version map is for the one who asked for it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot import render
from bot.errors import report_failure
from bot.respond import send_reply

if TYPE_CHECKING:
    from knowledge.reply import Reply
    from knowledge.service import KnowledgeBase

__all__ = ["LaunchButton", "OlderVersionsButton", "runbook_view"]

log = logging.getLogger(__name__)

# Family keys are lower-case words joined by "-" or "." (knowledge.wiki.catalogue).
_FAMILY = r"(?P<family>[a-z0-9][a-z0-9.\-]{0,79})"


class _FamilyButton(discord.ui.DynamicItem[discord.ui.Button], template=r"wikibot:rb:_:_"):
    """A button that answers from the knowledge base for the family in its custom_id."""

    action: str
    label_key: str
    style = discord.ButtonStyle.secondary

    def __init__(self, family: str, label: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=label, style=self.style, custom_id=f"wikibot:rb:{self.action}:{family}"
            )
        )
        self.family = family

    @classmethod
    def fits(cls, family: str) -> bool:
        return (
            cls.__discord_ui_compiled_template__.fullmatch(f"wikibot:rb:{cls.action}:{family}")
            is not None
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: Any, /
    ) -> _FamilyButton:
        return cls(match["family"], item.label or interaction.client.t(cls.label_key))

    def answer(self, kb: KnowledgeBase) -> Reply:
        raise NotImplementedError

    async def callback(self, interaction: discord.Interaction) -> None:
        # discord.py only logs an exception raised by a dynamic item: answer it here.
        try:
            kb = interaction.client.kb
            reply = self.answer(kb)  # catalogue lookups in memory, no index search
            await send_reply(interaction, reply, kb, private=True)
        except Exception as exc:
            await report_failure(interaction, exc)


class LaunchButton(_FamilyButton, template=rf"wikibot:rb:launch:{_FAMILY}"):
    action = "launch"
    label_key = "runbook.launch_button"
    style = discord.ButtonStyle.primary

    def answer(self, kb: KnowledgeBase) -> Reply:
        return kb.launch(self.family)


class OlderVersionsButton(_FamilyButton, template=rf"wikibot:rb:older:{_FAMILY}"):
    action = "older"
    label_key = "runbook.older_button"

    def answer(self, kb: KnowledgeBase) -> Reply:
        return kb.versions(self.family)


def runbook_view(reply: Reply, kb: KnowledgeBase, t: Any) -> discord.ui.View | None:
    """The buttons for a runbook reply, or None when it has nothing to offer."""
    view = discord.ui.View(timeout=None)
    family = reply.meta.get("family")
    if family and reply.meta.get("has_launch") and LaunchButton.fits(family):
        view.add_item(LaunchButton(family, t("runbook.launch_button")))
    if family and reply.meta.get("older") and OlderVersionsButton.fits(family):
        view.add_item(OlderVersionsButton(family, t("runbook.older_button")))
    url = render.page_url(reply, kb)
    if url:
        view.add_item(discord.ui.Button(label=t("runbook.open_button"), url=url))
    return view if view.children else None
