"""``python -m bot [--config FILE]``: run the Discord bot, like ``wikibot serve``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .install import check_install
from .serve_cli import serve

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    check_install()
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", type=Path, default=None, help="bot config file (default: ./config.yaml)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    return serve(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
