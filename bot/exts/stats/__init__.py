"""The bot's figures: commands counted, the first helper reply in a ticket noticed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._cog import StatsCog

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["setup"]


async def setup(bot: WikiBot) -> None:
    await bot.add_cog(StatsCog(bot))
