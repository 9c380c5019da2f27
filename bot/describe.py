"""How an interaction is named in log lines: a leaf module every other one may import."""

from __future__ import annotations

import discord

__all__ = ["describe"]


def describe(interaction: discord.Interaction) -> str:
    """``/wiki reindex by user 42 in guild 7`` for log lines."""
    command = interaction.command
    if command is not None:
        what = f"/{command.qualified_name}"
    else:
        custom_id = (interaction.data or {}).get("custom_id")
        what = f"component {custom_id!r}" if custom_id else f"interaction type {interaction.type}"
    where = f"guild {interaction.guild_id}" if interaction.guild_id else "a DM"
    return f"{what} by user {interaction.user.id} in {where} (channel {interaction.channel_id})"
