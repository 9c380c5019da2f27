"""The wiki as typed data: pages read from a folder, the glossary, the runbook catalogue.

``load_wiki(folder)`` gives a :class:`Wiki` of :class:`Page` objects (see
:mod:`knowledge.wiki.model`); :class:`Glossary` and :class:`Catalogue` are built from
it, and :class:`PageStatus` is what a page is to its model family, with the one weight
table that ranks by it.

Names are imported on first use (PEP 562), as in :mod:`knowledge`: a module that
needs only the page status (the index build process does) does not load the
Markdown parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge.lazy import lazy_exports

if TYPE_CHECKING:
    from knowledge.wiki.cache import PageCache
    from knowledge.wiki.catalogue import (
        Catalogue,
        Family,
        FamilyMatch,
        Runbook,
        Version,
        find_front_page,
        version_series,
    )
    from knowledge.wiki.glossary import (
        Glossary,
        GlossaryEntry,
        Lookup,
        Mention,
        find_glossary_page,
    )
    from knowledge.wiki.load import WikiFolderError, load_wiki
    from knowledge.wiki.model import Cell, CodeBlock, Labelled, Link, Page, Section, Table, Wiki
    from knowledge.wiki.pagefile import MAX_PAGE_BYTES, read_page
    from knowledge.wiki.parse import PARSER_VERSION, github_anchor, parse_page
    from knowledge.wiki.status import WEIGHTS, PageStatus, status_of, status_weight

__all__ = [
    "MAX_PAGE_BYTES",
    "PARSER_VERSION",
    "WEIGHTS",
    "Catalogue",
    "Cell",
    "CodeBlock",
    "Family",
    "FamilyMatch",
    "Glossary",
    "GlossaryEntry",
    "Labelled",
    "Link",
    "Lookup",
    "Mention",
    "Page",
    "PageCache",
    "PageStatus",
    "Runbook",
    "Section",
    "Table",
    "Version",
    "Wiki",
    "WikiFolderError",
    "find_front_page",
    "find_glossary_page",
    "github_anchor",
    "load_wiki",
    "parse_page",
    "read_page",
    "status_of",
    "status_weight",
    "version_series",
]

#: module -> the public names it defines
_MODULES = {
    "cache": ("PageCache",),
    "catalogue": (
        "Catalogue",
        "Family",
        "FamilyMatch",
        "Runbook",
        "Version",
        "find_front_page",
        "version_series",
    ),
    "glossary": ("Glossary", "GlossaryEntry", "Lookup", "Mention", "find_glossary_page"),
    "load": ("WikiFolderError", "load_wiki"),
    "model": ("Cell", "CodeBlock", "Labelled", "Link", "Page", "Section", "Table", "Wiki"),
    "pagefile": ("MAX_PAGE_BYTES", "read_page"),
    "parse": ("PARSER_VERSION", "github_anchor", "parse_page"),
    "status": ("WEIGHTS", "PageStatus", "status_of", "status_weight"),
}
_WHERE = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
