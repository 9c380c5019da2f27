"""Reply -> ``discord.Embed``: the only place in the bot that builds embeds.

The knowledge layer already escaped what it echoes and :meth:`Reply.fitted`
cuts every part to Discord's embed limits, so this stays a plain mapping. Page
links point at the wiki on GitHub (``wiki.link_base`` in the config); a URL
Discord would refuse (too long) is left out rather than failing the reply.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

import discord

from knowledge.reply import Reply
from knowledge.service import KnowledgeBase

__all__ = ["MAX_URL", "embed", "message_embed", "page_url"]

log = logging.getLogger(__name__)

#: Discord refuses link buttons with longer URLs; embeds share the cap here.
MAX_URL = 512

_COLOURS = {
    "ok": discord.Colour.blurple(),
    "not_found": discord.Colour.orange(),
    "ambiguous": discord.Colour.orange(),
    "unavailable": discord.Colour.light_grey(),
    "error": discord.Colour.red(),
}


def page_url(reply: Reply, kb: KnowledgeBase) -> str | None:
    """The wiki page a reply is about, as a URL safe for an embed or link button."""
    url = reply.meta.get("url")
    if not url and reply.pages:
        first = reply.pages[0]
        if first.path:
            url = kb.url(first.path, first.anchor)
    if not url:
        return None
    safe = quote(url, safe=":/#?=&%~+@!$,;")
    return safe if len(safe) <= MAX_URL else None


def embed(reply: Reply, *, url: str | None = None, fitted: bool = False) -> discord.Embed:
    """One embed for ``reply``, within every embed limit. ``fitted``: ``reply`` is already
    :meth:`Reply.fitted` (not cut twice when its files were taken from it too)."""
    cut = reply if fitted else reply.fitted()
    colour = _COLOURS["ok"] if cut.ok else _COLOURS.get(cut.kind, _COLOURS["error"])
    result = discord.Embed(
        title=cut.title or None,
        description=cut.text or None,
        url=url if url and cut.title else None,
        colour=colour,
    )
    for field in cut.fields:
        result.add_field(name=field.name, value=field.value, inline=field.inline)
    if cut.footer:
        result.set_footer(text=cut.footer)
    return result


def message_embed(title: str, text: str, *, kind: str = "error") -> discord.Embed:
    """A short bot message (cooldown, refusal, failure) in the same style as replies."""
    return embed(Reply(kind, title, text, ephemeral=True))
