"""Small, linear-time text helpers shared by every reply: normalising, escaping, cutting.

Everything here runs on hostile user text, so nothing backtracks and every
function is O(n) (``discord.utils.escape_markdown`` is not: see hazards.md).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "clean_user_text",
    "code_block",
    "escape_markdown",
    "fold_key",
    "inline_code",
    "neutralise_mentions",
    "truncate",
]

_MARKDOWN_SPECIALS = frozenset("\\*_`~|>#[]()-+!<:")
_MENTION = re.compile(r"@(?=[\w&!#])|@(?=everyone|here)")
_WORD_SPLIT = re.compile(r"[^0-9a-z.+]+")
_LETTER_DIGIT = re.compile(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])")


def clean_user_text(text: str, limit: int) -> str:
    """NFKC-normalise, drop format and control characters, collapse spaces, cap length."""
    text = unicodedata.normalize("NFKC", text[: limit * 4])
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat == "Cf" or (cat == "Cc" and ch not in "\n\t"):
            continue
        kept.append(ch)
    return " ".join("".join(kept).split())[:limit]


def fold_key(text: str) -> str:
    """A comparison key for names: ``GLM-5.1``, ``glm 5.1`` and ``glm5.1`` fold alike."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _WORD_SPLIT.sub(" ", folded)
    folded = _LETTER_DIGIT.sub(" ", folded)
    return " ".join(part.strip(".") for part in folded.split() if part.strip("."))


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Discord Markdown treats as syntax (linear time)."""
    return "".join("\\" + ch if ch in _MARKDOWN_SPECIALS else ch for ch in text)


def neutralise_mentions(text: str) -> str:
    """Break ``@everyone``, ``@here`` and ``<@id>`` so they never ping, even if posted raw."""
    return _MENTION.sub("@\u200b", text)


def truncate(text: str, limit: int, marker: str = "…") -> str:
    """Cut ``text`` to at most ``limit`` characters, on a line or word boundary if possible."""
    if len(text) <= limit:
        return text
    if limit <= len(marker):
        return text[:limit]
    cut = text[: limit - len(marker)]
    boundary = max(cut.rfind("\n"), cut.rfind(" "))
    if boundary >= len(cut) * 0.6:
        cut = cut[:boundary]
    return cut.rstrip() + marker


def inline_code(text: str) -> str:
    """Show ``text`` as inline code whatever backticks it contains."""
    text = text.replace("\n", " ")
    if "`" not in text:
        return f"`{text}`"
    return "`` " + text.replace("``", "`\u200b`") + " ``"


def code_block(text: str, lang: str = "", limit: int = 1000) -> str:
    """A fenced block of at most ``limit`` characters; fences inside are defused."""
    lang = re.sub(r"[^A-Za-z0-9_+-]", "", lang)[:16]
    overhead = len(lang) + 8
    body = text.replace("```", "`\u200b``")
    if len(body) + overhead > limit:
        body = truncate(body, max(limit - overhead - 1, 1), marker="\n…")
    return f"```{lang}\n{body}\n```"
