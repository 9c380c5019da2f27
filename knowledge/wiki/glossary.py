"""The wiki's glossary: every table row of the glossary page, looked up forgivingly.

Lookup order: exact term (case-insensitive), a composite the wiki writes
(``DCP4``, ``tp8``, ``MTP=3``, ``cc32``) resolving to its base term with the
number, reverse lookup by meaning, then "did you mean" suggestions from
rapidfuzz. ``scan`` finds every term used in a free text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from knowledge.text import clean_user_text, fold_key
from knowledge.wiki.model import Page, Wiki

__all__ = ["Glossary", "GlossaryEntry", "Lookup", "Mention", "find_glossary_page"]

log = logging.getLogger(__name__)

_MAX_QUERY = 120
#: ``DCP4``, ``TP=8``, ``MTP 3``, ``cc64``: a base term and a number.
_COMPOSITE = re.compile(r"^([A-Za-z][A-Za-z+]*?)\s*[=:]?\s*(\d{1,5})$")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_DIGEST = re.compile(r"\bsha(?:256|512|1):[0-9a-fA-F]{6,}")
_HEXISH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:\+[A-Za-z][A-Za-z0-9]*)*(?:=\d{1,5}(?![\w.]))?")


@dataclass(frozen=True, slots=True)
class GlossaryEntry:
    term: str
    meaning: str
    notes: str
    section: str
    anchor: str
    #: Other spellings of the term from the same cell (``cc1 / cc64`` -> both).
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.term, *self.aliases)


@dataclass(frozen=True, slots=True)
class Lookup:
    """The answer to one term: an entry (maybe via a composite) or suggestions."""

    query: str
    entry: GlossaryEntry | None = None
    #: How the entry was found: exact, composite, meaning, fuzzy; None when not found.
    how: str | None = None
    #: The number of a composite form (``DCP4`` -> "4").
    number: str | None = None
    suggestions: tuple[GlossaryEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class Mention:
    """A glossary term used in a text, as written there."""

    written: str
    entry: GlossaryEntry
    number: str | None = None


def find_glossary_page(wiki: Wiki, front: Page | None) -> Page | None:
    """The glossary page: the front page's link that says so, else ``GLOSSARY.md``."""
    if front is not None:
        for link in front.links:
            if link.path and link.path in wiki.pages and link.path != front.path:
                label = f"{link.text} {link.path}".casefold()
                if "glossary" in label:
                    return wiki.pages[link.path]
    return wiki.find_page("GLOSSARY.md", "glossary.md", "docs/GLOSSARY.md")


@dataclass(slots=True)
class Glossary:
    page: str | None
    entries: tuple[GlossaryEntry, ...]
    _by_name: dict[str, GlossaryEntry] = field(default_factory=dict, repr=False)
    _exact_case: dict[str, GlossaryEntry] = field(default_factory=dict, repr=False)
    _by_meaning: dict[str, GlossaryEntry] = field(default_factory=dict, repr=False)
    _choices: list[str] = field(default_factory=list, repr=False)
    _choice_entry: list[GlossaryEntry] = field(default_factory=list, repr=False)
    _phrases: re.Pattern[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for entry in self.entries:
            for name in entry.names:
                self._by_name.setdefault(name.casefold(), entry)
                self._exact_case.setdefault(name, entry)
                self._choices.append(name)
                self._choice_entry.append(entry)
            self._by_meaning.setdefault(fold_key(entry.meaning), entry)
        multiword = sorted(
            (n for e in self.entries for n in e.names if " " in n), key=len, reverse=True
        )
        if multiword:
            self._phrases = re.compile(
                r"(?<![\w])(" + "|".join(re.escape(n) for n in multiword) + r")(?![\w])",
                re.IGNORECASE,
            )

    # --- building --------------------------------------------------------------

    @classmethod
    def from_wiki(cls, wiki: Wiki, front: Page | None) -> Glossary:
        page = find_glossary_page(wiki, front)
        if page is None:
            log.info("no glossary page found")
            return cls(page=None, entries=())
        entries: list[GlossaryEntry] = []
        seen: set[str] = set()
        for section, table in page.tables:
            term_col = table.column("acronym", "term", "abbreviation", "name")
            meaning_col = table.column("meaning", "expansion", "definition", "stands for")
            if term_col is None or meaning_col is None:
                continue
            notes_col = table.column("notes", "note", "description", "usage")
            for row in table.rows:
                raw = row[term_col].text.strip()
                meaning = row[meaning_col].text.strip()
                if not raw or not meaning:
                    continue
                names = [n.strip() for n in re.split(r"\s+/\s+|,\s+", raw) if n.strip()]
                if not names or raw.casefold() in seen:
                    continue
                seen.add(raw.casefold())
                entries.append(
                    GlossaryEntry(
                        term=raw,
                        meaning=meaning,
                        notes=row[notes_col].text.strip() if notes_col is not None else "",
                        section=section.title,
                        anchor=section.anchor,
                        aliases=tuple(n for n in names if n != raw),
                    )
                )
        return cls(page=page.path, entries=tuple(entries))

    # --- lookup ----------------------------------------------------------------

    @property
    def available(self) -> bool:
        return self.page is not None

    def exact(self, name: str) -> GlossaryEntry | None:
        return self._by_name.get(name.strip().casefold())

    def lookup(self, query: str) -> Lookup:
        text = clean_user_text(query, _MAX_QUERY).strip(" `'\"“”.,;!?")
        if not text:
            return Lookup(query=text)
        entry = self.exact(text)
        if entry is not None:
            return Lookup(query=text, entry=entry, how="exact")
        composite = self._composite(text)
        if composite is not None:
            entry, number = composite
            return Lookup(query=text, entry=entry, how="composite", number=number)
        entry = self._by_meaning_lookup(text)
        if entry is not None:
            return Lookup(query=text, entry=entry, how="meaning")
        return Lookup(query=text, suggestions=self.suggest(text))

    def _composite(self, text: str) -> tuple[GlossaryEntry, str] | None:
        match = _COMPOSITE.match(text)
        if not match:
            return None
        entry = self.exact(match.group(1))
        if entry is None:
            return None
        return entry, match.group(2).lstrip("0") or "0"

    def _by_meaning_lookup(self, text: str) -> GlossaryEntry | None:
        key = fold_key(text)
        if not key:
            return None
        entry = self._by_meaning.get(key)
        if entry is not None:
            return entry
        words = key.split()
        if len(words) < 2:
            return None
        # every word of the query starts a word of exactly one meaning
        hits = [
            e
            for k, e in self._by_meaning.items()
            if all(any(mw.startswith(w) for mw in k.split()) for w in words)
        ]
        return hits[0] if len(hits) == 1 else None

    def suggest(self, text: str, limit: int = 5) -> tuple[GlossaryEntry, ...]:
        """Entries close to ``text`` by spelling of the term or wording of the meaning."""
        if not self.entries:
            return ()
        # Only a term not found pays for loading rapidfuzz.
        from rapidfuzz import fuzz, process
        from rapidfuzz.distance import OSA

        found: list[GlossaryEntry] = []
        folded = text.casefold()
        if 2 <= len(folded) <= 8:
            # one slip on a short term: two letters swapped (first), or one dropped,
            # added or mistyped
            slips = [
                (sorted(choice.casefold()) != sorted(folded), idx)
                for idx, choice in enumerate(self._choices)
                if OSA.distance(folded, choice.casefold(), score_cutoff=1) <= 1
            ]
            for _, idx in sorted(slips):
                entry = self._choice_entry[idx]
                if entry not in found:
                    found.append(entry)
        for _, score, idx in process.extract(
            text, self._choices, scorer=fuzz.WRatio, processor=str.casefold, limit=limit * 2
        ):
            entry = self._choice_entry[idx]
            if score >= 70 and entry not in found:
                found.append(entry)
        meanings = [e.meaning for e in self.entries]
        for _, score, idx in process.extract(
            text, meanings, scorer=fuzz.token_set_ratio, processor=str.casefold, limit=limit
        ):
            entry = self.entries[idx]
            if score >= 75 and entry not in found:
                found.append(entry)
        return tuple(found[:limit])

    def names(self) -> list[str]:
        return list(self._choices)

    # --- scanning free text ----------------------------------------------------

    def scan(self, text: str, limit: int = 40) -> list[Mention]:
        """Every glossary term used in ``text``, each once, in order of first use.

        Code spans count; URLs, digests and commit-like hashes do not. A lowercase
        word matches only when the term itself is mixed-case (``vllm``, ``moe``) or
        carries a number (``dcp4``), so ordinary English words are left alone.
        """
        text = _URL.sub(" ", text)
        text = _DIGEST.sub(" ", text)
        text = _HEXISH.sub(" ", text)
        found: dict[GlossaryEntry, tuple[int, Mention]] = {}

        def keep(pos: int, mention: Mention) -> None:
            if mention.entry not in found or found[mention.entry][0] > pos:
                found[mention.entry] = (pos, mention)

        if self._phrases is not None:
            for match in self._phrases.finditer(text):
                entry = self.exact(match.group(1))
                if entry is not None:
                    keep(match.start(), Mention(written=match.group(1), entry=entry))
        for match in _TOKEN.finditer(text):
            mention = self._mention(match.group(0))
            if mention is not None:
                keep(match.start(), mention)
            if len(found) >= limit * 2:
                break
        ordered = sorted(found.values(), key=lambda item: item[0])
        return [mention for _, mention in ordered[:limit]]

    def _mention(self, word: str) -> Mention | None:
        entry = self._exact_case.get(word)
        if entry is not None:
            return Mention(written=word, entry=entry)
        entry = self.exact(word)
        if entry is not None and self._case_ok(word, entry):
            return Mention(written=word, entry=entry)
        composite = self._composite(word)
        if composite is not None and self._case_ok(word, composite[0], has_number=True):
            return Mention(written=word, entry=composite[0], number=composite[1])
        if "+" in word:  # "AG+RS" written inside a longer token
            for part in word.split("+"):
                found = self._mention(part)
                if found is not None:
                    return found
        return None

    @staticmethod
    def _case_ok(word: str, entry: GlossaryEntry, has_number: bool = False) -> bool:
        letters = "".join(ch for ch in word if ch.isalpha())
        if letters.isupper():
            return len(letters) >= 2 or has_number
        if has_number:
            return True
        return any(ch.islower() for name in entry.names for ch in name) and len(letters) >= 3
