"""``/search``: the best sections of any page, a page of hits at a time."""

from __future__ import annotations

import re

from knowledge.answers._format import link, names
from knowledge.answers._state import WikiState
from knowledge.reply import Field, PageRef, Reply
from knowledge.search import (
    MAX_QUERY_CHARS,
    PROBLEM_EMPTY,
    PROBLEM_NO_INDEX,
    PROBLEM_NO_WORDS,
    Hit,
)
from knowledge.search.pages import PageHit, PageRanking, error_lines, label_word
from knowledge.templates import Templates
from knowledge.text import (
    TITLE_HEAD_CHARS,
    clean_user_text,
    cut_at_word,
    escape_markdown,
    inline_code,
    one_line_head,
    truncate,
)
from knowledge.wiki import status_of
from knowledge.wiki.cache import sections_in_memory

__all__ = ["MAX_PASTED_CHARS", "SEARCH_PAGE_SIZE", "is_pasted", "search", "search_at_hand"]

#: Hits shown per page of results.
SEARCH_PAGE_SIZE = 5
_MAX_CATEGORY_CHARS = 60
_MAX_PAGE = 1000
_SNIPPET_CHARS = 700
#: A query this long, or with a line break, is a pasted question or log excerpt: its
#: pages are ranked as a whole (knowledge.search.pages) instead of listing sections.
PASTED_WORDS = 12
PASTED_CHARS = 160
#: What a pasted query may hold (Discord's longest text option is 6,000).
MAX_PASTED_CHARS = 6000
_MAX_LINE_CHARS = 1000
_PASTED_HITS = 10
_FIX_CODE_LINES = 3
#: Fewest characters of a Fix command worth showing in a snippet.
_MIN_FIX_CHARS = 40
_WINDOW = 260
#: Kinds of page worth naming beside a hit, and their wording.
_KIND_KEYS = {
    "troubleshooting": "search.kind.troubleshooting",
    "hub": "search.kind.hub",
    "current": "search.kind.current",
    "historical": "search.kind.historical",
    "archive": "search.kind.archive",
    "legacy": "search.kind.legacy",
}
#: The search's reasons for running no query, worded for the asker.
_PROBLEM_KEYS = {PROBLEM_EMPTY: "search.problem_empty", PROBLEM_NO_WORDS: "search.problem_no_words"}
_FIX_LABELS = frozenset({"fix", "fixes", "workaround", "solution"})
#: The characters other than ASCII that a case-blind ``re`` match takes for ASCII letters
#: (dotted capital I, dotless i, long s, Kelvin sign); the first also lower-cases to two.
_ASCII_LOOKALIKES = re.compile("[\u0130\u0131\u017f\u212a]")


def _shown(query: str) -> str:
    """``query`` as a title shows it: :func:`~knowledge.text.one_line_head`,
    redacted and masked as a public post is, since what users paste to search holds
    tokens too. Only the part a title can show is redacted, cut first at a word (never
    a piece of a key, too short to be known); cut again after, so that no title is cut
    by Discord's 256-character limit inside the code span or an escape that holds it."""
    from knowledge.triage.redact import redact_public

    head = cut_at_word(query, TITLE_HEAD_CHARS * 4)  # "" for a paste of one long word
    return one_line_head(redact_public(head, "query").text)


def is_pasted(query: str) -> bool:
    """True for a pasted question or log excerpt rather than a few search words."""
    text = query[: MAX_PASTED_CHARS * 2].strip()
    return "\n" in text or len(text) >= PASTED_CHARS or len(text.split()) >= PASTED_WORDS


def search(
    state: WikiState,
    t: Templates,
    query: str,
    *,
    category: str | None = None,
    page: int = 1,
    per_page: int = SEARCH_PAGE_SIZE,
) -> Reply:
    """Page ``page`` of the sections matching ``query``, optionally in one wiki folder.

    A pasted question (long, or several lines) is answered with pages instead.
    """
    if is_pasted(query):
        reply = _pasted(state, t, query, category=category, page=page, per_page=per_page)
        assert reply is not None  # only an answer at hand may be refused
        return reply
    text = clean_user_text(query, MAX_QUERY_CHARS)
    category = _section(category)
    if category and category not in state.categories:
        return Reply(
            "not_found",
            t("search.nothing_title", query=inline_code(_shown(text))),
            t(
                "search.unknown_category",
                category=inline_code(category),
                names=names(t, state.categories, limit=20),
            ),
            suggestions=tuple(state.categories),
            ephemeral=True,
        )
    page = max(1, min(int(page), _MAX_PAGE))
    results = state.search(
        text, limit=per_page, offset=(page - 1) * per_page, category=category or None
    )
    if results.problem in _PROBLEM_KEYS:  # the query's own
        return Reply(
            "not_found",
            t("search.problem_title"),
            t(_PROBLEM_KEYS[results.problem]),
            ephemeral=True,
        )
    if results.problem:  # the bot's side: not the asker's words, nor a gap in the wiki
        return Reply(
            "error",
            t("search.unavailable_title"),
            t("search.no_index" if results.problem == PROBLEM_NO_INDEX else "search.failed"),
            ephemeral=True,
        )
    if not results.hits:
        if page > 1 and results.total:  # past the last page: show the first
            return search(state, t, query, category=category, page=1, per_page=per_page)
        return Reply(
            "not_found",
            t("search.nothing_title", query=inline_code(_shown(results.query or text))),
            t("search.nothing"),
            ephemeral=True,
        )
    first = (page - 1) * per_page + 1
    last = first + len(results.hits) - 1
    fields = tuple(
        _hit_field(state, t, rank, hit) for rank, hit in enumerate(results.hits, start=first)
    )
    summary = t.plural("search.hits", results.total, first=first, last=last)
    if category:
        summary = t("search.hits_in", hits=summary, category=escape_markdown(category))
    return Reply(
        "search",
        t("search.title", query=escape_markdown(_shown(results.query or text))),
        summary,
        fields=fields,
        pages=tuple(PageRef(h.path, h.anchor, h.section_title) for h in results.hits),
        meta={
            "query": text,
            "category": category,
            "page": page,
            "pages": max(1, -(-results.total // per_page)),
            "total": results.total,
        },
    )


def search_at_hand(
    state: WikiState,
    t: Templates,
    query: str,
    *,
    category: str | None = None,
    page: int = 1,
    per_page: int = SEARCH_PAGE_SIZE,
) -> Reply | None:
    """:func:`search`'s reply when it is bounded work on what is in memory; else None.

    That is a pasted question once the page ranker is built and the pages the reply
    shows have their sections in memory: arrays over every page and a few snippets,
    about 2-4 ms on the real wiki and at ten times its size. A caller on an event loop
    answers it there: handed to a thread while the loop is busy, the same work costs
    about twice its CPU in the two threads' contest for the interpreter lock. Anything
    else may read the index or the page cache, or build the ranker (seconds): None,
    and the caller runs :func:`search` in a thread.
    """
    if not is_pasted(query) or state.built_ranker is None:
        return None
    return _pasted(state, t, query, category=category, page=page, per_page=per_page, at_hand=True)


def _hit_field(state: WikiState, t: Templates, rank: int, hit: Hit) -> Field:
    """One hit: rank, page and section as the name; the snippet, matches bold, and a link."""
    name = t("search.hit_name", rank=rank, page=hit.page_title, section=hit.section_title)
    if status_of(hit.status).notable:
        name = t("search.hit_name_tagged", name=name, status=hit.status)
    snippet = "".join(
        t("search.highlight", text=escape_markdown(part)) if match else escape_markdown(part)
        for part, match in hit.snippet
    )
    snippet = truncate(" ".join(snippet.split()), _SNIPPET_CHARS)
    return Field(
        name,
        t(
            "search.hit_value",
            snippet=snippet,
            link=link(t, state.links, hit.section_title, hit.path, hit.anchor),
        ),
    )


def _pasted_lines(query: str) -> list[str]:
    lines = []
    for raw in query[: MAX_PASTED_CHARS * 2].splitlines():
        line = clean_user_text(raw, _MAX_LINE_CHARS)
        if line:
            lines.append(line)
    text, total = [], 0
    for line in lines:
        if total + len(line) > MAX_PASTED_CHARS:
            break
        text.append(line)
        total += len(line) + 1
    return text


def _pasted(
    state: WikiState,
    t: Templates,
    query: str,
    *,
    category: str | None,
    page: int,
    per_page: int,
    at_hand: bool = False,
) -> Reply | None:
    """The pages that best answer a pasted question, best first, with how sure we are.

    ``at_hand``: None instead when a page to show has its sections still on disk.
    """
    lines = _pasted_lines(query)
    text = "\n".join(lines)
    errors = error_lines(lines)
    wanted = _section(category)
    limit = _PASTED_HITS * (4 if wanted else 1)
    ranking = state.ranker.rank(text, errors, limit=limit)
    hits = [h for h in ranking.hits if not wanted or _category(state, h.path) == wanted][
        :_PASTED_HITS
    ]
    shown_query = inline_code(_shown(text))
    if not hits:
        return Reply(
            "not_found",
            t("search.nothing_title", query=shown_query),
            t("search.pasted_nothing"),
            ephemeral=True,
            meta={"query": text, "pasted": True, "confidence": ranking.confidence},
        )
    pages_total = max(1, -(-len(hits) // per_page))
    page = max(1, min(int(page), pages_total))
    first = (page - 1) * per_page
    shown = hits[first : first + per_page]
    if at_hand:
        pages = [state.wiki.pages.get(h.path) for h in shown]
        if not all(p is None or sections_in_memory(p) for p in pages):
            return None
    summary = [_confidence_line(t, ranking, len(hits))]
    if wanted:
        summary.append(t("search.pasted_in", category=escape_markdown(wanted)))
    return Reply(
        "search",
        t("search.pasted_title"),
        "\n".join(summary),
        fields=tuple(
            _pasted_field(state, t, rank, hit, ranking)
            for rank, hit in enumerate(shown, start=first + 1)
        ),
        pages=tuple(PageRef(h.path, h.anchor or None, h.section_title or h.title) for h in shown),
        meta={
            "query": text,
            "pasted": True,
            "confidence": ranking.confidence,
            "unknown": list(ranking.unknown),
            "category": wanted,
            "page": page,
            "pages": pages_total,
            "total": len(hits),
            "ranked": [h.path for h in hits],
        },
    )


def _section(typed: str | None) -> str | None:
    """The wiki folder a user typed as a section (``Models/`` is ``models``); None for
    none, or for nothing but blanks."""
    if not typed:
        return None
    return clean_user_text(typed, _MAX_CATEGORY_CHARS).casefold().strip("/ ") or None


def _category(state: WikiState, path: str) -> str | None:
    page = state.wiki.pages.get(path)
    return page.category if page is not None else None


def _confidence_line(t: Templates, ranking: PageRanking, count: int) -> str:
    if ranking.unknown:
        return t(
            "search.pasted_unknown",
            names=t.raw("common.separator").join(inline_code(n) for n in ranking.unknown[:3]),
        )
    if ranking.confidence in ("high", "medium"):
        return t.plural("search.pasted_confident", count)
    return t.plural("search.pasted_unsure", count)


def _pasted_field(
    state: WikiState, t: Templates, rank: int, hit: PageHit, ranking: PageRanking
) -> Field:
    name = t("search.hit_name", rank=rank, page=hit.title, section=hit.section_title or hit.title)
    if hit.kind in _KIND_KEYS:
        name = t("search.hit_name_tagged", name=name, status=t(_KIND_KEYS[hit.kind]))
    page = state.wiki.pages.get(hit.path)
    section = page.section(hit.anchor) if page is not None and hit.anchor else None
    words = [w for code, detail in hit.why if code == "terms" for w in detail.split(", ")]
    parts: list[str] = []
    quote = next((detail for code, detail in hit.why if code == "error_quote"), None)
    if quote:
        parts.append(t("search.why_quote", quote=inline_code(quote[:200])))
    elif section is not None:
        parts.append(_window(t, section.text, words))
    if section is not None:
        fix = _fix_code(section)
        # Cut to the room left before the snippet's own cut, so the code span is closed.
        room = _SNIPPET_CHARS - sum(len(p) + 1 for p in parts) - len(t("search.fix_code", code=""))
        code = inline_code(truncate(fix, room - 8)) if fix and room > _MIN_FIX_CHARS else ""
        if code and len(code) <= room:  # backticks inside can make the span longer
            parts.append(t("search.fix_code", code=code))
    if words:
        parts.append(t("search.why_terms", terms=escape_markdown(", ".join(words[:5]))))
    family = next((detail for code, detail in hit.why if code == "family"), None)
    if family:
        parts.append(t("search.why_family", family=escape_markdown(family)))
    snippet = truncate("\n".join(p for p in parts if p), _SNIPPET_CHARS)
    return Field(
        name,
        t(
            "search.hit_value",
            snippet=snippet,
            link=link(t, state.links, hit.section_title or hit.title, hit.path, hit.anchor or None),
        ),
    )


def _window(t: Templates, text: str, words: list[str]) -> str:
    """About :data:`_WINDOW` characters of ``text`` around the first telling word."""
    flat = " ".join(text.split())
    lowered = flat.casefold()
    start = min((i for w in words if (i := lowered.find(w)) >= 0), default=0)
    begin = max(0, start - _WINDOW // 4)
    piece = flat[begin : begin + _WINDOW]
    if begin > 0:
        piece = "…" + piece.split(" ", 1)[-1]
    if begin + _WINDOW < len(flat):
        piece = piece.rsplit(" ", 1)[0] + "…"
    out = escape_markdown(piece)
    for word in sorted({w for w in words if len(w) > 2}, key=len, reverse=True)[:5]:
        out = _highlight_first(t, out, escape_markdown(word))
    return out


def _highlight_first(t: Templates, text: str, needle: str) -> str:
    r"""``text`` with the first place ``needle`` occurs, whatever its case and not inside a
    longer word or a highlight, highlighted: what ``re.sub`` of
    ``(?i)(?<![\w*])(needle)(?![\w*])`` with ``count=1`` gives, without compiling a
    pattern per word (a pasted question's words are seldom the same twice, so
    ``re``'s cache of patterns seldom held them and compiling was most of a reply's cost).

    For an ASCII ``needle`` (the ranker's terms are) only ASCII letters match its
    letters, the four of :data:`_ASCII_LOOKALIKES` aside: a text holding one of them is
    left to ``re``. Lower-casing keeps every other text's length, so an index in the
    lower-cased text is one in ``text``."""
    if not needle.isascii() or not (text.isascii() or _ASCII_LOOKALIKES.search(text) is None):
        return re.sub(
            rf"(?i)(?<![\w*])({re.escape(needle)})(?![\w*])",
            lambda m: t("search.highlight", text=m.group(1)),
            text,
            count=1,
        )
    folded, needle, size = text.lower(), needle.lower(), len(needle)
    at = folded.find(needle)
    while at >= 0:
        end = at + size
        if not (at and _wordish(text[at - 1])) and not (end < len(text) and _wordish(text[end])):
            return text[:at] + t("search.highlight", text=text[at:end]) + text[end:]
        at = folded.find(needle, at + 1)
    return text


def _wordish(char: str) -> bool:
    r"""True for what ``[\w*]`` matches: a letter, digit or underscore of any script, or ``*``."""
    return char.isalnum() or char in "_*"


def _fix_code(section) -> str:
    """The first lines of code under a Fix label: the commands a reader came for."""
    for item in section.labelled:
        if label_word(item.label) in _FIX_LABELS and item.code:
            lines = [ln.strip() for ln in item.code[0].splitlines() if ln.strip()]
            return " ; ".join(lines[:_FIX_CODE_LINES])
    return ""
