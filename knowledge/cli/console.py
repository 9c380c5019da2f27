"""The slash-command syntax of the console and ``wikibot ask``, and text rendering.

``dispatch(kb, "/runbook qwen")`` returns the same :class:`Reply` the Discord
command would; ``render_text`` prints it for a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from knowledge.reply import Reply
from knowledge.service import KnowledgeBase
from knowledge.text import escape_markdown

__all__ = ["COMMANDS", "dispatch", "render_text"]

_UNESCAPE = re.compile(r"\\([\\*_`~|>#\[\]()\-+!<:])")
_BOLD = re.compile(r"(?<!\\)\*\*(.+?)(?<!\\)\*\*", re.DOTALL)
_OPTION = re.compile(r"^(in|page):(\S+)$", re.IGNORECASE)


def _runbook(kb: KnowledgeBase, arg: str) -> Reply:
    words = arg.split()
    if len(words) > 1 and words[-1].casefold() in ("versions", "launch"):
        action = words[-1].casefold()
        reply = kb.runbook(" ".join(words[:-1]))
        key = reply.meta.get("family")
        if reply.kind == "runbook" and key:
            return kb.versions(key) if action == "versions" else kb.launch(key)
        return reply
    return kb.runbook(arg)


def _search(kb: KnowledgeBase, arg: str) -> Reply:
    words, category, page = [], None, 1
    for word in arg.split():
        option = _OPTION.match(word)
        if option and option.group(1).casefold() == "in":
            category = option.group(2)
        elif option and option.group(2).isdigit():
            page = int(option.group(2))
        else:
            words.append(word)
    return kb.search(" ".join(words), category=category, page=page)


COMMANDS: dict[str, Callable[[KnowledgeBase, str], Reply]] = {
    "runbook": _runbook,
    "acronym": lambda kb, arg: kb.acronym(arg),
    "search": _search,
    "explain": lambda kb, arg: kb.explain(arg),
    "status": lambda kb, arg: kb.status(),
    "help": lambda kb, arg: Reply("help", kb.t("help.title"), kb.t("help.console")),
}


def dispatch(kb: KnowledgeBase, line: str) -> Reply:
    """Run one console line such as ``/acronym DCP`` and return its reply."""
    line = line.strip()
    name, _, arg = line.lstrip("/").partition(" ")
    handler = COMMANDS.get(name.casefold())
    if handler is None:
        commands = ", ".join(f"/{c}" for c in COMMANDS)
        return Reply(
            "error",
            kb.t("common.unknown_command_title"),
            kb.t("common.unknown_command", name=escape_markdown(name[:40]), commands=commands),
            ephemeral=True,
        )
    return handler(kb, arg.strip())


def render_text(reply: Reply) -> str:
    """A reply as plain terminal text (escapes removed, links kept)."""
    reply = reply.fitted()
    out = [reply.title, "=" * min(len(reply.title), 72)]
    if reply.text:
        out.append(_plain(reply.text))
    for field in reply.fields:
        out.append("")
        out.append(_plain(field.name))
        out.append("  " + _plain(field.value).replace("\n", "\n  "))
    if reply.pages:
        out.append("")
        out.append("Pages: " + ", ".join(p.ref for p in reply.pages[:5]))
    if reply.footer:
        out.append("")
        out.append(_plain(reply.footer))
    return "\n".join(out)


def _plain(text: str) -> str:
    """Markdown escapes and bold markers removed; code spans and links kept."""
    return _UNESCAPE.sub(r"\1", _BOLD.sub(r"\1", text))
