"""Relative links and ``#anchors`` that resolve to nothing.

A link's target page must exist (a folder counts when it exists); its anchor must
be one of the target's heading anchors, made by GitHub's rules (lower case,
punctuation dropped, spaces to hyphens, a repeated heading numbered ``-1``,
``-2``: :func:`knowledge.wiki.github_anchor`, applied by the parser), or an HTML
``id``/``name`` on that page. Anchors are compared without case, as GitHub's
page script finds them. Line anchors (``#L10``) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from knowledge.lint._context import LintContext
from knowledge.lint._model import Finding, Rule, Severity
from knowledge.lint._source import section_end
from knowledge.wiki import Page

__all__ = ["RULES", "check_links"]

MISSING_PAGE = Rule("link-missing-page", "links", Severity.ERROR)
MISSING_ANCHOR = Rule("link-missing-anchor", "links", Severity.WARNING)
MISSING_FILE = Rule("link-missing-file", "links", Severity.WARNING)
RULES = (MISSING_PAGE, MISSING_ANCHOR, MISSING_FILE)

_LINE_ANCHOR = re.compile(r"^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")


def _anchors(ctx: LintContext, page: Page, cache: dict[str, set[str]]) -> set[str]:
    found = cache.get(page.path)
    if found is None:
        found = {s.anchor.casefold() for s in page.sections}
        found |= {a.casefold() for a in ctx.source(page).html_ids()}
        cache[page.path] = found
    return found


def check_links(ctx: LintContext) -> Iterator[Finding]:
    wiki = ctx.wiki
    skipped = {path for path, _ in wiki.skipped}
    folders = {p.rsplit("/", 1)[0] for p in wiki.pages if "/" in p}
    anchors: dict[str, set[str]] = {}
    for page in wiki.pages.values():
        source = ctx.source(page)
        said: set[tuple[str, int]] = set()
        for section in page.sections:
            end = section_end(page, section, source)
            for link in section.links:
                if link.path is None:
                    continue
                line = (
                    source.find(f"({link.href}", section.line, end)
                    or source.find(link.href, section.line, end)
                    or section.line
                )
                if (link.href, line) in said:
                    continue
                said.add((link.href, line))
                target = wiki.pages.get(link.path)
                if target is None:
                    path = link.path.rstrip("/")
                    if not path or path in skipped or path in folders:
                        continue
                    if path.casefold().endswith(".md"):
                        yield ctx.finding(MISSING_PAGE, page.path, line, href=link.href)
                    elif ctx.options.files and not (wiki.root / path).exists():
                        yield ctx.finding(MISSING_FILE, page.path, line, href=link.href)
                    continue
                anchor = link.anchor
                if not anchor or _LINE_ANCHOR.match(anchor):
                    continue
                if anchor.casefold() not in _anchors(ctx, target, anchors):
                    yield ctx.finding(
                        MISSING_ANCHOR,
                        page.path,
                        line,
                        href=link.href,
                        anchor=anchor,
                        target=target.path,
                    )
