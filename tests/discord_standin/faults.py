"""Make the stand-in fail requests as Discord does when something is wrong on its side.

``fail(ds, "create_thread", status=403, code=50013, message="Missing Permissions")``
answers the next matching request (``times`` of them, ``None``: every one) with
Discord's error body instead of serving it. The request is still recorded. Used for
faults a test cannot set up in the guild itself: a missing permission, a 5xx.
``lose_answer`` serves the request (Discord did it) and then answers with the error: a
post made while the bot saw a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from .records import RecordedRequest

__all__ = ["fail", "lose_answer"]


def fail(
    ds: Any,
    route: str,
    *,
    status: int,
    code: int,
    message: str,
    method: str | None = None,
    times: int | None = 1,
) -> None:
    """Answer the next ``times`` requests to ``route`` with ``status``/``code``."""
    ds.fault_hooks.append(_hook(ds, route, status, code, message, method, times))


def lose_answer(
    ds: Any,
    route: str,
    *,
    status: int = 503,
    code: int = 0,
    message: str = "Service Unavailable",
    method: str | None = None,
    times: int | None = 1,
) -> None:
    """Serve the next ``times`` requests to ``route``, then answer each with
    ``status``/``code`` instead of its result: Discord did the work, the caller sees an
    error (a 503 by default: discord.py raises it at once, where a 500, 502 or 504 is
    sent again by discord.py itself)."""
    ds.answer_hooks.append(_hook(ds, route, status, code, message, method, times))


def _hook(
    ds: Any,
    route: str,
    status: int,
    code: int,
    message: str,
    method: str | None,
    times: int | None,
) -> Callable[[RecordedRequest], web.Response | None]:
    left = [times]

    def hook(record: RecordedRequest) -> web.Response | None:
        if record.route != route or (method is not None and record.method != method):
            return None
        if left[0] is not None:
            if left[0] <= 0:
                return None
            left[0] -= 1
        return ds._error(status, code, message)

    return hook
