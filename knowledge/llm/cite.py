"""The model's text made safe to show, and held to the sources it was given.

- **Citations.** ``[2]``, ``[1, 3]`` or ``[source 2]`` name sources by number. A number
  that was not given to the model is dropped; an answer left with no valid citation is
  not an answer (:attr:`Checked.answer` is False) and the caller shows the pages.
- **Links.** A URL stays a link only when it is under the wiki's own address or is
  quoted in a section the answer cites; any other is removed.
- **Markdown and mentions.** Everything the model wrote is escaped
  (:func:`knowledge.text.escape_markdown`), apart from balanced inline code, so it
  cannot open a link, a heading, a code fence or a spoiler; ``@everyone`` and ``<@id>``
  are broken as well (and the bot sends with mentions off).
- **Secrets and the prompt.** The text is redacted again, and an answer repeating a
  run of the system prompt's words is withheld (:attr:`Checked.leaked`).
- **Length.** The model's text is cut at ``limit`` characters before it is rendered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knowledge.llm.prompt import Source
from knowledge.text import escape_markdown, inline_code, neutralise_mentions, truncate
from knowledge.triage.redact import redact

__all__ = ["Checked", "check_answer", "leaks_prompt"]

_CITATION = r"\[\s*(?:sources?\s*|#\s*)?(\d{1,3}(?:\s*[,;]\s*(?:sources?\s*)?\d{1,3})*)\s*\]"
_LINK = r"\[(?P<link_text>[^\[\]\n]{0,200})\]\((?P<link_url>https?://[^\s()<>]{1,500})\)"
_BARE_URL = r"<?(?P<bare_url>https?://[^\s<>()\[\]`\"']{1,500})>?"
_CODE = r"`(?P<code_text>[^`\n]{1,200})`"
_TOKENS = re.compile(
    f"(?P<cite>{_CITATION})|(?P<link>{_LINK})|(?P<code>{_CODE})|(?P<url>{_BARE_URL})",
    re.IGNORECASE,
)
#: Words in a row shared with the system prompt that count as repeating it.
_LEAK_WORDS = 8
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Checked:
    """The model's answer as it may be shown."""

    #: Markdown safe to put in a message: escaped prose, checked citations and links.
    text: str
    #: The sources cited, in the order first cited.
    cited: tuple[Source, ...]
    #: Citation numbers that named no source given to the model.
    dropped: tuple[int, ...] = ()
    links_removed: int = 0
    secrets_removed: int = 0
    leaked: bool = False
    cut: bool = False

    @property
    def answer(self) -> bool:
        """True when this may be shown as an answer: it cites, and repeats no prompt."""
        return bool(self.cited) and not self.leaked and bool(self.text.strip())


def leaks_prompt(text: str, prompt: str, words: int = _LEAK_WORDS) -> bool:
    """True when ``text`` repeats ``words`` words in a row of ``prompt`` (case, spacing
    and punctuation aside)."""
    said = _WORD.findall(prompt.casefold())
    runs = {tuple(said[i : i + words]) for i in range(len(said) - words + 1)}
    if not runs:
        return False
    seen = _WORD.findall(text.casefold())
    return any(tuple(seen[i : i + words]) in runs for i in range(len(seen) - words + 1))


def check_answer(
    text: str,
    sources: Sequence[Source],
    *,
    wiki_url: Callable[[str, str | None], str | None],
    wiki_base: str | None,
    link_removed: str,
    system_prompt: str = "",
    limit: int = 1800,
) -> Checked:
    """Check and render the model's ``text`` (see the module's description).

    ``wiki_url(path, anchor)`` links a cited section (None: the wiki has no address, the
    citation stays a bare number); ``wiki_base`` is the wiki's address, under which any
    link may stay; ``link_removed`` stands where a link was taken out.
    """
    cleaned = redact(text, "answer")
    raw = cleaned.text.replace("\r", "")
    cut = len(raw) > limit
    if cut:
        raw = truncate(raw, limit)
    given = {s.number: s for s in sources}
    cited: dict[int, Source] = {}
    dropped: list[int] = []
    for match in re.finditer(_CITATION, raw, re.IGNORECASE):
        for number in (int(n) for n in re.findall(r"\d+", match.group(1))):
            if number in given:
                cited.setdefault(number, given[number])
            elif number not in dropped:
                dropped.append(number)
    allowed = {u.rstrip("/") for s in cited.values() for u in s.urls}
    removed = 0

    def may_link(url: str) -> bool:
        url = url.rstrip(".,;:")
        return bool(wiki_base and url.startswith(wiki_base)) or url.rstrip("/") in allowed

    out: list[str] = []
    at = 0
    for match in _TOKENS.finditer(raw):
        out.append(_plain(raw[at : match.start()]))
        at = match.end()
        if match.group("cite") is not None:
            numbers = [int(n) for n in re.findall(r"\d+", match.group(2)) if int(n) in given]
            for number in dict.fromkeys(numbers):
                url = wiki_url(given[number].path, given[number].anchor or None)
                out.append(f"[\\[{number}\\]]({_href(url)})" if url else f"\\[{number}\\]")
        elif match.group("link") is not None:
            label, url = match.group("link_text"), match.group("link_url")
            if may_link(url):
                out.append(f"[{_plain(label) or _plain(url)}]({_href(url)})")
            else:
                removed += 1
                out.append(_plain(label) + (" " + link_removed if link_removed else ""))
        elif match.group("code") is not None:
            out.append(inline_code(match.group("code_text")))
        else:
            url = match.group("bare_url").rstrip(".,;:")
            if may_link(url):
                out.append(f"<{_href(url)}>")
                out.append(_plain(match.group("bare_url")[len(url) :]))
            else:
                removed += 1
                out.append(link_removed)
    out.append(_plain(raw[at:]))
    rendered = re.sub(r"[ \t]+\n", "\n", "".join(out)).strip()
    leaked = bool(system_prompt) and leaks_prompt(raw, system_prompt)
    return Checked(
        rendered,
        tuple(cited.values()),
        tuple(dropped),
        removed,
        cleaned.count,
        leaked,
        cut,
    )


def _plain(text: str) -> str:
    return neutralise_mentions(escape_markdown(text))


def _href(url: str) -> str:
    return url.replace(")", "%29").replace("(", "%28").replace(" ", "%20")
