"""Hubs: a version map row pointing to a page that does not exist, and a stale hub.

The families, their hubs and version maps are the runbook catalogue's
(:class:`knowledge.wiki.Catalogue`); a hub is stale when the page its map calls
current is older than a page of the same numbered series that exists (or than a
page saying it supersedes it), as :meth:`Catalogue.newer_pages` finds them.
"""

from __future__ import annotations

from collections.abc import Iterator

from knowledge.lint._context import LintContext
from knowledge.lint._model import Finding, Rule, Severity
from knowledge.wiki import Page, Table, version_series

__all__ = ["RULES", "check_hubs"]

MISSING_PAGE = Rule("hub-missing-page", "hubs", Severity.ERROR)
STALE = Rule("hub-stale", "hubs", Severity.WARNING)
RULES = (MISSING_PAGE, STALE)


def _is_version_map(table: Table) -> bool:
    """The catalogue's test: a Status column beside a Page (or Version) column."""
    return table.column("status") is not None and table.column("page", "version") is not None


def _row_line(ctx: LintContext, hub: Page, table: Table, href: str) -> int:
    source = ctx.source(hub)
    return source.find(f"({href}", table.line) or source.find(href, table.line) or table.line


def check_hubs(ctx: LintContext) -> Iterator[Finding]:
    wiki = ctx.wiki
    for family in ctx.catalogue.families:
        if family.group != "main" or family.hub is None or family.hub not in wiki.pages:
            continue
        hub = wiki.pages[family.hub]
        maps = [table for _, table in hub.tables if _is_version_map(table)]
        for table in maps:
            page_col = table.column("page", "version")
            status_col = table.column("status")
            assert page_col is not None and status_col is not None
            for row in table.rows:
                for link in row[page_col].links:
                    if link.path and link.path.endswith(".md") and link.path not in wiki.pages:
                        yield ctx.finding(
                            MISSING_PAGE,
                            hub.path,
                            _row_line(ctx, hub, table, link.href),
                            family=family.name,
                            href=link.href,
                            status=row[status_col].text or "-",
                        )
        current = family.current[0] if family.current else None
        if current is None or current.path not in wiki.pages:
            continue
        newer = ctx.catalogue.newer_pages(family)
        if not newer:
            continue
        line = next(
            (
                _row_line(ctx, hub, table, link.href)
                for table in maps
                for row in table.rows
                for cell in row
                for link in cell.links
                if link.path == current.path
            ),
            maps[0].line if maps else 1,
        )
        best = newer[0]
        same_series = version_series(best.path) is not None and (
            version_series(best.path)[:2] == (version_series(current.path) or ("", ""))[:2]
        )
        yield ctx.finding(
            STALE,
            hub.path,
            line,
            family=family.name,
            current=current.path,
            newer=best.path,
            how="series" if same_series else "supersedes",
            others=len(newer) - 1,
        )
