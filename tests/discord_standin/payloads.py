"""The stand-in's guild (specs) and the JSON objects Discord would send about it.

Everything here is plain data: dataclass specs describe the guild the bot sees
(roles, channels including a forum, members), and ``*_json`` functions turn them
into the payloads discord.py 2.7.1 parses (keys checked against its parsers and
``tests/discord_standin/spec/``). IDs are fixed so tests can name them:
``DEFAULT_IDS.alice``, ``DEFAULT_IDS.forum``, ...
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_IDS",
    "DISCORD_EPOCH_MS",
    "PERMISSIONS",
    "ChannelSpec",
    "DefaultIds",
    "ForumTagSpec",
    "GuildSpec",
    "MemberSpec",
    "RoleSpec",
    "Snowflakes",
    "channel_json",
    "channel_permissions",
    "default_guild",
    "forum_post_json",
    "guild_create_json",
    "iso_now",
    "member_json",
    "member_permissions",
    "role_json",
    "user_json",
]

DISCORD_EPOCH_MS = 1420070400000

# The permission bits the default guild uses (discord-api-docs, "Permissions").
PERMISSIONS: dict[str, int] = {
    "administrator": 1 << 3,
    "add_reactions": 1 << 6,
    "view_channel": 1 << 10,
    "send_messages": 1 << 11,
    "manage_messages": 1 << 13,
    "embed_links": 1 << 14,
    "attach_files": 1 << 15,
    "read_message_history": 1 << 16,
    "use_application_commands": 1 << 31,
    "manage_threads": 1 << 34,
    "create_public_threads": 1 << 35,
    "send_messages_in_threads": 1 << 38,
    "manage_guild": 1 << 5,
    "moderate_members": 1 << 40,
}
ALL_PERMISSIONS = (1 << 51) - 1


def _perms(*names: str) -> int:
    value = 0
    for name in names:
        value |= PERMISSIONS[name]
    return value


EVERYONE_PERMISSIONS = _perms(
    "view_channel",
    "send_messages",
    "read_message_history",
    "add_reactions",
    "embed_links",
    "attach_files",
    "use_application_commands",
    "send_messages_in_threads",
    "create_public_threads",
)


def iso_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


class Snowflakes:
    """Time-based, strictly increasing Discord snowflakes (so ``created_at`` is sane)."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> int:
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) | (next(self._counter) & 0x3FFFFF)


@dataclass(frozen=True)
class RoleSpec:
    id: int
    name: str
    permissions: int = 0
    position: int = 0
    mentionable: bool = False
    bot_id: int | None = None  # set for the bot's managed role


@dataclass(frozen=True)
class ForumTagSpec:
    id: int
    name: str
    moderated: bool = False


@dataclass(frozen=True)
class ChannelSpec:
    """A guild channel. ``type``: 0 text, 4 category, 5 announcement, 15 forum, 16 media."""

    id: int
    name: str
    type: int = 0
    position: int = 0
    parent_id: int | None = None
    topic: str | None = None
    available_tags: tuple[ForumTagSpec, ...] = ()
    #: Permission overwrites: ``(role or member id, 0 role / 1 member, allow, deny)``.
    overwrites: tuple[tuple[int, int, int, int], ...] = ()
    #: Channel flags; on a forum, ``REQUIRE_TAG`` (1 << 4) makes Discord refuse a post
    #: without an applied tag (400, code 40067).
    flags: int = 0


@dataclass(frozen=True)
class MemberSpec:
    id: int
    name: str
    role_ids: tuple[int, ...] = ()
    bot: bool = False
    nick: str | None = None


@dataclass
class GuildSpec:
    id: int
    name: str
    owner_id: int
    roles: list[RoleSpec]
    channels: list[ChannelSpec]
    members: list[MemberSpec]
    locale: str = "en-US"
    features: list[str] = field(default_factory=lambda: ["COMMUNITY"])
    #: Where Discord posts join messages; bots post "thanks for adding me" there.
    system_channel_id: int | None = None

    def role(self, role_id: int) -> RoleSpec | None:
        return next((r for r in self.roles if r.id == role_id), None)

    def channel(self, channel_id: int) -> ChannelSpec | None:
        return next((c for c in self.channels if c.id == channel_id), None)

    def channel_named(self, name: str) -> ChannelSpec:
        found = next((c for c in self.channels if c.name == name), None)
        if found is None:
            names = ", ".join(c.name for c in self.channels)
            raise KeyError(f"no channel named {name!r} in the stand-in guild ({names})")
        return found

    def member(self, user_id: int) -> MemberSpec | None:
        return next((m for m in self.members if m.id == user_id), None)

    def member_named(self, name: str) -> MemberSpec:
        found = next((m for m in self.members if m.name == name), None)
        if found is None:
            names = ", ".join(m.name for m in self.members)
            raise KeyError(f"no member named {name!r} in the stand-in guild ({names})")
        return found


@dataclass(frozen=True)
class DefaultIds:
    """The fixed IDs of :func:`default_guild` (and of the bot user / application)."""

    bot: int = 910000000000000001
    guild: int = 910000000000000100
    role_moderator: int = 910000000000000201
    role_member: int = 910000000000000202
    role_bot: int = 910000000000000203
    category: int = 910000000000000301
    general: int = 910000000000000302
    bot_log: int = 910000000000000303
    forum: int = 910000000000000304
    announcements: int = 910000000000000305
    tag_open: int = 910000000000000401
    tag_solved: int = 910000000000000402
    alice: int = 910000000000000501  # role: member
    mod: int = 910000000000000502  # roles: moderator, member
    newbie: int = 910000000000000503  # no roles
    owner: int = 910000000000000509  # owns the guild, no roles

    @property
    def app(self) -> int:
        return self.bot


DEFAULT_IDS = DefaultIds()


def default_guild(bot_name: str = "WikiBot") -> GuildSpec:
    """One guild: a support category with text channels and a forum, three users."""
    ids = DEFAULT_IDS
    return GuildSpec(
        id=ids.guild,
        name="Stand-in Guild",
        owner_id=ids.owner,
        roles=[
            RoleSpec(ids.guild, "@everyone", EVERYONE_PERMISSIONS, 0),
            RoleSpec(ids.role_member, "Member", 0, 1),
            RoleSpec(
                ids.role_moderator,
                "Moderator",
                _perms("manage_messages", "manage_threads", "moderate_members"),
                2,
                mentionable=True,
            ),
            RoleSpec(
                ids.role_bot,
                bot_name,
                _perms("manage_threads", "manage_messages"),
                3,
                bot_id=ids.bot,
            ),
        ],
        channels=[
            ChannelSpec(ids.category, "support", type=4, position=0),
            ChannelSpec(ids.general, "general", 0, 1, ids.category, "Talk about the cards"),
            ChannelSpec(ids.bot_log, "bot-log", 0, 2, ids.category, "Where the bot reports"),
            ChannelSpec(
                ids.forum,
                "help",
                15,
                3,
                ids.category,
                "Ask for help here",
                (ForumTagSpec(ids.tag_open, "open"), ForumTagSpec(ids.tag_solved, "solved")),
            ),
            ChannelSpec(ids.announcements, "announcements", 5, 4, ids.category),
        ],
        members=[
            MemberSpec(ids.bot, bot_name, (ids.role_bot,), bot=True),
            MemberSpec(ids.alice, "alice", (ids.role_member,)),
            MemberSpec(ids.mod, "mod", (ids.role_moderator, ids.role_member)),
            MemberSpec(ids.newbie, "newbie"),
            MemberSpec(ids.owner, "owner"),
        ],
    )


def user_json(member: MemberSpec) -> dict[str, Any]:
    return {
        "id": str(member.id),
        "username": member.name,
        "discriminator": "0",
        "global_name": member.name.title(),
        "avatar": None,
        "bot": member.bot,
        "public_flags": 0,
        "flags": 0,
        "primary_guild": None,
    }


def member_permissions(guild: GuildSpec, member_id: int, role_ids: Iterable[int]) -> int:
    """Guild-level permissions as Discord computes them (owner and admin get all)."""
    if member_id == guild.owner_id:
        return ALL_PERMISSIONS
    everyone = guild.role(guild.id)
    value = everyone.permissions if everyone else 0
    for role_id in role_ids:
        role = guild.role(role_id)
        if role is not None:
            value |= role.permissions
    if value & PERMISSIONS["administrator"]:
        return ALL_PERMISSIONS
    return value


def channel_permissions(
    guild: GuildSpec, channel: ChannelSpec, member_id: int, role_ids: Iterable[int]
) -> int:
    """Permissions in one channel: guild permissions, then @everyone, role and member
    overwrites, in Discord's order (discord-api-docs, "Permission Overwrites")."""
    roles = set(role_ids)
    base = member_permissions(guild, member_id, roles)
    if base == ALL_PERMISSIONS:
        return base
    overwrites = channel.overwrites
    if not overwrites and channel.parent_id is not None:
        parent = guild.channel(channel.parent_id)  # synced with its category
        overwrites = parent.overwrites if parent else ()
    for target, kind, allow, deny in overwrites:
        if kind == 0 and target == guild.id:
            base = (base & ~deny) | allow
    allow_roles = deny_roles = 0
    for target, kind, allow, deny in overwrites:
        if kind == 0 and target in roles:
            allow_roles |= allow
            deny_roles |= deny
    base = (base & ~deny_roles) | allow_roles
    for target, kind, allow, deny in overwrites:
        if kind == 1 and target == member_id:
            base = (base & ~deny) | allow
    if not base & PERMISSIONS["view_channel"]:
        return 0
    return base


def member_json(
    guild: GuildSpec,
    member: MemberSpec,
    *,
    role_ids: Iterable[int] | None = None,
    with_user: bool = True,
    with_permissions: bool = False,
) -> dict[str, Any]:
    roles = tuple(member.role_ids if role_ids is None else role_ids)
    data: dict[str, Any] = {
        "roles": [str(r) for r in roles],
        "flags": 0,
        "joined_at": "2025-01-01T00:00:00+00:00",
        "nick": member.nick,
        "avatar": None,
        "deaf": False,
        "mute": False,
        "pending": False,
        "premium_since": None,
        "communication_disabled_until": None,
    }
    if with_user:
        data["user"] = user_json(member)
    if with_permissions:
        data["permissions"] = str(member_permissions(guild, member.id, roles))
    return data


def role_json(role: RoleSpec) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(role.id),
        "name": role.name,
        "permissions": str(role.permissions),
        "position": role.position,
        "color": 0,
        "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
        "hoist": False,
        "managed": role.bot_id is not None,
        "mentionable": role.mentionable,
        "icon": None,
        "unicode_emoji": None,
        "flags": 0,
    }
    if role.bot_id is not None:
        data["tags"] = {"bot_id": str(role.bot_id)}
    return data


def channel_json(channel: ChannelSpec, guild_id: int) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(channel.id),
        "type": channel.type,
        "name": channel.name,
        "position": channel.position,
        "guild_id": str(guild_id),
        "parent_id": str(channel.parent_id) if channel.parent_id else None,
        "permission_overwrites": [
            {"id": str(target), "type": kind, "allow": str(allow), "deny": str(deny)}
            for target, kind, allow, deny in channel.overwrites
        ],
        "nsfw": False,
        "flags": channel.flags,
    }
    if channel.type in (0, 5, 15, 16):
        data.update(topic=channel.topic, rate_limit_per_user=0, last_message_id=None)
    if channel.type in (15, 16):
        data.update(
            available_tags=[
                {
                    "id": str(t.id),
                    "name": t.name,
                    "moderated": t.moderated,
                    "emoji_id": None,
                    "emoji_name": None,
                }
                for t in channel.available_tags
            ],
            default_reaction_emoji=None,
            default_sort_order=None,
            default_forum_layout=0,
            default_thread_rate_limit_per_user=0,
            default_auto_archive_duration=1440,
        )
    return data


def forum_post_json(
    thread_id: int, owner_id: int, name: str, *, guild_id: int, forum_id: int
) -> dict[str, Any]:
    """A post a member made by hand in a forum, as Discord describes the thread (its
    starter message shares the thread's id)."""
    return {
        "id": str(thread_id),
        "type": 11,
        "guild_id": str(guild_id),
        "parent_id": str(forum_id),
        "owner_id": str(owner_id),
        "name": name,
        "last_message_id": str(thread_id),
        "message_count": 1,
        "member_count": 1,
        "total_message_sent": 1,
        "rate_limit_per_user": 0,
        "flags": 0,
        "applied_tags": [],
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 4320,
            "archive_timestamp": "2026-01-01T00:00:00+00:00",
            "locked": False,
        },
    }


def guild_create_json(
    guild: GuildSpec,
    threads: Iterable[Mapping[str, Any]] = (),
    *,
    member_ids: Iterable[int] | None = None,
) -> dict[str, Any]:
    """GUILD_CREATE (or GET /guilds/{id}). ``member_ids`` limits the members sent:
    without the presences intent Discord sends only the bot (and voice members)."""
    wanted = None if member_ids is None else set(member_ids)
    members = [m for m in guild.members if wanted is None or m.id in wanted]
    return {
        "id": str(guild.id),
        "name": guild.name,
        "owner_id": str(guild.owner_id),
        "unavailable": False,
        "large": False,
        "member_count": len(guild.members),
        "joined_at": "2025-01-01T00:00:00+00:00",
        "roles": [role_json(r) for r in guild.roles],
        "channels": [channel_json(c, guild.id) for c in guild.channels],
        "threads": list(threads),
        "members": [member_json(guild, m) for m in members],
        "features": list(guild.features),
        "emojis": [],
        "stickers": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "preferred_locale": guild.locale,
        "premium_tier": 0,
        "verification_level": 0,
        "default_message_notifications": 1,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "afk_timeout": 300,
        "system_channel_id": str(guild.system_channel_id) if guild.system_channel_id else None,
        "rules_channel_id": None,
        "icon": None,
        "description": None,
        "application_id": None,
        "max_members": 500000,
    }
