"""``python -m wikibot ...`` runs the ``wikibot`` command."""

from __future__ import annotations

import sys

from bot.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
