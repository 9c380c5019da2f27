"""The periodic wiki refresh and the heartbeat for ``wikibot health`` (no commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._cog import UpkeepCog

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["setup"]


async def setup(bot: WikiBot) -> None:
    await bot.add_cog(UpkeepCog(bot))
