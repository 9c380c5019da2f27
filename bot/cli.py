"""The ``wikibot`` command: knowledge commands plus the Discord ones.

discord.py is imported only when ``serve`` or ``sync`` runs, so the console
starts fast and works without it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from knowledge.cli.main import add_knowledge_commands

from . import serve_cli
from .install import check_install

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wikibot",
        description="Answers from the RTX PRO 6000 Blackwell field wiki: console and Discord bot.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")
    add_knowledge_commands(sub)
    serve_cli.add_config_to_tickets(sub)
    serve_cli.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    check_install()
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
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
