"""``WikiBot``: the Discord client, its start-up and the knowledge base it serves.

``setup_hook`` runs once, before the gateway connects: it opens the knowledge
base in a worker thread (reusing the on-disk index), loads one extension per
area, and syncs the commands to the configured guilds only. A global sync is an
explicit action (``wikibot sync --global`` or ``/wiki sync``), as in discord.py's
``examples/advanced_startup.py``.

Keeping the event loop responsive (figures in ``benchmarks/discord_bench.py``):

- Knowledge calls that search run in a small pool of their own
  (:meth:`WikiBot.in_thread`, two threads) rather than ``asyncio.to_thread``'s
  default pool (up to 32 threads): searches hold the GIL, so every extra thread
  is one more contender the event loop waits behind. A reindex uses the default
  pool, so searches keep being answered while it runs.
- The interpreter switches threads every 1 ms instead of 5 ms, so the loop gets
  the GIL back quickly while searches or a reindex run.
- Once the wiki is loaded its objects are frozen out of the cyclic garbage
  collector (``gc.freeze()``): a full collection walking them paused the loop
  for 50-75 ms on the real wiki.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import gc
import logging
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import discord
from discord.ext import commands

from knowledge.gaps import GapSettings
from knowledge.service import KnowledgeBase
from knowledge.source import Follower, HttpSettings, SourceSettings
from knowledge.templates import Templates, load_templates

from .components import DeleteButton
from .config import BotConfig, data_dir_of
from .cooldowns import Cooldowns
from .errors import WikiTree
from .heartbeat import HEARTBEAT_EVERY
from .metrics import BotMetrics
from .shutdown import STOP_GRACE, finish_work

__all__ = ["EXTENSIONS", "FrozenHeap", "WikiBot", "trim_heap"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Threads for knowledge calls (searches): more only adds contenders for the GIL.
KNOWLEDGE_THREADS = 2
#: Seconds between forced thread switches (CPython's default is 0.005).
SWITCH_INTERVAL = 0.001

EXTENSIONS = (
    "bot.exts.runbook",
    "bot.exts.glossary",
    "bot.exts.search",
    "bot.exts.admin",
    "bot.exts.help",
    "bot.exts.upkeep",
    "bot.exts.welcome",
    "bot.exts.support",
    "bot.exts.stats",
)

#: /ask, loaded only with ``llm.enabled`` (off: the bot has no /ask at all).
ASK_EXTENSION = "bot.exts.ask"


class FrozenHeap:
    """``gc.freeze()`` after each (re)load, with the garbage it keeps bounded.

    Freezing keeps full collections from walking the wiki (a 50-75 ms pause on
    the real wiki). Objects a reload drops are freed by reference counting even
    when frozen, except reference cycles, which stay in the frozen generation
    (about ten objects per refresh: Whoosh's searcher and readers).
    Collecting them costs one full collection (60-150 ms on the event loop), so it
    is done only when the heap has grown by ``growth`` since the last
    collection, and only where the caller allows it: the periodic refresh does,
    ``/wiki reindex`` does not (an admin is waiting and searches are running).

    The heap's size is ``sys.getallocatedblocks()`` (the interpreter's object
    blocks in use), read in well under a millisecond: counting the frozen objects
    instead (``gc.get_freeze_count()``) walks every one of them, 40-60 ms on the
    event loop at each refresh of the real wiki and ten times that at 10x.
    """

    def __init__(self, growth: float = 1.5) -> None:
        self.growth = growth
        self.baseline: int | None = None
        self._building = 0
        self._was_enabled = False

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        """Automatic cyclic collection off while a wiki is loaded and its page ranker built
        in a worker thread, then as it was.

        They make millions of long-lived, acyclic objects; each automatic full collection
        meanwhile walks all of them with the interpreter lock held, so the event loop
        stalls (40-90 ms per collection at 10x the wiki). At the end what was made is
        frozen before collection is turned back on: left in the young generation, it
        would all be walked by the very next collection, one long pause. Call
        :meth:`settle` after, as after any load. Nested uses count; the setting before
        the first is restored after the last.
        """
        if self._building == 0:
            self._was_enabled = gc.isenabled()
            gc.disable()
        self._building += 1
        try:
            yield
        finally:
            self._building -= 1
            if self._building == 0:
                gc.freeze()
                if self._was_enabled:
                    gc.enable()

    def settle(self, *, collect: bool = True) -> bool:
        """Freeze what is alive; True when frozen garbage was collected first. Either
        way the C heap's free pages are then handed back to the system (:func:`trim_heap`)."""
        try:
            return self._settle(collect)
        finally:
            trim_heap()

    def _settle(self, collect: bool) -> bool:
        gc.freeze()
        size = sys.getallocatedblocks()
        if self.baseline is None:
            self.baseline = size
            return False
        if not collect or size <= self.baseline * self.growth:
            return False
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.baseline = sys.getallocatedblocks()
        return True


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:  # the C library the interpreter runs on (no lookup, no subprocess)
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``).

    A load and its page ranker's build make and free hundreds of MB of short-lived
    objects; glibc keeps the freed pages, so the process stayed that much bigger for
    good: 48 MB at 10x the wiki (measured with benchmarks/memory_bench.py), 2 MB at
    1x. It takes about 5 ms at 10x, once per load.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class WikiBot(commands.Bot):
    """The wiki bot. Extra keyword arguments go to :class:`discord.Client` (tests pass
    ``http_trace`` and ``guild_ready_timeout``).

    ``refresh_interval`` (seconds; default ``config.refresh_minutes``, 0: off) and
    ``heartbeat_interval`` pace the upkeep loops (``bot.exts.upkeep``); tests pass
    fractions of a second.
    """

    def __init__(
        self,
        config: BotConfig,
        *,
        knowledge: KnowledgeBase | None = None,
        follower: Follower | None = None,
        open_knowledge: bool = True,
        sync_on_start: bool = True,
        refresh_interval: float | None = None,
        heartbeat_interval: float = HEARTBEAT_EVERY,
        stop_grace: float = STOP_GRACE,
        **kwargs: Any,
    ) -> None:
        # The bot has no voice: discord.py's warnings about voice libraries say nothing.
        discord.VoiceClient.warn_nacl = False
        discord.VoiceClient.warn_dave = False
        intents = discord.Intents.none()
        intents.guilds = True  # app commands need nothing else: no message content, no members
        # ...but reading a new help post for the optional /support nudge does.
        intents.message_content = config.support.nudge
        # ...and who wrote last in a ticket's thread, and when (no content): stale tickets,
        # and the first helper reply in a ticket's post (metrics). The messages of the
        # guild: their authors and times, no content without the intent above.
        support = config.support
        intents.guild_messages = support.forum_channel_id is not None or bool(
            support.remind_after_days or support.close_after_days
        )
        kwargs.setdefault("intents", intents)
        kwargs.setdefault("allowed_mentions", discord.AllowedMentions.none())
        kwargs.setdefault("chunk_guilds_at_startup", False)
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            tree_cls=WikiTree,
            **kwargs,
        )
        self.config = config
        self.t: Templates = load_templates("bot.yaml")
        self.cooldowns = Cooldowns(config.cooldown.rate, config.cooldown.per)
        self._kb = knowledge
        self._owns_kb = knowledge is None
        self._open_knowledge = open_knowledge
        self._sync_on_start = sync_on_start
        self.refresh_interval = (
            config.refresh_minutes * 60 if refresh_interval is None else refresh_interval
        )
        self.heartbeat_interval = heartbeat_interval
        #: Held by whatever reloads the wiki (/wiki reindex, the periodic refresh): one at a time.
        self.reload_lock = asyncio.Lock()
        self._pool = ThreadPoolExecutor(KNOWLEDGE_THREADS, thread_name_prefix="wikibot-knowledge")
        #: Fetches and follows ``wiki.source`` (None when the wiki is a local folder).
        self.follower = follower
        if follower is None and config.wiki_source is not None:
            settings = SourceSettings(
                config.wiki_source,
                config.api_url,
                config.caps,
                HttpSettings(api_url=config.api_url, http2=config.http2),
            )
            self.follower = Follower(settings, data_dir_of(config))
        self._heap = FrozenHeap()
        #: Guilds whose last command sync failed, and why (shown by /wiki status).
        self.sync_failures: dict[int, str] = {}
        #: Registered command ids by scope (guild id, None: global) and name, for mentions.
        self.command_ids: dict[int | None, dict[str, int]] = {}
        #: Seconds the work in flight may take once :meth:`stop` was asked for.
        self.stop_grace = stop_grace
        self._stopping: asyncio.Task[None] | None = None
        self._stop_at: float | None = None
        self._closed = False
        #: Figures for Prometheus (served when ``metrics.port`` is set) and /wiki stats.
        self.metrics = BotMetrics(self)

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            raise RuntimeError("the knowledge base is not open yet (setup_hook has not run)")
        return self._kb

    def _load_knowledge(self) -> KnowledgeBase:
        config = self.config
        data_dir = data_dir_of(config)
        if self.follower is None:
            kb = KnowledgeBase.open(config.wiki_dir, data_dir, link_base=config.link_base)
        else:
            # A fresh machine has no generation yet: the first fetch happens here.
            live = self.follower.ensure()
            link_base = config.link_base or live.link_base
            kb = KnowledgeBase.open(live.path, data_dir, link_base=link_base)
        _ = kb.state.ranker  # built now, before the heap is frozen, not on a first question
        gaps = config.gaps
        kb.record_gaps(GapSettings(enabled=gaps.enabled, keep_days=gaps.keep_days))
        return kb

    async def in_thread(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a (slow, synchronous) knowledge call in the bot's knowledge threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(func, *args, **kwargs))

    def submit(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Hand ``func`` to the knowledge threads; its future, for a caller that must
        know when it ends whatever becomes of the task awaiting it (``asyncio.wrap_future``
        awaits it)."""
        return self._pool.submit(func, *args, **kwargs)

    def building(self) -> contextlib.AbstractContextManager[None]:
        """Around a (re)load and its page ranker's build (see :meth:`FrozenHeap.building`)."""
        return self._heap.building()

    def settle_memory(self, *, collect: bool = True) -> None:
        """Move everything alive now (the loaded wiki) out of the cyclic GC's way.

        ``collect=False`` never runs a full collection now (see :class:`FrozenHeap`).
        """
        self._heap.settle(collect=collect)
        if self._kb is not None:  # every (re)load ends here: its time, for the wiki's age
            self.metrics.wiki_loaded(self._kb.state)

    async def setup_hook(self) -> None:
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        if self._kb is None and self._open_knowledge:
            # Parsing the wiki and opening the index take seconds: never on the event loop.
            self._kb = await asyncio.to_thread(self._load_knowledge)
        self.settle_memory()
        if self._open_knowledge:  # serving (not `wikibot sync`): count, and serve if asked
            self.metrics.start(self.config.metrics.host, self.config.metrics.port)
        self.add_dynamic_items(DeleteButton)  # under public answers of several commands
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        if self.config.llm is not None:  # answers in words: only when configured
            await self.load_extension(ASK_EXTENSION)
        if self._sync_on_start:
            for guild_id in self.config.guild_ids:
                # One guild refusing (the app is not installed there) must not stop the bot.
                await self.try_sync(guild_id)

    async def sync_commands(self, guild_id: int | None) -> int:
        """Register the commands with Discord in one guild, or globally when ``None``."""
        if guild_id is None:
            synced = await self.tree.sync()
            log.info("synced %d commands globally", len(synced))
        else:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to guild %s", len(synced), guild_id)
            self.sync_failures.pop(guild_id, None)
        self.command_ids[guild_id] = {command.name: command.id for command in synced}
        return len(synced)

    async def try_sync(self, guild_id: int) -> int | None:
        """:meth:`sync_commands` for one guild; a refusal is logged, kept in
        :attr:`sync_failures` and answered with None instead of raised."""
        try:
            return await self.sync_commands(guild_id)
        except discord.HTTPException as exc:
            why = self.t("sync.failure", status=exc.status, code=exc.code, text=exc.text)
            hint = self.t("sync.failure_hint") if exc.code == 50001 else ""
            self.sync_failures[guild_id] = f"{why} {hint}".strip()
            log.warning("could not sync the commands to guild %s: %s", guild_id, why)
            return None

    async def guilds_with_copies(self, guild_ids: list[int]) -> list[int]:
        """Which of ``guild_ids`` still hold per-guild copies of the commands."""
        found = []
        for guild_id in guild_ids:
            try:
                registered = await self.http.get_guild_commands(self.application_id, guild_id)
            except discord.HTTPException as exc:  # not in that guild any more: nothing to clear
                log.info("cannot read the commands of guild %s: %s", guild_id, exc)
                continue
            if registered:
                found.append(guild_id)
        return found

    async def clear_guild_copies(self, guild_ids: list[int]) -> list[int]:
        """Remove the per-guild copies (after a global sync they show every command twice)."""
        cleared = []
        for guild_id in guild_ids:
            try:
                await self.http.bulk_upsert_guild_commands(self.application_id, guild_id, [])
            except discord.HTTPException as exc:
                log.warning("could not clear the commands of guild %s: %s", guild_id, exc)
                continue
            self.tree.clear_commands(guild=discord.Object(id=guild_id))
            self.command_ids.pop(guild_id, None)
            cleared.append(guild_id)
        return cleared

    async def registered_commands(self, guild_id: int | None) -> dict[str, int]:
        """Command ids Discord holds for a guild (None: globally), read once then kept
        (kept only when there are some)."""
        if guild_id not in self.command_ids:
            try:
                if guild_id is None:
                    data = await self.http.get_global_commands(self.application_id)
                else:
                    data = await self.http.get_guild_commands(self.application_id, guild_id)
            except discord.HTTPException as exc:
                log.info("cannot read the registered commands of %s: %s", guild_id, exc)
                return {}
            ids = {c["name"]: int(c["id"]) for c in data}
            if not ids:  # a sync from elsewhere (wikibot sync) may come later: ask again then
                return ids
            self.command_ids[guild_id] = ids
        return self.command_ids[guild_id]

    def is_admin(self, interaction: discord.Interaction) -> bool:
        """Manage Server, or a role the config names as admin. Never true in a DM."""
        member = interaction.user
        if interaction.guild_id is None or not isinstance(member, discord.Member):
            return False
        if interaction.permissions.manage_guild:
            return True
        admin_roles = set(self.config.admin_role_ids)
        return any(role.id in admin_roles for role in member.roles)

    async def on_ready(self) -> None:
        log.info("logged in as %s (%s) in %d guilds", self.user, self.user.id, len(self.guilds))

    # --- stopping (see bot.shutdown) ---------------------------------------------------

    def is_closed(self) -> bool:
        # A stop under way counts as closed: discord.py's connect loop then ends when the
        # gateway closes, instead of reconnecting.
        return self._stopping is not None or super().is_closed()

    def time_left(self) -> float | None:
        """Seconds left for the work of a requested stop (None: no stop asked for)."""
        if self._stop_at is None:
            return None
        return max(0.0, self._stop_at - asyncio.get_running_loop().time())

    async def stop(self) -> None:
        """Stop gracefully: close the gateway, let the handlers running finish within
        :attr:`stop_grace` seconds, then :meth:`close` (stores flushed and closed)."""
        if self._stopping is None:
            self._stopping = asyncio.create_task(self._stop(), name="wikibot-stop-work")
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        self._stop_at = started + self.stop_grace
        if self.ws is not None and self.ws.open:
            try:
                await asyncio.wait_for(self.ws.close(code=1000), self.time_left())
            except (OSError, TimeoutError) as exc:
                log.info("the gateway did not close cleanly: %r", exc)
        log.info("gateway closed; letting the work in flight finish")
        finished, cancelled = await finish_work(self.time_left() or 0.0)
        if cancelled:
            log.warning(
                "stopping: %d task(s) cut short after %.1f s: %s",
                len(cancelled),
                self.stop_grace,
                ", ".join(cancelled),
            )
        await self.close()
        log.info(
            "stopped in %.2f s (%d task(s) in flight finished)", loop.time() - started, finished
        )

    async def __aexit__(self, *exc_info: Any) -> None:
        # discord.py's own exit waits only for its part of closing (the gateway and the
        # HTTP session): a stop under way goes on to close the index and the stores, and
        # the loop must not end (cancelling it) before it has.
        if self._stopping is not None:
            await asyncio.shield(self._stopping)
            return
        await super().__aexit__(*exc_info)

    async def close(self) -> None:
        stopping = self._stopping
        if stopping is not None and asyncio.current_task() is not stopping:
            await asyncio.shield(stopping)  # the stop closes the bot once its work is done
            return
        if self._closed:
            return
        self._closed = True
        await super().close()
        self.metrics.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._owns_kb and self._kb is not None:
            await asyncio.to_thread(self._kb.close)
        if self.follower is not None:
            self.follower.close()
