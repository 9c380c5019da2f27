"""``/search``: the best sections of any page, a page of hits at a time."""

from __future__ import annotations

from knowledge.answers._format import link, names
from knowledge.answers._state import WikiState
from knowledge.reply import Field, PageRef, Reply
from knowledge.search import MAX_QUERY_CHARS, Hit
from knowledge.templates import Templates
from knowledge.text import clean_user_text, escape_markdown, truncate
from knowledge.wiki import status_of

__all__ = ["SEARCH_PAGE_SIZE", "search"]

#: Hits shown per page of results.
SEARCH_PAGE_SIZE = 5
_MAX_CATEGORY_CHARS = 60
_MAX_PAGE = 1000
_SNIPPET_CHARS = 700


def search(
    state: WikiState,
    t: Templates,
    query: str,
    *,
    category: str | None = None,
    page: int = 1,
    per_page: int = SEARCH_PAGE_SIZE,
) -> Reply:
    """Page ``page`` of the sections matching ``query``, optionally in one wiki folder."""
    text = clean_user_text(query, MAX_QUERY_CHARS)
    if category:
        category = clean_user_text(category, _MAX_CATEGORY_CHARS).casefold()
        if category not in state.categories:
            return Reply(
                "not_found",
                t("search.nothing_title", query=escape_markdown(text)),
                t(
                    "search.unknown_category",
                    category=escape_markdown(category),
                    names=names(t, state.categories, limit=20),
                ),
                suggestions=tuple(state.categories),
                ephemeral=True,
            )
    page = max(1, min(int(page), _MAX_PAGE))
    results = state.search(
        text, limit=per_page, offset=(page - 1) * per_page, category=category or None
    )
    if results.problem:
        return Reply(
            "not_found",
            t("search.problem_title"),
            escape_markdown(results.problem),
            ephemeral=True,
        )
    if not results.hits:
        if page > 1 and results.total:  # past the last page: show the first
            return search(state, t, query, category=category, page=1, per_page=per_page)
        return Reply(
            "not_found",
            t("search.nothing_title", query=escape_markdown(results.query or text)),
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
        t("search.title", query=results.query or text),
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
