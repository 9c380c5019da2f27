"""/support's intake: the form's steps (modals), the wiki's answer before filing, the flow's
buttons, and posts made in the help forum without /support (a pointer, or the nudge)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot import render
from bot.components import detached
from bot.cooldowns import cooldown
from bot.errors import report_failure, safe_choices
from bot.respond import answered, in_time, send
from knowledge.intake.desk import IntakeError, Saved, SupportDesk, Upload, summarise
from knowledge.intake.records import Draft
from knowledge.intake.validate import MAX_UPLOAD_BYTES
from knowledge.reply import Field, Reply
from knowledge.text import escape_markdown

from ._helpers import Submitted, parse_modal_id, read_submit, user_key
from ._views import FlowButton, check_view, flow_view, step_modal

__all__ = ["IntakeFlow"]

log = logging.getLogger(__name__)


class IntakeFlow:
    """The intake of :class:`~._cog.SupportCog` (a mixin: the cog holds the state)."""

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
        model = " ".join(model.split()) if model else None  # blank: no model given
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
            if step >= desk.form.steps:  # the last step: saved and checked in one trip
                saved, checked = await self.in_thread_storing(
                    self._saved_and_checked_now, desk, draft_id, user, values, uploads, step
                )
                if isinstance(saved, IntakeError) or checked is None:
                    return desk, saved, checked
                return desk, saved, await self._with_answer(saved.draft, checked)
            try:
                saved = await self.in_store(
                    desk.save, draft_id, user, values, uploads=uploads, step=step
                )
            except IntakeError as exc:
                return desk, exc, None
            return desk, saved, None

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
        """The wiki's answer to a finished draft, as just read (or why it cannot be
        checked yet)."""
        checked = await self.bot.in_thread(self._checked_now, desk, draft)
        return await self._with_answer(draft, checked)

    def _saved_and_checked_now(
        self,
        desk: SupportDesk,
        draft_id: str,
        user: str,
        values: dict[str, str],
        uploads: dict[str, Upload],
        step: int,
    ) -> tuple[Saved | IntakeError, Reply | IntakeError | None]:
        """The last step stored (redacted), then the wiki's answer to the draft as saved;
        or why it was refused (and no answer). Blocking: in a knowledge thread."""
        try:
            saved = desk.save(draft_id, user, values, uploads=uploads, step=step)
        except IntakeError as exc:
            return exc, None
        return saved, self._checked_now(desk, saved.draft)

    def _checked_now(self, desk: SupportDesk, draft: Draft) -> Reply | IntakeError:
        """The desk's answer to ``draft`` (:meth:`SupportDesk.check_reply`), or why it
        cannot be checked yet. Blocking: in a knowledge thread."""
        try:
            return desk.check_reply(draft, gaps=self.bot.kb.gaps)
        except IntakeError as exc:
            return exc

    async def _with_answer(self, draft: Draft, checked: Reply | IntakeError) -> Reply | IntakeError:
        """``checked`` with the answer in words above its pages (``llm.enabled``)."""
        if isinstance(checked, IntakeError):
            return checked
        ask = self.bot.get_cog("AskCog")
        return checked if ask is None else await ask.with_answer(draft.values, checked)

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
            if action == "private" and self.config.private_channel_id is None:
                # Set up when the check was shown, not now: never post the request
                # publicly when its asker chose private (the log may be why).
                await self._refuse(interaction, self.t("check.private_off"))
                return
            await self._file(interaction, desk, draft_id, user, private=action == "private")
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
