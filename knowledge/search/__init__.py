"""Full-text search over the sections of a wiki.

:class:`SearchIndex` opens, builds, updates and searches an index kept in a
data folder; what it returns (:class:`SearchResults`, :class:`Hit`,
:class:`BuildStats`) are plain dataclasses. The engine behind it (Whoosh) is
private to this package: nothing outside it imports Whoosh.
"""

from knowledge.search._whoosh import STOP, make_term_analyzer
from knowledge.search.engine import (
    BuildMode,
    BuildStats,
    Engine,
    Hit,
    IndexBuildError,
    IndexLockedError,
    Progress,
    SearchResults,
    Snippet,
)
from knowledge.search.index import SearchIndex
from knowledge.search.query import (
    MAX_QUERY_CHARS,
    PROBLEM_EMPTY,
    PROBLEM_NO_WORDS,
    PreparedQuery,
)

__all__ = [
    "MAX_QUERY_CHARS",
    "PROBLEM_EMPTY",
    "PROBLEM_NO_WORDS",
    "STOP",
    "BuildMode",
    "BuildStats",
    "Engine",
    "Hit",
    "IndexBuildError",
    "IndexLockedError",
    "PreparedQuery",
    "Progress",
    "SearchIndex",
    "SearchResults",
    "Snippet",
    "make_term_analyzer",
]
