"""``python -m bot [--config FILE]``: run the Discord bot, like ``wikibot serve``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .install import check_install
from .logs import FORMATS, LogSettingError, log_settings
from .serve_cli import serve

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    check_install(owners=True)
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", type=Path, default=None, help="bot config file (default: ./config.yaml)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        default=None,
        help="log lines as text or JSON objects (default: $WIKIBOT_LOG_FORMAT or text)",
    )
    args = parser.parse_args(argv)
    try:
        log_settings(args.log_format, verbose=args.verbose, default_level="INFO")
    except LogSettingError as exc:
        print(f"python -m bot: {exc}", file=sys.stderr)
        return 2
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
