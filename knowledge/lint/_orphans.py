"""Pages the wiki's navigation never reaches, and pages its full index lacks.

Navigation starts at the front page, the family hubs and the folder indexes (a
``README.md`` or ``index.md`` of a folder) and follows links from page to page (a
path named in inline code, as a folder's README lists its files, counts too).
A catalogue page (one linking at least half of all pages, in at least half of
the top folders: a generated full index, not a folder's own index) is not
followed: through it every page would count as reached. An orphan is a page the
navigation never reaches; a catalogue that lacks a page is out of date (the
wiki's maintenance notes regenerate it).
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from collections.abc import Iterator

from knowledge.lint._context import LintContext
from knowledge.lint._model import Finding, Rule, Severity
from knowledge.wiki.catalogue import FRONT_PAGE_NAMES

__all__ = ["RULES", "check_orphans"]

ORPHAN = Rule("orphan-page", "orphans", Severity.WARNING)
NOT_INDEXED = Rule("orphan-not-in-index", "orphans", Severity.WARNING)
RULES = (ORPHAN, NOT_INDEXED)

#: A page linking this share of all pages (and at least ``_CATALOGUE_MIN``) is a catalogue.
_CATALOGUE_SHARE = 0.5
_CATALOGUE_MIN = 20
_INDEX_NAMES = frozenset(name.casefold() for name in FRONT_PAGE_NAMES)


_CODE_PATH = re.compile(r"`([^`\s]+\.md)`")


def _named(ctx: LintContext, path: str) -> set[str]:
    """Pages a page names by their path in inline code (``results/report.md``), as a
    folder's README lists what the folder holds: the reader is led there too."""
    pages = ctx.wiki.pages
    base = posixpath.dirname(path)
    found = set()
    for _, line in ctx.source(pages[path]).prose():
        if ".md`" not in line:
            continue
        for name in _CODE_PATH.findall(line):
            target = posixpath.normpath(posixpath.join(base, name))
            if target in pages and target != path:
                found.add(target)
    return found


def _top(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else ""


def check_orphans(ctx: LintContext) -> Iterator[Finding]:
    pages = ctx.wiki.pages
    targets = {
        path: {link.path for link in page.links if link.path in pages and link.path != path}
        for path, page in pages.items()
    }
    folders = {_top(path) for path in pages}
    catalogues = {
        path
        for path, linked in targets.items()
        if len(linked) >= max(_CATALOGUE_MIN, _CATALOGUE_SHARE * len(pages))
        and len({_top(p) for p in linked}) >= _CATALOGUE_SHARE * len(folders)
    }
    roots = [ctx.catalogue.front] if ctx.catalogue.front else []
    roots += [f.hub for f in ctx.catalogue.families if f.hub]
    roots += [p for p in pages if p.rsplit("/", 1)[-1].casefold() in _INDEX_NAMES]
    reached: set[str] = set()
    todo = deque(p for p in roots if p in pages)
    while todo:
        path = todo.popleft()
        if path in reached:
            continue
        reached.add(path)
        if path in catalogues:
            continue
        todo.extend(t for t in targets[path] if t not in reached)
        todo.extend(t for t in _named(ctx, path) if t not in reached)
    for path in sorted(pages):
        if path not in reached and path not in catalogues:
            yield ctx.finding(ORPHAN, path, 1, title=pages[path].title)
    for catalogue in sorted(catalogues):
        listed = targets[catalogue]
        for path in sorted(pages):
            if path != catalogue and path not in listed:
                yield ctx.finding(NOT_INDEXED, catalogue, 1, page=path, index=catalogue)
