"""/ask: a short answer in words from the community's model server, citing the wiki.

Loaded only when ``llm.enabled`` is true (see ``WikiBot.setup_hook``): with it off the
bot has no /ask and behaves as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._cog import AskCog

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["setup"]


async def setup(bot: WikiBot) -> None:
    await bot.add_cog(AskCog(bot))
