"""One place that turns failures into answers: the command tree's ``on_error``.

Expected failures (a cooldown, a refused admin command) are
:class:`~discord.app_commands.AppCommandError` subclasses answered with their own
friendly message. Anything else is a bug: it is logged with the traceback, the
command, the user and the guild, and the user gets a short "something went
wrong", ephemeral. Whether the interaction was still open, deferred or already
answered, it is answered (see :func:`bot.respond.send`), never left hanging.
Buttons and dynamic items use :func:`report_failure` for the same behaviour.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import discord
from discord import app_commands

from knowledge.templates import Templates, load_templates

from . import render
from .describe import describe
from .respond import send

__all__ = [
    "STALE_COMMAND_ERRORS",
    "Refused",
    "WikiTree",
    "count_command",
    "describe",
    "report_failure",
    "safe_choices",
]

#: What discord.py raises when Discord's copy of a command differs from the code's: a
#: deploy without a sync, or old global commands left over. Not a bug: a sync fixes it.
STALE_COMMAND_ERRORS = (
    app_commands.CommandNotFound,
    app_commands.CommandSignatureMismatch,
    app_commands.TransformerError,
)

log = logging.getLogger(__name__)


class Refused(app_commands.CheckFailure):
    """A command the user may not run here; ``text`` says why, kindly."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _outcome(error: app_commands.AppCommandError) -> str:
    """The ``outcome`` label of a command that ended in ``error`` (a small fixed set)."""
    if isinstance(error, app_commands.CommandOnCooldown):
        return "cooldown"
    if isinstance(error, STALE_COMMAND_ERRORS):
        return "stale"
    if isinstance(error, app_commands.CheckFailure):  # Refused, guild only, other checks
        return "refused"
    return "error"


def count_command(interaction: discord.Interaction, outcome: str) -> None:
    """Count a slash or context-menu command and its time since Discord created it."""
    metrics = getattr(interaction.client, "metrics", None)
    command = interaction.command
    if metrics is None or command is None:
        return
    seconds = (discord.utils.utcnow() - interaction.created_at).total_seconds()
    metrics.command_done(command.qualified_name, outcome, seconds)


def _templates(interaction: discord.Interaction) -> Templates:
    return getattr(interaction.client, "t", None) or load_templates("bot.yaml")


async def _answer(interaction: discord.Interaction, title: str, text: str, kind: str) -> None:
    try:
        await send(interaction, embed=render.message_embed(title, text, kind=kind), ephemeral=True)
    except Exception as exc:  # the last resort must not raise: log and give up
        # The token may be dead (over 3 s before the first response) or the connection gone.
        log.warning("could not answer %s: %r", describe(interaction), exc)


async def report_failure(interaction: discord.Interaction, error: BaseException) -> None:
    """Log an unexpected failure with context and tell the user, ephemerally."""
    original = getattr(error, "original", None) or error
    log.error("%s failed", describe(interaction), exc_info=original)
    metrics = getattr(interaction.client, "metrics", None)
    if metrics is not None:
        metrics.error(type(original).__name__)
    t = _templates(interaction)
    await _answer(interaction, t("errors.title"), t("errors.generic"), "error")


def safe_choices(
    interaction: discord.Interaction, produce: Callable[[], list[tuple[str, str]]]
) -> list[app_commands.Choice[str]]:
    """Autocomplete choices from ``(name, value)`` pairs; on a failure, log it and offer
    none (discord.py would only log it, and the user would see "Loading options failed")."""
    try:
        pairs = produce()
    except Exception:
        log.exception("autocomplete failed: %s", describe(interaction))
        return []
    return [app_commands.Choice(name=name, value=value) for name, value in pairs]


class WikiTree(app_commands.CommandTree):
    """The command tree with the bot's single error handler.

    Its ``sync`` sends what discord.py's does minus ``dm_permission``, which Discord
    deprecated for ``contexts`` (every command here declares its contexts).
    """

    def payload(self, *, guild: discord.abc.Snowflake | None = None) -> list[dict[str, Any]]:
        """The commands as registered with Discord (for a sync, or to compare with one)."""
        payload = [command.to_dict(self) for command in self._get_all_commands(guild=guild)]
        for command in payload:
            # A command only marked guild_only still means it: say so with contexts.
            if command.pop("dm_permission", None) is False and command.get("contexts") is None:
                command["contexts"] = [0]
        return payload

    async def sync(
        self, *, guild: discord.abc.Snowflake | None = None
    ) -> list[app_commands.AppCommand]:
        application_id = self.client.application_id
        if application_id is None:
            raise app_commands.MissingApplicationID
        payload = self.payload(guild=guild)
        try:
            if guild is None:
                data = await self._http.bulk_upsert_global_commands(application_id, payload)
            else:
                data = await self._http.bulk_upsert_guild_commands(
                    application_id, guild.id, payload
                )
        except discord.HTTPException as exc:
            if exc.status == 400 and exc.code == 50035:
                commands = self._get_all_commands(guild=guild)
                raise app_commands.CommandSyncFailure(exc, commands) from exc
            raise
        return [app_commands.AppCommand(data=d, state=self._state) for d in data]

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        t = _templates(interaction)
        count_command(interaction, _outcome(error))
        if isinstance(error, app_commands.CommandOnCooldown):
            name = interaction.command.qualified_name if interaction.command else "command"
            log.info("cooldown: %s, %.1fs left", describe(interaction), error.retry_after)
            text = t("errors.cooldown", command=name, seconds=math.ceil(error.retry_after))
            await _answer(interaction, t("errors.cooldown_title"), text, "unavailable")
        elif isinstance(error, Refused):
            log.info("refused: %s", describe(interaction))
            await _answer(interaction, t("errors.refused_title"), error.text, "not_found")
        elif isinstance(error, STALE_COMMAND_ERRORS):
            # Not a bug in the bot: Discord offered a command the code no longer has as such.
            log.warning("out-of-date commands: %s: %s", describe(interaction), error)
            await _answer(interaction, t("errors.stale_title"), t("errors.stale"), "unavailable")
        elif isinstance(error, app_commands.NoPrivateMessage):
            await _answer(
                interaction, t("errors.refused_title"), t("errors.guild_only"), "not_found"
            )
        elif isinstance(error, app_commands.CheckFailure):
            log.info("check failed: %s: %s", describe(interaction), error)
            await _answer(
                interaction, t("errors.refused_title"), t("errors.check_failed"), "not_found"
            )
        else:
            await report_failure(interaction, error)
