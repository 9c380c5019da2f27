"""Which model family a help request is about, and how we know.

Tried in order, first answer wins: a wiki page the request names (its page field,
or a page path in the free text); the model the launch or the log serves, when
exactly one family's runbooks launch it; the image, when exactly one family's pages
name it; a family name spelled out in the text; the catalogue's fuzzy match of the
page field. Everything is read from the catalogue and the pages' code blocks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from knowledge.launch import ImageRef, Launch, hf_cache_repo, parse_launch
from knowledge.text import fold_key
from knowledge.wiki import Catalogue, Family, FamilyMatch, Page, Runbook, Wiki

__all__ = ["FamilyFacts", "FamilyFinder", "FamilyInfo", "model_keys"]

_MD_PATH_RE: Final = re.compile(r"[\w./-]{1,200}\.md\b")
#: Code blocks longer than this are not read for the models a family launches.
_MAX_BLOCK_CHARS: Final = 64 * 1024
#: Catalogue answers kept (per loaded wiki): the same model names come back request
#: after request, and a name matched by no family costs a fuzzy pass over all of them.
_MATCHES_KEPT: Final = 256


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    """The model family a request is about, and how we know."""

    family: Family
    runbook: Runbook
    #: "page", "model", "image" or "name".
    how: str
    #: The wiki page the user named, when it belongs to this family.
    named_page: str | None = None


@dataclass(frozen=True, slots=True)
class FamilyFacts:
    family: Family
    #: Paths of the family's hub, current page and every version page.
    pages: frozenset[str]
    #: Lower-case model ids (``org/name`` and ``name``) the family's runbooks launch.
    models: frozenset[str]
    #: The code of each of ``pages``, its blocks laid end to end (an image is looked for
    #: in it).
    code: tuple[str, ...] = ()


def model_keys(model: str | None) -> set[str]:
    """Lower-case ``org/name`` and ``name`` of a model id or Hugging Face cache path."""
    if not model:
        return set()
    text = model.strip().strip("/").casefold()
    text = hf_cache_repo(text) or text
    keys = {text}
    if "/" in text:
        keys.add(text.rsplit("/", 1)[-1])
    return {k for k in keys if len(k) >= 3}


def _family_facts(wiki: Wiki, catalogue: Catalogue) -> tuple[FamilyFacts, ...]:
    facts = []
    for family in catalogue.families:
        pages = {v.path for v in (*family.versions, *family.current, *family.recommendations)}
        if family.hub:
            pages.add(family.hub)
        models: set[str] = set()
        for path in pages:
            page = wiki.pages.get(path)
            if page is None or path == family.hub:
                continue
            for section in page.sections:
                for block in section.code:
                    if len(block.text) > _MAX_BLOCK_CHARS:
                        continue
                    text = block.text
                    if "serve" in text or "launch_server" in text or "services:" in text:
                        models |= model_keys(parse_launch(text).model)
        code = tuple(_page_code(wiki.pages.get(path)) for path in sorted(pages))
        facts.append(FamilyFacts(family, frozenset(pages), frozenset(models), code))
    return tuple(facts)


def _resolve_path(wiki: Wiki, candidate: str) -> str | None:
    candidate = candidate.strip().lstrip("./")
    if candidate in wiki.pages:
        return candidate
    for path in wiki.pages:
        if candidate.endswith("/" + path):
            return path
    return None


def _page_code(page: Page | None) -> str:
    if page is None:
        return ""
    return "\n".join(block.text for section in page.sections for block in section.code)


@dataclass(frozen=True, slots=True)
class FamilyFinder:
    """Finds a request's family in one loaded wiki (prepared once per wiki)."""

    wiki: Wiki
    catalogue: Catalogue | None
    families: tuple[FamilyFacts, ...] = ()
    #: ``catalogue.match``, its newest ``_MATCHES_KEPT`` answers remembered (the
    #: catalogue does not change: a new wiki makes a new finder).
    _match: Callable[[str], FamilyMatch] | None = field(
        default=None, init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.catalogue is not None:
            remembered = functools.lru_cache(_MATCHES_KEPT)(self.catalogue.match)
            object.__setattr__(self, "_match", remembered)

    @classmethod
    def build(cls, wiki: Wiki, catalogue: Catalogue | None) -> FamilyFinder:
        facts = _family_facts(wiki, catalogue) if catalogue is not None else ()
        return cls(wiki, catalogue, facts)

    def named_pages(self, page_field: str, text: str) -> list[str]:
        """Wiki pages the page field names (a path, URL, file stem or title), then pages
        whose path the free text mentions."""
        found: list[str] = []
        named = page_field.strip()[:2000]
        for source in (named, text[:20_000]):
            for m in _MD_PATH_RE.finditer(source):
                path = _resolve_path(self.wiki, m.group(0))
                if path is not None and path not in found:
                    found.append(path)
        if named and not found:
            key = fold_key(named.split("#", 1)[0][:200])
            for path, page in self.wiki.pages.items():
                names = (
                    path.rsplit("/", 1)[-1].removesuffix(".md"),
                    page.title,
                    page.title.split(":", 1)[0],
                )
                if key and any(key == fold_key(name) for name in names):
                    found.append(path)
                    break
        return found

    def find(
        self,
        *,
        page_field: str,
        text: str,
        named: Sequence[str],
        launch: Launch | None,
        log_model: str | None,
        image: ImageRef | None,
    ) -> FamilyInfo | None:
        """The family of a request (all of it redacted), or None when nothing tells."""
        if self.catalogue is None or not self.families:
            return None
        for path in named:
            owners = [f for f in self.families if path in f.pages]
            owners.sort(key=lambda f: (f.family.group != "main", f.family.hub == path))
            if owners:
                return self._info(owners[0].family, "page", path)
        models: set[str] = set()
        for source in (
            (launch.model if launch else None, launch.hf_model_id if launch else None),
            (log_model,),
        ):
            keys: set[str] = set()
            for model in source:
                keys |= model_keys(model)
            models |= keys
            owners = [f for f in self.families if f.models & keys] if keys else []
            if len(owners) == 1:
                return self._info(owners[0].family, "model", None)
        if image is not None and image.tag:
            ref = f"{image.repository}:{image.tag}"
            owners = [f for f in self.families if any(ref in code for code in f.code)]
            if len(owners) == 1:
                return self._info(owners[0].family, "image", None)
        spelled = self._named_in(page_field, text)
        if spelled is not None:
            return self._info(spelled, "name", None)
        assert self._match is not None  # made with the catalogue
        for query in (page_field, *(sorted(models, key=len, reverse=True)[:2])):
            query = query.strip()[:100]
            if not query:
                continue
            match = self._match(query)
            if match.family is not None and not match.ambiguous:
                return self._info(match.family, "name", None)
        return None

    def _named_in(self, page_field: str, text: str) -> Family | None:
        """The one family whose name the page field or the free text spells out (longest
        wins; a tie names none)."""
        folded = " " + fold_key(" ".join((page_field[:500], text[:4000]))) + " "
        found: list[tuple[int, Family]] = []
        for facts in self.families:
            name = fold_key(facts.family.name)
            if name and f" {name} " in folded:
                found.append((len(name), facts.family))
        if not found:
            return None
        found.sort(key=lambda item: -item[0])
        if len(found) > 1 and found[0][0] == found[1][0]:
            return None
        return found[0][1]

    def _info(self, family: Family, how: str, named: str | None) -> FamilyInfo | None:
        if self.catalogue is None:
            return None
        runbook = self.catalogue.runbook(family)
        return FamilyInfo(family=family, runbook=runbook, how=how, named_page=named)
