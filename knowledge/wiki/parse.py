"""Parse one page's Markdown into sections, tables, code blocks and labelled paragraphs.

Parsing goes through markdown-it-py (CommonMark plus GFM tables), never through
regular expressions over lines, so fenced code, tables and inline code are told
apart the way GitHub tells them apart. Nothing in here knows any particular page:
the structure (headings, tables, labelled paragraphs such as ``**Error**:``) is
all we read.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from knowledge.wiki.model import Cell, CodeBlock, Labelled, Link, Section, Table

if TYPE_CHECKING:
    # Imported where a page is parsed: a start that finds every page in the page
    # cache (``wikibot ask`` on a warm data folder) never loads markdown-it.
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = [
    "MAX_INLINE_MARKUP",
    "PARSER_VERSION",
    "PageTooComplex",
    "github_anchor",
    "parse_page",
]

#: Bump when parsing changes or the model's classes move, so cached parses from an
#: older version are not reused.
PARSER_VERSION = 5
#: How much prose before a code block is kept as its ``intro``.
MAX_INTRO_PARAGRAPHS = 3
MAX_INTRO_CHARS = 400

#: Inline markup characters (emphasis, links, code spans, HTML, escapes) one page
#: may hold outside code blocks. Inline parsing costs time and memory per such
#: character (a 2 MB page of ``*_`` took 15 s and ~1 GB); the busiest page of the
#: real wiki has ~1,600 of them.
MAX_INLINE_MARKUP = 50_000
_MARKUP = "*_[]`<>\\&~!"


class PageTooComplex(ValueError):
    """A page with more inline markup than :data:`MAX_INLINE_MARKUP`; it is not parsed."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"too much inline markup ({count:,} of *_[]`<> ... > {limit:,})")
        self.count = count
        self.limit = limit


# --- anchors -------------------------------------------------------------------

_ANCHOR_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


def github_anchor(title: str) -> str:
    """GitHub's heading slug: lower case, punctuation dropped, spaces to hyphens."""
    slug = _ANCHOR_DROP.sub("", title.strip().lower())
    return slug.replace(" ", "-")


class _AnchorRegistry:
    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def unique(self, title: str) -> str:
        base = github_anchor(title)
        count = self._seen.get(base)
        if count is None:
            self._seen[base] = 1
            return base
        self._seen[base] = count + 1
        return f"{base}-{count}"


# --- Markdown -> sections ------------------------------------------------------


def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _inline(token: Token) -> tuple[str, list[tuple[str, str]], list[str]]:
    """Plain text, (text, href) links and code spans of one inline token."""
    parts: list[str] = []
    links: list[tuple[str, str]] = []
    code: list[str] = []
    href: str | None = None
    link_text: list[str] = []
    for child in token.children or ():
        kind = child.type
        piece = ""
        if kind == "text":
            piece = child.content
        elif kind == "code_inline":
            piece = child.content
            code.append(child.content)
        elif kind in ("softbreak", "hardbreak"):
            piece = "\n" if kind == "hardbreak" else " "
        elif kind == "link_open":
            href = str(child.attrs.get("href", ""))
            link_text = []
        elif kind == "link_close":
            if href is not None:
                links.append(("".join(link_text).strip(), href))
            href = None
        # images, raw HTML and emphasis markers carry no text we keep
        if piece:
            parts.append(piece)
            if href is not None:
                link_text.append(piece)
    return "".join(parts), links, code


def _resolve(page_path: str, href: str) -> Link | None:
    href = href.strip()
    if not href:
        return None
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith("//"):
        return Link(text="", href=href)
    if not parts.path:
        return Link(text="", href=href, path=page_path, anchor=unquote(parts.fragment) or None)
    base = posixpath.dirname(page_path)
    target = posixpath.normpath(posixpath.join(base, unquote(parts.path)))
    if target.startswith("../") or target == "..":
        return Link(text="", href=href)
    return Link(text="", href=href, path=target.lstrip("/"), anchor=unquote(parts.fragment) or None)


def _link(page_path: str, text: str, href: str) -> Link | None:
    resolved = _resolve(page_path, href)
    if resolved is None:
        return None
    return Link(text=text, href=resolved.href, path=resolved.path, anchor=resolved.anchor)


_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z /-]{0,30}?)\s*(?:\(([^)]{0,40})\))?\s*:?\s*$")


class _SectionBuilder:
    def __init__(self, title: str, level: int, anchor: str, line: int, parents: tuple[str, ...]):
        self.title = title
        self.level = level
        self.anchor = anchor
        self.line = line
        self.parents = parents
        self.text: list[str] = []
        self.code: list[CodeBlock] = []
        self.tables: list[Table] = []
        self.links: list[Link] = []
        self.labelled: list[list] = []  # [label, [text parts], [code], quotes]
        self.since_code: list[str] = []  # prose since the last code block

    def add_text(self, text: str, *, continues_label: bool = True) -> None:
        text = text.strip()
        if not text:
            return
        self.text.append(text)
        self.since_code.append(text)
        if continues_label and self.labelled:
            self.labelled[-1][1].append(text)

    def add_label(self, label: str, rest: str, quotes: tuple[tuple[str, str], ...]) -> None:
        self.labelled.append([label, [rest.strip()] if rest.strip() else [], [], quotes])
        if rest.strip():
            self.text.append(f"{label}: {rest.strip()}")
        else:
            self.text.append(f"{label}:")
        self.since_code.append(self.text[-1])

    def add_code(self, block: CodeBlock) -> None:
        if self.since_code:
            intro = "\n".join(self.since_code[-MAX_INTRO_PARAGRAPHS:])[-MAX_INTRO_CHARS:]
            block = replace(block, intro=intro)
            self.since_code = []
        self.code.append(block)
        if self.labelled:
            self.labelled[-1][2].append(block.text)

    def build(self) -> Section:
        return Section(
            title=self.title,
            level=self.level,
            anchor=self.anchor,
            text="\n".join(self.text),
            code=tuple(self.code),
            tables=tuple(self.tables),
            links=tuple(self.links),
            labelled=tuple(
                Labelled(label=lab, text="\n".join(parts), code=tuple(code), quotes=quotes)
                for lab, parts, code, quotes in self.labelled
            ),
            line=self.line,
            parents=self.parents,
        )


def _label_of(inline: Token) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
    """``**Error**: rest`` / ``**Fix:** rest`` / ``**Error** (vLLM):`` -> (label, rest, quotes).

    ``quotes`` are the inline code spans after the label, each with the text before it.
    """
    children = [c for c in inline.children or () if not (c.type == "text" and not c.content)]
    if len(children) < 3 or children[0].type != "strong_open":
        return None
    try:
        close = next(i for i, c in enumerate(children) if c.type == "strong_close")
    except StopIteration:
        return None
    inner = "".join(c.content for c in children[1:close] if c.type in ("text", "code_inline"))
    if not inner.strip():
        return None
    tail_tokens = children[close + 1 :]
    tail_text = "".join(
        c.content if c.type in ("text", "code_inline") else (" " if c.type == "softbreak" else "")
        for c in tail_tokens
    )
    if inner.rstrip().endswith(":"):
        label = inner.rstrip()[:-1].strip()
        rest = tail_text
    else:
        # "**Error**: x" or "**Error** (vLLM): x"
        match = re.match(r"^\s*(\([^)]{0,40}\))?\s*:", tail_text)
        if not match:
            return None
        label = inner.strip()
        rest = tail_text[match.end() :]
    if not _LABEL.match(label):
        return None
    quotes: list[tuple[str, str]] = []
    before: list[str] = []
    for child in tail_tokens:
        if child.type == "code_inline":
            quotes.append((child.content, "".join(before)))
            before.append(child.content)
        elif child.type == "text":
            before.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            before.append(" ")
    return label, rest, tuple(quotes)


def _tokens(md: MarkdownIt, text: str, max_markup: int) -> list[Token]:
    """``md.parse(text)`` in two halves, with the page's markup counted in between.

    The block pass (linear, cheap) runs first; past ``max_markup`` inline markup
    characters the page is refused before the inline parser spends anything on it.
    Otherwise the inline pass fills the same block tokens, so the page is parsed once.
    These are the core rules the commonmark preset enables, in markdown-it's order.
    """
    from markdown_it.rules_core import StateCore, block, inline, normalize, text_join

    state = StateCore(text, md, {})
    normalize(state)
    block(state)
    markup = sum(t.content.count(c) for t in state.tokens if t.type == "inline" for c in _MARKUP)
    if markup > max_markup:
        raise PageTooComplex(markup, max_markup)
    inline(state)
    text_join(state)
    return state.tokens


def parse_page(
    path: str, text: str, *, max_markup: int = MAX_INLINE_MARKUP
) -> tuple[str, list[Section], list[str]]:
    """Parse one page's Markdown: (title, sections, problems).

    Raises :class:`PageTooComplex` for a page with more than ``max_markup`` inline
    markup characters outside code blocks.
    """
    problems: list[str] = []
    tokens = _tokens(_markdown(), text, max_markup)
    anchors = _AnchorRegistry()
    stem = PurePosixPath(path).stem
    sections: list[_SectionBuilder] = [_SectionBuilder(stem, 0, "", 1, ())]
    heading_stack: list[tuple[int, str]] = []
    title: str | None = None

    i = 0
    n = len(tokens)
    list_depth = 0
    table_rows: list[list[Cell]] | None = None
    table_header: list[str] = []
    in_head = False
    row: list[Cell] = []
    table_line = 0
    while i < n:
        tok = tokens[i]
        kind = tok.type
        line = (tok.map[0] + 1) if tok.map else 0
        if kind == "heading_open":
            level = int(tok.tag[1])
            inline = tokens[i + 1]
            heading, links, _ = _inline(inline)
            heading = " ".join(heading.split())
            if title is None and level == 1 and heading:
                title = heading
            while heading_stack and heading_stack[-1][0] >= level:
                heading_stack.pop()
            parents = tuple(t for _, t in heading_stack)
            heading_stack.append((level, heading))
            current = _SectionBuilder(
                heading or stem, level, anchors.unique(heading), line, parents
            )
            current.links.extend(filter(None, (_link(path, t, h) for t, h in links)))
            sections.append(current)
            i += 3
            continue
        current = sections[-1]
        if kind in ("fence", "code_block"):
            lang = (tok.info or "").strip().split(" ")[0] if kind == "fence" else ""
            current.add_code(CodeBlock(lang=lang, text=tok.content.rstrip("\n"), line=line))
        elif kind == "table_open":
            table_rows, table_header, table_line = [], [], line
        elif kind == "thead_open":
            in_head = True
        elif kind == "thead_close":
            in_head = False
        elif kind == "tr_open":
            row = []
        elif kind == "inline" and table_rows is not None:
            cell_text, links, code = _inline(tok)
            cell = Cell(
                text=" ".join(cell_text.split()),
                links=tuple(filter(None, (_link(path, t, h) for t, h in links))),
                code=tuple(code),
            )
            row.append(cell)
            current.links.extend(cell.links)
        elif kind == "tr_close" and table_rows is not None:
            if in_head:
                table_header = [c.text for c in row]
            else:
                table_rows.append(row)
        elif kind == "table_close" and table_rows is not None:
            width = len(table_header)
            rows = tuple(tuple(r[:width] + [Cell("")] * (width - len(r))) for r in table_rows)
            current.tables.append(Table(header=tuple(table_header), rows=rows, line=table_line))
            for r in rows:
                current.add_text(" | ".join(c.text for c in r if c.text), continues_label=False)
            table_rows = None
        elif kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "inline":
            plain, links, _ = _inline(tok)
            current.links.extend(filter(None, (_link(path, t, h) for t, h in links)))
            labelled = _label_of(tok) if list_depth == 0 else None
            if labelled is not None:
                current.add_label(*labelled)
            else:
                prefix = "- " if list_depth else ""
                current.add_text(prefix + plain)
        i += 1

    if title is None:
        problems.append("no level-1 heading; title taken from the file name")
        title = next((s.title for s in sections[1:] if s.title), stem)
    built = [s.build() for s in sections]
    # The lead section (text before the first heading) is kept only if it has content.
    if not (built[0].text or built[0].code or built[0].tables):
        built = built[1:]
    else:
        built[0] = replace(built[0], title=title)
    return title, built, problems
