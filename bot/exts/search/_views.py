"""The /search pager: Previous / Next buttons that survive a restart.

Each button is a :class:`discord.ui.DynamicItem` whose ``custom_id`` carries the
page it turns to, the person who searched and a short key of the search
(``wikibot:sp:<page>:<user id>:<key>``), so any old message dispatches to it
after a restart. The key stands for the query and section, kept by
:class:`SearchMemory` in the data folder (a custom_id holds 100 characters; a
query may hold more). Pages already shown are kept in memory, per loaded wiki,
so turning back does not search again. Only the person who searched
may turn the pages; anyone else is answered privately.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discord

from bot import render
from bot.errors import report_failure
from bot.respond import in_time, send_reply, update
from knowledge.files import write_atomic

if TYPE_CHECKING:
    from bot.client import WikiBot
    from knowledge.reply import Reply

__all__ = ["PageButton", "SearchMemory", "search_view", "with_solved"]

log = logging.getLogger(__name__)

#: Searches whose key is remembered on disk (oldest forgotten first).
KEYS_KEPT = 2000
#: Result pages kept in memory.
PAGES_KEPT = 256
#: One line per search remembered (JSON: key, query, section), appended as searches come;
#: the query redacted (a pasted log may hold a token): a page turned after a restart
#: searches for what the redacted query says.
KEYS_FILE = "search-keys.jsonl"
#: What earlier versions wrote (one JSON object, rewritten whole): read if the log is absent.
_OLD_KEYS_FILE = "search-keys.json"
#: When a wiki was loaded, and its state (see :func:`loaded_now`).
Loaded = tuple[float, int]
#: A search remembered: its key and (query, section).
Entry = tuple[str, tuple[str, str | None]]


class SearchMemory:
    """Search keys (on disk, so pagers work after a restart) and shown pages (in memory).

    The keys are a log: a new search appends its line (a pasted question is up to
    4,000 characters, so rewriting the whole file per search wrote megabytes and
    serialised them under the interpreter lock). Once the file holds twice
    :data:`KEYS_KEPT` lines it is rewritten with the keys kept. Reading it, later
    lines win and a damaged line (a write cut short by a crash) is passed over.
    Writes are made in a worker thread, one at a time and in the order the searches
    came (:meth:`write`); what they write is taken on the caller's thread, so a write
    never reads the keys while a search changes them.
    """

    def __init__(self, folder: Callable[[], Path]) -> None:
        self._folder = folder
        self._keys: OrderedDict[str, tuple[str, str | None]] | None = None
        self._pages: OrderedDict[tuple[str, int, Loaded], Reply] = OrderedDict()
        #: Lines in the file (what it holds beyond the keys kept is rewritten away).
        self._lines = 0
        #: The file ends in a line cut short: the next line starts on a line of its own.
        self._torn = False
        self._writing = asyncio.Lock()

    @staticmethod
    def key_of(query: str, category: str | None) -> str:
        text = json.dumps([query, category or None])
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def path(self) -> Path:
        return self._folder() / KEYS_FILE

    def _loaded(self) -> OrderedDict[str, tuple[str, str | None]]:
        if self._keys is None:
            self._keys = OrderedDict()
            if self.path.is_file():
                self._lines = self._read_log(self._keys)
            else:
                self._read_old(self._keys)
                # Written as a log at the first new search, the old file then removed.
                self._lines = 2 * KEYS_KEPT if self._keys else 0
            while len(self._keys) > KEYS_KEPT:
                self._keys.popitem(last=False)
        return self._keys

    def _read_log(self, keys: OrderedDict[str, tuple[str, str | None]]) -> int:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return 0
        self._torn = bool(text) and not text.endswith("\n")
        lines = text.splitlines()
        for line in lines:
            try:
                key, query, category = json.loads(line)
            except (ValueError, TypeError):
                continue  # cut short by a crash, or damaged: that search is forgotten
            if isinstance(key, str) and isinstance(query, str):
                keys[key] = (query, category if isinstance(category, str) else None)
                keys.move_to_end(key)
        return len(lines)

    def _read_old(self, keys: OrderedDict[str, tuple[str, str | None]]) -> None:
        old = self._folder() / _OLD_KEYS_FILE
        if not old.is_file():
            return
        try:
            stored = json.loads(old.read_text(encoding="utf-8"))
            for key, (query, category) in stored.items():
                keys[str(key)] = (str(query), category or None)
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring unreadable %s: %s", old, exc)

    def remember(self, query: str, category: str | None) -> tuple[str, Callable[[], None] | None]:
        """The key of a search, and, when it is new, the write that keeps it on disk
        (to run with :meth:`write`)."""
        keys = self._loaded()
        key = self.key_of(query, category)
        new = key not in keys
        keys[key] = (query, category or None)
        keys.move_to_end(key)
        while len(keys) > KEYS_KEPT:
            keys.popitem(last=False)
        if not new:
            return key, None
        self._lines += 1
        if self._lines > 2 * KEYS_KEPT:
            self._lines = len(keys)
            return key, functools.partial(self._rewrite, list(keys.items()))
        return key, functools.partial(self._append, (key, (query, category or None)))

    async def write(self, pending: Callable[[], None]) -> None:
        """Run a write of :meth:`remember` in a worker thread, after those before it."""
        async with self._writing:
            await asyncio.to_thread(pending)

    def _append(self, entry: Entry) -> None:
        key, (query, category) = entry
        query = _on_disk(query)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write("\n" * self._torn + json.dumps([key, query, category]) + "\n")
            self._torn = False
        except OSError as exc:
            log.warning("could not save the search key to %s: %s", self.path, exc)

    def _rewrite(self, entries: list[Entry]) -> None:
        text = "".join(
            json.dumps([key, _on_disk(query), category]) + "\n"
            for key, (query, category) in entries
        )
        try:
            write_atomic(self.path, text)
            self._torn = False
            (self._folder() / _OLD_KEYS_FILE).unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not save the search keys to %s: %s", self.path, exc)

    def search_of(self, key: str) -> tuple[str, str | None] | None:
        return self._loaded().get(key)

    def page(self, key: str, page: int, loaded: Loaded) -> Reply | None:
        reply = self._pages.get((key, page, loaded))
        if reply is not None:
            self._pages.move_to_end((key, page, loaded))
        return reply

    def keep(self, key: str, page: int, loaded: Loaded, reply: Reply) -> None:
        self._pages[(key, page, loaded)] = reply
        while len(self._pages) > PAGES_KEPT:
            self._pages.popitem(last=False)


class PageButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"wikibot:sp:(?P<page>\d{1,4}):(?P<owner>\d{1,20}):(?P<key>[0-9a-f]{12})",
):
    """Turns a /search answer to ``page``, for the person who searched."""

    def __init__(self, page: int, owner_id: int, key: str, label: str, *, primary: bool) -> None:
        style = discord.ButtonStyle.primary if primary else discord.ButtonStyle.secondary
        super().__init__(
            discord.ui.Button(
                label=label, style=style, custom_id=f"wikibot:sp:{page}:{owner_id}:{key}"
            )
        )
        self.page, self.owner_id, self.key = page, owner_id, key

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: Any, /
    ) -> PageButton:
        primary = item.style is discord.ButtonStyle.primary
        return cls(
            int(match["page"]), int(match["owner"]), match["key"], item.label or "", primary=primary
        )

    async def callback(self, interaction: discord.Interaction) -> None:
        try:
            await self._turn(interaction)
        except Exception as exc:
            await report_failure(interaction, exc)

    async def _turn(self, interaction: discord.Interaction) -> None:
        bot: WikiBot = interaction.client  # type: ignore[assignment]
        t = bot.t
        if interaction.user.id != self.owner_id:
            embed = render.message_embed(
                t("errors.refused_title"), t("search.not_yours"), kind="not_found"
            )
            await interaction.response.send_message(embed=embed, ephemeral=True)
            return
        search = memory_of(bot).search_of(self.key)
        if search is None:  # the key file was lost: nothing to page through any more
            embed = render.message_embed(
                t("search.expired_title"), t("search.expired"), kind="unavailable"
            )
            await interaction.response.send_message(embed=embed, ephemeral=True)
            return

        # A page not shown before may need the index (in a thread): acknowledged only
        # if it takes longer than the bot's patience (in_time).
        async def turned() -> Reply:
            reply = await page_of(bot, self.key, search, self.page)
            return await with_solved(bot, interaction.guild_id, reply, search[0])

        reply = await in_time(interaction, turned(), update=True)
        if reply.kind == "error":  # the bot's side: the results and their pager stay
            await send_reply(interaction, reply, bot.kb, private=True)
            return
        deletable = _has_delete(interaction.message)
        view = search_view(bot, reply, self.owner_id, self.key, deletable=deletable)
        await update(
            interaction,
            embed=render.embed(reply, url=render.page_url(reply, bot.kb)),
            view=view or discord.ui.View(),
        )


def _on_disk(query: str) -> str:
    """``query`` as the key file keeps it: redacted (in the writer's thread)."""
    from knowledge.triage.redact import redact

    return redact(query, "query").text


def loaded_now(bot: WikiBot) -> Loaded:
    """Stands for the wiki as loaded now (every load makes a new state, at its own
    moment), so a page kept for one wiki is never shown for another. The wiki's
    revision would do as well but hashes every page's name and hash at each call: on
    the event loop, for every search."""
    state = bot.kb.state
    return state.loaded_at, id(state)


def memory_of(bot: WikiBot) -> SearchMemory:
    """The search cog's memory (the cog is loaded whenever a pager can be pressed)."""
    return bot.get_cog("SearchCog").memory  # type: ignore[union-attr]


async def answer_search(bot: WikiBot, query: str, category: str | None, page: int = 1) -> Reply:
    """Page ``page`` of the search for ``query``: on the event loop when the answer is at
    hand (a pasted question, bounded work in memory: see ``KnowledgeBase.search_at_hand``),
    else in a knowledge thread. Handed to a thread while the loop is busy, a 2-4 ms
    answer costs about twice its CPU in the contest for the interpreter lock."""
    kb = bot.kb
    reply = kb.search_at_hand(query, category=category, page=page)
    if reply is None:
        reply = await bot.in_thread(kb.search, query, category=category, page=page)
    return reply


async def with_solved(bot: WikiBot, guild_id: int | None, reply: Reply, query: str) -> Reply:
    """``reply`` with "a similar ticket was solved" beside the wiki's sections when a
    solved ticket asked much the same as ``query`` (the support desk decides, as for the
    /support check). Only in the server of the tickets (see ``SupportCog.home_guilds``):
    a search elsewhere (a DM, another server) shows nothing of them. The offer is kept
    whole: sections are left out, the last first, to fit Discord's embed limits."""
    support = bot.get_cog("SupportCog")
    if support is None or guild_id not in support.home_guilds():  # type: ignore[attr-defined]
        return reply
    try:
        offer = await support.solved_like(query)  # type: ignore[attr-defined]
    except Exception:  # the wiki's answer stands without it
        log.exception("looking for a solved ticket like a search failed")
        return reply
    if offer is None:
        return reply
    sections = list(reply.fields)
    while True:
        shown = dataclasses.replace(reply, fields=(*sections, offer)).fitted()
        if not sections or (shown.fields and shown.fields[-1].name == offer.name):
            return shown
        sections.pop()


async def page_of(bot: WikiBot, key: str, search: tuple[str, str | None], page: int) -> Reply:
    """One page of a search: from memory when already shown on the wiki loaded now."""
    loaded = loaded_now(bot)
    reply = memory_of(bot).page(key, page, loaded)
    if reply is None:
        query, category = search
        reply = await answer_search(bot, query, category, page)
        if reply.ok:
            memory_of(bot).keep(key, int(reply.meta.get("page", page)), loaded, reply)
    return reply


async def remember(bot: WikiBot, reply: Reply) -> str:
    """The key of the search ``reply`` answers (saved to disk when new); its page kept."""
    query, category = reply.meta["query"], reply.meta.get("category")
    memory = memory_of(bot)
    key, pending = memory.remember(query, category)
    memory.keep(key, int(reply.meta.get("page", 1)), loaded_now(bot), reply)
    if pending is not None:
        await memory.write(pending)
    return key


def _has_delete(message: discord.Message | None) -> bool:
    if message is None:
        return False
    return any(
        getattr(child, "custom_id", "").startswith("wikibot:del:")
        for row in message.components
        for child in getattr(row, "children", ())
    )


def search_view(
    bot: WikiBot, reply: Reply, owner_id: int, key: str, *, deletable: bool
) -> discord.ui.View | None:
    """Previous / page n of m / Next (when there is more than one page), and Delete."""
    from bot.components import DeleteButton

    view = discord.ui.View(timeout=None)
    page, pages = int(reply.meta.get("page", 1)), int(reply.meta.get("pages", 1))
    t = bot.t
    if reply.ok and pages > 1:
        previous = PageButton(max(1, page - 1), owner_id, key, t("search.previous"), primary=False)
        previous.item.disabled = page <= 1
        counter = discord.ui.Button(
            label=t("search.page", page=page, pages=pages),
            custom_id=f"wikibot:sp:at:{key}",
            disabled=True,
        )
        following = PageButton(min(pages, page + 1), owner_id, key, t("search.next"), primary=True)
        following.item.disabled = page >= pages
        view.add_item(previous)
        view.add_item(counter)
        view.add_item(following)
    if deletable:
        view.add_item(DeleteButton(owner_id, t("answers.delete")))
    return view if view.children else None
