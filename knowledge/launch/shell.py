"""Shell text -> logical lines -> words -> statements, and ``$VAR`` expansion.

Shell text is cut into logical lines by a small quote-aware scanner (continuations,
comments and heredoc bodies handled there) and each line is split into words the way
``shlex`` in POSIX mode splits them (``punctuation_chars=";&|()"``, no comments): by
one regular expression that takes a run of characters at a time, where ``shlex``
reads one character per Python call (about 8x slower on a long ``docker run``; the
tests compare the two on generated lines). A line with broken quoting is split
leniently on white space and a problem is recorded; nothing here raises on odd input.

``$VAR``, ``${VAR}``, ``${VAR:-default}`` are expanded from the assignments the caller
has seen; unknown references stay as written. Expansion does not know shell quoting
(a ``'$X'`` is expanded too).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = [
    "ARRAY_REF_RE",
    "ASSIGN_RE",
    "COMMAND_PREFIXES",
    "SHELLS",
    "expand",
    "logical_lines",
    "safe_split",
    "shell_script",
    "shell_words",
    "split_words",
    "statements",
]

SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ash"})
#: Words that may precede a command without changing it.
COMMAND_PREFIXES: Final = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "nohup"}
    | {"command", "builtin", "stdbuf"}
)

_SCAN_SPECIAL: Final = re.compile(r"[\\'\"#\n<$]")
# One piece of a shell word line, as shlex (POSIX, whitespace_split, punctuation_chars
# ";&|()", no commenters) reads it: white space, a run of punctuation, a quoted part,
# an escaped character, or plain characters. Anything else is a quote or backslash
# left open at the end of the line.
_WORD_PIECE_RE: Final = re.compile(
    r"(?P<space>[ \t\r\n]+)"
    r"|(?P<punct>[;&|()]+)"
    r"|'(?P<single>[^']*)'"
    r'|"(?P<double>[^"\\]*(?:\\.[^"\\]*)*)"'
    r"|\\(?P<escaped>.)"
    r"|(?P<plain>[^ \t\r\n;&|()'\"\\]+)",
    re.DOTALL,
)
# Inside double quotes only ``\\`` and ``\"`` are escapes; ``\x`` stays two characters.
_DQ_ESCAPE_RE: Final = re.compile(r"\\(.)", re.DOTALL)
_DQ_OPEN_RE: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_DQ_SPECIAL: Final = re.compile(r'[\\"]')
_PAREN_RE: Final = re.compile(r"[()]")
_HEREDOC_RE: Final = re.compile(
    r"<<(-?)[ \t]*(?:'([^'\n]{1,64})'|\"([^\"\n]{1,64})\"|\\?([A-Za-z_][A-Za-z0-9_.-]{0,63}))"
)
_OPERATORS: Final = frozenset({";", ";;", "&", "&&", "|", "||", "|&"})
# A redirection word: optional fd, operator, optional attached target (``2>&1``, ``>log``).
_REDIRECT_RE: Final = re.compile(r"[0-9]*(?:&>>|&>|>>|>&|>\||>|<<<|<<-|<<|<&|<>|<)(.*)", re.DOTALL)
ASSIGN_RE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)", re.DOTALL)
_ARRAY_START_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
ARRAY_REF_RE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}")
# Defaults stop at ``$``: ``${A:-$B}`` stays as written, and each scan ends at the next
# reference, so a word full of unclosed ``${`` costs linear time.
_VAR_RE: Final = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=?+])([^}$]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)


def _closing_quote(text: str, start: int) -> int:
    """Index of the quote closing the one at ``start``, or -1."""
    if text[start] == "'":
        return text.find("'", start + 1)
    i = start + 1
    while True:
        m = _DQ_SPECIAL.search(text, i)
        if m is None:
            return -1
        if text[m.start()] == '"':
            return m.start()
        i = m.start() + 2


def _paren_pairs(text: str) -> dict[int, int]:
    """Index of each ``(`` -> index of its ``)`` (quotes not considered), in one pass."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _PAREN_RE.finditer(text):
        if m.group(0) == "(":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def _read_heredoc(text: str, i: int, delim: str, strip_tabs: bool, out: list[str]) -> int:
    body: list[str] = []
    n = len(text)
    while i < n:
        nl = text.find("\n", i)
        end = n if nl < 0 else nl
        line = text[i:end]
        check = line.lstrip("\t") if strip_tabs else line
        i = end + 1
        if check.rstrip("\r") == delim:
            break
        body.append(line)
    out.append("\n".join(body))
    return min(i, n)


def logical_lines(text: str, quote_aware: bool) -> tuple[list[str], list[str], bool]:
    """Cut shell text into logical lines; also return heredoc bodies and whether a quote
    was left open. Continuations are joined, comments dropped, heredoc bodies set aside.
    Quotes are kept so ``shlex`` sees them; with ``quote_aware=False`` they are ignored.
    """
    lines: list[str] = []
    heredocs: list[str] = []
    buf: list[str] = []
    pending: list[tuple[str, bool]] = []
    parens: dict[int, int] | None = None
    i, n = 0, len(text)
    while i < n:
        m = _SCAN_SPECIAL.search(text, i)
        j = n if m is None else m.start()
        buf.append(text[i:j])
        if m is None:
            break
        c = text[j]
        i = j + 1
        if c == "\n":
            lines.append("".join(buf))
            buf = []
            for delim, strip_tabs in pending:
                i = _read_heredoc(text, i, delim, strip_tabs, heredocs)
            pending = []
        elif c == "\\":
            if text.startswith("\n", i):
                buf.append(" ")
                i += 1
            elif text.startswith("\r\n", i):
                buf.append(" ")
                i += 2
            else:
                buf.append(text[j : j + 2])
                i = j + 2
        elif c in "'\"":
            end = _closing_quote(text, j) if quote_aware else j
            if end < 0:
                return lines, heredocs, True
            segment = text[j : end + 1]
            buf.append(segment.replace("\\\n", "") if c == '"' else segment)
            i = end + 1
        elif c == "$":
            end = -1
            if text.startswith("(", i):
                parens = _paren_pairs(text) if parens is None else parens
                end = parens.get(i, -1)
            if end < 0:
                buf.append(c)
            else:  # $( ... ) stays one piece of its word: single-quote it for shlex
                buf.append("'" + text[j : end + 1].replace("'", "'\"'\"'") + "'")
                i = end + 1
        elif c == "#":
            if j == 0 or text[j - 1] in " \t\n;&|(":
                nl = text.find("\n", j)
                i = n if nl < 0 else nl
            else:
                buf.append(c)
        else:  # <
            hd = _HEREDOC_RE.match(text, j) if not text.startswith("<<<", j) else None
            if hd:
                delim = hd.group(2) or hd.group(3) or hd.group(4)
                pending.append((delim, bool(hd.group(1))))
                buf.append(text[j : hd.end()])
                i = hd.end()
            else:
                buf.append(c)
    if any(buf):
        lines.append("".join(buf))
    return lines, heredocs, False


def split_words(line: str, problems: list[str]) -> list[str]:
    """Split one logical line into words as ``shlex`` (POSIX) does; leniently if broken."""
    try:
        return shell_words(line)
    except ValueError as exc:
        problems.append(f"malformed quoting ({exc}); words split on white space")
        return [w.strip("\"'") for w in line.split() if w.strip("\"'")]


def _dq_unescape(m: re.Match[str]) -> str:
    char = m.group(1)
    return char if char in '\\"' else m.group(0)


def shell_words(line: str) -> list[str]:
    """The words of ``shlex.shlex(line, posix=True, punctuation_chars=";&|()")`` with
    ``whitespace_split`` on and no comment characters, with the same ``ValueError``
    for a quote or backslash left open. A run of ``;&|()`` is one word of its own."""
    words: list[str] = []
    word: list[str] = []
    in_word = False  # shlex emits a word that is empty but quoted ('')
    pos, n = 0, len(line)
    match = _WORD_PIECE_RE.match
    while pos < n:
        m = match(line, pos)
        if m is None:  # an opening quote or a backslash that nothing closes
            char = line[pos]
            if char == '"':
                end = _DQ_OPEN_RE.match(line, pos).end()  # type: ignore[union-attr]
                if end < n:  # the line ends on a backslash inside the quotes
                    raise ValueError("No escaped character")
            raise ValueError("No closing quotation" if char in "'\"" else "No escaped character")
        pos = m.end()
        kind = m.lastgroup
        if kind == "space" or kind == "punct":
            if in_word:
                words.append("".join(word))
                word = []
                in_word = False
            if kind == "punct":
                words.append(m.group(kind))
            continue
        in_word = True
        if kind == "double":
            text = m.group(kind)
            word.append(_DQ_ESCAPE_RE.sub(_dq_unescape, text) if "\\" in text else text)
        else:
            word.append(m.group(kind))  # type: ignore[arg-type]
    if in_word:
        words.append("".join(word))
    return words


def safe_split(text: str, problems: list[str] | None = None) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        if problems is not None:
            problems.append(f"malformed quoting ({exc}); words split on white space")
        return text.split()


def statements(words: Sequence[str]) -> list[list[str]]:
    """Split words at ``;``, ``&&``, pipes and subshell brackets; drop redirections.
    ``NAME=( a b )`` arrays keep their brackets in the statement.
    """
    out: list[list[str]] = []
    cur: list[str] = []
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        if w == "(" and cur and _ARRAY_START_RE.fullmatch(cur[-1]):
            k = i + 1
            while k < n and words[k] != ")":
                k += 1
            cur.extend(["(", *words[i + 1 : k], ")"])
            i = k + 1
            continue
        if w in _OPERATORS or w in ("(", ")"):
            if cur:
                out.append(cur)
            cur = []
        elif _is_redirect(w):
            if not _REDIRECT_RE.fullmatch(w).group(1):  # type: ignore[union-attr]
                i += 1  # the target is the next word
        else:
            cur.append(w)
        i += 1
    if cur:
        out.append(cur)
    return out


def _is_redirect(word: str) -> bool:
    """``>``, ``2>&1``, ``<<EOF``...; not a ``<placeholder>`` as written in docs."""
    if not word or word[0] not in "0123456789<>&":
        return False
    if word[0] == "<" and ">" in word[1:] and not word.startswith(("<<", "<>", "<&")):
        return False
    return _REDIRECT_RE.fullmatch(word) is not None


def expand(word: str, env: Mapping[str, str]) -> str:
    """Expand ``$VAR``/``${VAR}``/``${VAR:-x}``/``${VAR:+x}`` from ``env``; keep unknowns."""
    if "$" not in word:
        return word

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(4)
        op, arg = m.group(2), m.group(3) or ""
        value = env.get(name)
        if op is None:
            return m.group(0) if value is None else value
        unset = value is None or (op.startswith(":") and value == "")
        if op.endswith(("-", "=")):
            return arg if unset else str(value)
        if op.endswith("+"):
            return "" if unset else arg
        return m.group(0) if unset else str(value)  # ${VAR:?message}

    return _VAR_RE.sub(sub, word)


def shell_script(argv: Sequence[str]) -> str | None:
    """The script of ``bash [-opts]c SCRIPT``, or None."""
    if not argv or posixpath.basename(argv[0]) not in SHELLS:
        return None
    for k, w in enumerate(argv[1:], start=1):
        if w.startswith("-") and not w.startswith("--") and "c" in w:
            return argv[k + 1] if k + 1 < len(argv) else None
        if not w.startswith("-"):
            return None
    return None
