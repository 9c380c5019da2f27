"""A ticket's life on its post: Solved / Close / Reopen / Claim / Release, the post's tags
and archive state, tags staff change in Discord's UI, the asker's feedback."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord.ext import commands

from bot.components import detached
from knowledge.intake import earlier
from knowledge.intake.desk import IntakeError
from knowledge.intake.records import Ticket

from ._helpers import (
    WAITING_TAGS,
    failure_reason,
    is_staff,
    message_seen,
    missing_permissions,
    tags_for,
    user_id_of,
    user_key,
)
from ._views import feedback_view, ticket_view

__all__ = ["LifecycleFlow"]

log = logging.getLogger(__name__)


class LifecycleFlow:
    """The lifecycle of :class:`~._cog.SupportCog` (a mixin: the cog holds the state)."""

    # ----------------------------------------------------------------- lifecycle

    def _staff(self, interaction: discord.Interaction) -> bool:
        return is_staff(interaction.user, self.config.staff_role_ids)

    async def on_ticket_button(
        self, interaction: discord.Interaction, action: str, ticket_id: int
    ) -> None:
        desk = await self.desk()
        actor, staff = user_key(interaction.user), self._staff(interaction)
        try:
            if action in ("claim", "release"):
                ticket = await self.in_store(
                    desk.claim, ticket_id, actor=actor, staff=staff, release=action == "release"
                )
            else:
                status = {"solved": "solved", "close": "closed", "reopen": "open"}[action]
                ticket = await self.in_store(
                    desk.set_status, ticket_id, status, actor=actor, staff=staff
                )
        except IntakeError as exc:
            # Claim and Release are staff's alone: the asker is told so, not that "the
            # person who asked" may press them (the desk's own sentence says it).
            lifecycle = action not in ("claim", "release")
            text = (
                self.t("ticket.not_allowed")
                if exc.code == "not_allowed" and lifecycle
                else str(exc)
            )
            await self._refuse(interaction, text)
            return
        view = ticket_view(
            ticket.id, ticket.status, self.t, claim=self.config.claim, helper=ticket.helper
        )
        await interaction.response.edit_message(view=detached(view))
        shown = desk.t(f"ticket.statuses.{ticket.status}")
        said = (
            self.t(f"ticket.{action}_done", who=interaction.user.mention)
            if action in ("claim", "release")
            else self.t("ticket.changed", status=shown, who=interaction.user.mention)
        )
        await interaction.followup.send(
            said + self._feedback_question(ticket),
            view=self._feedback_view(ticket),
            allowed_mentions=discord.AllowedMentions.none(),
        )
        if await self._follow_status(ticket, interaction.channel) == "forbidden":
            channel = interaction.channel
            private = getattr(channel, "type", None) is discord.ChannelType.private_thread
            names = await self._missing_names(("manage_threads",), private=private)
            key = "ticket.not_updated_private" if private else "ticket.not_updated"
            await interaction.followup.send(
                self.t(key, status=shown, permissions=names), ephemeral=True
            )

    async def _follow_status(self, ticket: Ticket, channel: Any, *, lock: bool = True) -> str:
        """Tags and archive state of the post follow the ticket's status; returns ""
        or why they could not (a key under ``reasons.``). ``lock=False``: a closed post
        is archived but not locked (closed for inactivity: its asker may write again)."""
        if not isinstance(channel, discord.Thread):
            return ""
        if channel.type is discord.ChannelType.private_thread:  # a private ticket: no tags
            try:
                if channel.archived and ticket.status != "open":
                    channel = await channel.edit(archived=False)
                await channel.edit(
                    archived=ticket.status != "open", locked=ticket.status == "closed" and lock
                )
            except discord.HTTPException as exc:
                log.warning("ticket %d: could not update its private thread: %s", ticket.id, exc)
                return failure_reason(exc)
            return ""
        if not isinstance(channel.parent, discord.ForumChannel):
            return ""
        forum = channel.parent
        statuses = {"open", "solved", "closed", "claimed", *WAITING_TAGS}
        keep = [t for t in channel.applied_tags if t.name.casefold() not in statuses]
        claimed = ["claimed"] if ticket.status == "open" and ticket.helper else []
        wanted = tags_for(forum, [ticket.status, *claimed], None, self.config.default_tag)
        keep = [t for t in keep if t not in wanted]
        try:
            if channel.archived and ticket.status != "open":
                # Discord refuses any edit of an archived post but unarchiving (50083):
                # a post Discord archived after a quiet week is opened, then edited.
                channel = await channel.edit(archived=False)
            await channel.edit(
                applied_tags=(keep + wanted)[:5],
                archived=ticket.status != "open",
                locked=ticket.status == "closed" and lock,
            )
        except discord.HTTPException as exc:
            missing = ", ".join(missing_permissions(forum, ("manage_threads",)))
            log.warning(
                "ticket %d: could not update its post: %s%s",
                ticket.id,
                exc,
                f" (missing {missing} in the help forum)" if missing else "",
            )
            return failure_reason(exc)
        return ""

    async def refresh_post(self, ticket: Ticket, thread: Any, *, lock: bool = True) -> None:
        """The post of ``ticket`` as its status wants it: the starter message's buttons,
        the tags, the archive state (an archived post is edited once unarchived)."""
        view = ticket_view(
            ticket.id, ticket.status, self.t, claim=self.config.claim, helper=ticket.helper
        )
        starter = await self._post_message(ticket, thread)
        if ticket.status == "open":
            await self._follow_status(ticket, thread, lock=lock)
            if starter is not None:
                await starter.edit(view=detached(view))
        else:
            if starter is not None:
                await starter.edit(view=detached(view))
            await self._follow_status(ticket, thread, lock=lock)

    async def _post_message(self, ticket: Ticket, thread: Any) -> Any:
        """The message holding the ticket's buttons: a forum post's starter message (its
        id is the thread's), or in a private thread, which has no starter message, the
        bot's post among its first messages (None when it is gone)."""
        if getattr(thread, "type", None) is not discord.ChannelType.private_thread:
            return thread.get_partial_message(thread.id)
        me = self.bot.user.id if self.bot.user else None
        async for message in thread.history(limit=5, oldest_first=True):
            if earlier.post_of([message_seen(message)], me=me, key=ticket.draft_id):
                return message
        log.warning("ticket %d: its post is not among its thread's first messages", ticket.id)
        return None

    def _asks_feedback(self, ticket: Ticket) -> bool:
        return self.config.feedback and ticket.status == "solved" and ticket.feedback is None

    def _feedback_question(self, ticket: Ticket) -> str:
        if not self._asks_feedback(ticket):
            return ""
        asker = user_id_of(ticket.user)
        return "\n" + self.t("feedback.question", asker=f"<@{asker}>" if asker else "")

    def _feedback_view(self, ticket: Ticket) -> discord.ui.View:
        if not self._asks_feedback(ticket):
            return discord.utils.MISSING
        return detached(feedback_view(ticket.id, self.t))

    async def on_feedback(
        self, interaction: discord.Interaction, helpful: bool, ticket_id: int
    ) -> None:
        desk = await self.desk()
        try:
            await self.in_store(
                desk.give_feedback, ticket_id, actor=user_key(interaction.user), helpful=helpful
            )
        except IntakeError as exc:
            await self._refuse(interaction, str(exc))
            return
        message = interaction.message
        said = message.content if message is not None else ""
        thanks = self.t("feedback.thanks" if helpful else "feedback.sorry")
        await interaction.response.edit_message(content=f"{said}\n{thanks}"[:2000], view=None)

    @commands.Cog.listener()
    async def on_thread_update(self, before: discord.Thread, after: discord.Thread) -> None:
        """A status tag (open, solved, closed) that staff put on a ticket's post in
        Discord's own UI moves the ticket there, and the post follows as if its button
        had been pressed. The bot's own tag edits match the ticket already: ignored."""
        if not self.config.follow_tags or after.parent_id != self.config.forum_channel_id:
            return
        added = {t.name.casefold() for t in after.applied_tags} - {
            t.name.casefold() for t in before.applied_tags
        }
        wanted = [s for s in ("open", "solved", "closed") if s in added]
        if len(wanted) != 1:
            return
        desk = await self.desk()
        ticket = await self.in_store(desk.store.ticket_for_thread, after.id)
        if ticket is None or ticket.status == wanted[0]:
            return
        try:  # only the post's owner (the bot) or staff (Manage Threads) can change its tags
            ticket = await self.in_store(
                desk.set_status, ticket.id, wanted[0], actor="discord:forum-tags", staff=True
            )
        except IntakeError as exc:
            log.info("ticket %d: tag change not followed: %s", ticket.id, exc)
            return
        try:
            view = ticket_view(
                ticket.id, ticket.status, self.t, claim=self.config.claim, helper=ticket.helper
            )
            await after.get_partial_message(after.id).edit(view=detached(view))
            shown = desk.t(f"ticket.statuses.{ticket.status}")
            await after.send(
                self.t("ticket.changed_by_tag", status=shown) + self._feedback_question(ticket),
                view=self._feedback_view(ticket),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        except discord.HTTPException as exc:
            log.warning(
                "ticket %d: could not update its post after a tag change: %s", ticket.id, exc
            )
        await self._follow_status(ticket, after)
