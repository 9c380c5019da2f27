"""Showing a streamed answer on Discord: edits paced within Discord's limits.

:class:`PacedEditor` keeps the latest text and edits the message with it: the first
text as soon as it comes (the user sees the answer start), then at most once per
``every`` seconds, whatever the model's pace; the final edit replaces whatever is
pending. An edit Discord refuses because the message or the interaction is gone
(the user dismissed or deleted it, or its token expired) calls ``on_gone``: the
caller cancels the upstream request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

import discord

__all__ = ["EDIT_EVERY", "PacedEditor"]

log = logging.getLogger(__name__)

#: Seconds between two edits of a streaming answer (Discord allows about 5 per 5 s).
EDIT_EVERY = 1.0


class PacedEditor:
    def __init__(
        self,
        edit: Callable[[str], Awaitable[None]],
        on_gone: Callable[[], None],
        *,
        every: float = EDIT_EVERY,
    ) -> None:
        self._edit = edit
        self._on_gone = on_gone
        self._every = every
        self._latest: str | None = None
        self._wake = asyncio.Event()
        self._last = 0.0
        self._task: asyncio.Task[None] | None = None
        self.edits = 0
        self.gone = False
        #: ``time.perf_counter()`` when the first text's edit was answered by Discord.
        self.first_shown = 0.0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ask-editor")

    def show(self, text: str) -> None:
        """Have ``text`` shown at the next allowed edit (cheap: no I/O here)."""
        self._latest = text
        self._wake.set()

    async def stop(self) -> None:
        """Stop editing; a pending text is dropped (the final edit follows)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            wait = self._last + self._every - time.perf_counter()
            if self.edits and wait > 0:
                await asyncio.sleep(wait)
            self._wake.clear()
            text, self._latest = self._latest, None
            if text is None:
                continue
            self._last = time.perf_counter()
            try:
                await self._edit(text)
            except discord.NotFound:
                self.gone = True
                self._on_gone()
                return
            except discord.HTTPException as exc:  # a rate limit or a hiccup: skip one edit
                log.info("a streaming edit failed: %s", exc)
                continue
            self.edits += 1
            if self.edits == 1:
                self.first_shown = time.perf_counter()
