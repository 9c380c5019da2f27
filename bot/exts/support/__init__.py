"""/support (the intake form, deflection, forum posts) and /ticket (staff)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._answers import SolvedAnswers
from ._cog import SupportCog
from ._stale import StaleTickets

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["setup"]


async def setup(bot: WikiBot) -> None:
    await bot.add_cog(SupportCog(bot))
    await bot.add_cog(StaleTickets(bot))
    await bot.add_cog(SolvedAnswers(bot))
