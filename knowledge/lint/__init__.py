"""What the wiki gets wrong, found from its own structure: ``wikibot lint`` and /wiki lint.

Checks (``--only`` names): ``hubs`` (version maps pointing nowhere, stale hubs),
``links`` (relative links and anchors resolving to nothing), ``acronyms`` (acronyms
used widely that the glossary lacks), ``glossary`` (duplicated rows, empty
meanings), ``troubleshooting`` (an Error with no Fix, a Fix with nothing to do),
``runbooks`` (a launch command running another image than the release image),
``orphans`` (pages navigation never reaches). Each reads the wiki model
(:mod:`knowledge.wiki`) and yields :class:`Finding` objects in markdownlint's shape.
"""

from __future__ import annotations

from knowledge.lint._context import LintOptions
from knowledge.lint._model import Finding, LintReport, Rule, Severity
from knowledge.lint.run import CHECKS, RULES, lint_wiki, render_text, unknown_checks

__all__ = [
    "CHECKS",
    "RULES",
    "Finding",
    "LintOptions",
    "LintReport",
    "Rule",
    "Severity",
    "lint_wiki",
    "render_text",
    "unknown_checks",
]
