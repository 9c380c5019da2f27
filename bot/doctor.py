"""``wikibot doctor``: everything a deployment needs, checked, with the fix for each failure.

The checks, in order: the config file; the token (``GET /users/@me``); that the
app is in each configured server; the bot's permissions in the channels it needs
(:func:`channel_needs`: the support intake's help forum, when configured); that
the commands registered with Discord match the code (per server, or globally
when no server is configured); the wiki folder; and whether the search index is
newer than every page. REST only: no gateway connection. The exit code is 0
only when every check passed (skipped ones do not count).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowledge.source import Generation, Store
from knowledge.source.spec import DEFAULT_API_URL
from knowledge.templates import Templates, load_templates
from knowledge.wiki.load import page_files

from .config import BotConfig, ConfigError, data_dir_of, load_config

if TYPE_CHECKING:
    from .client import WikiBot

__all__ = [
    "HELP_FORUM_NEEDS",
    "PLACEHOLDER_IDS",
    "PRIVATE_TICKET_NEEDS",
    "ChannelNeed",
    "Check",
    "channel_needs",
    "command_differences",
    "doctor",
    "format_report",
    "invite_url",
    "run_checks",
]

#: View Channel, Send Messages, Embed Links: what posting an answer in a channel takes.
_POST = (1 << 10) | (1 << 11) | (1 << 14)
#: Send Messages, Embed Links, Attach Files, Create Public Threads, Send Messages in
#: Threads, Manage Threads: what the install link asks for.
INVITE_PERMISSIONS = (1 << 11) | (1 << 14) | (1 << 15) | (1 << 35) | (1 << 38) | (1 << 34)


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the checklist. ``ok`` None: skipped (nothing to check)."""

    text: str
    ok: bool | None
    fix: str = ""


@dataclass(frozen=True, slots=True)
class ChannelNeed:
    """A channel the bot must be able to use, the permission bits it needs there, and why.
    ``without``: what breaks without each permission (``discord.Permissions`` name ->
    sentence), said with the fix. ``threads``: a retried filing lists this channel's
    threads to find a post made before (``"public"`` archived posts of a forum, or the
    ``"private"`` archived threads the bot joined): the doctor lists them as it would."""

    channel_id: int
    permissions: int
    purpose: str
    without: tuple[tuple[str, str], ...] = ()
    threads: str | None = None


#: View Channel, Send Messages (a forum post), Embed Links, Attach Files, Send
#: Messages in Threads, Manage Threads (archive, lock and tag the ticket posts),
#: Read Message History (a retried filing looks for its post among the forum's posts).
HELP_FORUM_PERMISSIONS = (
    (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 38) | (1 << 34)
)


#: View Channel, Embed Links, Attach Files, Read Message History, Manage Threads, Create
#: Private Threads, Send Messages in Threads: private tickets as threads of a staff channel.
PRIVATE_TICKET_PERMISSIONS = (
    (1 << 10) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 34) | (1 << 36) | (1 << 38)
)


#: The permissions of :data:`HELP_FORUM_PERMISSIONS` and :data:`PRIVATE_TICKET_PERMISSIONS`
#: by name, each worded (what breaks without it) under ``doctor.without_forum.`` and
#: ``doctor.without_private.`` (a test keeps names, bits and wording in step).
HELP_FORUM_NEEDS = (
    "view_channel",
    "send_messages",
    "embed_links",
    "attach_files",
    "read_message_history",
    "manage_threads",
    "send_messages_in_threads",
)
PRIVATE_TICKET_NEEDS = (
    "view_channel",
    "embed_links",
    "attach_files",
    "read_message_history",
    "manage_threads",
    "create_private_threads",
    "send_messages_in_threads",
)


def channel_needs(config: BotConfig, t: Templates) -> list[ChannelNeed]:
    """The channels the configured features post in. Answers to slash commands need
    none (they go through the interaction's webhook); the support intake posts
    tickets in the help forum (``support.forum_channel_id``) and private tickets as
    threads of a staff channel (``support.private_channel_id``)."""
    needs = []
    forum = config.support.forum_channel_id
    if forum is not None:
        without = tuple((n, t(f"doctor.without_forum.{n}")) for n in HELP_FORUM_NEEDS)
        purpose = t("doctor.purpose_forum")
        needs.append(ChannelNeed(forum, HELP_FORUM_PERMISSIONS, purpose, without, "public"))
    private = config.support.private_channel_id
    if private is not None:
        without = tuple((n, t(f"doctor.without_private.{n}")) for n in PRIVATE_TICKET_NEEDS)
        purpose = t("doctor.purpose_private")
        needs.append(ChannelNeed(private, PRIVATE_TICKET_PERMISSIONS, purpose, without, "private"))
    return needs


def invite_url(application_id: int) -> str:
    return (
        "https://discord.com/oauth2/authorize"
        f"?client_id={application_id}&scope=bot+applications.commands"
        f"&permissions={INVITE_PERMISSIONS}"
    )


# --- commands ----------------------------------------------------------------------

_OPTION_KEYS = (
    "type",
    "description",
    "choices",
    "min_value",
    "max_value",
    "min_length",
    "max_length",
    "channel_types",
)


def _option_shape(option: dict[str, Any]) -> dict[str, Any]:
    shape = {key: option.get(key) for key in _OPTION_KEYS if option.get(key) is not None}
    shape["required"] = bool(option.get("required"))
    shape["autocomplete"] = bool(option.get("autocomplete"))
    if "choices" in shape:
        shape["choices"] = [(c["name"], c["value"]) for c in shape["choices"]]
    shape["options"] = {o["name"]: _option_shape(o) for o in option.get("options") or []}
    return shape


def _command_shape(command: dict[str, Any]) -> dict[str, Any]:
    """What users see of a command, with Discord's defaults filled in."""
    contexts = command.get("contexts")
    permissions = command.get("default_member_permissions")  # the code says 32, Discord "32"
    return {
        "description": command.get("description") or "",
        "options": {o["name"]: _option_shape(o) for o in command.get("options") or []},
        "default_member_permissions": None if permissions is None else str(permissions),
        "contexts": sorted(contexts) if contexts is not None else None,
        "integration_types": sorted(command.get("integration_types") or [0]),
        "nsfw": bool(command.get("nsfw")),
    }


def command_differences(
    expected: Iterable[dict[str, Any]], registered: Iterable[dict[str, Any]]
) -> list[str]:
    """How the registered commands differ from the code's, one phrase per command."""

    def key(command: dict[str, Any]) -> tuple[str, int]:
        return command["name"], int(command.get("type") or 1)

    def label(name: str, kind: int) -> str:
        return f"/{name}" if kind == 1 else f"'{name}'"

    want = {key(c): _command_shape(c) for c in expected}
    have = {key(c): _command_shape(c) for c in registered}
    out = []
    for name, kind in sorted(want.keys() - have.keys()):
        out.append(f"{label(name, kind)} missing")
    for name, kind in sorted(have.keys() - want.keys()):
        out.append(f"{label(name, kind)} no longer in the code")
    for name, kind in sorted(want.keys() & have.keys()):
        changed = [k for k in want[(name, kind)] if want[(name, kind)][k] != have[(name, kind)][k]]
        if changed:
            out.append(f"{label(name, kind)} differs ({', '.join(changed)})")
    return out


# --- the checks ----------------------------------------------------------------------


def _log_limit(t: Templates) -> str:
    """What the support intake keeps of an uploaded log (a fact, always true)."""
    from knowledge.intake.validate import MAX_LOG_CHARS, MAX_UPLOAD_BYTES, human_size

    return t("doctor.log_limit", upload=human_size(MAX_UPLOAD_BYTES), chars=MAX_LOG_CHARS)


async def _llm_checks(config: BotConfig, t: Templates) -> list[Check]:
    """With ``llm.enabled``: the key's variable is set (if one is named), and the server's
    ``/v1/models`` answers and lists ``llm.model``."""
    llm = config.llm
    if llm is None:
        return []
    from knowledge.llm import ChatClient, LlmFailure, api_root

    checks = []
    if llm.api_key_env and not os.environ.get(llm.api_key_env, "").strip():
        fix = t("doctor.llm_key_missing_fix", env=llm.api_key_env)
        checks.append(Check(t("doctor.llm_key_missing", env=llm.api_key_env), False, fix))
    url = api_root(llm.base_url)
    client = ChatClient(llm.settings(os.environ))
    try:
        models = await client.models()
    except LlmFailure as exc:
        fix = t("doctor.llm_failed_fix", config=config.source, url=url, env=llm.api_key_env or "")
        text = t("doctor.llm_failed", url=url, kind=exc.kind, detail=exc.detail)
        return [*checks, Check(text, False, fix)]
    finally:
        await client.aclose()
    if llm.model not in models:
        listed = ", ".join(models[:10]) or "nothing"
        text = t("doctor.llm_missing", url=url, model=llm.model, models=listed)
        return [*checks, Check(text, False, t("doctor.llm_missing_fix", config=config.source))]
    return [*checks, Check(t("doctor.llm_ok", url=url, model=llm.model), True)]


def _wiki_checks(config: BotConfig, t: Templates) -> list[Check]:
    from knowledge.service import data_dir_problem

    data = data_dir_of(config)
    problem = data_dir_problem(data)  # the bot keeps its index, tickets and heartbeat there
    # What the support intake keeps of a log goes there too: said with the folder's line.
    if problem is None:
        checks = [Check(t("doctor.data_ok", path=data) + _log_limit(t), True)]
    else:
        text = t("doctor.data_fail", path=data, reason=problem) + _log_limit(t)
        checks = [Check(text, False, t("doctor.data_fix", config=config.source))]
    wiki = config.wiki_dir
    index_fix = "doctor.index_fix"
    if wiki is None:  # wiki.source: the generation fetched last, if any
        fetched, live = _source_checks(config, data, t)
        checks += fetched
        if live is None:
            return checks
        wiki = live.path
        index_fix = "doctor.index_fix_source"
    # The files the bot would read, by the loader's own rules (dot folders left out, a
    # page under images/ kept), so the count is the one the index reports.
    pages = [wiki / rel for rel in page_files(wiki)] if wiki.is_dir() else []
    if not pages:
        return [*checks, Check(t("doctor.wiki_empty", path=wiki), False, t("doctor.wiki_fix"))]
    checks.append(Check(t("doctor.wiki_ok", pages=len(pages), path=wiki), True))
    manifests = list(data.rglob("manifest.json")) if data.is_dir() else []
    fix = t(index_fix, wiki=wiki, data=data)
    if not manifests:
        checks.append(Check(t("doctor.index_missing", path=data), False, fix))
        return checks
    written = max(m.stat().st_mtime for m in manifests)
    changed = [p for p in pages if p.stat().st_mtime > written]
    age = _age(time.time() - written)
    if changed:
        text = t("doctor.index_stale", count=len(changed), age=age, path=data)
        checks.append(Check(text, False, fix))
    else:
        checks.append(Check(t("doctor.index_ok", age=age, path=data), True))
    return checks


def _source_checks(
    config: BotConfig, data: Path, t: Templates
) -> tuple[list[Check], Generation | None]:
    """With ``wiki.source``: the commit fetched last (if any) and the last check's error."""
    source = config.wiki_source
    assert source is not None
    store = Store(data)
    live = store.live()
    if live is not None and live.source != source.text:
        live = None  # fetched from another source before: the bot starts afresh
    api = "" if config.api_url == DEFAULT_API_URL else f" --api-url {config.api_url}"
    fetch = t("doctor.source_fetch", source=source.text, api=api, data=data)
    if live is None:
        text = t("doctor.source_none", source=source.text, data=data)
        checks = [Check(text, False, t("doctor.source_none_fix", fetch=fetch))]
    else:
        commit = live.commit[:12] or live.id[:13]
        age = _age(time.time() - live.fetched_at)
        text = t("doctor.source_ok", source=source.text, commit=commit, age=age, path=live.path)
        checks = [Check(text, True)]
    state = store.state()
    if state.last_error and state.source == source.text:
        age = _age(time.time() - state.checked_at)
        text = t("doctor.source_failing", age=age, error=state.last_error)
        checks.append(Check(text, False, t("doctor.source_failing_fix", fetch=fetch)))
    return checks, live


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


async def _discord_checks(
    bot: WikiBot, config: BotConfig, token: str, needs: Sequence[ChannelNeed], t: Templates
) -> list[Check]:
    import discord

    try:
        await bot.login(token)  # GET /users/@me, the application, then setup_hook (no sync)
    except discord.LoginFailure:
        return [Check(t("doctor.token_refused"), False, t("doctor.token_refused_fix"))]
    except (discord.HTTPException, OSError) as exc:
        return [Check(t("doctor.unreachable", error=exc), False, t("doctor.unreachable_fix"))]
    app_id = bot.application_id or 0
    checks = [Check(t("doctor.token_ok", name=bot.user, app_id=app_id), True)]
    expected = bot.tree.payload()  # what a sync would register
    config_name = config.source or "config.yaml"
    joined: list[tuple[int, str]] = []
    for guild_id in config.guild_ids:
        try:
            guild = await bot.fetch_guild(guild_id, with_counts=False)
        except discord.HTTPException as exc:  # 403 Missing Access, 404 Unknown Guild
            checks.append(
                Check(
                    t("doctor.guild_missing", id=guild_id, error=_short(exc)),
                    False,
                    t("doctor.guild_fix", url=invite_url(app_id), id=guild_id),
                )
            )
            continue
        joined.append((guild_id, guild.name))
        checks.append(Check(t("doctor.guild_ok", id=guild_id, name=guild.name), True))
    scopes: list[tuple[int | None, str]] = [
        (gid, t("doctor.in_guild", name=name)) for gid, name in joined
    ]
    if not config.guild_ids:
        checks.append(Check(t("doctor.no_guilds"), None))
        scopes = [(None, t("doctor.globally"))]
    for guild_id, where in scopes:
        if guild_id is None:
            registered = await bot.http.get_global_commands(app_id)
        else:
            registered = await bot.http.get_guild_commands(app_id, guild_id)
        differences = command_differences(expected, registered)
        if differences:
            flag = " --global" if guild_id is None else ""
            checks.append(
                Check(
                    t("doctor.commands_stale", where=where, differences="; ".join(differences)),
                    False,
                    t("doctor.commands_fix", config=config_name, flag=flag),
                )
            )
        else:
            text = t("doctor.commands_ok", where=where, count=len(registered))
            checks.append(Check(text, True))
    checks += await _channel_checks(bot, needs, t)
    checks += await _forum_tag_checks(bot, config, t)
    checks += await _helper_role_checks(bot, config, t)
    return checks


async def _helper_role_checks(bot: WikiBot, config: BotConfig, t: Templates) -> list[Check]:
    """The helpers' role exists and a mention of it in the help forum notifies them."""
    import discord

    role_id, forum_id = config.support.helper_role_id, config.support.forum_channel_id
    if role_id is None or forum_id is None:
        return []
    name = config.source or "config.yaml"
    try:
        forum = await bot.fetch_channel(forum_id)
        if not isinstance(forum, discord.abc.GuildChannel):
            return []
        guild = await bot.fetch_guild(forum.guild.id, with_counts=False)
        me = await guild.fetch_member(bot.user.id)
        forum = await guild.fetch_channel(forum_id)
    except discord.HTTPException:
        return []  # said by the channel check already
    role = guild.get_role(role_id)
    if role is None:
        text = t("doctor.helper_role_missing", id=role_id)
        return [Check(text, False, t("doctor.helper_role_missing_fix", config=name))]
    if not role.mentionable and not forum.permissions_for(me).mention_everyone:
        text = t("doctor.helper_role_muted", name=role.name)
        return [Check(text, False, t("doctor.helper_role_muted_fix"))]
    return [Check(t("doctor.helper_role_ok", name=role.name), True)]


async def _forum_tag_checks(bot: WikiBot, config: BotConfig, t: Templates) -> list[Check]:
    """Whether every ticket's post gets a tag when the help forum requires one."""
    import discord

    from .exts.support._helpers import find_tag, require_tag_problem

    forum_id = config.support.forum_channel_id
    if forum_id is None:
        return []
    try:
        forum = await bot.fetch_channel(forum_id)
    except discord.HTTPException:
        return []  # said by the channel check already
    if not isinstance(forum, discord.ForumChannel):
        return []
    default = config.support.default_tag
    problem = require_tag_problem(forum, default)
    if problem is None:
        tag = find_tag(forum, default) or find_tag(forum, "open")
        if tag is not None:
            return [Check(t("doctor.forum_tags_ok", tag=tag.name), True)]
        return [Check(t("doctor.forum_tags_free"), True)]
    key = {
        "required": "doctor.forum_tags_required",
        "default_missing": "doctor.forum_tags_default_missing",
    }
    text = t(key[problem], tag=default, name=forum.name)
    tags = ", ".join(tag.name for tag in forum.available_tags) or "-"
    fix = t("doctor.forum_tags_fix", config=config.source or "config.yaml", tags=tags)
    return [Check(text, False, fix)]


async def _channel_checks(bot: WikiBot, needs: Sequence[ChannelNeed], t: Templates) -> list[Check]:
    import discord

    if not needs:
        return [Check(t("doctor.channels_none"), None)]
    checks = []
    for need in needs:
        try:
            channel = await bot.fetch_channel(need.channel_id)
            if not isinstance(channel, discord.abc.GuildChannel):
                raise TypeError("not a server channel")
            guild = await bot.fetch_guild(channel.guild.id, with_counts=False)
            me = await guild.fetch_member(bot.user.id)
            channel = await guild.fetch_channel(need.channel_id)
        except (discord.HTTPException, TypeError) as exc:
            text = t("doctor.channel_unknown", id=need.channel_id, purpose=need.purpose)
            checks.append(Check(f"{text} ({_short(exc)})", False, t("doctor.channel_unknown_fix")))
            continue
        have = channel.permissions_for(me).value
        missing = discord.Permissions(need.permissions & ~have)
        names = ", ".join(name.replace("_", " ").title() for name, on in missing if on)
        role = me.top_role.name if me.top_role else "@everyone"
        if names:
            text = t(
                "doctor.channel_missing", name=channel.name, purpose=need.purpose, missing=names
            )
            fix = t("doctor.channel_fix", missing=names, role=role)
            effects = [sentence for name, sentence in need.without if getattr(missing, name)]
            if effects:
                fix += " " + t("doctor.without", effects=" ".join(effects))
            checks.append(Check(text, False, fix))
            continue
        checks.append(Check(t("doctor.channel_ok", name=channel.name, purpose=need.purpose), True))
        if need.threads is not None:
            checks.append(await _listing_check(channel, need, role, t))
    return checks


async def _listing_check(channel: Any, need: ChannelNeed, role: str, t: Templates) -> Check:
    """List the threads a retried filing reads to find a post made before (the guild's
    active threads, then the channel's archived ones), as the retry does: Discord may
    refuse what the permissions above seem to allow."""
    import discord

    try:
        await channel.guild.active_threads()
        if need.threads == "private":
            listing = channel.archived_threads(limit=2, private=True, joined=True)
        else:
            listing = channel.archived_threads(limit=2)
        async for _ in listing:
            break
    except discord.HTTPException as exc:
        text = t(
            "doctor.listing_refused", name=channel.name, purpose=need.purpose, error=_short(exc)
        )
        return Check(text, False, t("doctor.listing_fix", role=role))
    return Check(t("doctor.listing_ok", name=channel.name, purpose=need.purpose), True)


def _short(exc: BaseException) -> str:
    status = getattr(exc, "status", None)
    text = getattr(exc, "text", None) or str(exc)
    return f"{status} {text}" if status else text


async def run_checks(
    config_path: Path,
    token: str | None,
    *,
    extra_needs: Sequence[ChannelNeed] = (),
    **bot_kwargs: Any,
) -> list[Check]:
    """Every check, in order. ``extra_needs`` adds channels to check; ``bot_kwargs`` go to
    the client (tests pass ``http_trace``)."""
    t = load_templates("bot.yaml")
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        # A missing file names no key: say how to make one instead.
        fix = "doctor.config_fix" if config_path.exists() else "doctor.config_missing_fix"
        return [Check(t("doctor.config_fail", error=exc), False, t(fix, path=config_path))]
    checks = [
        Check(
            t(
                "doctor.config_ok",
                path=config_path,
                guilds=len(config.guild_ids),
                wiki=config.wiki_dir or (config.wiki_source and config.wiki_source.text),
            ),
            True,
        )
    ]
    checks += _placeholder_checks(config, t)
    if not token:
        checks.append(Check(t("doctor.token_missing"), False, t("doctor.token_missing_fix")))
        # What a token would have checked, listed so nobody takes its absence for a pass.
        for guild_id in config.guild_ids:
            checks.append(Check(t("doctor.guild_skipped", id=guild_id), None))
        checks.append(Check(t("doctor.commands_skipped"), None))
        if channel_needs(config, t) or extra_needs:
            checks.append(Check(t("doctor.channels_skipped"), None))
    else:
        from .client import WikiBot

        needs = [*channel_needs(config, t), *extra_needs]
        bot = WikiBot(config, open_knowledge=False, sync_on_start=False, **bot_kwargs)
        async with bot:
            checks += await _discord_checks(bot, config, token, needs, t)
    checks += await asyncio.to_thread(_wiki_checks, config, t)
    checks += await _llm_checks(config, t)
    return checks


#: The ids config.example.yaml uses as placeholders (a test keeps the two in step):
#: a copy of the example left as it is points the bot at nobody's server.
PLACEHOLDER_IDS = frozenset({123456789012345678})


def _placeholder_checks(config: BotConfig, t: Templates) -> list[Check]:
    """A failed check per config key still holding an id of config.example.yaml."""
    keys: list[tuple[str, Iterable[int | None]]] = [
        ("discord.guild_ids", config.guild_ids),
        ("discord.admin_role_ids", config.admin_role_ids),
        ("wiki.announce_channel", [config.announce_channel]),
        ("support.forum_channel_id", [config.support.forum_channel_id]),
        ("support.private_channel_id", [config.support.private_channel_id]),
        ("support.helper_role_id", [config.support.helper_role_id]),
        ("support.staff_role_ids", config.support.staff_role_ids),
    ]
    checks = []
    for key, ids in keys:
        for value in ids:
            if value in PLACEHOLDER_IDS:
                text = t("doctor.placeholder", key=key, id=value)
                checks.append(Check(text, False, t("doctor.placeholder_fix", key=key)))
    return checks


def format_report(checks: Sequence[Check], config_path: Path) -> str:
    """The checklist as printed: a mark per line, the fix under each failure, a summary."""
    t = load_templates("bot.yaml")
    lines = [t("doctor.header", config=config_path)]
    for check in checks:
        mark = {True: "doctor.mark_ok", False: "doctor.mark_fail", None: "doctor.mark_skip"}
        lines.append(f"{t(mark[check.ok]):<6} {check.text}")
        if check.ok is False and check.fix:
            lines.append(t("doctor.fix_line", fix=check.fix))
    counted = [c for c in checks if c.ok is not None]
    failed = sum(1 for c in counted if c.ok is False)
    if failed:
        lines.append(t("doctor.summary_fail", failed=failed, count=len(counted)))
    else:
        lines.append(t("doctor.summary_ok", count=len(counted)))
    return "\n".join(lines)


def doctor(args: argparse.Namespace, config_path: Path) -> int:
    """``wikibot doctor``: print the checklist; exit 0 only when every check passed."""
    import discord

    token = os.environ.get("DISCORD_TOKEN", "").strip() or None
    try:
        checks = asyncio.run(run_checks(config_path, token))
    except discord.DiscordException as exc:  # anything unforeseen: one line, not a traceback
        checks = [Check(str(exc), False, "")]
    print(format_report(checks, config_path))
    return 1 if any(c.ok is False for c in checks) else 0
