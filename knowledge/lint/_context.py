"""What every check reads: the loaded wiki, its glossary and catalogue, page sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from knowledge.lint._model import Finding, Rule
from knowledge.lint._source import PageSource, read_source
from knowledge.wiki import Catalogue, Glossary, Page, Wiki

__all__ = ["LintContext", "LintOptions"]


@dataclass(frozen=True, slots=True)
class LintOptions:
    #: Check links to files other than pages (images, scripts): only a full checkout
    #: has them (a fetched wiki keeps pages and images, the snapshot pages only).
    files: bool = False
    #: An acronym the glossary lacks is reported once it is used on this many pages.
    acronym_pages: int = 10


@dataclass(slots=True)
class LintContext:
    wiki: Wiki
    glossary: Glossary
    catalogue: Catalogue
    options: LintOptions = field(default_factory=LintOptions)
    _sources: dict[str, PageSource] = field(default_factory=dict, repr=False)

    def source(self, page: Page) -> PageSource:
        found = self._sources.get(page.path)
        if found is None:
            found = self._sources[page.path] = read_source(self.wiki.root, page)
        return found

    @staticmethod
    def finding(rule: Rule, path: str, line: int, **values: Any) -> Finding:
        return Finding(path=path, line=max(line, 1), rule=rule, values=values)
