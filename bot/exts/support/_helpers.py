"""Plain helpers of /support: reading a modal submit, naming users, forum tags, failures."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import discord

from knowledge.intake.earlier import MessageSeen, ThreadSeen

__all__ = [
    "FORUM_PERMISSIONS",
    "LOG_UPLOAD_ID",
    "MODAL_PREFIX",
    "PRIVATE_PERMISSIONS",
    "WAITING_TAGS",
    "Submitted",
    "failure_reason",
    "find_tag",
    "is_refused",
    "is_staff",
    "message_seen",
    "missing_permissions",
    "modal_id",
    "parse_modal_id",
    "read_submit",
    "require_tag_problem",
    "tags_for",
    "thread_seen",
    "user_id_of",
    "user_key",
]

#: ``wikibot:sp:step:<draft>:<step>``: every /support modal, handled by the cog
#: (not by a Modal object), so a submit after a restart is still understood.
MODAL_PREFIX: Final = "wikibot:sp:step:"
#: custom_id of the log's file upload inside a modal.
LOG_UPLOAD_ID: Final = "log__file"
#: What the bot needs in the help forum (``discord.Permissions`` names): to see it,
#: create posts, write in them, show the embed and files, and set tags, archive, lock.
FORUM_PERMISSIONS: Final = (
    "view_channel",
    "send_messages",
    "send_messages_in_threads",
    "embed_links",
    "attach_files",
    "manage_threads",
    "read_message_history",  # a retry looks for a post made before (its starter message)
)
#: What the bot needs in the staff channel of private tickets: to see it, make private
#: threads and write in them, show the embed and files, archive and lock them, and list
#: the archived private threads it joined and read their messages (a retry looks for the
#: thread an interrupted attempt made).
PRIVATE_PERMISSIONS: Final = (
    "view_channel",
    "create_private_threads",
    "send_messages_in_threads",
    "embed_links",
    "attach_files",
    "manage_threads",
    "read_message_history",
)


def user_key(user: discord.abc.User | discord.Object) -> str:
    return f"discord:{user.id}"


def user_id_of(key: str) -> int | None:
    prefix, _, rest = key.partition(":")
    return int(rest) if prefix == "discord" and rest.isdigit() else None


def modal_id(draft_id: str, step: int) -> str:
    return f"{MODAL_PREFIX}{draft_id}:{step}"


def parse_modal_id(custom_id: str) -> tuple[str, int] | None:
    if not custom_id.startswith(MODAL_PREFIX):
        return None
    draft, _, step = custom_id[len(MODAL_PREFIX) :].rpartition(":")
    if not draft or not step.isdigit():
        return None
    return draft, int(step)


@dataclass(frozen=True, slots=True)
class Submitted:
    #: Typed text and selected values by field key.
    values: dict[str, str]
    #: Uploaded files by field key: the attachment JSON Discord resolved.
    files: dict[str, Mapping[str, Any]]


def _walk(components: Sequence[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for component in components:
        if component.get("type") == 18 and isinstance(component.get("component"), Mapping):
            yield component["component"]
        elif isinstance(component.get("components"), list):
            yield from _walk(component["components"])
        else:
            yield component


def read_submit(data: Mapping[str, Any]) -> Submitted:
    """The answers of a modal submit's raw ``data`` (labels, text inputs, selects, files)."""
    values: dict[str, str] = {}
    files: dict[str, Mapping[str, Any]] = {}
    resolved = (data.get("resolved") or {}).get("attachments") or {}
    for component in _walk(data.get("components") or []):
        custom_id = str(component.get("custom_id") or "")
        kind = component.get("type")
        if kind == 4:
            values[custom_id] = str(component.get("value") or "")
        elif kind == 3:
            chosen = component.get("values") or []
            values[custom_id] = str(chosen[0]) if chosen else ""
        elif kind == 19:
            for attachment_id in component.get("values") or []:
                found = resolved.get(str(attachment_id))
                if isinstance(found, Mapping):
                    key = "log" if custom_id == LOG_UPLOAD_ID else custom_id
                    files[key] = found
                    break
    return Submitted(values, files)


def is_staff(member: discord.abc.User, staff_roles: Sequence[int]) -> bool:
    """A member with a staff role from the config, or Manage Threads in the guild."""
    if not isinstance(member, discord.Member):
        return False
    if member.guild_permissions.manage_threads:
        return True
    wanted = set(staff_roles)
    return any(role.id in wanted for role in member.roles)


def find_tag(forum: discord.ForumChannel, name_or_id: str | None) -> discord.ForumTag | None:
    """The forum's tag named ``name_or_id`` (case-insensitively) or with that id."""
    if not name_or_id:
        return None
    wanted = name_or_id.strip().casefold()
    for tag in forum.available_tags:
        if str(tag.id) == wanted or tag.name.casefold() == wanted:
            return tag
    return None


def tags_for(
    forum: discord.ForumChannel,
    wanted: Sequence[str],
    family_name: str | None,
    default: str | None = None,
) -> list[discord.ForumTag]:
    """The forum's existing tags that match ``wanted`` names (family key, status) or the
    family's display name, case-insensitively, after the configured ``default`` tag (name
    or id; first, so Discord's limit of 5 never drops it); never more than 5. Tags the
    forum lacks are left out (the post is made without them)."""
    names = [w.casefold() for w in wanted if w]
    if family_name:
        names.insert(1, family_name.casefold())
    out: list[discord.ForumTag] = []
    first = find_tag(forum, default)
    if first is not None:
        out.append(first)
    for name in names:
        for tag in forum.available_tags:
            if tag.name.casefold() == name and tag not in out:
                out.append(tag)
    return out[:5]


def require_tag_problem(forum: discord.ForumChannel, default: str | None) -> str | None:
    """Why a post in ``forum`` could be refused for want of a tag (Discord's 40067), as a
    template key under ``tag_problems.``, or None. A forum with "Require tags" on takes
    every post when the configured default tag exists in it, or else a tag named
    "open" (the status every new ticket has)."""
    if default and find_tag(forum, default) is None:
        return "default_missing"  # a typo or a deleted tag: said whatever the flag
    if not forum.flags.require_tag:
        return None
    if find_tag(forum, default) is not None or find_tag(forum, "open") is not None:
        return None
    return "required"


def missing_permissions(
    forum: discord.ForumChannel | discord.TextChannel, wanted: Sequence[str] = FORUM_PERMISSIONS
) -> list[str]:
    """Which of ``wanted`` the bot lacks in ``forum`` (or another channel), as its cache
    sees the overwrites."""
    me = forum.guild.me
    if me is None:
        return []
    perms = forum.permissions_for(me)
    return [name for name in wanted if not getattr(perms, name)]


#: Names (casefolded) of the forum tag that says a helper answered and the asker is next.
WAITING_TAGS: Final = ("waiting for the asker", "waiting")

#: Discord's code for a post without a tag in a forum that requires one.
TAG_REQUIRED_CODE: Final = 40067


def is_refused(exc: BaseException) -> bool:
    """Discord refused the request itself (a 4xx other than a missing channel, missing
    permissions or a rate limit): sending the same request again gets the same answer."""
    if not isinstance(exc, discord.HTTPException):
        return False
    return 400 <= exc.status < 500 and exc.status not in (401, 403, 404, 429)


def failure_reason(exc: BaseException) -> str:
    """The template key under ``reasons.`` for a failed post."""
    if isinstance(exc, discord.NotFound):
        return "forum_missing"
    if isinstance(exc, discord.Forbidden):
        return "forbidden"
    if isinstance(exc, discord.DiscordServerError):
        return "server"
    if isinstance(exc, discord.HTTPException) and exc.code == TAG_REQUIRED_CODE:
        return "tag_required"
    if is_refused(exc):
        return "refused"
    return "other"


def thread_seen(thread: discord.Thread) -> ThreadSeen:
    """A thread as :mod:`knowledge.intake.earlier` reads it."""
    private = thread.type is discord.ChannelType.private_thread
    return ThreadSeen(thread.id, thread.owner_id, thread.name, private)


def message_seen(message: discord.Message) -> MessageSeen:
    """A message as :mod:`knowledge.intake.earlier` reads it."""
    return MessageSeen(
        message.id,
        message.author.id,
        message.content or "",
        tuple(embed.footer.text or "" for embed in message.embeds),
        tuple(role.id for role in message.role_mentions),
    )
