"""A pointer for the server owner when the bot joins a server without its commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._cog import WelcomeCog

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["setup"]


async def setup(bot: WikiBot) -> None:
    await bot.add_cog(WelcomeCog(bot))
