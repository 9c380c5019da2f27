"""Troubleshooting entries: an **Error** with no **Fix**, or a Fix that gives nothing to do.

An entry is a section with an ``**Error**:`` paragraph, as the known errors of
triage read them; what says what to do is a paragraph labelled with a fix word
(``**Fix**``, ``**Workaround**``, ``**Solution**`` ...). A fix gives something to
do when it (or the list and code under it, up to the next label) holds a command
(a code block or inline code) or a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from knowledge.lint._context import LintContext
from knowledge.lint._model import Finding, Rule, Severity
from knowledge.lint._source import PageSource, section_end
from knowledge.triage.known_errors import ERROR_LABELS, FIX_WORDS
from knowledge.wiki import Section

__all__ = ["RULES", "check_troubleshooting"]

NO_FIX = Rule("troubleshooting-no-fix", "troubleshooting", Severity.WARNING)
VAGUE_FIX = Rule("troubleshooting-vague-fix", "troubleshooting", Severity.INFO)
RULES = (NO_FIX, VAGUE_FIX)

#: A label saying where a fix stands (``**Status**: not fixable yet; use ...``).
_ACKNOWLEDGES = "status"
_LABEL_LINE = re.compile(r"^\s*\*\*([^*]+?):?\*\*:?")
_ACTIONABLE = re.compile(r"`|\]\(|\]\[|https?://|<https?:")


def _label_lines(source: PageSource, start: int, end: int) -> list[tuple[int, str]]:
    found = []
    for number in range(start, min(end, len(source.code)) + 1):
        if source.code[number - 1]:
            continue
        match = _LABEL_LINE.match(source.line(number))
        if match:
            found.append((number, match.group(1).strip().rstrip(":").casefold()))
    return found


def _is_fix(label: str) -> bool:
    return any(word in label for word in FIX_WORDS)


def _span_actionable(source: PageSource, start: int, end: int) -> bool:
    """A code line, inline code or a link among the lines ``start..end`` of the page."""
    return any(
        source.code[n - 1] or _ACTIONABLE.search(source.line(n))
        for n in range(start, min(end, len(source.code)) + 1)
    )


def check_troubleshooting(ctx: LintContext) -> Iterator[Finding]:
    for page in ctx.wiki.pages.values():
        entries = [s for s in page.sections if s.label(*ERROR_LABELS) is not None]
        if not entries:
            continue
        source = ctx.source(page)
        for section in entries:
            yield from _entry(ctx, page.path, section, source, section_end(page, section, source))


def _entry(
    ctx: LintContext, path: str, section: Section, source: PageSource, end: int
) -> Iterator[Finding]:
    labels = _label_lines(source, section.line, end)
    error_line = next((n for n, label in labels if label in ERROR_LABELS), section.line)
    fixes = [item for item in section.labelled if _is_fix(item.label.casefold())]
    if not fixes:
        if any(_ACKNOWLEDGES in item.label.casefold() for item in section.labelled):
            return  # "Status: not fixable yet, use ..." says what there is to do
        yield ctx.finding(NO_FIX, path, error_line, title=section.title)
        return
    if any(item.code or item.quotes for item in fixes):
        return  # the model saw a command under a fix label
    # The lines of each fix label up to the next label (its list and links are there).
    spans = [
        (labels[i][0], labels[i + 1][0] - 1 if i + 1 < len(labels) else end)
        for i, (_, label) in enumerate(labels)
        if _is_fix(label)
    ]
    if not spans:  # fix labels inside a list: their lines are the entry's
        spans = [(error_line, end)]
    if any(_span_actionable(source, start, stop) for start, stop in spans):
        return
    yield ctx.finding(VAGUE_FIX, path, spans[0][0], title=section.title)
