"""A page's Markdown as lines, for the line numbers findings cite.

The wiki model (:mod:`knowledge.wiki.model`) knows where each section and table
starts, not where each link or label is. The lint reads the page file once more
(the same bytes the model was parsed from: a few megabytes for a whole wiki) and
finds those within the section's lines, with fenced code blocks told apart so a
link or an acronym inside code is never taken for prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from knowledge.files import read_regular_bytes
from knowledge.wiki.model import Page, Section
from knowledge.wiki.pagefile import MAX_PAGE_BYTES

__all__ = ["PageSource", "read_source"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: ``<a id="x">`` / ``<a name="x">`` and other HTML ids: anchors GitHub keeps too.
_HTML_ID = re.compile(r"""<[a-zA-Z][^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""")


def _rest(line: str, fence: re.Match[str]) -> str:
    """What follows a fence on its line (a closing fence has nothing)."""
    return line[fence.end() :].strip()


@dataclass(frozen=True, slots=True)
class PageSource:
    """The lines of one page (1-based through :meth:`line`), and which are code."""

    lines: tuple[str, ...]
    #: True for each line inside (or opening, or closing) a fenced code block.
    code: tuple[bool, ...]

    @classmethod
    def of(cls, text: str) -> PageSource:
        lines = tuple(text.splitlines())
        code: list[bool] = []
        fence: str | None = None
        for line in lines:
            match = _FENCE.match(line)
            if fence is None:
                if match:
                    fence = match.group(1)
                    code.append(True)
                else:
                    code.append(False)
            else:
                code.append(True)
                closing = match is not None and match.group(1)[0] == fence[0]
                if closing and len(match.group(1)) >= len(fence) and not _rest(line, match):
                    fence = None
        return cls(lines, tuple(code))

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def prose(self) -> list[tuple[int, str]]:
        """``(line number, text)`` of every line outside fenced code."""
        return [(i + 1, ln) for i, ln in enumerate(self.lines) if not self.code[i]]

    def find(
        self, needle: str, start: int = 1, end: int | None = None, *, code: bool = False
    ) -> int | None:
        """The first prose line (any line with ``code``) in ``start..end`` (inclusive)
        holding ``needle``."""
        stop = min(end if end is not None else len(self.lines), len(self.lines))
        for number in range(max(start, 1), stop + 1):
            if (code or not self.code[number - 1]) and needle in self.lines[number - 1]:
                return number
        return None

    def html_ids(self) -> set[str]:
        """Anchors set by HTML ``id``/``name`` attributes outside code."""
        return {m.group(1) for _, ln in self.prose() for m in _HTML_ID.finditer(ln)}


def section_end(page: Page, section: Section, source: PageSource) -> int:
    """The last line of ``section``: the line before the next section's heading."""
    later = [s.line for s in page.sections if s.line > section.line]
    return (min(later) - 1) if later else len(source.lines)


def read_source(root: Path, page: Page) -> PageSource:
    """The page's file as a :class:`PageSource`; empty when it cannot be read now."""
    try:
        raw = read_regular_bytes(root / page.path, MAX_PAGE_BYTES)
    except OSError:
        return PageSource((), ())
    return PageSource.of(raw.decode("utf-8", errors="replace").lstrip("\ufeff"))
