"""``wikibot serve``, ``sync``, ``doctor`` and ``health``: the Discord side of the CLI.

discord.py is imported inside the command functions only, so ``wikibot console``,
``wikibot ask`` and ``wikibot health`` never load it. The token is read from
``DISCORD_TOKEN`` and nowhere else; without it ``serve`` prints one line saying
what to do. ``health`` needs no token: it reads the heartbeat the running bot
writes into its data folder (see :mod:`bot.heartbeat`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowledge.templates import load_templates
from knowledge.wiki.load import WikiFolderError, check_wiki_folder

from .heartbeat import DEFAULT_MAX_AGE, check_heartbeat, heartbeat_path

if TYPE_CHECKING:
    from .config import BotConfig

# The config models (pydantic), the knowledge service, the wiki fetcher and asyncio
# are imported by the commands that use them: ``wikibot ask`` loads none of them.

__all__ = [
    "DEFAULT_CONFIG",
    "RETRY_ATTEMPTS",
    "RETRY_FIRST_DELAY",
    "RETRY_MAX_DELAY",
    "add_commands",
    "add_config_to_tickets",
    "configured_folders",
    "doctor",
    "health",
    "serve",
    "sync",
    "thread_reader",
]

log = logging.getLogger(__name__)

DEFAULT_CONFIG = Path("config.yaml")

#: ``serve`` tries to reach Discord this many times, waiting twice as long each
#: time (from the first delay up to the cap), before it gives up with exit code 1.
RETRY_ATTEMPTS = 10
RETRY_FIRST_DELAY = 2.0
RETRY_MAX_DELAY = 300.0


def _config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help=f"bot config file (default: $WIKIBOT_CONFIG or ./{DEFAULT_CONFIG})",
    )


def add_commands(sub: argparse._SubParsersAction) -> None:
    serve_parser = sub.add_parser("serve", help="run the Discord bot (token from DISCORD_TOKEN)")
    _config_option(serve_parser)
    serve_parser.set_defaults(func=serve)

    sync_parser = sub.add_parser("sync", help="register the slash commands with Discord and exit")
    _config_option(sync_parser)
    sync_parser.add_argument(
        "--global",
        dest="global_sync",
        action="store_true",
        help="sync to every server the bot is in, not only the configured guild_ids",
    )
    sync_parser.add_argument(
        "--clear-guild-copies",
        dest="clear_copies",
        action="store_true",
        default=None,
        help="with --global: remove the per-server copies without asking",
    )
    sync_parser.add_argument(
        "--keep-guild-copies",
        dest="clear_copies",
        action="store_false",
        help="with --global: keep the per-server copies without asking",
    )
    sync_parser.set_defaults(func=sync)

    health_parser = sub.add_parser(
        "health",
        help="exit 0 if the running bot's heartbeat is fresh and it is connected, else 1",
    )
    _config_option(health_parser)
    health_parser.add_argument(
        "--max-age",
        type=_positive_seconds,
        default=DEFAULT_MAX_AGE,
        metavar="SECONDS",
        help=f"oldest heartbeat that still counts as healthy (default: {DEFAULT_MAX_AGE:.0f})",
    )
    health_parser.set_defaults(func=health)

    doctor_parser = sub.add_parser(
        "doctor",
        help="check the config, token, servers, commands, wiki and index; exit 0 if all pass",
    )
    _config_option(doctor_parser)
    doctor_parser.set_defaults(func=doctor)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def add_config_to_tickets(sub: argparse._SubParsersAction) -> None:
    """``wikibot tickets ACTION --config FILE``: the bot's wiki and ticket store."""
    tickets = sub.choices.get("tickets")
    if tickets is None:
        return
    for action in tickets._subparsers._group_actions:  # the file/list/show parsers
        for parser in getattr(action, "choices", {}).values():
            _config_option(parser)


def configured_folders(args: argparse.Namespace) -> int:
    """For ``wikibot tickets`` without ``--wiki`` and ``--data``: the wiki and data
    folder of the bot's config (``--config``, ``$WIKIBOT_CONFIG`` or ./config.yaml), so
    the command line files into, lists and shows the same store as the bot, checked
    against the same wiki. Without a config file: the demo wiki, said on stderr.
    Returns an exit code (0: go on)."""
    from .config import ConfigError, data_dir_of, load_config

    if getattr(args, "wiki", None) is not None or getattr(args, "data", None) is not None:
        return 0
    t = load_templates("bot.yaml")
    path = _config_path(args)
    if args.config is None and not os.environ.get("WIKIBOT_CONFIG") and not path.is_file():
        print(t("serve.tickets_no_config", path=path), file=sys.stderr)
        return 0
    try:
        config = load_config(path)
    except ConfigError as exc:
        print(t("serve.config_error", error=exc), file=sys.stderr)
        return 2
    args.wiki = config.wiki_dir  # None for a fetched wiki: found in the data folder
    args.data = data_dir_of(config)
    return 0


def thread_reader(token: str) -> Callable[[int], list[Any]]:
    """For ``wikibot tickets export``: a function reading a thread's messages over
    Discord's REST API with the bot's token (no gateway), oldest first."""

    def read(thread_id: int) -> list[Any]:
        import asyncio

        return asyncio.run(_thread_messages(token, thread_id))

    return read


async def _thread_messages(token: str, thread_id: int, limit: int = 1000) -> list[Any]:
    import datetime as dt

    import discord

    from knowledge.intake.transcript import ThreadMessage

    raw: list[dict[str, Any]] = []
    client = discord.Client(intents=discord.Intents.none())
    async with client:
        await client.login(token)
        before: int | None = None
        while len(raw) < limit:
            page = await client.http.logs_from(thread_id, 100, before=before)
            raw += page
            if len(page) < 100:
                break
            before = int(page[-1]["id"])
    out = []
    for m in raw:
        author = m.get("author") or {}
        text = m.get("content") or ""
        for embed in m.get("embeds") or []:  # the bot's own posts: their embed's title
            text = "\n".join(x for x in (text, embed.get("title") or "") if x)
        at = dt.datetime.fromisoformat(m["timestamp"]).timestamp()
        files = tuple(str(a.get("filename") or "") for a in m.get("attachments") or [])
        name = author.get("global_name") or author.get("username") or "?"
        out.append(ThreadMessage(f"{name} ({author.get('id', '?')})", at, text, files))
    return out


def _config_path(args: argparse.Namespace) -> Path:
    return args.config or Path(os.environ.get("WIKIBOT_CONFIG") or DEFAULT_CONFIG)


def _prepare(args: argparse.Namespace) -> tuple[BotConfig, str] | int:
    from .config import ConfigError, load_config

    """The config and token, or an exit code after printing one line to stderr."""
    t = load_templates("bot.yaml")
    token = os.environ.get("DISCORD_TOKEN", "").strip()
    if not token:
        print(t("serve.missing_token", command=_command(args)), file=sys.stderr)
        return 2
    try:
        config = load_config(_config_path(args))
    except ConfigError as exc:
        print(t("serve.config_error", error=exc), file=sys.stderr)
        return 2
    return config, token


def _command(args: argparse.Namespace) -> str:
    """The command as the user typed it, for the first word of a message."""
    cmd = getattr(args, "cmd", None)
    return f"wikibot {cmd}" if cmd else "python -m bot"


def _retry_delays() -> Iterator[float]:
    """Seconds to wait before each new attempt to reach Discord: doubling, capped."""
    delay = RETRY_FIRST_DELAY
    for _ in range(RETRY_ATTEMPTS - 1):
        yield delay
        delay = min(delay * 2, RETRY_MAX_DELAY)


def _network_errors() -> tuple[type[BaseException], ...]:
    """What "Discord cannot be reached" looks like, as opposed to a refused token."""
    import aiohttp
    import discord

    return (
        OSError,
        TimeoutError,
        aiohttp.ClientError,
        discord.GatewayNotFound,
        discord.DiscordServerError,
    )


def _setup_logging(args: argparse.Namespace) -> None:
    """The one log format (bot.logs), at INFO unless WIKIBOT_LOG_LEVEL or -v says otherwise."""
    from .logs import log_settings, setup_logging

    fmt, level = log_settings(
        getattr(args, "log_format", None),
        verbose=getattr(args, "verbose", False),
        default_level="INFO",
    )
    setup_logging(fmt, level)


def _storage_problem(config: BotConfig) -> str | None:
    """One line if the wiki folder cannot be read or the data folder cannot be written."""
    from knowledge.service import data_dir_problem

    from .config import data_dir_of

    t = load_templates("bot.yaml")
    if config.wiki_dir is not None:  # a wiki fetched from a source lands in the data folder
        try:
            check_wiki_folder(config.wiki_dir)
        except WikiFolderError as exc:
            return t("serve.wiki_unusable", path=exc.path, reason=exc.reason or exc.problem)
    data_dir = data_dir_of(config)
    reason = data_dir_problem(data_dir)
    if reason is not None:
        return t("serve.data_dir_unusable", path=data_dir, reason=reason, config=config.source)
    return None


def serve(args: argparse.Namespace) -> int:
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    config, token = prepared
    # Checked before connecting: the bot cannot run on an index kept only in memory.
    problem = _storage_problem(config)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    _setup_logging(args)
    import asyncio

    import discord

    from knowledge.source import ArchiveError, CheckFailed, FetchError, StoreBusy

    from .client import WikiBot
    from .shutdown import StopOnSignal

    t = load_templates("bot.yaml")
    command = _command(args)
    unreachable = _network_errors()

    async def run() -> None:
        bot = WikiBot(config)
        # SIGTERM (docker stop) and SIGINT: close the gateway, finish the work in flight,
        # flush the stores, return (see bot.shutdown).
        signals = StopOnSignal(bot)
        signals.install()
        try:
            async with bot:
                await bot.start(token)
        finally:
            signals.uninstall()

    delays = _retry_delays()
    attempt = 1
    while True:
        try:
            asyncio.run(run())
        except discord.LoginFailure:
            print(t("serve.login_failed"), file=sys.stderr)
            return 1
        except (FetchError, ArchiveError, CheckFailed, StoreBusy) as exc:
            # Only on a fresh machine: with a wiki fetched before, the bot starts on it.
            print(
                load_templates("source.yaml")("fetch.first_failed", error=_one_line(exc)),
                file=sys.stderr,
            )
            return 1
        except KeyboardInterrupt:
            return 0
        except unreachable as exc:
            # One line per attempt, never a traceback: the cause is the network.
            error = _one_line(exc)
            delay = next(delays, None)
            if delay is None:
                print(
                    t("serve.gave_up", command=command, error=error, attempts=attempt),
                    file=sys.stderr,
                )
                return 1
            print(
                t(
                    "serve.unreachable",
                    command=command,
                    error=error,
                    delay=delay,
                    attempt=attempt,
                    attempts=RETRY_ATTEMPTS,
                ),
                file=sys.stderr,
            )
            time.sleep(delay)
            attempt += 1
        else:
            return 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def sync(args: argparse.Namespace) -> int:
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    config, token = prepared
    _setup_logging(args)
    import discord

    from .client import WikiBot

    t = load_templates("bot.yaml")
    targets: list[int | None] = [None] if args.global_sync else list(config.guild_ids)
    if not targets:
        print(t("serve.no_guilds", config=config.source), file=sys.stderr)
        return 2

    async def run() -> int:
        async with WikiBot(config, open_knowledge=False, sync_on_start=False) as bot:
            await bot.login(token)  # REST only: no gateway connection is needed to sync
            failed = 0
            for target in targets:
                where = t("admin.sync_global") if target is None else t("serve.guild", id=target)
                count = (
                    await bot.sync_commands(None) if target is None else await bot.try_sync(target)
                )
                if count is None:  # one server refusing does not stop the others
                    failed += 1
                    why = bot.sync_failures.get(target or 0, "")
                    print(t("serve.sync_failed", where=where, why=why), file=sys.stderr)
                else:
                    print(t("serve.synced", count=count, where=where))
            if args.global_sync:
                await _offer_to_clear_copies(bot, config, args.clear_copies, t)
            return 1 if failed else 0

    import asyncio

    try:
        return asyncio.run(run())
    except discord.LoginFailure:
        print(t("serve.login_failed"), file=sys.stderr)
        return 1


async def _offer_to_clear_copies(bot: Any, config: BotConfig, clear: bool | None, t: Any) -> None:
    """After a global sync: the servers still holding their own copies of the commands
    list every command twice; offer to remove those copies (asked on stdin unless
    ``--clear-guild-copies`` / ``--keep-guild-copies`` decided)."""
    joined = [guild.id async for guild in bot.fetch_guilds(limit=200)]
    copies = await bot.guilds_with_copies(sorted({*config.guild_ids, *joined}))
    if not copies:
        return
    ids = ", ".join(str(g) for g in copies)
    if clear is None:
        try:
            answer = input(t("serve.clear_copies_prompt", count=len(copies), ids=ids) + " ")
        except EOFError:  # not interactive
            answer = ""
        clear = answer.strip().casefold() in ("y", "yes")
    if not clear:
        print(t("serve.copies_kept", count=len(copies), ids=ids))
        return
    cleared = await bot.clear_guild_copies(copies)
    print(t("serve.copies_cleared", count=len(cleared), total=len(copies)))


def doctor(args: argparse.Namespace) -> int:
    """``wikibot doctor``: the deployment checklist (see :mod:`bot.doctor`)."""
    from .doctor import doctor as run_doctor

    return run_doctor(args, _config_path(args))


def health(args: argparse.Namespace) -> int:
    from .config import ConfigError, data_dir_of, load_config

    """Docker's ``HEALTHCHECK``: one line, exit 0 (healthy) or 1 (unhealthy, saying why).

    Never exits 2: Docker reserves it. The data folder is found as the bot finds
    it: ``wiki.data_dir``, else the per-wiki folder under ``$WIKIBOT_DATA``.
    """
    t = load_templates("bot.yaml")
    try:
        config = load_config(_config_path(args))
    except ConfigError as exc:
        print(t("health.config_error", error=exc), file=sys.stderr)
        return 1
    data_dir = data_dir_of(config)
    verdict = check_heartbeat(heartbeat_path(data_dir), max_age=args.max_age)
    line = t(f"health.{verdict.status}", **verdict.values())
    print(line, file=sys.stdout if verdict.ok else sys.stderr)
    return 0 if verdict.ok else 1
