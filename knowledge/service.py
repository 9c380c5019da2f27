"""The knowledge base: the loaded wiki, its glossary, catalogue and index, as replies.

Every user-facing command is one method returning a :class:`~knowledge.reply.Reply`.
The console, ``wikibot ask --json`` and the Discord layer all call these, so
they answer alike. State is swapped as a whole on reload, so a search running
in a worker thread never sees half of an old wiki and half of a new one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from importlib.metadata import version as package_version
from pathlib import Path

from knowledge.files import write_atomic
from knowledge.reply import LIMITS, Field, PageRef, Reply
from knowledge.search.index import BuildStats, SearchIndex, SearchResults
from knowledge.templates import Templates, load_templates
from knowledge.text import clean_user_text, code_block, escape_markdown, inline_code, truncate
from knowledge.wiki.catalogue import Catalogue, Family, find_front_page
from knowledge.wiki.glossary import Glossary, GlossaryEntry, Lookup
from knowledge.wiki.parse import PARSER_VERSION, Page, Wiki, load_wiki
from knowledge.wiki.status import status_of

__all__ = [
    "MAX_EXPLAIN_CHARS",
    "MAX_QUERY_CHARS",
    "KnowledgeBase",
    "default_data_dir",
    "demo_wiki_dir",
]

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 200
MAX_EXPLAIN_CHARS = 8000
SEARCH_PAGE_SIZE = 5
AUTOCOMPLETE_LIMIT = 25

Progress = Callable[[int, int], None]


def demo_wiki_dir() -> Path:
    """The small demo wiki that ships inside the package."""
    return Path(str(resources.files("knowledge").joinpath("demo_wiki")))


def default_data_dir(wiki_dir: Path) -> Path:
    """Per-wiki data folder under ``$WIKIBOT_DATA`` or the user's cache folder."""
    base = os.environ.get("WIKIBOT_DATA")
    if base:
        root = Path(base)
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(cache) / "wikibot"
    digest = hashlib.sha256(str(wiki_dir.resolve()).encode()).hexdigest()[:10]
    return root / f"{wiki_dir.resolve().name}-{digest}"


@dataclass(frozen=True, slots=True)
class _State:
    wiki: Wiki
    glossary: Glossary
    catalogue: Catalogue
    built: BuildStats
    loaded_at: float


class KnowledgeBase:
    """Answers from one wiki folder. Thread-safe for concurrent reads."""

    def __init__(
        self,
        wiki_dir: Path,
        data_dir: Path,
        *,
        link_base: str | None = None,
        templates: Templates | None = None,
    ) -> None:
        self.wiki_dir = Path(wiki_dir)
        self.data_dir = Path(data_dir)
        self.link_base = link_base.rstrip("/") + "/" if link_base else None
        self.t = templates or load_templates()
        self._reload_lock = threading.Lock()
        self._state: _State | None = None
        self._index: SearchIndex | None = None

    # --- loading ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        wiki_dir: Path | None = None,
        data_dir: Path | None = None,
        *,
        link_base: str | None = None,
        progress: Progress | None = None,
    ) -> KnowledgeBase:
        wiki_path = Path(wiki_dir) if wiki_dir is not None else demo_wiki_dir()
        kb = cls(wiki_path, data_dir or default_data_dir(wiki_path), link_base=link_base)
        kb.reload(progress=progress)
        return kb

    def reload(self, *, force: bool = False, progress: Progress | None = None) -> BuildStats:
        """Re-read the wiki and bring the index up to date (rebuilt if ``force``)."""
        with self._reload_lock:
            previous = self._state.wiki.pages if self._state else self._read_page_cache()
            wiki = load_wiki(self.wiki_dir, cache=previous)
            reparsed = len(previous) != len(wiki.pages) or any(
                previous.get(path) is not page for path, page in wiki.pages.items()
            )
            if reparsed:
                self._write_page_cache(wiki.pages)
            front = find_front_page(wiki)
            glossary = Glossary.from_wiki(wiki, front)
            catalogue = Catalogue.from_wiki(wiki, glossary)
            statuses = catalogue.statuses()
            if self._index is None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
                self._index, built = SearchIndex.open(
                    wiki, self.data_dir, statuses=statuses, progress=progress
                )
                if force and built.mode != "full":
                    built = self._index.rebuild(wiki, statuses=statuses, progress=progress)
            elif force:
                built = self._index.rebuild(wiki, statuses=statuses, progress=progress)
            else:
                built = self._index.update(wiki, statuses=statuses)
            self._state = _State(wiki, glossary, catalogue, built, time.time())
            log.info(
                "wiki %s loaded: %d pages, %d terms, %d families, index %s in %.2fs",
                wiki.revision,
                len(wiki.pages),
                len(glossary.entries),
                len(catalogue.families),
                built.mode,
                built.seconds,
            )
            return built

    # --- parsed-page cache (makes a restart cost reading files, not parsing them) -

    @property
    def _page_cache_path(self) -> Path:
        return self.data_dir / "pages.pickle"

    def _read_page_cache(self) -> dict[str, Page]:
        try:
            with open(self._page_cache_path, "rb") as fh:
                data = pickle.load(fh)
            if data.get("version") == _page_cache_version():
                return data["pages"]
        except FileNotFoundError:
            pass
        except Exception as exc:  # a damaged cache only costs a re-parse
            log.warning("ignoring unreadable page cache %s: %r", self._page_cache_path, exc)
        return {}

    def _write_page_cache(self, pages: dict[str, Page]) -> None:
        data = {"version": _page_cache_version(), "pages": pages}
        try:
            write_atomic(self._page_cache_path, pickle.dumps(data, pickle.HIGHEST_PROTOCOL))
        except OSError as exc:
            log.warning("could not write page cache: %s", exc)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    @property
    def state(self) -> _State:
        if self._state is None:
            raise RuntimeError("knowledge base not loaded")
        return self._state

    @property
    def wiki(self) -> Wiki:
        return self.state.wiki

    @property
    def glossary(self) -> Glossary:
        return self.state.glossary

    @property
    def catalogue(self) -> Catalogue:
        return self.state.catalogue

    @property
    def categories(self) -> list[str]:
        return self.state.wiki.categories

    # --- helpers ---------------------------------------------------------------

    def url(self, path: str, anchor: str | None = None) -> str | None:
        if self.link_base is None:
            return None
        return f"{self.link_base}{path}" + (f"#{anchor}" if anchor else "")

    def link(self, title: str, path: str, anchor: str | None = None) -> str:
        """A page reference in reply text: a Markdown link when a base URL is known."""
        url = self.url(path, anchor)
        ref = f"{path}#{anchor}" if anchor else path
        safe_title = escape_markdown(title)
        if url is None:
            return self.t("common.page_plain", title=safe_title, ref=ref)
        return self.t("common.page_link", title=safe_title, url=url.replace(")", "%29"))

    def _names(self, names: list[str], limit: int = 8) -> str:
        shown = [inline_code(n) for n in names[:limit]]
        text = ", ".join(shown)
        if len(names) > limit:
            text += " " + self.t("common.more", count=len(names) - limit)
        return text

    # --- /runbook --------------------------------------------------------------

    def runbook(self, query: str) -> Reply:
        catalogue = self.catalogue
        if not catalogue.families:
            return Reply(
                "unavailable",
                self.t("runbook.not_found_title", query="?"),
                self.t("runbook.no_catalogue"),
                ephemeral=True,
            )
        text = clean_user_text(query, MAX_QUERY_CHARS)
        if not text:
            example = catalogue.families[0].name
            return Reply(
                "not_found",
                self.t("runbook.not_found_title", query=""),
                self.t("runbook.empty", example=inline_code(example)),
                ephemeral=True,
            )
        match = catalogue.match(text)
        safe_query = escape_markdown(text)
        if match.ambiguous:
            lines = [
                f"- **{escape_markdown(f.name)}**: "
                + self.link(f.current[0].title if f.current else f.hub_title, f.current_page or "")
                for f in match.others
                if f.current_page
            ]
            return Reply(
                "ambiguous",
                self.t("runbook.ambiguous_title", query=safe_query),
                self.t("runbook.ambiguous", names=self._names([f.name for f in match.others]))
                + "\n"
                + "\n".join(lines),
                suggestions=tuple(f.name for f in match.others),
                pages=tuple(
                    PageRef(f.current_page or "", None, f.name)
                    for f in match.others
                    if f.current_page
                ),
                ephemeral=True,
            )
        if match.family is None:
            names = [f.name for f in catalogue.families if f.group == "main"]
            body = self.t("runbook.not_found", names=self._names(names))
            if match.others:
                body = (
                    self.t(
                        "runbook.did_you_mean", names=self._names([f.name for f in match.others])
                    )
                    + "\n"
                    + body
                )
            return Reply(
                "not_found",
                self.t("runbook.not_found_title", query=safe_query),
                body,
                suggestions=tuple(f.name for f in match.others),
                ephemeral=True,
            )
        reply = self._runbook_reply(match.family)
        if match.others:
            also = self.t(
                "runbook.other_matches", names=self._names([f.name for f in match.others], limit=4)
            )
            reply = replace(reply, footer=also, suggestions=tuple(f.name for f in match.others))
        return reply

    def _runbook_reply(self, family: Family) -> Reply:
        catalogue = self.catalogue
        if not family.current and family.hub:
            children = [f for f in catalogue.families if f.parent == family.hub]
            if children:
                lines = [
                    f"- **{escape_markdown(f.name)}**: "
                    + self.link(f.current[0].title if f.current else f.name, f.current_page or "")
                    for f in children
                ]
                return Reply(
                    "runbook",
                    self.t("runbook.group_title", family=family.name),
                    self.t("runbook.group_intro", family=escape_markdown(family.name))
                    + "\n"
                    + "\n".join(lines),
                    pages=(
                        PageRef(family.hub, None, family.hub_title),
                        *(PageRef(f.current_page or "", None, f.name) for f in children),
                    ),
                    meta={"family": family.key},
                )
        rb = catalogue.runbook(family)
        page = self.wiki.pages.get(rb.page)
        parts = [
            self.t(
                "runbook.intro",
                page=escape_markdown(rb.page_title),
                family=escape_markdown(family.name),
            )
        ]
        if family.focus:
            parts.append(self.t("runbook.focus", focus=escape_markdown(family.focus)))
        fields: list[Field] = []
        if rb.images:
            value = "\n".join(inline_code(i) for i in rb.images)
            fields.append(Field(self.t("runbook.image"), value))
            if rb.digest:
                fields.append(Field(self.t("runbook.digest"), inline_code(rb.digest)))
        else:
            parts.append(self.t("runbook.no_image"))
        fields.append(Field(self.t("runbook.current"), self.link(rb.page_title, rb.page), True))
        if family.hub and family.hub != rb.page:
            fields.append(
                Field(self.t("runbook.hub"), self.link(family.hub_title, family.hub), True)
            )
        older = [v for v in family.versions if v.path != rb.page]
        if older:
            fields.append(
                Field(
                    self.t("runbook.older"),
                    self.t(
                        "runbook.older_count", count=len(older), family=escape_markdown(family.name)
                    ),
                )
            )
        if rb.launch is not None and page is not None:
            section = page.section(rb.launch_anchor or "")
            label = self.t(
                "runbook.launch",
                section=escape_markdown(section.title if section else rb.page_title),
            )
            parts.append(
                f"**{label}**\n" + code_block(rb.launch.text, rb.launch.lang or "bash", LIMITS.code)
            )
        else:
            parts.append(self.t("runbook.no_launch"))
        pages = [PageRef(rb.page, None, rb.page_title)]
        if rb.launch_anchor:
            pages.insert(0, PageRef(rb.page, rb.launch_anchor, rb.page_title))
        if family.hub and family.hub != rb.page:
            pages.append(PageRef(family.hub, None, family.hub_title))
        pages.extend(PageRef(v.path, v.anchor, v.title) for v in older)
        return Reply(
            "runbook",
            self.t("runbook.title", family=family.name),
            "\n\n".join(parts),
            fields=tuple(fields),
            pages=tuple(pages),
            meta={
                "family": family.key,
                "page": rb.page,
                "url": self.url(rb.page),
                "has_launch": rb.launch is not None,
                "older": len(older),
            },
        )

    def versions(self, family_key: str) -> Reply:
        family = self.catalogue.family(family_key)
        if family is None:
            return self.runbook(family_key)
        if not family.versions:
            return Reply(
                "versions",
                self.t("runbook.versions_title", family=family.name),
                self.t("runbook.versions_empty", family=escape_markdown(family.name)),
                ephemeral=True,
                meta={"family": family.key},
            )
        lines = []
        for v in family.versions:
            status = f" ({escape_markdown(v.status)})" if v.status else ""
            note = f": {escape_markdown(v.note)}" if v.note else ""
            lines.append(f"- {self.link(v.title, v.path, v.anchor)}{status}{note}")
        return Reply(
            "versions",
            self.t("runbook.versions_title", family=family.name),
            "\n".join(lines),
            pages=tuple(PageRef(v.path, v.anchor, v.title) for v in family.versions),
            meta={"family": family.key},
        )

    def launch(self, family_key: str) -> Reply:
        family = self.catalogue.family(family_key)
        if family is None:
            return self.runbook(family_key)
        rb = self.catalogue.runbook(family)
        page = self.wiki.pages.get(rb.page)
        if rb.launch is None or page is None:
            return Reply(
                "not_found",
                self.t("runbook.launch_title", family=family.name),
                self.t("runbook.no_launch"),
                ephemeral=True,
            )
        section = page.section(rb.launch_anchor or "")
        head = self.t(
            "runbook.launch_from",
            page=escape_markdown(rb.page_title),
            section=self.link(
                section.title if section else rb.page_title, rb.page, rb.launch_anchor
            ),
        )
        budget = LIMITS.description - len(head) - 10
        return Reply(
            "launch",
            self.t("runbook.launch_title", family=family.name),
            head + "\n" + code_block(rb.launch.text, rb.launch.lang or "bash", budget),
            pages=(PageRef(rb.page, rb.launch_anchor, rb.page_title),),
            meta={"family": family.key, "command": rb.launch.text},
        )

    # --- /acronym --------------------------------------------------------------

    def acronym(self, query: str) -> Reply:
        glossary = self.glossary
        if not glossary.available:
            return Reply(
                "unavailable",
                self.t("acronym.no_glossary_title"),
                self.t("acronym.no_glossary"),
                ephemeral=True,
            )
        found = glossary.lookup(query)
        if not found.query:
            example = glossary.entries[0].term if glossary.entries else "TP"
            return Reply(
                "not_found",
                self.t("acronym.not_found_title", query=""),
                self.t("acronym.empty", example=inline_code(example)),
                ephemeral=True,
            )
        if found.entry is None:
            return self._acronym_missing(found)
        return self._acronym_reply(found, found.entry)

    def _acronym_reply(self, found: Lookup, entry: GlossaryEntry) -> Reply:
        term, meaning = escape_markdown(entry.term), escape_markdown(entry.meaning)
        if found.how == "composite":
            text = self.t(
                "acronym.composite",
                written=escape_markdown(found.query),
                term=term,
                meaning=meaning,
                number=found.number,
            )
        elif found.how == "meaning":
            text = self.t("acronym.via_meaning", query=escape_markdown(found.query), term=term)
            text += "\n" + self.t("acronym.meaning", term=term, meaning=meaning)
        else:
            text = self.t("acronym.meaning", term=term, meaning=meaning)
        fields = []
        if entry.notes:
            fields.append(Field(self.t("acronym.notes"), escape_markdown(entry.notes)))
        page = self.glossary.page or ""
        return Reply(
            "acronym",
            self.t("acronym.title", term=entry.term),
            text,
            fields=tuple(fields),
            pages=(PageRef(page, entry.anchor, entry.section),),
            footer=self.t("acronym.section", section=entry.section),
            meta={"term": entry.term, "how": found.how, "number": found.number},
        )

    def _acronym_missing(self, found: Lookup) -> Reply:
        parts = [self.t("acronym.not_found")]
        if found.suggestions:
            parts.insert(
                0,
                self.t(
                    "acronym.did_you_mean", names=self._names([s.term for s in found.suggestions])
                ),
            )
        fields = []
        hits = self.search_sections(found.query, limit=3)
        pages = []
        if hits is not None and hits.hits:
            lines = [
                f"- {self.link(h.page_title + ' › ' + h.section_title, h.path, h.anchor)}"
                for h in hits.hits
            ]
            fields.append(Field(self.t("acronym.search_hits"), "\n".join(lines)))
            pages = [PageRef(h.path, h.anchor, h.section_title) for h in hits.hits]
        return Reply(
            "not_found",
            self.t("acronym.not_found_title", query=escape_markdown(found.query)),
            "\n".join(parts),
            fields=tuple(fields),
            pages=tuple(pages),
            suggestions=tuple(s.term for s in found.suggestions),
            ephemeral=True,
        )

    # --- /search ---------------------------------------------------------------

    def search_sections(
        self, query: str, *, limit: int = 5, offset: int = 0, category: str | None = None
    ) -> SearchResults | None:
        """Raw section hits for ``query``, best first; None before the index is loaded.

        For engines that rank pages themselves (triage); replies use ``search``.
        """
        if self._index is None:
            return None
        return self._index.search(query, limit=limit, offset=offset, category=category)

    def search(
        self,
        query: str,
        *,
        category: str | None = None,
        page: int = 1,
        per_page: int = SEARCH_PAGE_SIZE,
    ) -> Reply:
        text = clean_user_text(query, MAX_QUERY_CHARS)
        if category:
            category = clean_user_text(category, 60).casefold()
            if category not in self.categories:
                return Reply(
                    "not_found",
                    self.t("search.nothing_title", query=escape_markdown(text)),
                    self.t(
                        "search.unknown_category",
                        category=escape_markdown(category),
                        names=self._names(self.categories, limit=20),
                    ),
                    suggestions=tuple(self.categories),
                    ephemeral=True,
                )
        page = max(1, min(int(page), 1000))
        results = self.search_sections(
            text, limit=per_page, offset=(page - 1) * per_page, category=category or None
        )
        if results is None:
            return Reply(
                "error", self.t("search.problem_title"), self.t("common.no_wiki"), ephemeral=True
            )
        shown_query = escape_markdown(results.query or text)
        if results.problem:
            return Reply(
                "not_found",
                self.t("search.problem_title"),
                escape_markdown(results.problem),
                ephemeral=True,
            )
        if not results.hits:
            if page > 1 and results.total:
                return self.search(query, category=category, page=1, per_page=per_page)
            return Reply(
                "not_found",
                self.t("search.nothing_title", query=shown_query),
                self.t("search.nothing"),
                ephemeral=True,
            )
        first = (page - 1) * per_page + 1
        last = first + len(results.hits) - 1
        fields = []
        for rank, hit in enumerate(results.hits, start=first):
            status = (
                self.t("search.status_tag", status=hit.status)
                if status_of(hit.status).notable
                else ""
            )
            name = (
                self.t("search.hit_name", rank=rank, page=hit.page_title, section=hit.section_title)
                + status
            )
            snippet = "".join(
                f"**{escape_markdown(part)}**" if match else escape_markdown(part)
                for part, match in hit.snippet
            )
            snippet = truncate(" ".join(snippet.split()), 700)
            fields.append(
                Field(name, snippet + "\n" + self.link(hit.section_title, hit.path, hit.anchor))
            )
        text_parts = [self.t("search.hits", total=results.total, first=first, last=last)]
        if category:
            text_parts.append(self.t("search.category", category=escape_markdown(category)))
        pages_total = max(1, -(-results.total // per_page))
        return Reply(
            "search",
            self.t("search.title", query=results.query or text),
            "\n".join(text_parts),
            fields=tuple(fields),
            pages=tuple(PageRef(h.path, h.anchor, h.section_title) for h in results.hits),
            meta={
                "query": text,
                "category": category,
                "page": page,
                "pages": pages_total,
                "total": results.total,
            },
        )

    # --- /explain --------------------------------------------------------------

    def explain(self, text: str) -> Reply:
        glossary = self.glossary
        if not glossary.available:
            return Reply(
                "unavailable",
                self.t("acronym.no_glossary_title"),
                self.t("explain.no_glossary"),
                ephemeral=True,
            )
        cleaned = text[:MAX_EXPLAIN_CHARS]
        if not cleaned.strip():
            return Reply(
                "not_found", self.t("explain.none_title"), self.t("explain.empty"), ephemeral=True
            )
        mentions = glossary.scan(cleaned)
        if not mentions:
            return Reply(
                "not_found", self.t("explain.none_title"), self.t("explain.none"), ephemeral=True
            )
        lines = []
        for m in mentions:
            if m.number is not None:
                lines.append(
                    self.t(
                        "explain.line_composite",
                        written=escape_markdown(m.written),
                        term=escape_markdown(m.entry.term),
                        meaning=escape_markdown(m.entry.meaning),
                        number=m.number,
                    )
                )
            else:
                lines.append(
                    self.t(
                        "explain.line",
                        written=escape_markdown(m.written),
                        meaning=escape_markdown(m.entry.meaning),
                    )
                )
        page = glossary.page or ""
        return Reply(
            "explain",
            self.t("explain.title"),
            self.t("explain.found", count=len(mentions)) + "\n" + "\n".join(lines),
            pages=tuple(
                dict.fromkeys(PageRef(page, m.entry.anchor, m.entry.section) for m in mentions)
            ),
            meta={"terms": [m.entry.term for m in mentions]},
        )

    # --- /status, /help --------------------------------------------------------

    def status(self) -> Reply:
        state = self.state
        age = _age(time.time() - state.loaded_at)
        sections = sum(len(p.sections) for p in state.wiki.pages.values())
        fields = (
            Field(self.t("status.revision"), inline_code(state.wiki.revision), True),
            Field(self.t("status.pages"), str(len(state.wiki.pages)), True),
            Field(self.t("status.sections"), str(sections), True),
            Field(self.t("status.terms"), str(len(state.glossary.entries)), True),
            Field(self.t("status.families"), str(len(state.catalogue.families)), True),
            Field(self.t("status.skipped"), str(len(state.wiki.skipped)), True),
            Field(
                self.t("status.index"),
                self.t("status.index_value", mode=state.built.mode, age=age),
                True,
            ),
        )
        return Reply(
            "status",
            self.t("status.title"),
            "",
            fields=fields,
            meta={
                "revision": state.wiki.revision,
                "pages": len(state.wiki.pages),
                "sections": sections,
                "terms": len(state.glossary.entries),
                "families": len(state.catalogue.families),
                "index_mode": state.built.mode,
                "loaded_at": state.loaded_at,
            },
        )

    def help(self) -> Reply:
        return Reply("help", self.t("help.title"), self.t("help.text"))

    # --- autocomplete ----------------------------------------------------------

    def family_choices(self, current: str) -> list[tuple[str, str]]:
        """(name, value) pairs for /runbook autocomplete: at most 25, names <= 100 chars."""
        catalogue = self.catalogue
        text = clean_user_text(current, 100)
        if text:
            match = catalogue.match(text)
            ordered = ([match.family] if match.family else []) + list(match.others)
            key = text.casefold()
            ordered += [f for f in catalogue.families if key in f.name.casefold()]
        else:
            ordered = [catalogue.family(k) for _, k in catalogue.choices()]
        seen: set[str] = set()
        out = []
        for family in ordered:
            if family is None or family.key in seen:
                continue
            seen.add(family.key)
            out.append((truncate(family.name, 100), family.key[:100]))
        return out[:AUTOCOMPLETE_LIMIT]

    def category_choices(self, current: str) -> list[tuple[str, str]]:
        """(name, value) pairs for the /search section option: wiki folders containing it."""
        key = clean_user_text(current, 100).casefold()
        names = [c for c in self.categories if key in c.casefold()]
        return [(c[:100], c[:100]) for c in names[:AUTOCOMPLETE_LIMIT]]

    def term_choices(self, current: str) -> list[tuple[str, str]]:
        glossary = self.glossary
        text = clean_user_text(current, 100)
        if not text:
            entries = list(glossary.entries)
        else:
            key = text.casefold()
            starts = [e for e in glossary.entries if e.term.casefold().startswith(key)]
            inside = [
                e
                for e in glossary.entries
                if key in e.term.casefold() or key in e.meaning.casefold()
            ]
            entries = starts + inside + list(glossary.suggest(text))
        out, seen = [], set()
        for e in entries:
            if e.term in seen:
                continue
            seen.add(e.term)
            out.append((truncate(f"{e.term}: {e.meaning}", 100), e.term[:100]))
        return out[:AUTOCOMPLETE_LIMIT]


def _page_cache_version() -> str:
    return f"{PARSER_VERSION}/{package_version('markdown-it-py')}"


def _age(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"
