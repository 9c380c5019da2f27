"""Small, linear-time text helpers shared by every reply: normalising, escaping, cutting.

Everything here runs on hostile user text, so nothing backtracks and every
function is O(n). ``discord.utils.escape_markdown`` is not: on ``"[a]("`` repeated
it takes seconds at 8,000 characters and over a minute at 20,000.
"""

from __future__ import annotations

import re
import string
import unicodedata
from urllib.parse import quote

__all__ = [
    "cap_user_text",
    "clean_user_text",
    "code_block",
    "cut_at_word",
    "cut_tail",
    "escape_markdown",
    "fold_key",
    "inline_code",
    "inline_code_head",
    "link_url",
    "markdown_link",
    "neutralise_mentions",
    "one_line_head",
    "truncate",
]

#: Characters of a user's text a title shows (a title holds 256, with its own words and
#: the escapes or code span around that text).
TITLE_HEAD_CHARS = 80
#: Unicode categories replaced by a space in user input (controls, surrogates, ...).
_BLANKED = frozenset({"Cc", "Cs", "Co", "Cn", "Zl", "Zp"})
_MARKDOWN_SPECIALS = frozenset("\\*_`~|>#[]()-+!<:")
#: One of :data:`_MARKDOWN_SPECIALS` (found in C: most characters of a text are none).
_MARKDOWN_SPECIAL = re.compile("[" + re.escape("".join(sorted(_MARKDOWN_SPECIALS))) + "]")
#: A run of characters other than printable ASCII: the only ones cleaning may change.
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]+")
_MENTION = re.compile(r"@(?=[\w&!#])|@(?=everyone|here)")
_WORD_SPLIT = re.compile(r"[^0-9a-z.+]+")
#: ``str.translate`` table doing :data:`_WORD_SPLIT`'s work on ASCII text, a space per
#: character (runs of spaces split alike).
_ASCII_WORD_SPLIT = str.maketrans(
    {chr(i): " " for i in range(128) if chr(i) not in string.digits + string.ascii_lowercase + ".+"}
)
#: A backtick followed by another.
_BACKTICK_PAIR = re.compile("`(?=`)")
_LETTER_DIGIT = re.compile(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])")


def clean_user_text(text: str, limit: int) -> str:
    """NFKC-normalise, drop format characters, collapse spaces, cap length (see below)."""
    return cap_user_text(text, limit)[0]


def cap_user_text(text: str, limit: int) -> tuple[str, bool]:
    """``(clean text, whether anything was cut off)`` for untrusted input.

    Fullwidth letters become ASCII (NFKC); format characters such as a zero-width
    space vanish, so ``qw\u200ben`` is ``qwen``; control, surrogate, private-use
    and unassigned characters and line/paragraph separators become spaces; runs of
    white space collapse; the result is cut at a word boundary past ``limit``.
    Input beyond ``8 * limit`` characters is never even normalised.
    """
    if not isinstance(text, str):
        text = str(text)
    raw_cap = limit * 8
    truncated = len(text) > raw_cap
    normal = unicodedata.normalize("NFKC", text[:raw_cap])
    # Printable ASCII is kept as it is: only the runs of other characters are looked at
    # a character at a time (most pasted text is almost all ASCII).
    cleaned = " ".join(_NOT_PRINTABLE_ASCII.sub(_cleaned_run, normal).split())
    if len(cleaned) > limit:
        truncated = True
        cut = cleaned[:limit]
        space = cut.rfind(" ")
        if space >= limit // 2:
            cut = cut[:space]
        cleaned = cut.strip()
    return cleaned, truncated


def _cleaned_run(match: re.Match[str]) -> str:
    """A run of characters other than printable ASCII, format characters dropped and
    controls, separators, surrogates, private-use and unassigned ones made spaces."""
    kept: list[str] = []
    for char in match.group():
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        kept.append(" " if category in _BLANKED else char)
    return "".join(kept)


def fold_key(text: str) -> str:
    """A comparison key for names: ``GLM-5.1``, ``glm 5.1`` and ``glm5.1`` fold alike."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        folded = folded.translate(_ASCII_WORD_SPLIT)
    else:
        folded = _WORD_SPLIT.sub(" ", folded)
    parts: list[str] = []
    for part in folded.split():
        if part.isalpha() or part.isdigit():
            parts.append(part)  # no letter beside a digit, no dot
            continue
        # A letter and a digit meet only inside a word: split there (a word at a time,
        # far fewer than the text's characters).
        for piece in _LETTER_DIGIT.sub(" ", part).split():
            if piece := piece.strip("."):
                parts.append(piece)
    return " ".join(parts)


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Discord Markdown treats as syntax (linear time)."""
    return _MARKDOWN_SPECIAL.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return "\\" + match.group()


def link_url(url: str) -> str:
    """``url`` fit for a Markdown link: a space or a parenthesis would end the link
    early, so those (and anything else outside URL syntax) are percent-encoded."""
    return quote(url, safe=":/#?=&%~+@!$,;")


def markdown_link(label: str, url: str | None) -> str:
    """``label`` as literal Markdown text, linked to ``url`` when there is one."""
    shown = escape_markdown(label)
    if not url:
        return shown
    return f"[{shown}]({link_url(url)})"


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


def cut_at_word(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters without the word the cut falls in (nothing of
    it, rather than a piece): a token or key cut short is too short for redaction or the
    public-post mask to know it, so a text that is redacted or masked after its cut must
    not end in part of a word."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if text[limit].isspace() or head[-1:].isspace():
        return head
    parts = head.rsplit(None, 1)
    return parts[0] if len(parts) == 2 else ""


def cut_tail(text: str, limit: int) -> str:
    """``text``'s last ``limit`` characters from the first line that starts in them: a
    log's lines are its units. Where no line starts in them (one line longer than the
    limit, or a break only at their very end), from the first word that does; nothing
    where no word does. Never a piece of a word, as :func:`cut_at_word`: what is cut is
    often redacted or masked after."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    tail = text[-limit:]
    before = text[-limit - 1]
    if before == "\n":
        return tail
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1:
        return tail[newline + 1 :]
    if before.isspace() or tail[0].isspace():
        return tail
    parts = tail.split(None, 1)
    return parts[1] if len(parts) == 2 else ""


def inline_code(text: str) -> str:
    """Show ``text`` as inline code whatever backticks it contains."""
    text = text.replace("\n", " ")
    if "`" not in text:
        return f"`{text}`"
    # Two backticks in a row would close the span: a zero-width space between each pair.
    return "`` " + _BACKTICK_PAIR.sub("`\u200b", text) + " ``"


def one_line_head(text: str, limit: int = TITLE_HEAD_CHARS) -> str:
    """``text`` on one line, cut at a word to ``limit`` characters (with "…"); "…"
    where nothing is left. What a title shows of a user's text."""
    return truncate(" ".join(text.split()), limit) or "…"


def inline_code_head(text: str, limit: int = TITLE_HEAD_CHARS) -> str:
    """:func:`one_line_head` as :func:`inline_code`: with its escapes the span closes
    well inside Discord's 256 characters instead of being cut open by them."""
    return inline_code(one_line_head(text, limit))


def code_block(text: str, lang: str = "", limit: int = 1000) -> str:
    """A fenced block of at most ``limit`` characters; fences inside are defused."""
    lang = re.sub(r"[^A-Za-z0-9_+-]", "", lang)[:16]
    overhead = len(lang) + 8
    body = text.replace("```", "`\u200b``")
    if len(body) + overhead > limit:
        body = truncate(body, max(limit - overhead - 1, 1), marker="\n…")
    return f"```{lang}\n{body}\n```"
