"""/search with a pager only its invoker may turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._cog import SearchCog

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["setup"]


async def setup(bot: WikiBot) -> None:
    await bot.add_cog(SearchCog(bot))
