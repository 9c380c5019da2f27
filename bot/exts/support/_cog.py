"""/support: the onboarding checklist as a form, the wiki's answer first, then a forum post.

The intake itself is :class:`knowledge.intake.desk.SupportDesk` (drafts, triage,
tickets, the SQLite store); this cog only opens modals, shows answers and posts.

- ``/support [model]`` opens step 1 of the form (or offers the user's draft);
  each step's submit is stored, then a "Continue" button opens the next step (a
  modal cannot answer a modal). After the last step the triage is shown privately
  with "This solved it" / "Edit" / "File the ticket".
- Filing creates a post in the configured help forum (title, tags, the checklist as
  fields, the launch command and log tail as files, only the asker mentioned). A
  post that fails stays pending in the store and is retried by a background task;
  ``/wiki status`` shows how many wait.
- Solved / Close / Reopen buttons on the post (asker and staff) set the ticket's
  status, the post's tags and its archive state. ``/ticket list`` and ``/ticket
  show`` are for staff.
- New posts made in the forum without ``/support`` get a pointer to it; with
  ``support.nudge`` on (needs the Message Content intent) the missing checklist
  items and suggested pages instead.

Nothing slow runs on the event loop. The triage (the wiki's search) runs in the bot's
knowledge threads (``bot.in_thread``); drafts (redaction, SQLite writes) in the cog's
own store threads; filing and posting (the ticket's record, the post's body, the
post's outcome) in a filing thread of their own, so "File the ticket" never queues
behind the triages or the drafts of twenty other requests, nor in asyncio's default
pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import io
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot import render
from bot.components import detached
from bot.cooldowns import cooldown
from bot.errors import Refused, describe, report_failure, safe_choices
from bot.respond import answered, in_time, send, update
from knowledge.answers import support_check_reply
from knowledge.intake.desk import (
    Filed,
    IntakeError,
    IntakeSettings,
    Saved,
    SupportDesk,
    TicketPost,
    Upload,
    summarise,
)
from knowledge.intake.records import Draft, Ticket
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.intake.store import RateLimit
from knowledge.intake.validate import MAX_UPLOAD_BYTES
from knowledge.reply import Field, Reply
from knowledge.templates import Templates, load_templates
from knowledge.text import escape_markdown

from ._helpers import (
    FORUM_PERMISSIONS,
    Submitted,
    failure_reason,
    is_refused,
    is_staff,
    missing_permissions,
    parse_modal_id,
    read_submit,
    require_tag_problem,
    tags_for,
    user_id_of,
    user_key,
)
from ._views import (
    FeedbackButton,
    FlowButton,
    TicketButton,
    check_view,
    feedback_view,
    flow_view,
    step_modal,
    ticket_view,
)

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["SupportCog"]

log = logging.getLogger(__name__)

#: Seconds between two looks for pending posts (tests set ``bot.support_retry_interval``).
RETRY_EVERY = 30.0
#: Seconds between two clean-ups of expired drafts (done by the retry loop).
EXPIRE_EVERY = 600.0
#: Threads for the ticket store: SQLite serialises writes on one connection anyway; a
#: second thread redacts the next request while the first waits on the disk.
STORE_THREADS = 2
#: One thread of its own for filing and posting tickets (short writes and the post's
#: body): "File the ticket" never queues behind the redaction of other users' drafts.
FILING_THREADS = 1

T = TypeVar("T")


class SupportCog(commands.Cog):
    ticket = app_commands.Group(
        name="ticket",
        description="Support tickets filed with /support (staff)",
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        allowed_installs=app_commands.AppInstallationType(guild=True),
        # Shown to members with Manage Threads; a server admin offers it to the staff
        # roles in Server Settings, Integrations (the bot still checks staff_role_ids).
        default_permissions=discord.Permissions(manage_threads=True),
    )

    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        self.config = bot.config.support
        self.t: Templates = load_templates("support.yaml")
        self.store: SqliteTicketStore | None = None
        self._desk: SupportDesk | None = None
        self._desk_state: object = None
        self._desk_lock = asyncio.Lock()
        self._retry_task: asyncio.Task[None] | None = None
        self._posting: set[int] = set()
        self._store_pool = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="wikibot-tickets")
        self._filing_pool = ThreadPoolExecutor(FILING_THREADS, thread_name_prefix="wikibot-filing")

    # ----------------------------------------------------------------- set-up

    async def cog_load(self) -> None:
        # The store and desk open at first use: ``wikibot sync`` loads this cog without a wiki.
        self.bot.add_dynamic_items(FlowButton, TicketButton, FeedbackButton)
        self._retry_task = asyncio.create_task(self._retry_loop(), name="support-retry")

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(FlowButton, TicketButton, FeedbackButton)
        if self._retry_task is not None:
            self._retry_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retry_task
        # Filings and draft saves already handed to the threads finish before the store
        # closes (they would fail on a closed database); a post made but not yet recorded
        # is found again by its key after the restart.
        await asyncio.get_running_loop().run_in_executor(None, self._close_store)

    def _close_store(self) -> None:
        self._filing_pool.shutdown(wait=True)
        self._store_pool.shutdown(wait=True)
        if self.store is not None:
            self.store.close()

    async def in_store(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a (blocking) draft or ticket call in the store threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._store_pool, functools.partial(func, *args, **kwargs)
        )

    async def in_filing(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a (blocking) filing or posting call in the filing thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._filing_pool, functools.partial(func, *args, **kwargs)
        )

    def _settings(self) -> IntakeSettings:
        c = self.config
        return IntakeSettings(
            draft_ttl=c.draft_hours * 3600,
            rate=RateLimit(c.rate_count, c.rate_minutes * 60),
        )

    async def desk(self) -> SupportDesk:
        """The desk over the wiki as loaded now (rebuilt after a refresh changed it)."""
        state = self.bot.kb.state
        if self._desk is not None and self._desk_state is state:
            return self._desk
        async with self._desk_lock:
            if self._desk is None or self._desk_state is not state:
                if self.store is None:
                    data_dir = self.bot.kb.data_dir
                    self.store = await self.in_store(SqliteTicketStore.in_folder, data_dir)
                context = await self.bot.in_thread(lambda: self.bot.kb.triage_context)
                self._desk = SupportDesk(
                    context, self.store, settings=self._settings(), links=self.bot.kb.links
                )
                self._desk_state = state
        return self._desk

    # ----------------------------------------------------------------- answers

    async def _say(
        self,
        interaction: discord.Interaction,
        title: str,
        text: str,
        *,
        kind: str = "ok",
        view: discord.ui.View | None = None,
        fields: tuple[Field, ...] = (),
    ) -> None:
        embed = render.embed(Reply(kind, title, text, fields=fields, ephemeral=True))
        await send(interaction, embed=embed, ephemeral=True, view=view or discord.utils.MISSING)

    async def _refuse(self, interaction: discord.Interaction, text: str) -> None:
        await self._say(interaction, self.t("errors.title"), text, kind="not_found")

    # ----------------------------------------------------------------- /support

    @app_commands.command(name="support")
    @app_commands.describe(model="The model family you are running (pick from the list)")
    @app_commands.allowed_contexts(guilds=True)  # tickets go to this server's help forum
    @app_commands.allowed_installs(guilds=True)
    @cooldown()
    async def support(self, interaction: discord.Interaction, model: str | None = None) -> None:
        """Ask for help: a short form, the wiki's answer first, then a post in the help forum.

        Opens a modal at once (no defer: a modal must be the first response).
        """
        desk = await self.desk()
        user = user_key(interaction.user)
        if model:
            key, problem = desk.resolve_model(model)
            if key is None:
                await self._refuse(interaction, problem or "")
                return

        def resumable_or_new() -> tuple[Draft | None, Saved | None]:  # one trip to the store
            draft = desk.resumable(user)
            if draft is not None and not model:
                return draft, None
            # Stored when step 1 is submitted: a form dismissed leaves no draft behind.
            return None, desk.unsaved_draft(user, model=model or "")

        draft, saved = await self.in_store(resumable_or_new)
        if draft is not None:
            when = f"<t:{int(draft.updated_at)}:R>"
            view = flow_view(
                FlowButton(
                    "resume",
                    draft.id,
                    min(draft.step + 1, desk.form.steps),
                    label=self.t("resume.continue"),
                    style=discord.ButtonStyle.primary,
                ),
                FlowButton("new", "0", label=self.t("resume.restart")),
            )
            await self._say(
                interaction, self.t("resume.title"), self.t("resume.text", when=when), view=view
            )
            return
        assert saved is not None
        await interaction.response.send_modal(
            step_modal(desk, saved.draft, 1, self.t, desk.model_choices())
        )

    @support.autocomplete("model")
    async def model_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.family_choices(current))

    # ----------------------------------------------------------------- modal submits

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data = interaction.data or {}
        parsed = parse_modal_id(str(data.get("custom_id") or ""))
        if parsed is None:
            return
        try:
            await self._on_step(interaction, parsed[0], parsed[1], read_submit(data))
        except Exception as exc:
            await report_failure(interaction, exc)

    async def _download(self, attachment: Mapping[str, Any]) -> Upload:
        size = int(attachment.get("size") or 0)
        if size > MAX_UPLOAD_BYTES:
            return Upload(None, size, str(attachment.get("filename") or ""))
        url = str(attachment.get("url") or "")
        try:
            data = await self.bot.http.get_from_cdn(url)
        except discord.HTTPException as exc:
            log.warning("could not download an uploaded log: %s", exc)
            return Upload(None, size)
        return Upload(data[: MAX_UPLOAD_BYTES + 1], len(data), str(attachment.get("filename")))

    async def _on_step(
        self, interaction: discord.Interaction, draft_id: str, step: int, submitted: Submitted
    ) -> None:
        user = user_key(interaction.user)
        values = dict(submitted.values)
        if "log" in values and not values["log"].strip():
            del values["log"]  # an empty box keeps a log stored before (or uploaded now)

        async def saved_and_checked() -> tuple[
            SupportDesk, Saved | IntakeError, Reply | IntakeError | None
        ]:
            # The step is stored whatever happens to the interaction (a draft outlives it);
            # after the last step the triage's answer is made in the same trip. The desk
            # too is in the work: the first one after a start takes seconds to prepare.
            desk = await self.desk()
            uploads = {key: await self._download(a) for key, a in submitted.files.items()}
            try:
                saved = await self.in_store(
                    desk.save, draft_id, user, values, uploads=uploads, step=step
                )
            except IntakeError as exc:
                return desk, exc, None
            if step < desk.form.steps:
                return desk, saved, None
            return desk, saved, await self._check(desk, saved.draft)

        desk, saved, checked = await in_time(interaction, saved_and_checked(), ephemeral=True)
        if not await answered(
            interaction,
            lambda: self._answer_step(interaction, desk, draft_id, step, saved, checked),
        ):  # nothing can be shown; /support offers the draft again
            log.info("step %d of draft %s handled; its interaction had expired", step, draft_id)

    async def _answer_step(
        self,
        interaction: discord.Interaction,
        desk: SupportDesk,
        draft_id: str,
        step: int,
        saved: Saved | IntakeError,
        checked: Reply | IntakeError | None,
    ) -> None:
        if isinstance(saved, IntakeError):
            await self._refuse(interaction, str(saved))
            return
        notes: tuple[Field, ...] = ()
        if saved.problems:
            notes = (Field(self.t("step.problems"), "\n".join(saved.problems)),)
        if checked is not None:
            await self._show_check(interaction, draft_id, checked, notes)
            return
        view = flow_view(
            FlowButton(
                "next",
                draft_id,
                step + 1,
                label=self.t("step.continue"),
                style=discord.ButtonStyle.primary,
            )
        )
        await self._say(
            interaction,
            self.t("step.saved_title", step=step, steps=desk.form.steps),
            self.t("step.saved"),
            view=view,
            fields=notes,
        )

    async def _check(self, desk: SupportDesk, draft: Draft) -> Reply | IntakeError:
        """The wiki's answer to a finished draft, as just read or saved (or why it cannot
        be checked yet)."""

        def check() -> Reply:  # the triage and its wording (redacting again): off the loop
            _, result = desk.check_draft(draft)
            return support_check_reply(
                result,
                draft.redactions,
                desk.context.templates,
                desk.t,
                draft_id=draft.id,
                links=desk.links,
            )

        try:
            return await self.bot.in_thread(check)
        except IntakeError as exc:
            return exc

    async def _show_check(
        self,
        interaction: discord.Interaction,
        draft_id: str,
        checked: Reply | IntakeError,
        notes: tuple[Field, ...] = (),
    ) -> None:
        if isinstance(checked, IntakeError):
            if checked.code != "empty":
                await self._refuse(interaction, str(checked))
                return
            view = flow_view(FlowButton("edit", draft_id, 1, label=self.t("check.edit")))
            await self._say(
                interaction,
                self.t("check.blocked_title"),
                str(checked),
                kind="not_found",
                view=view,
            )
            return
        reply = checked
        if notes:
            reply = dataclasses.replace(reply, fields=notes + reply.fields)
        kb = self.bot.kb
        embed = render.embed(reply, url=render.page_url(reply, kb))
        private = self.config.private_channel_id is not None
        view = check_view(draft_id, self.t, private=private)
        await send(interaction, embed=embed, ephemeral=True, view=view)

    # ----------------------------------------------------------------- flow buttons

    async def on_flow_button(
        self, interaction: discord.Interaction, action: str, draft_id: str, step: int
    ) -> None:
        desk = await self.desk()
        user = user_key(interaction.user)
        if action == "new":
            saved = desk.unsaved_draft(user)  # stored when its first step is submitted
            await interaction.response.send_modal(
                step_modal(desk, saved.draft, 1, self.t, desk.model_choices())
            )
            return
        if action == "post":  # "Open /support" under a nudge: the post's text pre-filled
            text = ""
            if isinstance(interaction.channel, discord.Thread):
                with contextlib.suppress(discord.HTTPException):
                    text = await self._starter_text(interaction.channel)
            saved = await self.in_store(desk.new_draft, user)
            draft = saved.draft
            if text.strip():
                draft = (await self.in_store(desk.save, draft.id, user, {"text": text})).draft
            await interaction.response.send_modal(
                step_modal(desk, draft, 1, self.t, desk.model_choices())
            )
            return
        if action in ("file", "private"):
            private = action == "private" and self.config.private_channel_id is not None
            await self._file(interaction, desk, draft_id, user, private=private)
            return
        try:
            draft = await self.in_store(desk.draft, draft_id, user)
        except IntakeError as exc:
            await self._refuse(interaction, str(exc))
            return
        if action == "solved":
            await self.in_store(desk.deflect, draft_id, user)
            embed = render.embed(
                Reply("ok", self.t("deflected.title"), self.t("deflected.text"), ephemeral=True)
            )
            await interaction.response.edit_message(embed=embed, view=None)
            return
        if action in ("next", "edit", "resume"):
            if action == "resume" and draft.step >= desk.form.steps:
                checked = await in_time(interaction, self._check(desk, draft), ephemeral=True)
                await self._show_check(interaction, draft_id, checked)
                return
            step = max(1, min(step, desk.form.steps))
            await interaction.response.send_modal(
                step_modal(desk, draft, step, self.t, desk.model_choices())
            )

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
            filed = desk.file(draft_id, user, post=forum_id is not None)
            if private and filed.created:  # before the post: it goes to the staff channel
                desk.make_private(filed.ticket.id)
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
                if forum_id is not None:
                    thread, reason = await self.post_ticket(
                        desk, filed.ticket, just_filed=True, body=body
                    )
            return filed, thread, reason

        # The ticket is written (durably, before anything is posted) and its post made at
        # once. The press is acknowledged only if that outlasts the bot's patience (a
        # silent acknowledgement: the answer replaces the pressed message's buttons), and
        # the post never waits for an acknowledgement: only the answer to the user does.
        outcome = await in_time(interaction, filed_and_posted(), update=True)
        if not await answered(
            interaction, lambda: self._answer_filing(interaction, forum_id, outcome)
        ):  # nothing can be shown; the post mentions the asker
            log.info("filing draft %s handled; its interaction had expired", draft_id)

    async def _answer_filing(
        self,
        interaction: discord.Interaction,
        forum_id: int | None,
        outcome: tuple[Filed, discord.Thread | None, str] | IntakeError,
    ) -> None:
        """What became of the filing, above the wiki's answer on the message whose
        button was pressed; its buttons go (the draft is filed: pressing them again would
        only say so). A refusal (rate limit, not yours) comes apart, the buttons kept."""
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

    async def _missing_names(self, wanted: tuple[str, ...]) -> str:
        """The forum permissions of ``wanted`` the bot lacks, worded (the first of
        ``wanted`` when the cache shows none missing: Discord refused anyway)."""
        with contextlib.suppress(discord.HTTPException):
            forum = await self._forum()
            missing = missing_permissions(forum, wanted) if forum is not None else []
            if missing:
                return self.t("permissions.separator").join(
                    self.t(f"permissions.{name}") for name in dict.fromkeys(missing)
                )
        return self.t(f"permissions.{wanted[0]}")

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
        """
        if ticket.id in self._posting:
            return None, "other"
        self._posting.add(ticket.id)
        forum: discord.ForumChannel | None = None
        try:
            private = await self.in_filing(desk.is_private, ticket.id)
            forum = await self._forum()
            place = await self._private_channel() if private else forum
            if place is None:
                await self.in_filing(desk.post_failed, ticket, "forum_missing")
                return None, "forum_missing"
            post = body or await self.in_filing(desk.ticket_post, ticket)
            if ticket.post_started_at is not None and not just_filed and forum is not None:
                found = await self._find_post(forum, ticket, post.key)
                if found is not None:
                    log.info("ticket %d: found its post %d made before", ticket.id, found.id)
                    await self.in_filing(desk.posted, ticket.id, found.id)
                    return found, ""
            if ticket.post_started_at is None:  # filing records it with the ticket
                await self.in_filing(desk.start_post, ticket.id)
            asker = user_id_of(ticket.user)
            mention = f"<@{asker}>\n" if asker else ""
            helpers = self.config.helper_role_id
            ping = helpers is not None and await self.in_filing(
                desk.claim_ping, ticket.id, self.config.ping_quiet_minutes * 60
            )
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
                thread = await place.create_thread(
                    name=post.title, type=discord.ChannelType.private_thread, invitable=False
                )
                if asker:
                    await thread.add_user(discord.Object(asker))
                await thread.send(**message)
        except discord.HTTPException as exc:
            reason = failure_reason(exc)
            error = f"{exc.status} {exc.code} {reason}"
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
        await self.in_filing(desk.posted, ticket.id, thread.id)
        self.bot.dispatch("ticket_posted", ticket.id, thread.id)
        return thread, ""

    async def _find_post(
        self, forum: discord.ForumChannel, ticket: Ticket, key: str
    ) -> discord.Thread | None:
        """The bot's post for ``ticket`` in ``forum`` if one exists: a thread the bot
        made after the ticket was filed whose starter message's embed carries ``key``.
        Active posts and archived ones (solved or closed meanwhile, or archived by
        Discord after inactivity) both count: archived posts are listed most recently
        archived first, and the listing stops at the first archived before the ticket
        was filed (a post is archived after it is made).
        Raises :class:`discord.HTTPException` when the forum cannot be read (the
        attempt then counts as failed and is retried: posting blind could duplicate)."""
        me = self.bot.user.id if self.bot.user else None
        since = ticket.created_at - 60.0  # clocks of Discord and the host may differ
        threads = {t.id: t for t in forum.threads}
        for thread in await forum.guild.active_threads():
            if thread.parent_id == forum.id:
                threads[thread.id] = thread
        async for thread in forum.archived_threads(limit=None):
            if thread.archive_timestamp.timestamp() < since:
                break
            threads.setdefault(thread.id, thread)
        for thread in sorted(threads.values(), key=lambda t: t.id):
            if thread.owner_id != me:
                continue
            if discord.utils.snowflake_time(thread.id).timestamp() < since:
                continue
            try:
                starter = thread.starter_message or await thread.fetch_message(thread.id)
            except discord.NotFound:
                continue
            if any(key and key in (embed.footer.text or "") for embed in starter.embeds):
                return thread
        return None

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
            text = self.t("ticket.not_allowed") if exc.code == "not_allowed" else str(exc)
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
            names = await self._missing_names(("manage_threads",))
            await interaction.followup.send(
                self.t("ticket.not_updated", status=shown, permissions=names), ephemeral=True
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
        statuses = {"open", "solved", "closed", "claimed"}
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
        starter = thread.get_partial_message(thread.id)
        if ticket.status == "open":
            await self._follow_status(ticket, thread, lock=lock)
            await starter.edit(view=detached(view))
        else:
            await starter.edit(view=detached(view))
            await self._follow_status(ticket, thread, lock=lock)

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

    # ----------------------------------------------------------------- /ticket

    async def _staff_only(self, interaction: discord.Interaction) -> None:
        if not self._staff(interaction):
            raise Refused(self.t("ticket.staff_only"))

    @ticket.command(name="list")
    @app_commands.describe(status="Only tickets in this state", family="Only this model family")
    async def ticket_list(
        self,
        interaction: discord.Interaction,
        status: Literal["open", "solved", "closed"] | None = None,
        family: str | None = None,
    ) -> None:
        """Support tickets, newest first (staff only)."""
        await self._staff_only(interaction)
        desk = await self.desk()
        tickets = await self.in_store(
            desk.store.list_tickets, status=status, family=family or None, limit=20
        )
        lines = [
            self.t(
                "ticket.list_line",
                id=t.id,
                status=desk.t(f"ticket.statuses.{t.status}"),
                family=t.family or "-",
                when=f"<t:{int(t.created_at)}:R>",
                title=discord.utils.escape_mentions(t.title[:80]),
            )
            + (f" <#{t.thread_id}>" if t.thread_id else "")
            + (" · " + self.t("ticket.post_failed") if t.post_state == "failed" else "")
            for t in tickets
        ]
        await self._say(
            interaction,
            self.t("ticket.list_title"),
            "\n".join(lines) or self.t("ticket.list_empty"),
        )

    @ticket_list.autocomplete("family")
    async def family_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return safe_choices(interaction, lambda: self.bot.kb.family_choices(current))

    @ticket.command(name="show")
    @app_commands.describe(id="The ticket number")
    async def ticket_show(
        self, interaction: discord.Interaction, id: app_commands.Range[int, 1, 10**12]
    ) -> None:
        """One support ticket as its post shows it (staff only)."""
        await self._staff_only(interaction)
        desk = await self.desk()
        try:
            ticket = await self.in_store(desk.ticket, id)
        except IntakeError as exc:
            await self._refuse(interaction, str(exc))
            return
        post = desk.ticket_post(ticket)
        where = f"<#{ticket.thread_id}>" if ticket.thread_id else ticket.post_state
        text = f"{post.content.splitlines()[0]} · {where}"
        reply = Reply("ticket", post.reply.title, text, fields=post.reply.fields, ephemeral=True)
        await send(interaction, embed=render.embed(reply), ephemeral=True)

    # ----------------------------------------------------------------- forum posts

    @commands.Cog.listener()
    async def on_thread_create(self, thread: discord.Thread) -> None:
        """A post made in the help forum without /support: point at it, or with the nudge
        switch on, answer with its missing checklist items and the pages that may help."""
        forum_id = self.config.forum_channel_id
        if thread.parent_id != forum_id or thread.owner_id == self.bot.user.id:
            return
        try:
            if self.config.nudge:
                await self._nudge(thread)
            else:
                await thread.send(
                    self.t("nudge.pointer"), allowed_mentions=discord.AllowedMentions.none()
                )
        except discord.HTTPException as exc:
            log.warning("could not answer a new help post: %s", exc)

    async def _starter_text(self, thread: discord.Thread) -> str:
        message = thread.starter_message
        if message is None:
            message = await thread.fetch_message(thread.id)
        return f"{thread.name}\n{message.content}"

    async def _nudge(self, thread: discord.Thread) -> None:
        desk = await self.desk()
        try:
            text = await self._starter_text(thread)
        except discord.HTTPException:
            text = thread.name

        def lines() -> tuple[list[str], list[str]]:  # worded as the ticket's post words them
            summary = summarise(desk.context.run({"text": text}), desk.form)
            t = desk.t
            missing = [
                t("ticket.missing_item", label=escape_markdown(m["label"]))
                for m in summary["missing"]
            ]
            pages = [
                t(
                    "ticket.suggestion",
                    title=escape_markdown(s["title"]),
                    page=desk.page_ref(s["page"]),
                    why=escape_markdown(s["why"]),
                )
                for s in summary["suggestions"]
            ]
            return missing, pages

        missing, pages = await self.bot.in_thread(lines)
        none = desk.t("ticket.none")
        reply = Reply(
            "ok",
            self.t("nudge.title"),
            self.t("nudge.pointer"),
            fields=(
                Field(self.t("nudge.missing"), "\n".join(missing) or none),
                Field(self.t("nudge.suggestions"), "\n".join(pages) or none),
            ),
        )
        view = flow_view(
            FlowButton(
                "post",
                str(thread.id),
                label=self.t("nudge.open"),
                style=discord.ButtonStyle.primary,
            )
        )
        await thread.send(
            embed=render.embed(reply),
            view=detached(view),
            allowed_mentions=discord.AllowedMentions.none(),
        )

    # ----------------------------------------------------------------- status

    async def status_field(self) -> Field:
        """One field for /wiki status: open and pending tickets, the checklist's source."""
        desk = await self.desk()

        def counts() -> tuple[int, int, str, int]:
            opened = desk.store.count_tickets(status="open")
            waiting = desk.store.posts_due(float("inf"), limit=50)
            error = next((t.post_error for t in reversed(waiting) if t.post_error), "")
            return opened, desk.pending_count(), error, desk.failed_count()

        opened, pending, error, failed = await self.in_store(counts)
        source = desk.form.source or self.t("status.builtin")
        failing = self.t("status.failing", error=error) if pending and error else ""
        problem = ""
        with contextlib.suppress(discord.HTTPException):
            forum = await self._forum()
            key = require_tag_problem(forum, self.config.default_tag) if forum else None
            if key:
                text = self.t(f"tag_problems.{key}", tag=self.config.default_tag)
                problem = self.t("status.problem", text=text)
        return Field(
            self.t("status.field"),
            self.t(
                "status.value",
                open=opened,
                pending=pending,
                failing=failing,
                failed=self.t("status.failed", count=failed) if failed else "",
                source=source,
                problem=problem,
            ),
        )
