"""Full-text search over the sections of a wiki.

:class:`SearchIndex` opens, builds, updates and searches an index kept in a
data folder; what it returns (:class:`SearchResults`, :class:`Hit`,
:class:`BuildStats`) are plain dataclasses. The engine behind it (Whoosh) is
private to this package: nothing outside it imports Whoosh.

Names are imported on first use (PEP 562), so an answer that only needs
:data:`MAX_QUERY_CHARS` (``wikibot ask "/runbook ..."``) does not load Whoosh,
the index store or pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge.lazy import lazy_exports

if TYPE_CHECKING:
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
        PROBLEM_FAILED,
        PROBLEM_NO_INDEX,
        PROBLEM_NO_WORDS,
        PreparedQuery,
    )

__all__ = [
    "MAX_QUERY_CHARS",
    "PROBLEM_EMPTY",
    "PROBLEM_FAILED",
    "PROBLEM_NO_INDEX",
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

#: public name -> the module that defines it
_WHERE = {
    "MAX_QUERY_CHARS": "knowledge.search.query",
    "PROBLEM_EMPTY": "knowledge.search.query",
    "PROBLEM_FAILED": "knowledge.search.query",
    "PROBLEM_NO_INDEX": "knowledge.search.query",
    "PROBLEM_NO_WORDS": "knowledge.search.query",
    "STOP": "knowledge.search._whoosh",
    "BuildMode": "knowledge.search.engine",
    "BuildStats": "knowledge.search.engine",
    "Engine": "knowledge.search.engine",
    "Hit": "knowledge.search.engine",
    "IndexBuildError": "knowledge.search.engine",
    "IndexLockedError": "knowledge.search.engine",
    "PreparedQuery": "knowledge.search.query",
    "Progress": "knowledge.search.engine",
    "SearchIndex": "knowledge.search.index",
    "SearchResults": "knowledge.search.engine",
    "Snippet": "knowledge.search.engine",
    "make_term_analyzer": "knowledge.search._whoosh",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
