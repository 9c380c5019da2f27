"""Answering an interaction exactly once, whatever already happened to it.

Discord allows one initial response per interaction (a second one is error
40060) and a deferred "thinking…" message must be completed by editing it. A
private answer cannot replace a public "thinking…" placeholder: the placeholder
is deleted and the answer sent as an ephemeral follow-up. :func:`send` knows
these rules so commands, buttons and the error handler all answer the same way.

:func:`in_time` decides between the two: work that is done within the bot's
patience (``discord.thinking_after``) is answered in the first response (one
request, no "thinking…" shown), slower work is deferred first and answered after.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import discord
from discord.utils import MISSING

from knowledge.reply import Reply
from knowledge.service import KnowledgeBase

from . import render
from .components import detached, with_delete
from .config import DEFAULT_THINKING_AFTER
from .describe import describe

__all__ = [
    "DEADLINE",
    "DEFAULT_THINKING_AFTER",
    "TOKEN_EXPIRED",
    "answered",
    "defer",
    "expired",
    "files_of",
    "in_time",
    "send",
    "send_reply",
    "update",
    "was_answered",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds Discord allows between an interaction's creation and its first response.
DEADLINE = 3.0
#: Seconds of the deadline kept for a deferral to reach Discord (and the gateway's delay).
MARGIN = 1.0

_ANSWERED = "wikibot.answered"
_DEFERRED_PRIVATE = "wikibot.deferred_private"
_EXPIRED = "wikibot.expired"

Message = discord.InteractionMessage | discord.WebhookMessage


async def defer(interaction: discord.Interaction, *, ephemeral: bool) -> None:
    """Show "thinking…" (privately if ``ephemeral``) before slow work."""
    await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    interaction.extras[_DEFERRED_PRIVATE] = ephemeral


def expired(interaction: discord.Interaction) -> bool:
    """True once Discord refused a first response as too late (10062, "Unknown
    interaction"): nothing can be shown for it any more."""
    return bool(interaction.extras.get(_EXPIRED))


async def answered(interaction: discord.Interaction, answer: Callable[[], Awaitable[Any]]) -> bool:
    """Run ``answer`` (what shows the result of work done through :func:`in_time`) and
    return True; False, with nothing shown, when Discord said the interaction expired
    (10062) before or while answering, or that its token did (50027: work that outlived
    the 15 minutes of a follow-up token). Any other failure is raised."""
    if expired(interaction):
        return False
    try:
        await answer()
    except discord.NotFound:  # answered in the first response, too late: marked expired
        if not expired(interaction):
            raise
        return False
    except discord.HTTPException as exc:
        if exc.code != TOKEN_EXPIRED:
            raise
        interaction.extras[_EXPIRED] = True  # nothing more can be sent with this token
        log.warning("%s: its token expired before the answer (50027)", describe(interaction))
        return False
    return True


#: Discord's code for a follow-up token past its 15 minutes ("Invalid Webhook Token").
TOKEN_EXPIRED = 50027


def _is_expiry(exc: BaseException) -> bool:
    return isinstance(exc, discord.NotFound) and exc.code == 10062


def _patience(interaction: discord.Interaction) -> float:
    """How long to wait for the work: the configured patience, less what the
    interaction's age has already used of Discord's deadline (the age is read from its
    id's timestamp; a clock ahead of Discord's only makes the bot defer sooner)."""
    config = getattr(interaction.client, "config", None)
    patience = float(getattr(config, "thinking_after", DEFAULT_THINKING_AFTER))
    age = (discord.utils.utcnow() - interaction.created_at).total_seconds()
    return max(0.0, min(patience, DEADLINE - MARGIN - max(0.0, age)))


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def in_time(
    interaction: discord.Interaction,
    work: Awaitable[T],
    *,
    ephemeral: bool = False,
    update: bool = False,
) -> T:
    """Run ``work`` and return its result, with the interaction acknowledged in time.

    Work done within the bot's patience returns with the interaction still open: the
    caller's :func:`send` (or :func:`update`) then answers in the first response, one
    round trip and no "thinking…" flicker. Slower work is deferred once the patience
    is used up, while it goes on: a "thinking…" message (private if ``ephemeral``), or
    for ``update`` (a button that changes its own message) a silent acknowledgement;
    the caller's answer then replaces it.

    When Discord refuses the deferral as too late (10062) the work still finishes
    (a draft it saves is kept) and its result is returned; :func:`expired` is then
    true and :func:`send` and :func:`update` do nothing. Any other failure of the
    deferral is raised at once; the work still goes on to its end.
    """
    task = asyncio.ensure_future(work)
    try:
        wait = _patience(interaction)
        if wait > 0:
            await asyncio.wait((task,), timeout=wait)
        if task.done():
            return task.result()
        if update:
            await interaction.response.defer()
        else:
            await defer(interaction, ephemeral=ephemeral)
    except discord.NotFound as exc:
        if not _is_expiry(exc):
            task.add_done_callback(_retrieved)
            raise
        interaction.extras[_EXPIRED] = True
        log.warning("%s: too late to acknowledge (10062); its work goes on", describe(interaction))
    except BaseException:
        task.add_done_callback(_retrieved)
        raise
    return await task


def was_answered(interaction: discord.Interaction) -> bool:
    """True once :func:`send` delivered an answer for this interaction."""
    return bool(interaction.extras.get(_ANSWERED))


def files_of(reply: Reply, *, fitted: bool = False) -> list[discord.File]:
    """A reply's attachments (launch commands sent whole) as Discord files. ``fitted``:
    ``reply`` is already :meth:`Reply.fitted` (within the attachment limits)."""
    files = (reply if fitted else reply.fitted()).files
    return [discord.File(io.BytesIO(f.text.encode("utf-8")), filename=f.name) for f in files]


async def send(
    interaction: discord.Interaction,
    *,
    embed: discord.Embed,
    ephemeral: bool,
    view: discord.ui.View = MISSING,
    files: list[discord.File] | None = None,
    content: str | None = None,
    allowed_mentions: discord.AllowedMentions = MISSING,
) -> Message | None:
    """Deliver ``embed`` as the answer to ``interaction`` and return the message if known.

    Not yet acknowledged: the initial response. Deferred and not yet answered: the
    "thinking…" message is edited (or, when the answer must be private but the
    placeholder is public, deleted and replaced by an ephemeral follow-up).
    Otherwise (already answered, or a button that deferred an update): a follow-up.
    Nothing is sent for an interaction Discord said had :func:`expired`; a first
    response refused as too late marks it so, and raises.
    """
    if expired(interaction):
        return None
    if view is not MISSING:
        view = detached(view)
    response = interaction.response
    if not response.is_done():
        try:
            callback = await response.send_message(
                content,
                embed=embed,
                ephemeral=ephemeral,
                view=view,
                files=files or MISSING,
                allowed_mentions=allowed_mentions,
            )
        except discord.NotFound as exc:
            if _is_expiry(exc):
                interaction.extras[_EXPIRED] = True
            raise
        interaction.extras[_ANSWERED] = True
        resource = callback.resource
        return resource if isinstance(resource, discord.InteractionMessage) else None
    thinking = response.type is discord.InteractionResponseType.deferred_channel_message
    if thinking and not was_answered(interaction):
        placeholder_private = interaction.extras.get(_DEFERRED_PRIVATE, False)
        if placeholder_private or not ephemeral:
            # content=None: a progress line shown meanwhile must not stay above the answer.
            message = await interaction.edit_original_response(
                content=content,
                embed=embed,
                view=view,
                attachments=files or MISSING,
                allowed_mentions=allowed_mentions,
            )
            interaction.extras[_ANSWERED] = True
            return message
        await interaction.delete_original_response()
    message = await interaction.followup.send(
        content or MISSING,
        embed=embed,
        ephemeral=ephemeral,
        view=view,
        wait=True,
        files=files or MISSING,
        allowed_mentions=allowed_mentions,
    )
    interaction.extras[_ANSWERED] = True
    return message


async def update(
    interaction: discord.Interaction,
    *,
    embed: discord.Embed = MISSING,
    view: discord.ui.View | None,
    content: str | None = MISSING,
) -> None:
    """Replace the message whose button was pressed: in the first response while the
    interaction is open, else (after :func:`in_time` deferred) by editing it. What is
    not given (``embed``, ``content``) stays as the message had it."""
    if expired(interaction):
        return
    if view is not None:
        view = detached(view)
    if interaction.response.is_done():
        await interaction.edit_original_response(content=content, embed=embed, view=view)
        return
    try:
        await interaction.response.edit_message(content=content, embed=embed, view=view)
    except discord.NotFound as exc:
        if _is_expiry(exc):
            interaction.extras[_EXPIRED] = True
        raise


async def send_reply(
    interaction: discord.Interaction,
    reply: Reply,
    kb: KnowledgeBase,
    *,
    private: bool = False,
    view: discord.ui.View | None = None,
    for_user: discord.abc.User | None = None,
    deletable: bool = False,
) -> Message | None:
    """Send a knowledge reply as an embed: ephemeral if asked or if it is an error.

    A public answer may be pointed at ``for_user``: they are mentioned above it, and
    they alone may be pinged. ``deletable`` adds the invoker's Delete button to a
    public answer.
    """
    ephemeral = private or reply.ephemeral or not reply.ok
    fitted = reply.fitted()  # once, for the embed and the files
    embed = render.embed(fitted, url=render.page_url(reply, kb), fitted=True)
    t = interaction.client.t  # type: ignore[attr-defined]
    content = None
    mentions = MISSING
    if for_user is not None and not ephemeral:
        content = t("answers.for_user", mention=for_user.mention)
        mentions = discord.AllowedMentions(
            everyone=False, roles=False, users=[for_user], replied_user=False
        )
    if deletable and not ephemeral:
        view = with_delete(view, interaction.user.id, t("answers.delete"))
    return await send(
        interaction,
        embed=embed,
        ephemeral=ephemeral,
        view=view or MISSING,
        files=files_of(fitted, fitted=True),
        content=content,
        allowed_mentions=mentions,
    )
