"""Model families and their runbooks, read from the wiki's own structure.

The front page's start-here table names the families and links their hub
pages. A hub's table with a Status column is its version map; a table of
models with page links (the legacy page's shape) lists further families. The
current runbook is the version map's "Current" row (fallbacks: a "latest" row,
the first recommendation, the first version). From that page we take the
Docker image reference(s) and the main launch command out of its code blocks.
Nothing here names a model: a family added to the front page just works.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace

from knowledge.launch import (
    SHA256_DIGEST_RE,
    compose_image_word,
    env_image_word,
    image_default,
    parse_image,
)
from knowledge.text import clean_user_text, fold_key
from knowledge.wiki.facts import facts_of
from knowledge.wiki.glossary import Glossary
from knowledge.wiki.model import CodeBlock, Link, Page, Section, Table, Wiki
from knowledge.wiki.status import PageStatus

__all__ = [
    "Catalogue",
    "Family",
    "FamilyMatch",
    "Runbook",
    "Version",
    "clean_image_ref",
    "find_front_page",
    "launch_block",
    "speaks_of_the_past",
    "version_series",
]

log = logging.getLogger(__name__)

FRONT_PAGE_NAMES = ("README.md", "readme.md", "index.md", "Home.md", "home.md")

#: A version number in a family name; "27B"-style parameter counts are sizes, not versions.
#: A page name ending in a version number: ``glm5.2_v15`` -> (``glm5.2_v``, 15, ``""``).
#: Only ``v`` numbers count: ``qwen35-27b`` and ``glm47`` name models, not versions.
_SERIES = re.compile(r"^(.*?(?:^|[_\-.])v)(\d+)([^\d]*)$", re.IGNORECASE)
_OLD_KINDS = frozenset({PageStatus.HISTORICAL, PageStatus.ARCHIVE})
#: How close (rapidfuzz ratio) a typed word must come to a word of a family's own name
#: (or its hub's file name) for a typo-tolerant match: a family sharing only a number
#: or a title's word with the query is no match.
_NAME_WORD_CLOSE = 60
_VERSION_NUMBER = re.compile(r"\d+(?:\.\d+)*(?![\d.]|\s*[BbMmKkTt]\b)")

_LAUNCH_MARKERS = (
    ("docker run", 6),
    ("docker compose", 4),
    ("services:", 4),
    ("vllm serve", 5),
    ("sglang.launch_server", 5),
    ("vllm.entrypoints", 5),
    ("--tensor-parallel-size", 2),
    ("--tp-size", 2),
    ("--tp ", 1),
    ("--model", 1),
    ("--port", 1),
)
_LAUNCH_TITLE_WORDS = ("launch", "run", "serve", "compose", "start", "command", "quick")


@dataclass(frozen=True, slots=True)
class Version:
    title: str
    path: str
    anchor: str | None
    #: Status as the wiki writes it ("Current", "Historical Eldritch baseline", ...).
    status: str
    #: current, historical, archive or other.
    kind: PageStatus
    note: str = ""


@dataclass(frozen=True, slots=True)
class Family:
    key: str
    name: str
    hub: str | None
    hub_title: str
    focus: str
    #: main: a row of the front page's table; legacy: a row of a hub's model table.
    group: str
    current: tuple[Version, ...]
    versions: tuple[Version, ...] = ()
    recommendations: tuple[Version, ...] = ()
    #: The hub page this family was listed on, for legacy families.
    parent: str | None = None

    @property
    def current_page(self) -> str | None:
        return self.current[0].path if self.current else self.hub


@dataclass(frozen=True, slots=True)
class Runbook:
    family: Family
    page: str
    page_title: str
    images: tuple[str, ...]
    digest: str | None
    launch: CodeBlock | None
    launch_anchor: str | None
    image_anchor: str | None
    #: Images the page keeps only for comparison, rollback or fallback (named in a part
    #: of the page that speaks of them as previous, original, historical, a rollback
    #: ...): never the release.
    older_images: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FamilyMatch:
    query: str
    family: Family | None
    #: Other families that matched nearly as well, best first.
    others: tuple[Family, ...] = ()
    #: True when several families match equally and the user must pick.
    ambiguous: bool = False
    how: str | None = None


def find_front_page(wiki: Wiki) -> Page | None:
    return wiki.find_page(*FRONT_PAGE_NAMES)


def _first_link(cells, wiki: Wiki) -> Link | None:
    for cell in cells:
        for link in cell.links:
            if link.path and link.path in wiki.pages:
                return link
    return None


def _status_kind(status: str) -> PageStatus:
    text = status.casefold().strip()
    if text.startswith("current") or text.startswith("recommended"):
        return PageStatus.CURRENT
    if "archive" in text or "deprecated" in text or "obsolete" in text:
        return PageStatus.ARCHIVE
    if text:
        return PageStatus.HISTORICAL
    return PageStatus.OTHER


def _is_start_table(section: Section, table: Table) -> bool:
    head = table.header[0].casefold() if table.header else ""
    return "start" in section.title.casefold() or "model" in head or "family" in head


def _is_version_map(table: Table) -> bool:
    return table.column("status") is not None and table.column("page", "version") is not None


def _is_model_table(table: Table) -> bool:
    first = table.header[0].casefold() if table.header else ""
    return ("model" in first or "family" in first) and table.column("status") is None


def _is_recommendation(section: Section, table: Table) -> bool:
    title = section.title.casefold()
    words = ("recommend", "primary", "start", "current")
    return table.column("page") is not None and any(w in title for w in words)


@dataclass(slots=True)
class Catalogue:
    wiki: Wiki
    front: str | None
    families: tuple[Family, ...]
    glossary: Glossary | None = None
    _runbooks: dict[str, Runbook] = field(default_factory=dict, repr=False)
    _newer: dict[str, tuple[Version, ...]] = field(default_factory=dict, repr=False)
    _keys: dict[str, tuple[set[str], list[str]]] = field(default_factory=dict, repr=False)
    _name_words: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _successors: _Successors | None = field(default=None, repr=False)

    # --- building --------------------------------------------------------------

    @classmethod
    def from_wiki(cls, wiki: Wiki, glossary: Glossary | None = None) -> Catalogue:
        front = find_front_page(wiki)
        families: list[Family] = []
        if front is None:
            log.info("no front page: no runbook catalogue")
            return cls(wiki=wiki, front=None, families=(), glossary=glossary)
        used: set[str] = set()
        for section, table in front.tables:
            if not _is_start_table(section, table):
                continue
            focus_col = len(table.header) - 1 if len(table.header) > 2 else None
            for row in table.rows:
                name = row[0].text.strip()
                link = _first_link(row, wiki)
                if not name or link is None or link.path is None:
                    continue
                hub = wiki.pages[link.path]
                focus = row[focus_col].text if focus_col is not None else ""
                family, legacy = _read_hub(wiki, name, hub, focus)
                if not _is_model_family(family, legacy, hub):
                    log.info("front page row %r leads to no runbook: not a model family", name)
                    continue
                for fam in (family, *legacy):
                    key = _unique_key(fam.name, used)
                    families.append(replace(fam, key=key))
            if families:
                break
        catalogue = cls(wiki=wiki, front=front.path, families=tuple(families), glossary=glossary)
        catalogue._index_names()
        # Built with the catalogue (off the event loop): the first /runbook of a family
        # would otherwise read every page's sections to find its newer pages.
        catalogue._successors = _Successors.of(wiki)
        return catalogue

    def _index_names(self) -> None:
        for family in self.families:
            names = [family.name, family.hub_title]
            names += [v.title for v in family.current]
            if family.hub:
                names.append(family.hub.rsplit("/", 1)[-1].removesuffix(".md"))
            keys = [fold_key(n) for n in names if n]
            tokens = {t for k in keys for t in k.split()}
            self._keys[family.key] = (tokens, keys)
            # Its own name's words (the name, the hub's file name): what a typed word must
            # come close to for a typo-tolerant match. Titles add words that name no
            # model and that many families share ("setup", "hub", "on", "rtx").
            own = [family.name]
            if family.hub:
                own.append(family.hub.rsplit("/", 1)[-1].removesuffix(".md"))
            self._name_words[family.key] = {t for n in own for t in fold_key(n).split()}

    # --- queries ---------------------------------------------------------------

    def family(self, key: str) -> Family | None:
        return next((f for f in self.families if f.key == key), None)

    def statuses(self) -> dict[str, PageStatus]:
        """Wiki path -> hub / current / historical / archive / legacy, for search ranking."""
        status: dict[str, PageStatus] = {}
        for family in self.families:
            for version in family.versions:
                status.setdefault(version.path, version.kind)
            for version in family.current:
                # a legacy page is the newest of its model, not a current recommendation
                main = family.group == "main"
                status[version.path] = PageStatus.CURRENT if main else PageStatus.LEGACY
        for family in self.families:
            if family.hub and family.group == "main":
                status[family.hub] = PageStatus.HUB
        return status

    def choices(self) -> list[tuple[str, str]]:
        """(display name, key) for autocomplete: main families first."""
        ordered = sorted(self.families, key=lambda f: f.group != "main")
        return [(f.name, f.key) for f in ordered]

    def match(self, query: str) -> FamilyMatch:
        """The family a user means by ``query``: tolerant of spelling and shorthand."""
        text = clean_user_text(query, 100)
        family = self.family(text)
        if family is not None:
            return FamilyMatch(query=text, family=family, how="key")
        key = " ".join(w for w in fold_key(text).split() if len(w) >= 2 or w.isdigit())
        if not key or not self.families:
            return FamilyMatch(query=text, family=None)
        scored = self._score(key)
        if not scored and self.glossary is not None:
            expanded = self._expand(text)
            if expanded:
                scored = self._score(fold_key(expanded))
        how = "name"
        if not scored:
            scored = [(round(score), f) for score, f in self._fuzzy(key) if score >= 85]
            how = "fuzzy"
            if not scored:
                return FamilyMatch(query=text, family=None, others=self._fuzzy_families(key))
        best = scored[0][0]
        top = [f for s, f in scored if s == best]
        others = tuple(f for s, f in scored if s < best)[:5]
        if len(top) == 1:
            return FamilyMatch(query=text, family=top[0], others=others, how=how)
        winner = self._tie_break(top, key)
        if winner is not None:
            rest = tuple(f for f in top if f is not winner) + others
            return FamilyMatch(query=text, family=winner, others=rest[:5], how=how)
        return FamilyMatch(query=text, family=None, others=tuple(top)[:10], ambiguous=True)

    def _score(self, key: str) -> list[tuple[int, Family]]:
        words = key.split()
        scored: list[tuple[int, Family]] = []
        for family in self.families:
            tokens, keys = self._keys[family.key]
            name_tokens = set(keys[0].split()) if keys else set()
            if key in keys:
                score = 100
            elif all(w in name_tokens for w in words):
                score = 90
            elif all(w in tokens for w in words):
                score = 80
            elif all(any(t.startswith(w) for t in tokens) for w in words if len(w) >= 3) and any(
                len(w) >= 3 for w in words
            ):
                score = 70
            else:
                continue
            scored.append((score, family))
        scored.sort(key=lambda item: -item[0])
        return scored

    def _fuzzy_families(self, key: str) -> tuple[Family, ...]:
        return tuple(f for score, f in self._fuzzy(key) if score >= 60)

    def _fuzzy(self, key: str) -> list[tuple[float, Family]]:
        """Typo-tolerant scores: whole-name similarity or every word close to a name word."""
        from rapidfuzz import fuzz  # only a name not matched exactly pays for loading it

        words = [w for w in key.split() if len(w) >= 3 or any(c.isdigit() for c in w)]
        # every typed name word, two letters too: ``gm`` (GLM with a letter dropped) is
        # the name in ``gm-5.1 awq``; against the family's words of two letters or more
        # (a single letter, ``v`` or ``a``, would come close to any two-letter word)
        named = [w for w in key.split() if w.isalpha()]
        scored: list[tuple[float, Family]] = []
        for family in self.families:
            tokens, keys = self._keys[family.key]
            if named and not any(
                fuzz.ratio(w, t) >= _NAME_WORD_CLOSE
                for w in named
                for t in self._name_words[family.key]
                if len(t) >= 2
            ):
                # only a number or a title's word in common: "llama 4" is not
                # "DeepSeek V4", "phi-4 setup" not the family whose page is a "setup"
                continue
            score = max((fuzz.WRatio(key, k) for k in keys if k), default=0)
            if words:
                per_word = [max((fuzz.ratio(w, t) for t in tokens), default=0) for w in words]
                score = max(score, min(per_word))
            if score >= 60:
                scored.append((score, family))
        scored.sort(key=lambda item: -item[0])
        return scored[:5]

    def _expand(self, text: str) -> str | None:
        """A glossary shorthand (``ds4``) replaced by its meaning."""
        assert self.glossary is not None
        parts = text.split()
        changed = False
        for i, part in enumerate(parts):
            entry = self.glossary.exact(part)
            if entry is not None:
                parts[i] = entry.meaning
                changed = True
        return " ".join(parts) if changed else None

    def _tie_break(self, top: list[Family], key: str) -> Family | None:
        main = [f for f in top if f.group == "main"]
        pool = main or top
        if len(pool) == 1:
            return pool[0]
        if _VERSION_NUMBER.search(key):
            return None
        versions = [(_version_of(f.name), f) for f in pool]
        versions.sort(key=lambda item: item[0], reverse=True)
        if versions[0][0] and versions[0][0] != versions[1][0]:
            return versions[0][1]
        return None

    # --- runbooks --------------------------------------------------------------

    def newer_pages(self, family: Family) -> tuple[Version, ...]:
        """Pages newer than the one the family's version map calls current.

        A page is newer when it continues the current page's series with a higher
        number (``name_v15.md`` -> ``name_v16.md`` in the same folder) and the map
        does not list it as historical or archived, or when it links to the current
        page saying that it supersedes or replaces it. The hub may simply not have
        been updated yet: the reply says so with both links.
        """
        cached = self._newer.get(family.key)
        if cached is not None:
            return cached
        current = family.current[0] if family.current else None
        if current is None or current.path not in self.wiki.pages:
            return ()
        listed = {v.path: v.kind for v in family.versions}
        if self._successors is None:
            self._successors = _Successors.of(self.wiki)
        pages = self.wiki.pages
        found: dict[str, Version] = {}
        series = version_series(current.path)
        if series is not None:
            folder, before, number, after = series
            for other, path in self._successors.series.get((folder, before, after), ()):
                if other > number and path != current.path and listed.get(path) not in _OLD_KINDS:
                    found[path] = Version(pages[path].title, path, None, "", PageStatus.OTHER)
        for path, anchor in self._successors.superseding.get(current.path, ()):
            if path == current.path or path in found or listed.get(path) in _OLD_KINDS:
                continue
            found[path] = Version(pages[path].title, path, anchor, "", PageStatus.OTHER)
        newer = tuple(sorted(found.values(), key=lambda v: _series_number(v.path), reverse=True))
        self._newer[family.key] = newer
        return newer

    def runbook(self, family: Family) -> Runbook:
        cached = self._runbooks.get(family.key)
        if cached is not None:
            return cached
        path = family.current_page or ""
        page = self.wiki.pages.get(path)
        if page is None:
            runbook = Runbook(family, path, family.name, (), None, None, None, None)
        else:
            launch, launch_anchor = _launch(page)
            images, digest, image_anchor, older = _images(page, launch)
            runbook = Runbook(
                family=family,
                page=page.path,
                page_title=page.title,
                images=images,
                digest=digest,
                launch=launch,
                launch_anchor=launch_anchor,
                image_anchor=image_anchor,
                older_images=older,
            )
        self._runbooks[family.key] = runbook
        return runbook


@dataclass(frozen=True, slots=True)
class _Successors:
    """Where a page's successors are found, read once per wiki: pages of a numbered
    series by (folder, name before the number, name after it), as ``(number, path)``;
    and, per linked page, the pages with a section saying it is superseded, as
    ``(path, anchor of the first such section)``. Both in the wiki's page order."""

    series: dict[tuple[str, str, str], list[tuple[int, str]]]
    superseding: dict[str, list[tuple[str, str]]]

    @classmethod
    def of(cls, wiki: Wiki) -> _Successors:
        series: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
        superseding: dict[str, list[tuple[str, str]]] = {}
        for path, page in wiki.pages.items():
            numbered = version_series(path)
            if numbered is not None:
                folder, before, number, after = numbered
                series.setdefault((folder, before, after), []).append((number, path))
            seen: set[str] = set()
            # From the page's facts: a page of the cache is not read for this.
            for anchor, targets in facts_of(page).supersedes:
                for target in targets:
                    if target not in seen:
                        seen.add(target)
                        superseding.setdefault(target, []).append((path, anchor))
        return cls(series, superseding)


def version_series(path: str) -> tuple[str, str, int, str] | None:
    """(folder, name before the number, the number, name after it) of a page path:
    ``models/glm5.2_v15.md`` -> (``models``, ``glm5.2_v``, 15, ``""``); None without one."""
    folder, _, name = path.rpartition("/")
    match = _SERIES.match(name.removesuffix(".md"))
    if match is None or len(match.group(2)) > 6:
        return None
    return folder, match.group(1), int(match.group(2)), match.group(3)


def _series_number(path: str) -> int:
    series = version_series(path)
    return series[2] if series is not None else -1


def _version_of(name: str) -> tuple[int, ...]:
    match = _VERSION_NUMBER.search(name)
    if not match:
        return ()
    return tuple(int(p) for p in match.group(0).split(".") if p.isdigit())


def _unique_key(name: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9.]+", "-", name.casefold()).strip("-.")[:40] or "family"
    key, n = base, 2
    while key in used:
        key, n = f"{base}-{n}", n + 1
    used.add(key)
    return key


def _versions(table: Table, wiki: Wiki) -> list[Version]:
    page_col = table.column("page", "version")
    status_col = table.column("status")
    note_col = table.column("why keep it", "why", "notes", "note", "use")
    found: list[Version] = []
    for row in table.rows:
        status = row[status_col].text if status_col is not None else ""
        cells = [row[page_col]] if page_col is not None else list(row)
        kind = _status_kind(status)
        for cell in cells:
            for link in cell.links:
                if not link.path:
                    continue
                # A current page the wiki lacks is kept, so the reply can say it is
                # missing instead of presenting another version as current.
                if link.path in wiki.pages or (
                    kind is PageStatus.CURRENT and link.path.endswith(".md")
                ):
                    page = wiki.pages.get(link.path)
                    found.append(
                        Version(
                            title=link.text or (page.title if page else link.path),
                            path=link.path,
                            anchor=link.anchor,
                            status=status,
                            kind=kind,
                            note=row[note_col].text if note_col is not None else "",
                        )
                    )
    return found


def _read_hub(wiki: Wiki, name: str, hub: Page, focus: str) -> tuple[Family, list[Family]]:
    versions: list[Version] = []
    recommendations: list[Version] = []
    legacy: list[Family] = []
    for section, table in hub.tables:
        if _is_version_map(table):
            versions.extend(_versions(table, wiki))
        elif _is_model_table(table):
            for row in table.rows:
                link = _first_link(row, wiki)
                model = row[0].text.strip()
                if link is None or link.path is None or not model:
                    continue
                note_col = table.column("notes", "note", "why")
                note = row[note_col].text if note_col is not None else ""
                current = Version(
                    title=link.text or wiki.pages[link.path].title,
                    path=link.path,
                    anchor=link.anchor,
                    status="",
                    kind=PageStatus.OTHER,
                    note=note,
                )
                legacy.append(
                    Family(
                        key="",
                        name=model,
                        hub=link.path,
                        hub_title=wiki.pages[link.path].title,
                        focus=note,
                        group="legacy",
                        current=(current,),
                        parent=hub.path,
                    )
                )
        elif _is_recommendation(section, table):
            for row in table.rows:
                link = _first_link(row, wiki)
                if link is not None and link.path is not None:
                    recommendations.append(
                        Version(
                            title=link.text or wiki.pages[link.path].title,
                            path=link.path,
                            anchor=link.anchor,
                            status=row[0].text,
                            kind=PageStatus.CURRENT,
                        )
                    )
    current = [v for v in versions if v.kind is PageStatus.CURRENT]
    if not current:
        current = [v for v in versions if "latest" in v.status.casefold()][:1]
    if not current and recommendations:
        current = recommendations[:1]
    if not current and versions:
        current = versions[:1]
    family = Family(
        key="",
        name=name,
        hub=hub.path,
        hub_title=hub.title,
        focus=focus,
        group="main",
        current=tuple(_dedupe(current)),
        versions=tuple(_dedupe(versions)),
        recommendations=tuple(_dedupe(recommendations)),
    )
    return family, legacy


def _is_model_family(family: Family, legacy: list[Family], hub: Page) -> bool:
    """A row of the start table is a model family when its page leads to runbooks: a
    version map, recommendations, a model table, or an image or launch command of its
    own. Rows that lead to an index or a guide (on some forks) are not families."""
    if family.versions or family.recommendations or legacy:
        return True
    images, _, _, older = _images(hub)
    return bool(images or older) or _launch(hub)[0] is not None


def _dedupe(versions: list[Version]) -> list[Version]:
    seen: set[str] = set()
    out = []
    for version in versions:
        if version.path not in seen:
            seen.add(version.path)
            out.append(version)
    return out


def _clean_ref(ref: str) -> str | None:
    ref = ref.strip().strip("\"'")
    default = image_default(ref)
    if default != ref:
        ref = default.strip().strip("\"'")
    image = parse_image(ref)
    if image is None or "/" not in ref or not (image.tag or image.digest):
        return None  # user/repo with a tag or digest: a bare path is no image
    if ref.endswith((".sh", ".py", ".md", ".json", ".yaml", ".yml", ".txt")):
        return None
    return ref


#: Words by which a page speaks of something as past rather than current, or as kept
#: only to go back to when the current one fails (a rollback or fallback image).
_PAST_WORDS = frozenset(
    {
        "archive",
        "archived",
        "comparison",
        "deprecated",
        "downgrade",
        "earlier",
        "fallback",
        "historical",
        "history",
        "legacy",
        "obsolete",
        "old",
        "older",
        "original",
        "previous",
        "previously",
        "retired",
        "revert",
        "rollback",
        "superseded",
    }
)
#: Words by which it speaks of something as what to use now.
_NOW_WORDS = frozenset({"current", "final", "latest", "new", "newest", "recommended", "release"})
_WORD_RE = re.compile(r"[a-z]+")


def _speaks_of_the_past(text: str) -> bool:
    """True when ``text`` uses more past words than present ones ("kept for
    comparison", "the original image", "the previous release, for a rollback"):
    "the old image broke, use the current one" is a tie and says nothing."""
    words = _WORD_RE.findall(text.casefold())
    past = sum(1 for w in words if w in _PAST_WORDS)
    return past > sum(1 for w in words if w in _NOW_WORDS)


def _images(
    page: Page, launch: CodeBlock | None = None
) -> tuple[tuple[str, ...], str | None, str | None, tuple[str, ...]]:
    """Image references of a page, best first: standalone lines, compose, env, run;
    then the digest, the anchor of the best image, and the images the page keeps for
    comparison, rollback or fallback only. An image is kept so when every place that names it
    comes after prose (or under a heading) that speaks of the past, unless the launch
    command uses it."""
    ranked: list[tuple[int, int, str, str]] = []
    digest: str | None = None
    order = 0
    current: set[str] = set()
    past: set[str] = set()
    for section in page.sections:
        title_bonus = 2 if "image" in section.title.casefold() else 0
        in_past = any(_speaks_of_the_past(t) for t in (*section.parents, section.title))
        for block in section.code:
            in_past = in_past or _speaks_of_the_past(block.intro)
            found_from = len(ranked)
            lines = [ln.strip() for ln in block.text.splitlines() if ln.strip()]
            for line in lines:
                order += 1
                if digest is None and (found := SHA256_DIGEST_RE.search(line)):
                    digest = found.group(0)
                ref = _clean_ref(line) if len(lines) <= 3 else None
                if ref:
                    ranked.append((10 + title_bonus, order, ref, section.anchor))
                    continue
                compose = compose_image_word(line)
                if compose and (ref := _clean_ref(compose)):
                    ranked.append((6 + title_bonus, order, ref, section.anchor))
                    continue
                env = env_image_word(line)
                if env and (ref := _clean_ref(env)):
                    ranked.append((5 + title_bonus, order, ref, section.anchor))
                    continue
                if "docker run" in block.text or line.startswith(("--", "-")):
                    for word in line.replace("\\", " ").split():
                        if (ref := _clean_ref(word)) and "/" in word and ":" in word:
                            ranked.append((3 + title_bonus, order, ref, section.anchor))
            refs = {item[2] for item in ranked[found_from:]}
            if in_past and block is not launch:
                past |= refs
            else:
                current |= refs
        if digest is None:
            for code in _inline_codes(section):
                if found := SHA256_DIGEST_RE.search(code):
                    digest = found.group(0)
                    break
    ranked.sort(key=lambda item: (-item[0], item[1]))
    older = past - current
    images: list[str] = []
    kept: list[str] = []
    anchor: str | None = None
    for _, _, ref, ref_anchor in ranked:
        chosen = kept if ref in older else images
        if ref not in chosen:
            chosen.append(ref)
        if anchor is None and ref not in older:
            anchor = ref_anchor
    return tuple(images[:3]), digest, anchor, tuple(kept[:3])


def _inline_codes(section: Section) -> list[str]:
    codes = []
    for table in section.tables:
        for row in table.rows:
            for cell in row:
                codes.extend(cell.code)
    return codes


def _launch(page: Page) -> tuple[CodeBlock | None, str | None]:
    best: tuple[float, CodeBlock, str] | None = None
    total = sum(len(s.code) for s in page.sections) or 1
    seen = 0
    for section in page.sections:
        title = section.title.casefold()
        for block in section.code:
            seen += 1
            text = block.text
            score = float(sum(weight for marker, weight in _LAUNCH_MARKERS if marker in text))
            if score < 4:
                continue
            if any(word in title for word in _LAUNCH_TITLE_WORDS):
                score += 2
            if "image" in title:
                score += 1
            score += min(text.count("\n"), 40) / 20  # a full command beats a one-liner
            score -= seen / total  # earlier blocks win ties
            if best is None or score > best[0]:
                best = (score, block, section.anchor)
    if best is None:
        return None, None
    return best[1], best[2]


# --- the catalogue's readings, for other readers of the wiki (the lint) ---------------


def launch_block(page: Page) -> tuple[CodeBlock | None, str | None]:
    """The code block a runbook page launches its server with, and its section's anchor:
    what :attr:`Runbook.launch` is for a family's current page."""
    return _launch(page)


def clean_image_ref(text: str) -> str | None:
    """``text`` as an image reference with a tag or digest (a ``${IMAGE:-x}`` default
    read as ``x``), or None: how the catalogue reads an image line."""
    return _clean_ref(text)


def speaks_of_the_past(text: str) -> bool:
    """True when ``text`` (a heading, the prose before a block) speaks of something as
    past ("previous", "original", "kept for comparison") more than as current."""
    return _speaks_of_the_past(text)
