"""The ``wikibot`` command: knowledge commands plus the Discord ones.

discord.py is imported only when ``serve`` or ``sync`` runs, so the console
starts fast and works without it.
"""

from __future__ import annotations

import argparse
import os
import sys

from knowledge.cli.main import add_knowledge_commands

from . import serve_cli
from .install import check_install, package_version
from .logs import FORMATS, LogSettingError, log_settings, setup_logging

__all__ = ["OWNERS_CHECKED", "build_parser", "main"]

#: Commands that also check no other distribution installs our packages (about 0.1 s).
OWNERS_CHECKED = frozenset({"serve", "sync", "doctor"})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wikibot",
        description="Answers from the RTX PRO 6000 Blackwell field wiki: console and Discord bot.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        default=None,
        help="log lines as text or JSON objects (default: $WIKIBOT_LOG_FORMAT or text)",
    )
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")
    add_knowledge_commands(sub)
    serve_cli.add_config_to_tickets(sub)
    serve_cli.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    check_install()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        fmt, level = log_settings(args.log_format, verbose=args.verbose, default_level="WARNING")
    except LogSettingError as exc:
        print(f"wikibot: {exc}", file=sys.stderr)
        return 2
    setup_logging(fmt, level)
    if args.cmd in OWNERS_CHECKED:
        check_install(owners=True)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.cmd == "tickets":  # the bot's wiki and store unless --wiki/--data say otherwise
        code = serve_cli.configured_folders(args)
        if code:
            return code
        token = os.environ.get("DISCORD_TOKEN", "").strip()
        if args.tickets_cmd == "export" and token:
            args.fetch_thread = serve_cli.thread_reader(token)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`wikibot ask ... | head -1`): nothing left to say to it.
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141  # 128 + SIGPIPE, as a shell reports a command killed by it


if __name__ == "__main__":
    sys.exit(main())
