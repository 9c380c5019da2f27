"""Who a message would ping, by Discord's ``allowed_mentions`` rules.

Discord notifies a user, a role or everyone only when the mention is in the
message *content* (never in embeds) and ``allowed_mentions`` lets it through.
When a request carries no ``allowed_mentions`` at all, Discord's default applies:
regular channel messages (and forum posts) parse users, roles and @everyone;
interaction replies and webhook follow-ups parse users (see hazards.md).
Edits are judged like new messages here, on purpose: it is the stricter reading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CHANNEL_DEFAULT_PARSE", "INTERACTION_DEFAULT_PARSE", "compute_pings"]

CHANNEL_DEFAULT_PARSE: tuple[str, ...] = ("users", "roles", "everyone")
INTERACTION_DEFAULT_PARSE: tuple[str, ...] = ("users",)

_USER = re.compile(r"<@!?(\d{1,20})>")
_ROLE = re.compile(r"<@&(\d{1,20})>")
_EVERYONE = re.compile(r"@(everyone|here)")


def compute_pings(
    content: str | None,
    allowed_mentions: Mapping[str, Any] | None,
    default_parse: Sequence[str],
    *,
    replied_user_id: int | None = None,
) -> list[str]:
    """Return the mentions that would notify someone, e.g. ``["<@42>", "@everyone"]``."""
    text = content or ""
    if allowed_mentions is None:
        parse = set(default_parse)
        users: set[int] = set()
        roles: set[int] = set()
        replied = True
    else:
        parse = set(allowed_mentions.get("parse") or ())
        users = {int(x) for x in allowed_mentions.get("users") or ()}
        roles = {int(x) for x in allowed_mentions.get("roles") or ()}
        replied = bool(allowed_mentions.get("replied_user", False))
    pings: list[str] = []
    for match in _USER.finditer(text):
        if "users" in parse or int(match.group(1)) in users:
            pings.append(f"<@{match.group(1)}>")
    for match in _ROLE.finditer(text):
        if "roles" in parse or int(match.group(1)) in roles:
            pings.append(f"<@&{match.group(1)}>")
    if "everyone" in parse:
        pings.extend(f"@{m.group(1)}" for m in _EVERYONE.finditer(text))
    if replied_user_id is not None and replied:
        pings.append(f"reply to <@{replied_user_id}>")
    return pings
