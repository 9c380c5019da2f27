"""What whole-wiki passes need of each page, small enough to keep beside it in the cache.

Some answers look at every page of the wiki for one small thing: the runbook
catalogue asks which pages say they supersede the current runbook, the search
index how many sections each page has and how much text the wiki holds. Asking
the pages themselves means reading every page in full, which at start is the
whole cost of the parsed-page cache.
:func:`page_facts` derives those things from a page once; the cache stores them
with the page (:mod:`knowledge.wiki.cache`), so a page read from it answers
:func:`facts_of` without its sections being read. A page parsed in this run
derives them when asked: the same answer either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.wiki.model import Page

__all__ = ["FACTS_VERSION", "SUPERSEDES", "PageFacts", "facts_of", "page_facts"]

#: Bump when :func:`page_facts` derives anything differently: cached facts are then stale.
FACTS_VERSION = 1
#: A section saying that the page takes the place of the pages it links to.
SUPERSEDES = re.compile(r"\b(?:supersedes|replaces|takes over from)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PageFacts:
    """A page's answers to the questions asked of every page."""

    #: How many sections the page has.
    sections: int
    #: Characters of its sections' prose and code (what indexing it costs grows with).
    text_chars: int
    #: ``(anchor, linked pages)`` of each section whose prose says it supersedes,
    #: replaces or takes over from something, in page order; the linked pages are
    #: the wiki paths the section links to, in order, without repeats.
    supersedes: tuple[tuple[str, tuple[str, ...]], ...] = ()


def page_facts(page: Page) -> PageFacts:
    """The facts of ``page``, derived from its sections."""
    supersedes = []
    for section in page.sections:
        targets = tuple(dict.fromkeys(link.path for link in section.links if link.path))
        if targets and SUPERSEDES.search(section.text):
            supersedes.append((section.anchor, targets))
    chars = sum(
        len(section.text) + sum(len(block.text) for block in section.code)
        for section in page.sections
    )
    return PageFacts(len(page.sections), chars, tuple(supersedes))


def facts_of(page: Page) -> PageFacts:
    """The facts of ``page``: those stored with it when it came from the page cache
    (its sections are then not read), else derived now."""
    stored = getattr(page, "facts", None)  # a page of the cache (cache.StoredPage) has them
    return stored if isinstance(stored, PageFacts) else page_facts(page)
