"""The wiki as typed data: pages read from a folder, the glossary, the runbook catalogue.

``load_wiki(folder)`` gives a :class:`Wiki` of :class:`Page` objects (see
:mod:`knowledge.wiki.model`); :class:`Glossary` and :class:`Catalogue` are built from
it, and :class:`PageStatus` is what a page is to its model family, with the one weight
table that ranks by it.
"""

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
from knowledge.wiki.glossary import Glossary, GlossaryEntry, Lookup, Mention, find_glossary_page
from knowledge.wiki.load import MAX_PAGE_BYTES, WikiFolderError, load_wiki, read_page
from knowledge.wiki.model import Cell, CodeBlock, Labelled, Link, Page, Section, Table, Wiki
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
