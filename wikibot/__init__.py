"""``python -m wikibot``: the ``wikibot`` command (``bot.cli``), under its own name."""

__all__: list[str] = []
