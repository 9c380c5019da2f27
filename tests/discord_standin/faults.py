"""Make the stand-in fail requests as Discord does when something is wrong on its side.

``fail(ds, "create_thread", status=403, code=50013, message="Missing Permissions")``
answers the next matching request (``times`` of them, ``None``: every one) with
Discord's error body instead of serving it. The request is still recorded. Used for
faults a test cannot set up in the guild itself: a missing permission, a 5xx.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .records import RecordedRequest

__all__ = ["fail"]


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
    left = [times]

    def hook(record: RecordedRequest) -> web.Response | None:
        if record.route != route or (method is not None and record.method != method):
            return None
        if left[0] is not None:
            if left[0] <= 0:
                return None
            left[0] -= 1
        return ds._error(status, code, message)

    ds.fault_hooks.append(hook)
