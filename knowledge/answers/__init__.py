"""Every command's answer as a pure function of the loaded wiki: ``(state, t, input) -> Reply``.

``state`` is a :class:`WikiState` (the wiki, glossary, catalogue and index of one
load), ``t`` the wording from ``templates/replies.yaml``. Nothing here keeps
state or reads files, so the console, ``wikibot ask`` and the Discord layer
answer alike, and each answer is tested on a state built once.
"""

from knowledge.answers._choices import (
    AUTOCOMPLETE_LIMIT,
    category_choices,
    family_choices,
    term_choices,
)
from knowledge.answers._glossary import MAX_EXPLAIN_CHARS, acronym, explain
from knowledge.answers._runbook import launch, runbook, versions
from knowledge.answers._search import (
    MAX_PASTED_CHARS,
    SEARCH_PAGE_SIZE,
    is_pasted,
    search,
    search_at_hand,
)
from knowledge.answers._state import Links, WikiState
from knowledge.answers._status import age, help_reply, status
from knowledge.answers._support import support_check_reply

__all__ = [
    "AUTOCOMPLETE_LIMIT",
    "MAX_EXPLAIN_CHARS",
    "MAX_PASTED_CHARS",
    "SEARCH_PAGE_SIZE",
    "Links",
    "WikiState",
    "acronym",
    "age",
    "category_choices",
    "explain",
    "family_choices",
    "help_reply",
    "is_pasted",
    "launch",
    "runbook",
    "search",
    "search_at_hand",
    "status",
    "support_check_reply",
    "term_choices",
    "versions",
]
