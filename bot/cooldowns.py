"""Per-user cooldowns, one set of buckets per bot (not per process).

``app_commands.checks.dynamic_cooldown`` keeps its buckets in the decorator's
closure, shared by every client in the process and never reset; here the bot
owns them (``WikiBot.cooldowns``), so two bots, or two tests, never share a
budget. Each command has its own bucket per user. Exceeding it raises
:class:`~discord.app_commands.CommandOnCooldown`, answered by the tree's
``on_error`` with a friendly message.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import discord
from discord import app_commands

__all__ = ["Cooldowns", "cooldown"]

T = TypeVar("T")

#: Forget idle (full again) buckets once there are more than this many.
_PRUNE_ABOVE = 512


class Cooldowns:
    """``rate`` uses of each command per ``per`` seconds, for each user."""

    def __init__(self, rate: int, per: float, *, clock: Callable[[], float] = time.time):
        self.rate = rate
        self.per = per
        self._clock = clock
        self._buckets: dict[tuple[str, int], app_commands.Cooldown] = {}

    def hit(self, command: str, user_id: int) -> app_commands.Cooldown | None:
        """Count one use; return the exhausted bucket if the user must wait."""
        now = self._clock()
        if len(self._buckets) > _PRUNE_ABOVE:
            idle = [k for k, b in self._buckets.items() if b.get_tokens(now) >= b.rate]
            for key in idle:
                del self._buckets[key]
        bucket = self._buckets.get((command, user_id))
        if bucket is None:
            bucket = self._buckets[(command, user_id)] = app_commands.Cooldown(self.rate, self.per)
        if bucket.update_rate_limit(now) is not None:
            return bucket
        return None

    def retry_after(self, bucket: app_commands.Cooldown) -> float:
        return bucket.get_retry_after(self._clock())


def cooldown() -> Callable[[T], T]:
    """Apply the bot's per-user cooldown to an app command (or context menu callback)."""

    async def predicate(interaction: discord.Interaction) -> bool:
        cooldowns: Cooldowns | None = getattr(interaction.client, "cooldowns", None)
        command: Any = interaction.command
        if cooldowns is None or command is None:
            return True
        bucket = cooldowns.hit(command.qualified_name, interaction.user.id)
        if bucket is None:
            return True
        raise app_commands.CommandOnCooldown(bucket, cooldowns.retry_after(bucket))

    return app_commands.check(predicate)
