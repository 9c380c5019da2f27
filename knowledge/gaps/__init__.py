"""What people asked that the wiki did not answer: ``wikibot gaps`` and /wiki gaps.

:mod:`~knowledge.gaps.recorder` notes the requests of ``/search``, ``/acronym``,
``/runbook`` and ``/support`` that found nothing or were not confident (the query
redacted, the command, the confidence, the day; never who asked);
:mod:`~knowledge.gaps.store` keeps them in the data folder's ``gaps.sqlite3`` for
``gaps.keep_days``; :mod:`~knowledge.gaps.report` groups them by the terms that
tell them apart: the list of pages worth writing.
"""

from __future__ import annotations

from knowledge.gaps.recorder import UNSURE, GapRecorder, GapSettings, unanswered
from knowledge.gaps.report import (
    GapGroup,
    GapsReport,
    TermWeights,
    gaps_report,
    named_terms,
    terms_of,
)
from knowledge.gaps.store import FILE_NAME, MAX_QUERY_CHARS, GapRecord, GapStore

__all__ = [
    "FILE_NAME",
    "MAX_QUERY_CHARS",
    "UNSURE",
    "GapGroup",
    "GapRecord",
    "GapRecorder",
    "GapSettings",
    "GapStore",
    "GapsReport",
    "TermWeights",
    "gaps_report",
    "named_terms",
    "terms_of",
    "unanswered",
]
