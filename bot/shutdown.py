"""Stopping ``wikibot serve`` on SIGTERM or SIGINT without losing what was under way.

``docker stop`` (and systemd, and Ctrl-C) sends SIGTERM, then SIGKILL after a grace
period (10 s by default). A stop, in order:

1. the gateway is closed (code 1000), so no new interaction arrives
   (:meth:`bot.client.WikiBot.stop`);
2. the work in flight is let finish: every handler discord.py is running for an
   event, a slash command, a button or a form (a ticket being filed, a draft being
   saved, an answer being streamed), then a wiki refresh or swap in progress, each
   waiting at most until the stop's deadline (:data:`STOP_GRACE` seconds after the
   signal); what is still running then is cancelled and named in the log;
3. the stores are flushed and closed (tickets, the last heartbeat, the index) as the
   extensions unload, and the HTTP session is closed;
4. ``serve`` returns 0.

A second signal stops at once (exit ``128 + signal``); a stop that has not ended
:data:`WATCHDOG_MARGIN` seconds after its deadline (a thread stuck on a dead disk)
exits with 1 rather than wait for SIGKILL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Iterable
from typing import Any

__all__ = [
    "STOP_GRACE",
    "WATCHDOG_MARGIN",
    "WORK_TASK_PREFIXES",
    "StopOnSignal",
    "finish_work",
    "work_in_flight",
]

log = logging.getLogger(__name__)

#: Seconds the work in flight may take after a stop was asked for: under Docker's
#: default 10 s between SIGTERM and SIGKILL, with room for closing the stores.
STOP_GRACE = 7.0
#: Seconds after the deadline before a stop still under way ends the process anyway.
WATCHDOG_MARGIN = 2.0

#: Names discord.py 2.x gives the tasks running our handlers: an event listener
#: (``discord.py: on_interaction``), a slash command, a view's button, a modal's submit,
#: a dynamic item (the persistent ticket and form buttons). A view's timeout and the
#: library's own loops are not work a user waits for.
WORK_TASK_PREFIXES = (
    "discord.py: ",
    "CommandTree-invoker",
    "discord-ui-view-dispatch-",
    "discord-ui-modal-dispatch-",
    "discord-ui-dynamic-item-",
)


def work_in_flight(tasks: Iterable[asyncio.Task[Any]] | None = None) -> list[asyncio.Task[Any]]:
    """The unfinished tasks running handlers for users (all tasks of the loop by default)."""
    current = asyncio.current_task()
    pool = asyncio.all_tasks() if tasks is None else tasks
    return [
        task
        for task in pool
        if task is not current
        and not task.done()
        and task.get_name().startswith(WORK_TASK_PREFIXES)
    ]


async def finish_work(timeout: float) -> tuple[int, list[str]]:
    """Wait up to ``timeout`` seconds for :func:`work_in_flight`, including handlers that
    start meanwhile (an event read just before the gateway closed); cancel what is left.

    Returns how many finished and the names of those cancelled.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0.0, timeout)
    finished: set[asyncio.Task[Any]] = set()
    while True:
        pending = work_in_flight()
        if not pending:
            return len(finished), []
        left = deadline - loop.time()
        if left <= 0:
            break
        done, _ = await asyncio.wait(pending, timeout=left)
        finished |= done
    names = sorted(task.get_name() for task in pending)
    for task in pending:
        task.cancel()
    await asyncio.wait(pending, timeout=1.0)
    return len(finished), names


class StopOnSignal:
    """SIGTERM and SIGINT handlers for a running :class:`bot.client.WikiBot`.

    The first signal asks the bot to stop (:meth:`WikiBot.stop`) and arms a watchdog;
    a second one ends the process at once.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, bot: Any, *, margin: float = WATCHDOG_MARGIN) -> None:
        self.bot = bot
        self.margin = margin
        self.received: signal.Signals | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watchdog: threading.Timer | None = None
        self._stopping: asyncio.Task[None] | None = None

    def install(self) -> None:
        """Handle the signals in the running loop (call from inside it)."""
        self._loop = asyncio.get_running_loop()
        for sig in self.SIGNALS:
            self._loop.add_signal_handler(sig, self._on_signal, sig)

    def uninstall(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            for sig in self.SIGNALS:
                self._loop.remove_signal_handler(sig)
        if self._watchdog is not None:
            self._watchdog.cancel()

    def _on_signal(self, sig: signal.Signals) -> None:
        if self.received is not None:
            log.warning("%s again while stopping: exiting now", sig.name)
            _exit(128 + sig)
            return
        self.received = sig
        grace = float(self.bot.stop_grace)
        log.info("%s received: stopping (work in flight has %.0f s to finish)", sig.name, grace)
        self._watchdog = threading.Timer(grace + self.margin, self._too_slow, args=(grace,))
        self._watchdog.daemon = True
        self._watchdog.start()
        assert self._loop is not None
        self._stopping = self._loop.create_task(self.bot.stop(), name="wikibot-stop")

    def _too_slow(self, grace: float) -> None:
        log.error("the stop did not end within %.0f s of the signal: exiting now", grace)
        _exit(1)


def _exit(code: int) -> None:
    """End the process now, after writing out what the log handlers hold."""
    logging.shutdown()
    os._exit(code)
