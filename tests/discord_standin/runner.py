"""Start a bot under test against the stand-in, and stop it cleanly.

:class:`run_bot` is the async context manager that does the whole dance inside
the running event loop; :class:`StandinRunner` (what the ``discord_standin``
fixture yields) wraps it in ``asyncio.run`` for plain, synchronous pytest tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from types import TracebackType
from typing import Literal, TypeVar

import discord
import discord.gateway
import discord.http
import yarl

from .records import Problem, StandinFailure
from .server import Standin, StandinConfig

__all__ = ["BotFactory", "LogWatcher", "StandinRunner", "pointed_at", "run_bot"]

T = TypeVar("T")

#: ``factory(http_trace=...)`` (or ``connector=...``, see ``run_bot``'s ``guard``) returning the
#: (not yet started) client, or an awaitable of it.
BotFactory = Callable[..., "discord.Client | Awaitable[discord.Client]"]


class LogWatcher(logging.Handler):
    """Feeds WARNING+ records of the watched loggers to the stand-in (ERROR+ fail)."""

    def __init__(self, standin: Standin) -> None:
        super().__init__(logging.WARNING)
        self.standin = standin
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # a broken log call must still be reported
            text = f"{record.levelname} {record.name}: {record.msg!r} % {record.args!r}"
        self.standin.on_log_record(record, text)


@contextlib.contextmanager
def pointed_at(standin: Standin) -> Iterator[None]:
    """Point discord.py's REST base and default gateway at ``standin``; restore after."""
    old_base = discord.http.Route.BASE
    old_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = standin.base_url
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(standin.gateway_url)
    try:
        yield
    finally:
        discord.http.Route.BASE = old_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = old_gateway


class run_bot:  # lower case: used like a function, ``async with run_bot(...) as standin``
    """``async with run_bot(factory) as standin:`` - a connected bot and its stand-in.

    On entry: start the stand-in, patch discord.py, watch the error loggers, build
    the client with ``factory(http_trace=standin.trace)``, force the fast start-up
    settings onto it, ``client.start(token)`` and wait until it is ready (setup_hook
    and any command sync included). On exit: let in-flight work settle, close the
    client, restore everything, then raise :class:`StandinFailure` listing every
    problem (ERROR logs, unknown routes, non-loopback hosts, a crashed ``start()``)
    that no helper has reported yet.

    ``remote_port``: the stand-in already serves in another process on that loopback
    port (a benchmark keeps Discord's side off the bot's process, as in production).
    Nothing is served here: the bot is pointed at that port, and the local
    :class:`Standin` only guards the bot's hosts, watches its error logs and reports
    (its records stay empty; drive and read the remote one).

    ``guard``: how the bot is kept on loopback. ``"trace"`` (tests):
    ``factory(http_trace=standin.trace)``, an aiohttp trace config. ``"connector"``
    (benchmarks): ``factory(connector=standin.loopback_connector())``, the same host test
    in the connector, without the trace events aiohttp sends at every step of every
    request when a trace config is set (the bot in production has none).
    """

    def __init__(
        self,
        bot_factory: BotFactory,
        config: StandinConfig | None = None,
        *,
        remote_port: int | None = None,
        guard: Literal["trace", "connector"] = "trace",
    ) -> None:
        if guard not in ("trace", "connector"):
            raise ValueError(f"guard must be 'trace' or 'connector', not {guard!r}")
        self.bot_factory = bot_factory
        self.standin = Standin(copy.deepcopy(config) if config else StandinConfig())
        self.remote_port = remote_port
        self.guard = guard
        self.client: discord.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._watchers: list[tuple[logging.Logger, LogWatcher]] = []
        self._patch: contextlib.AbstractContextManager[None] | None = None

    async def __aenter__(self) -> Standin:
        standin = self.standin
        if self.remote_port is None:
            await standin.start()
        else:
            standin.port = self.remote_port
        self._patch = pointed_at(standin)
        self._patch.__enter__()
        watcher = LogWatcher(standin)
        for name in standin.config.error_loggers:
            logger = logging.getLogger(name)
            logger.addHandler(watcher)
            self._watchers.append((logger, watcher))
        try:
            await self._start_client()
        except BaseException as exc:
            await self._shutdown()
            leftovers = standin.unreported()
            if leftovers:
                exc.add_note(standin.report("The stand-in recorded:", leftovers))
            raise
        return standin

    async def _start_client(self) -> None:
        standin = self.standin
        if self.guard == "trace":
            guard: object = standin.trace
            made = self.bot_factory(http_trace=guard)
        else:
            guard = standin.loopback_connector()
            made = self.bot_factory(connector=guard)
        client = await made if inspect.isawaitable(made) else made
        if not isinstance(client, discord.Client):
            raise TypeError(f"the bot factory returned {client!r}, not a discord.Client")
        self.client = standin.client = client
        used = getattr(client.http, "http_trace" if self.guard == "trace" else "connector", None)
        if used is not guard:
            name = "http_trace" if self.guard == "trace" else "connector"
            raise StandinFailure(
                f"the bot factory must pass {name}= on to discord.Client(...): without it"
                " nothing stops the bot from reaching hosts other than loopback"
            )
        state = client._connection
        state.guild_ready_timeout = standin.config.guild_ready_timeout
        if standin.config.chunk_guilds_at_startup is not None:
            state._chunk_guilds = standin.config.chunk_guilds_at_startup
        task = asyncio.create_task(client.start(standin.config.token), name="bot-under-test")
        self._task = task
        task.add_done_callback(self._on_task_done)

        def ready() -> bool | None:
            return True if client.is_ready() or task.done() else None

        await standin.wait_until(
            ready,
            timeout=standin.config.startup_timeout,
            what="the bot to become ready",
            poll=0.005,
        )
        if task.done():
            exc = task.exception()
            if exc is not None:
                raise exc
            raise StandinFailure("the bot's start() returned before the bot was ready")

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if self.client is not None and self.client.is_ready():
            # It died after start-up: nothing will answer any more.
            self.standin.add_problem("bot-died", f"client.start() raised {exc!r}")

    async def _shutdown(self) -> None:
        client, task = self.client, self._task
        try:
            if client is not None and not client.is_closed():
                await asyncio.wait_for(client.close(), 5)
            if task is not None and not task.done():
                try:
                    await asyncio.wait_for(task, 5)
                except TimeoutError:
                    self.standin.add_problem("shutdown", "client.start() did not return on close()")
                except Exception:  # reported by _on_task_done
                    pass
        finally:
            for logger, watcher in self._watchers:
                logger.removeHandler(watcher)
            self._watchers.clear()
            if self._patch is not None:
                self._patch.__exit__(None, None, None)
                self._patch = None
            await self.standin.close()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None and self.remote_port is None:
            await self.standin.settle()
        await self._shutdown()
        self.standin.finish_expectations()
        leftovers = self.standin.unreported()
        if not leftovers:
            return
        text = self.standin.report("The stand-in recorded problems:", leftovers)
        if exc is None:
            raise StandinFailure(text)
        exc.add_note(text)


class StandinRunner:
    """What the ``discord_standin`` fixture yields: runs scenarios in a fresh event loop.

    ``config`` is copied for each run; change it first (e.g.
    ``discord_standin.config.response_deadline = 0.05``). ``last`` is the stand-in
    of the latest run, kept for assertions after ``run`` returned or raised.
    """

    def __init__(self, config: StandinConfig | None = None) -> None:
        self.config = config or StandinConfig()
        self.last: Standin | None = None
        self.runs: list[Standin] = []

    def run(
        self,
        bot_factory: BotFactory,
        scenario: Callable[[Standin], Awaitable[T]],
        *,
        config: StandinConfig | None = None,
    ) -> T:
        """Start the bot, ``await scenario(standin)``, stop; return what it returned."""

        async def main() -> T:
            manager = run_bot(bot_factory, config or self.config)
            self.last = manager.standin
            self.runs.append(manager.standin)
            async with manager as standin:
                return await scenario(standin)

        return asyncio.run(main())

    def unreported(self) -> list[Problem]:
        return [p for standin in self.runs for p in standin.unreported()]
