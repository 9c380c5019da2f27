"""Pieces every answer shares: a page reference and a capped list of names.

Both are worded in ``templates/replies.yaml`` (``common.*``).
"""

from __future__ import annotations

from knowledge.answers._state import Links
from knowledge.templates import Templates
from knowledge.text import escape_markdown, inline_code, link_url

__all__ = ["link", "names"]


def link(t: Templates, links: Links, title: str, path: str, anchor: str | None = None) -> str:
    """A page reference in reply text: a Markdown link when the wiki's URL is known."""
    url = links.url(path, anchor)
    safe_title = escape_markdown(title)
    if url is None:
        ref = f"{path}#{anchor}" if anchor else path
        return t("common.page_plain", title=safe_title, ref=ref)
    return t("common.page_link", title=safe_title, url=link_url(url))


def names(t: Templates, items: list[str], limit: int = 8) -> str:
    """``items`` as inline code, comma-separated, the ones past ``limit`` counted."""
    text = t.raw("common.separator").join(inline_code(n) for n in items[:limit])
    if len(items) > limit:
        text = t("common.more", names=text, count=len(items) - limit)
    return text
