"""``wikibot serve`` and ``wikibot sync``: the Discord side of the command line.

discord.py is imported inside the command functions only, so ``wikibot console``
and ``wikibot ask`` never load it. The token is read from ``DISCORD_TOKEN`` and
nowhere else; without it ``serve`` prints one line saying what to do.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from knowledge.templates import load_templates

from .config import BotConfig, ConfigError, load_config

__all__ = ["DEFAULT_CONFIG", "add_commands", "serve", "sync"]

log = logging.getLogger(__name__)

DEFAULT_CONFIG = Path("config.yaml")


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
    sync_parser.set_defaults(func=sync)


def _prepare(args: argparse.Namespace) -> tuple[BotConfig, str] | int:
    """The config and token, or an exit code after printing one line to stderr."""
    t = load_templates("bot.yaml")
    token = os.environ.get("DISCORD_TOKEN", "").strip()
    if not token:
        print(t("serve.missing_token"), file=sys.stderr)
        return 2
    path = args.config or Path(os.environ.get("WIKIBOT_CONFIG") or DEFAULT_CONFIG)
    try:
        config = load_config(path)
    except ConfigError as exc:
        print(t("serve.config_error", error=exc), file=sys.stderr)
        return 2
    return config, token


def _setup_logging(verbose: bool) -> None:
    import discord

    # bot.cli configured a plain root handler for the console; the bot logs its own way.
    for handler in list(logging.root.handlers):
        logging.root.removeHandler(handler)
    discord.utils.setup_logging(level=logging.DEBUG if verbose else logging.INFO, root=True)


def serve(args: argparse.Namespace) -> int:
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    config, token = prepared
    _setup_logging(getattr(args, "verbose", False))
    import discord

    from .client import WikiBot

    async def run() -> None:
        async with WikiBot(config) as bot:
            await bot.start(token)

    try:
        asyncio.run(run())
    except discord.LoginFailure:
        print(load_templates("bot.yaml")("serve.login_failed"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def sync(args: argparse.Namespace) -> int:
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    config, token = prepared
    _setup_logging(getattr(args, "verbose", False))
    import discord

    from .client import WikiBot

    t = load_templates("bot.yaml")
    targets: list[int | None] = [None] if args.global_sync else list(config.guild_ids)
    if not targets:
        print(t("serve.no_guilds", config=config.source), file=sys.stderr)
        return 2

    async def run() -> list[tuple[int | None, int]]:
        async with WikiBot(config, open_knowledge=False, sync_on_start=False) as bot:
            await bot.login(token)  # REST only: no gateway connection is needed to sync
            return [(target, await bot.sync_commands(target)) for target in targets]

    try:
        done = asyncio.run(run())
    except discord.LoginFailure:
        print(t("serve.login_failed"), file=sys.stderr)
        return 1
    for target, count in done:
        where = t("admin.sync_global") if target is None else t("serve.guild", id=target)
        print(t("serve.synced", count=count, where=where))
    return 0
