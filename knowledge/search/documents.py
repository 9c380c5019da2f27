"""What goes into the index of each wiki section: one :class:`Document` per section."""

from __future__ import annotations

from knowledge.search.engine import Document
from knowledge.wiki import Page, Section, Wiki
from knowledge.wiki.facts import facts_of

__all__ = ["SYMPTOM_LABELS", "section_document", "text_size"]

#: Labels of paragraphs that quote what a failure looks like (the message, the log
#: line). Their text and code go once more into the "symptom" field, so a pasted
#: error message finds the section written about it before sections that merely
#: mention it. "Problem"/"Cause" paragraphs are prose about the issue and stay body.
SYMPTOM_LABELS = frozenset({"error", "errors", "symptom", "symptoms", "log"})


def section_document(page: Page, section: Section, status: str) -> Document:
    return Document(
        path=page.path,
        anchor=section.anchor,
        page_title=page.title,
        section_title=section.title,
        # The page title has its own field; count it once.
        headings=" / ".join(
            section.parents[1:] if section.parents[:1] == (page.title,) else section.parents
        ),
        text=section.text,
        code="\n\n".join(block.text for block in section.code),
        symptom="\n\n".join(
            "\n".join((item.text, *item.code))
            for item in section.labelled
            if item.label.casefold() in SYMPTOM_LABELS
        ),
        category=page.category,
        status=status,
    )


def text_size(wiki: Wiki) -> int:
    """Characters of section text and code: what the cost of a build grows with."""
    # Counted once per page, in its facts: a page of the cache is not read for it.
    return sum(facts_of(page).text_chars for page in wiki.pages.values())
