"""/ask <question>: the wiki's answer in words, streamed, with its sections cited.

The knowledge layer does the work (:class:`knowledge.llm.Asker`): ranking and the
prompt in the knowledge threads, the stream on the loop (a few checks of the text per
piece), the checks of the answer. Here the stream is shown: a first response saying
how many sections are being read, edits as the text comes (:class:`PacedEditor`),
and a final edit with the checked answer and its cited sections, or the pages with
one sentence when no answer can be shown. The upstream request is cancelled when the
message goes away (dismissed, deleted) or the interaction's token runs out.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot import render
from bot.cooldowns import Cooldowns, cooldown
from bot.respond import in_time, send, send_reply
from knowledge.llm import Asker, Outcome, Plan, reply_of
from knowledge.llm.replies import above, empty_reply
from knowledge.reply import Field, Reply
from knowledge.templates import Templates, load_templates
from knowledge.text import escape_markdown, inline_code, neutralise_mentions

from ._stream import PacedEditor

if TYPE_CHECKING:
    from bot.client import WikiBot

__all__ = ["AskCog"]

log = logging.getLogger(__name__)

#: Seconds an interaction's token lasts for edits and follow-ups (Discord: 15 minutes).
TOKEN_LIFETIME = 15 * 60.0
_TOKEN_MARGIN = 30.0
#: Seconds a /support check waits for an answer in words before showing its pages alone.
SUPPORT_PATIENCE = 30.0
#: The draft fields that tell the story (the question) and those sent as context.
SUPPORT_STORY = ("text", "actual", "expected")
SUPPORT_CONTEXT = ("log", "command")
#: The longest question taken (Discord's text option allows up to 6,000).
MAX_QUESTION = 2000


class AskCog(commands.Cog):
    def __init__(self, bot: WikiBot) -> None:
        self.bot = bot
        assert bot.config.llm is not None
        self.config = bot.config.llm
        self.t: Templates = load_templates("llm.yaml")
        self.asker: Asker | None = None
        self.cooldowns = Cooldowns(1, max(self.config.cooldown_seconds, 0.001))
        self._streams: set[asyncio.Task[Any]] = set()

    async def cog_load(self) -> None:
        settings = self.config.settings(os.environ)
        self.asker = Asker(settings, max_concurrent=self.config.max_concurrent, templates=self.t)

    async def cog_unload(self) -> None:
        for task in list(self._streams):
            task.cancel()
        if self.asker is not None:
            await self.asker.aclose()

    # ----------------------------------------------------------------- /ask

    @app_commands.command(name="ask")
    @app_commands.describe(
        question="Your question in a sentence, e.g. why does the server hang after loading",
        private="Show the answer only to you (default: everyone in the channel sees it)",
    )
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    @app_commands.allowed_installs(guilds=True, users=True)
    @cooldown()
    async def ask(
        self,
        interaction: discord.Interaction,
        question: app_commands.Range[str, 1, MAX_QUESTION],
        private: bool = False,
    ) -> None:
        """Ask the wiki a question: a short answer in words, citing the wiki sections it rests on.

        Written by the community's model server from the best wiki sections only.
        """
        kb = self.bot.kb
        if not question.strip():
            await send_reply(interaction, empty_reply(self.t), kb, private=True)
            return
        if self.config.cooldown_seconds > 0:
            bucket = self.cooldowns.hit("ask", interaction.user.id)
            if bucket is not None:
                raise app_commands.CommandOnCooldown(bucket, self.cooldowns.retry_after(bucket))
        assert self.asker is not None
        state = kb.state
        # The ranking takes milliseconds, unless the knowledge threads are busy: then
        # "thinking…" first (in_time), which the first text replaces.
        plan = await in_time(
            interaction, self.bot.in_thread(self.asker.plan, state, question), ephemeral=private
        )
        if not plan.ask:
            outcome = await self.asker.answer(state, plan)  # counted; no model asked
            await send_reply(interaction, reply_of(state, self.t, outcome), kb, private=private)
            return
        await self.stream(interaction, plan, private=private)

    async def stream(self, interaction: discord.Interaction, plan: Plan, *, private: bool) -> None:
        """Answer ``plan`` in the interaction's message, editing it as the text comes."""
        assert self.asker is not None
        kb, state = self.bot.kb, self.bot.kb.state
        title = self.t("ask.title", question=_title(plan))
        writing = self.t("ask.writing", count=len(plan.retrieval.sources))
        await send(
            interaction,
            embed=render.embed(Reply("answer", title, footer=writing)),
            ephemeral=private,
        )

        async def edit(raw: str) -> None:  # the text checked here: at most once a second
            assert self.asker is not None
            text = self.asker.check(state, plan, raw).text
            embed = render.embed(Reply("answer", title, text + " \u2026", footer=writing))
            await interaction.edit_original_response(embed=embed)

        task: asyncio.Task[Outcome] | None = None

        def gone() -> None:
            if task is not None:
                task.cancel()

        editor = PacedEditor(edit, gone)

        editor.start()
        left = TOKEN_LIFETIME - _TOKEN_MARGIN - _age(interaction)
        task = asyncio.create_task(self._answer(state, plan, editor.show, left))
        self._streams.add(task)
        try:
            outcome = await task
        except asyncio.CancelledError:
            if not editor.gone and not task.cancelled():
                raise
            log.info("/ask: the answer's message went away; the model request was cancelled")
            return
        except TimeoutError:  # the token is about to die: nothing more can be shown
            log.info("/ask: the interaction's token ran out; the model request was cancelled")
            return
        finally:
            self._streams.discard(task)
            await editor.stop()
        reply = reply_of(state, self.t, outcome)
        try:
            await interaction.edit_original_response(
                embed=render.embed(reply, url=render.page_url(reply, kb))
            )
        except discord.NotFound:
            log.info("/ask: the answer's message went away before the final edit")

    async def _answer(self, state: Any, plan: Plan, on_text: Any, seconds: float) -> Outcome:
        assert self.asker is not None
        async with asyncio.timeout(max(1.0, seconds)):
            return await self.asker.answer(state, plan, on_text)

    # ----------------------------------------------------------------- for others

    async def with_answer(self, values: Mapping[str, str], reply: Reply) -> Reply:
        """A /support check's ``reply`` with the answer in words to the draft's
        ``values`` above its pages, when there is one to show (else ``reply`` as it is).

        The draft's story is the question, its log and launch command the context (all
        redacted again before they are sent); a declined, failed or slow answer adds
        nothing: the pages are the answer then, as without a model server.
        """
        if self.asker is None or not self.config.in_support:
            return reply
        question = "\n".join(values[k] for k in SUPPORT_STORY if values.get(k))
        context = {k: values[k] for k in SUPPORT_CONTEXT if values.get(k)}
        if not question.strip():
            return reply
        state = self.bot.kb.state
        plan = await self.bot.in_thread(self.asker.plan, state, question, context)
        if not plan.ask:
            return reply
        try:
            async with asyncio.timeout(min(self.config.total_timeout, SUPPORT_PATIENCE)):
                outcome = await self.asker.answer(state, plan)
        except TimeoutError:
            log.info("/support: no answer in words in time; the pages are shown alone")
            return reply
        if outcome.status != "answered":
            return reply
        return above(reply_of(state, self.t, outcome), reply, self.t("ask.support_heading"))

    def status_field(self) -> Field:
        """/wiki status: answering is on, with which model, and how it went lately."""
        assert self.asker is not None
        summary = self.asker.stats.summary()
        median = summary["median_seconds"]
        failure = summary["last_failure"]
        return Field(
            self.t("ask.status_title"),
            self.t(
                "ask.status",
                model=inline_code(self.config.model),
                recent=summary["recent"],
                answered=summary["answered"],
                declined=summary["declined"],
                fallback=summary["fallback"],
                median=self.t("ask.status_median", seconds=median)
                if median is not None
                else self.t("ask.status_no_median"),
                failure=self.t("ask.status_failure", reason=failure[1], when=_ago(failure[0]))
                if failure
                else self.t("ask.status_no_failure"),
            ),
        )


def _title(plan: Plan) -> str:
    return neutralise_mentions(escape_markdown(" ".join(plan.retrieval.question.split())[:200]))


def _age(interaction: discord.Interaction) -> float:
    return max(0.0, (discord.utils.utcnow() - interaction.created_at).total_seconds())


def _ago(when: float) -> str:
    seconds = max(0, int(time.time() - when))
    return f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s"
