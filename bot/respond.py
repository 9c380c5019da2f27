"""Answering an interaction exactly once, whatever already happened to it.

Discord allows one initial response per interaction (a second one is error
40060) and a deferred "thinking…" message must be completed by editing it. A
private answer cannot replace a public "thinking…" placeholder: the placeholder
is deleted and the answer sent as an ephemeral follow-up. :func:`send` knows
these rules so commands, buttons and the error handler all answer the same way.
"""

from __future__ import annotations

import io
import logging

import discord
from discord.utils import MISSING

from knowledge.reply import Reply
from knowledge.service import KnowledgeBase

from . import render
from .components import with_delete

__all__ = ["defer", "files_of", "send", "send_reply", "was_answered"]

log = logging.getLogger(__name__)

_ANSWERED = "wikibot.answered"
_DEFERRED_PRIVATE = "wikibot.deferred_private"

Message = discord.InteractionMessage | discord.WebhookMessage


async def defer(interaction: discord.Interaction, *, ephemeral: bool) -> None:
    """Show "thinking…" (privately if ``ephemeral``) before slow work."""
    await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    interaction.extras[_DEFERRED_PRIVATE] = ephemeral


def was_answered(interaction: discord.Interaction) -> bool:
    """True once :func:`send` delivered an answer for this interaction."""
    return bool(interaction.extras.get(_ANSWERED))


def files_of(reply: Reply) -> list[discord.File]:
    """A reply's attachments (launch commands sent whole) as Discord files."""
    return [
        discord.File(io.BytesIO(f.text.encode("utf-8")), filename=f.name)
        for f in reply.fitted().files
    ]


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
    """
    response = interaction.response
    if not response.is_done():
        callback = await response.send_message(
            content,
            embed=embed,
            ephemeral=ephemeral,
            view=view,
            files=files or MISSING,
            allowed_mentions=allowed_mentions,
        )
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
    embed = render.embed(reply, url=render.page_url(reply, kb))
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
        files=files_of(reply),
        content=content,
        allowed_mentions=mentions,
    )
