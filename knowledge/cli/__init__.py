"""The terminal commands of ``wikibot`` that need no Discord: console, ask, index, triage.

``bot.cli`` adds them to the ``wikibot`` parser with :func:`add_knowledge_commands`.
"""

from knowledge.cli.main import add_knowledge_commands

__all__ = ["add_knowledge_commands"]
