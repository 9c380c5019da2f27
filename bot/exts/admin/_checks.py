"""Who may run the admin commands, checked in code on every call.

Discord's default permissions can be changed by any server admin in the
integration settings; this check is what actually protects a reindex.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import discord
from discord import app_commands

from bot.errors import Refused

__all__ = ["admin_only"]

T = TypeVar("T")


def admin_only(action_key: str) -> Callable[[T], T]:
    """Refuse (kindly, ephemerally) anyone without Manage Server or a configured admin role."""

    async def predicate(interaction: discord.Interaction) -> bool:
        bot: Any = interaction.client
        if bot.is_admin(interaction):
            return True
        raise Refused(bot.t("errors.not_admin", action=bot.t(action_key)))

    return app_commands.check(predicate)
