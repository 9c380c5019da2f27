"""Filing a ticket and posting it: the forum post (or private thread), the answer on the
checked message, the retries of pending posts and the search for a post made before."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import discord

from bot import render
from bot.components import detached
from bot.errors import describe
from bot.respond import answered, in_time, update
from knowledge.intake import earlier
from knowledge.intake.desk import Filed, IntakeError, SupportDesk, TicketPost
from knowledge.intake.earlier import MessageSeen
from knowledge.intake.records import Ticket

from ._helpers import (
    FORUM_PERMISSIONS,
    PRIVATE_PERMISSIONS,
    failure_reason,
    is_refused,
    message_seen,
    missing_permissions,
    tags_for,
    thread_seen,
    user_id_of,
)
from ._views import ticket_view

__all__ = ["FilingFlow"]

log = logging.getLogger(__name__)

#: Seconds between two looks for pending posts (tests set ``bot.support_retry_interval``).
RETRY_EVERY = 30.0
#: Seconds between two clean-ups of expired drafts (done by the retry loop).
EXPIRE_EVERY = 600.0


class FilingFlow:
    """Filing and posting of :class:`~._cog.SupportCog` (a mixin: the cog holds the state)."""

    # ----------------------------------------------------------------- filing

    async def _file(
        self,
        interaction: discord.Interaction,
        desk: SupportDesk,
        draft_id: str,
        user: str,
        *,
        private: bool = False,
    ) -> None:
        forum_id = self.config.forum_channel_id

        def file() -> tuple[Filed, TicketPost | None]:  # the record, then the post's body
            # Private in the filing's own write (before the post: it goes to the staff
            # channel): no stop or failure in between can leave it to the public forum.
            filed = desk.file(draft_id, user, post=forum_id is not None, private=private)
            posting = filed.created and forum_id is not None
            return filed, desk.ticket_post(filed.ticket) if posting else None

        async def filed_and_posted() -> tuple[Filed, discord.Thread | None, str] | IntakeError:
            try:
                filed, body = await self.in_filing(file)
            except IntakeError as exc:
                return exc
            thread: discord.Thread | None = None
            reason = ""
            if filed.created:
                log.info("ticket %d filed: %s", filed.ticket.id, describe(interaction))
                if forum_id is not None:  # a new ticket is private only if filed so
                    thread, reason = await self.post_ticket(
                        desk, filed.ticket, just_filed=True, body=body, private=private
                    )
            return filed, thread, reason

        # The ticket is written (durably, before anything is posted) and its post made at
        # once. The press is acknowledged only if that outlasts the bot's patience (a
        # silent acknowledgement: the answer replaces the pressed message's buttons), and
        # the post never waits for an acknowledgement: only the answer to the user does.
        outcome = await in_time(interaction, filed_and_posted(), update=True)
        if not await answered(
            interaction, lambda: self._answer_filing(interaction, forum_id, outcome, private)
        ):  # nothing can be shown; the post mentions the asker
            log.info("filing draft %s handled; its interaction had expired", draft_id)

    async def _answer_filing(
        self,
        interaction: discord.Interaction,
        forum_id: int | None,
        outcome: tuple[Filed, discord.Thread | None, str] | IntakeError,
        private: bool = False,
    ) -> None:
        """What became of the filing, above the wiki's answer on the message whose
        button was pressed; its buttons go (the draft is filed: pressing them again would
        only say so). A refusal (rate limit, not yours) comes apart, the buttons kept.
        ``private``: filed privately (a failure is said of the staff channel)."""
        if isinstance(outcome, IntakeError):
            await self._refuse(interaction, str(outcome))
            return
        filed, thread, reason = outcome
        ticket = filed.ticket
        title = self.t("filed.title", id=ticket.id)
        if not filed.created:
            if ticket.thread_id:
                text = self.t("filed.again", id=ticket.id, link=f"<#{ticket.thread_id}>")
            else:
                text = self.t("filed.again_pending", id=ticket.id)
        elif forum_id is None:
            title = self.t("filed.pending_title", id=ticket.id)
            text = self.t("filed.pending", reason=self.t("filed.no_forum"))
        elif thread is not None:
            text = self.t("filed.posted", link=thread.mention)
        elif private:
            title = self.t("filed.pending_title", id=ticket.id)
            if reason == "forbidden":
                names = await self._missing_names(PRIVATE_PERMISSIONS, private=True)
                text = self.t("filed.forbidden_private", id=ticket.id, permissions=names)
            else:
                why = "channel_missing" if reason == "forum_missing" else reason
                text = self.t("filed.pending_private", reason=self.t(f"reasons.{why}"))
        else:
            title = self.t("filed.pending_title", id=ticket.id)
            if reason == "forbidden":
                names = await self._missing_names(("send_messages", *FORUM_PERMISSIONS))
                text = self.t("filed.forbidden", id=ticket.id, permissions=names)
            elif reason in ("tag_required", "refused"):
                text = self.t("filed.refused", id=ticket.id, reason=self.t(f"reasons.{reason}"))
            else:
                text = self.t("filed.pending", reason=self.t(f"reasons.{reason}"))
        content = self.t("filed.line", title=title, text=text)
        await update(interaction, content=content[:2000], view=None)

    async def _missing_names(self, wanted: tuple[str, ...], *, private: bool = False) -> str:
        """The forum permissions of ``wanted`` the bot lacks, worded (the first of
        ``wanted`` when the cache shows none missing: Discord refused anyway).
        ``private``: those of the private tickets' staff channel, as a text channel's
        settings name them."""
        with contextlib.suppress(discord.HTTPException):
            place = await (self._private_channel() if private else self._forum())
            missing = missing_permissions(place, wanted) if place is not None else []
            if missing:
                return self.t("permissions.separator").join(
                    self._permission_name(name, private) for name in dict.fromkeys(missing)
                )
        return self._permission_name(wanted[0], private)

    def _permission_name(self, name: str, private: bool) -> str:
        if private:
            return self.t(f"channel_permissions.{name}")
        return self.t(f"permissions.{name}")

    async def _private_channel(self) -> discord.TextChannel | None:
        """The staff channel private tickets are threads of (``support.private_channel_id``)."""
        channel_id = self.config.private_channel_id
        channel = self.bot.get_channel(channel_id) if channel_id else None
        if channel is None and channel_id:
            channel = await self.bot.fetch_channel(channel_id)
        return channel if isinstance(channel, discord.TextChannel) else None

    async def _forum(self) -> discord.ForumChannel | None:
        forum_id = self.config.forum_channel_id
        channel = self.bot.get_channel(forum_id) if forum_id else None
        if channel is None and forum_id:
            channel = await self.bot.fetch_channel(forum_id)  # NotFound when deleted
        return channel if isinstance(channel, discord.ForumChannel) else None

    async def post_ticket(
        self,
        desk: SupportDesk,
        ticket: Ticket,
        *,
        just_filed: bool = False,
        body: TicketPost | None = None,
        private: bool | None = None,
    ) -> tuple[discord.Thread | None, str]:
        """Create the forum post for a pending ticket; on failure keep it pending.

        The store learns that the post is being made before the request leaves
        (``start_post``), and the post carries the ticket's key. A ticket whose earlier
        attempt began (the bot was killed, or Discord timed out, before the thread id
        was recorded) is first looked for in the forum, and recorded if found, so a
        retry never makes a second post. ``just_filed``: this process filed the ticket
        a moment ago (filing records the post as begun) and nothing has posted it yet,
        so there is nothing to look for: the search reads the starter message of every
        post the bot made in the last minute, which under twenty filings at once made
        each post wait seconds behind hundreds of reads. ``body``: the post's body when
        the caller made it already (filing does, in the same trip to the filing thread).
        ``private``: whether the ticket is private, when the caller knows (filing does: it
        made it so, or not, a moment ago); else the store is asked.
        """
        if ticket.id in self._posting:
            return None, "other"
        self._posting.add(ticket.id)
        forum: discord.ForumChannel | None = None
        place: discord.ForumChannel | discord.TextChannel | None = None
        pinging: int | None = None
        try:
            if private is None:
                private = await self.in_filing(desk.is_private, ticket.id)
            forum = await self._forum()
            place = await self._private_channel() if private else forum
            if place is None:
                # A private ticket waits for its staff channel (never the public forum):
                # gone from Discord, or switched off in the config since it was filed.
                why = "forum_missing"
                if private:
                    why = "channel_missing" if self.config.private_channel_id else "private_off"
                await self.in_filing(desk.post_failed, ticket, self.t(f"reasons.{why}"))
                return None, why
            post = body or await self.in_filing(desk.ticket_post, ticket)
            # A private thread has no starter message: its name carries the ticket's
            # number, so a thread made but left empty by a crash is found again too.
            name = self.t("ticket.private_name", id=ticket.id, title=post.title)[:100]
            empty: discord.Thread | None = None
            if ticket.post_started_at is not None and not just_filed:
                if isinstance(place, discord.ForumChannel):
                    found = await self._find_post(place, ticket, post.key)
                else:
                    found, empty = await self._find_private_post(place, ticket, post.key, name)
                if found is not None:
                    return await self._record_found(desk, ticket.id, *found), ""
            if ticket.post_started_at is None:  # filing records it with the ticket
                await self.in_filing(desk.start_post, ticket.id)
            asker = user_id_of(ticket.user)
            mention = f"<@{asker}>\n" if asker else ""
            helpers = self.config.helper_role_id
            ping = helpers is not None and await self.in_filing(
                desk.claim_ping, ticket.id, self.config.ping_quiet_minutes * 60
            )
            pinging = ticket.id if ping else None  # held until the post carrying it is up
            if ping:
                mention += self.t("ticket.helpers_ping", role=f"<@&{helpers}>") + "\n"
            files = [
                discord.File(io.BytesIO(text.encode("utf-8")), filename=name)
                for name, text in post.attachments
            ]
            message: dict[str, Any] = {
                "content": mention + post.content,
                "embed": render.embed(post.reply, url=render.page_url(post.reply, self.bot.kb)),
                "files": files,
                "view": detached(
                    ticket_view(ticket.id, ticket.status, self.t, claim=self.config.claim)
                ),
                "allowed_mentions": discord.AllowedMentions(
                    everyone=False,
                    roles=[discord.Object(helpers)] if ping and helpers else False,
                    users=[discord.Object(asker)] if asker else False,
                ),
            }
            if isinstance(place, discord.ForumChannel):
                tags = tags_for(
                    place, post.tags, ticket.triage.get("family_name"), self.config.default_tag
                )
                thread = (
                    await place.create_thread(name=post.title, applied_tags=tags, **message)
                ).thread
            else:  # a private thread in the staff channel, the asker added to it
                thread = empty or await place.create_thread(
                    name=name, type=discord.ChannelType.private_thread, invitable=False
                )
                if asker:
                    await thread.add_user(discord.Object(asker))
                await thread.send(**message)
            if pinging is not None:
                pinging = None
                await self.in_filing(desk.ping_sent, ticket.id)
        except discord.HTTPException as exc:
            reason = failure_reason(exc)
            error = f"{exc.status} {exc.code} {reason}"
            if isinstance(place, discord.TextChannel):  # a private ticket's staff channel
                missing = missing_permissions(place, PRIVATE_PERMISSIONS)
            else:
                missing = missing_permissions(forum) if forum is not None else []
            if reason == "forbidden" and missing:
                error += f": missing {', '.join(missing)}"
            log.warning("ticket %d not posted (%s): %s", ticket.id, error, exc)
            failed = await self.in_filing(desk.post_failed, ticket, error, refused=is_refused(exc))
            if failed.post_state == "failed":
                log.error(
                    "ticket %d: the help forum refused its post %d times (%s); given up,"
                    " the ticket is kept (/ticket list)",
                    ticket.id,
                    failed.post_attempts,
                    error,
                )
            return None, reason
        finally:
            self._posting.discard(ticket.id)
            if pinging is not None:  # the post failed: its retry may ping instead
                desk.ping_unsent(pinging)
        await self.in_filing(desk.posted, ticket.id, thread.id)
        self.bot.dispatch("ticket_posted", ticket.id, thread.id)
        return thread, ""

    async def _record_found(
        self, desk: SupportDesk, ticket_id: int, thread: discord.Thread, post: MessageSeen
    ) -> discord.Thread:
        """Record the post an earlier attempt made, and the helpers' ping if it carried
        one (the bot saw an error, but Discord sent it: the quiet window counts it)."""
        log.info("ticket %d: found its post %d made before", ticket_id, thread.id)
        pinged = earlier.pinged_at(post, self.config.helper_role_id)

        def record() -> None:
            desk.posted(ticket_id, thread.id)
            if pinged is not None:
                desk.ping_found(ticket_id, pinged)

        await self.in_filing(record)
        return thread

    @staticmethod
    async def _threads_since(
        parent: discord.ForumChannel | discord.TextChannel,
        archived: AsyncIterator[discord.Thread],
        listed_at: Callable[[discord.Thread], float],
        since: float,
    ) -> dict[int, discord.Thread]:
        """The threads of ``parent`` a retry reads, by id: those the cache holds, the
        server's active ones under it, and the ``archived`` listing (newest first by
        ``listed_at``) up to the first listed before ``since``."""
        threads = {t.id: t for t in parent.threads}
        for thread in await parent.guild.active_threads():
            if thread.parent_id == parent.id:
                threads[thread.id] = thread
        async for thread in archived:
            if earlier.listed_past(listed_at(thread), since):
                break
            threads.setdefault(thread.id, thread)
        return threads

    async def _find_post(
        self, forum: discord.ForumChannel, ticket: Ticket, key: str
    ) -> tuple[discord.Thread, MessageSeen] | None:
        """The bot's post for ``ticket`` in ``forum`` if one exists, with its starter
        message (which says whether it pinged the helpers); which thread is the post is
        decided by :mod:`knowledge.intake.earlier`. Active posts and archived ones (solved
        or closed meanwhile, or archived by Discord after inactivity) both count: archived
        posts are listed most recently archived first, and the listing stops at the first
        archived before the ticket was filed (a post is archived after it is made).
        Raises :class:`discord.HTTPException` when the forum cannot be read (the attempt
        then counts as failed and is retried: posting blind could duplicate)."""
        me = self.bot.user.id if self.bot.user else None
        since = earlier.search_since(ticket.created_at)
        threads = await self._threads_since(
            forum,
            forum.archived_threads(limit=None),
            lambda thread: thread.archive_timestamp.timestamp(),  # listed by archive time
            since,
        )
        seen = [thread_seen(t) for t in threads.values()]
        for candidate in earlier.candidates(seen, me=me, since=since, private=False):
            thread = threads[candidate.id]
            try:
                starter = thread.starter_message or await thread.fetch_message(thread.id)
            except discord.NotFound:
                continue
            first = message_seen(starter)
            if earlier.judge(candidate, [first], me=me, key=key) == "posted":
                return thread, first
        return None

    async def _find_private_post(
        self, channel: discord.TextChannel, ticket: Ticket, key: str, name: str
    ) -> tuple[tuple[discord.Thread, MessageSeen] | None, discord.Thread | None]:
        """The private thread an earlier attempt made for ``ticket`` in the staff
        ``channel``, as (posted with its post, empty): see :func:`knowledge.intake.earlier.judge`
        (``name`` is the name the bot gives the ticket's thread). Active threads and the
        archived private threads the bot is in both count, listed newest first until one
        older than the ticket. Raises :class:`discord.HTTPException` when the channel
        cannot be read (posting blind could duplicate)."""
        me = self.bot.user.id if self.bot.user else None
        since = earlier.search_since(ticket.created_at)
        threads = await self._threads_since(
            channel,
            channel.archived_threads(private=True, joined=True, limit=None),
            lambda thread: discord.utils.snowflake_time(thread.id).timestamp(),  # by id
            since,
        )
        empty: discord.Thread | None = None
        seen = [thread_seen(t) for t in threads.values()]
        for candidate in earlier.candidates(seen, me=me, since=since, private=True):
            thread = threads[candidate.id]
            first = [message_seen(m) async for m in thread.history(limit=5, oldest_first=True)]
            verdict = earlier.judge(candidate, first, me=me, key=key, empty_name=name)
            post = earlier.post_of(first, me=me, key=key)
            if verdict == "posted" and post is not None:
                return (thread, post), None
            if verdict == "empty" and empty is None:
                empty = thread
        return None, empty

    async def _retry_loop(self) -> None:
        every = float(getattr(self.bot, "support_retry_interval", RETRY_EVERY))
        await self.bot.wait_until_ready()
        try:  # the desk (the wiki's triage context) takes seconds: not at the first /support
            await self.desk()
        except Exception:
            log.exception("preparing the support desk failed; it is retried at first use")
        expired_at = float("-inf")
        while True:
            await asyncio.sleep(every)
            try:
                desk = await self.desk()
                now = asyncio.get_running_loop().time()
                if now - expired_at >= EXPIRE_EVERY:
                    expired_at = now
                    await self.in_store(desk.expire_drafts)
                if self.config.forum_channel_id is None:
                    continue
                for ticket in await self.in_store(desk.due_posts):
                    await self.post_ticket(desk, ticket)
            except Exception:  # keep retrying whatever one round did
                log.exception("retrying pending ticket posts failed")
