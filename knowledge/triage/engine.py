"""Triage a help request against the wiki: what a good helper would say in the first minute.

``triage(kb_or_context, request)`` takes what a user gives the onboarding checklist
(free text, runbook page, image, GPU layout and settings, launch command, client
command, logs) and returns a :class:`TriageResult`:

1. **redactions**: secrets are removed from every field before anything else reads
   it (``redact.redact_fields``); only kind, field and count are kept.
2. **launch**: the launch command parsed by ``launch.parse_launch``.
3. **findings**: rules kept as data plus checks against the wiki (``rules``).
4. **known_errors**: the wiki's ``**Error**`` sections whose signatures appear in the
   log, the free text or the client output (``known_errors``).
5. **log_summary**: ``logs.summarise_log`` of the log.
6. **suggestions**: the best wiki sections for the whole request, each with why, and
   an overall **confidence** (``high``, ``medium``, ``low``, ``none``).
7. **completeness**: the onboarding checklist item by item (``onboarding``).

Build a :class:`TriageContext` once per loaded wiki (``TriageContext.from_kb``) and
pass it for every request; passing a ``KnowledgeBase`` builds one on each call. The
result's ``to_json`` is the ``wikibot triage --json`` object; ``render_text`` words
it with ``templates/triage.yaml``. Nothing here raises on any input text.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from knowledge.jsonable import to_jsonable
from knowledge.launch import (
    SHA256_DIGEST_RE,
    ImageRef,
    Launch,
    hf_cache_repo,
    parse_image,
    parse_launch,
)
from knowledge.search import STOP, SearchResults, make_term_analyzer
from knowledge.templates import Templates, load_templates
from knowledge.text import fold_key
from knowledge.triage.known_errors import KnownErrorMatch, KnownErrors
from knowledge.triage.logs import LogSummary, summarise_log
from knowledge.triage.onboarding import (
    Checklist,
    Completeness,
    RequestFacts,
    assess,
    load_checklist,
)
from knowledge.triage.redact import Redaction, redact_fields
from knowledge.triage.rules import (
    BoundRules,
    FamilyInfo,
    Finding,
    RuleSet,
    Settings,
    Subject,
    launch_settings,
    parse_stated,
    stated_settings,
)
from knowledge.wiki import Catalogue, Family, Page, Wiki, find_front_page, status_weight

__all__ = [
    "CONFIDENCES",
    "FIELDS",
    "MAX_FIELD_CHARS",
    "MAX_LOG_CHARS",
    "Suggestion",
    "TriageContext",
    "TriageRequest",
    "TriageResult",
    "render_text",
    "triage",
]

log = logging.getLogger(__name__)

CONFIDENCES: Final = ("high", "medium", "low", "none")
#: The request's fields, in the order the checklist asks for them.
FIELDS: Final = (
    "text",
    "expected",
    "actual",
    "tried",
    "model_page",
    "image",
    "gpus",
    "settings",
    "command",
    "client",
    "log",
)
#: Longest value of any field but the log; longer ones keep their start.
MAX_FIELD_CHARS: Final = 256 * 1024
#: Longest log read; a longer one keeps its end (where failures are).
MAX_LOG_CHARS: Final = 8 * 1024 * 1024
#: Most suggestions returned.
MAX_SUGGESTIONS: Final = 5
#: Characters of a search query.
QUERY_CHARS: Final = 200
#: Words of a field used as a search query (the most telling ones).
QUERY_WORDS: Final = 5
#: Distinct analysed words of a field a suggestion's fit is judged on.
MAX_TERMS: Final = 40
#: A search hit must share this many words with the request (or half of them), and
#: this many before its share of the request's words counts towards confidence.
MIN_SHARED_TERMS: Final = 3

#: Request keys (lower case, non-alphanumerics as ``_``) accepted for each field; these
#: include the labels of the wiki's question template.
FIELD_ALIASES: Final[Mapping[str, tuple[str, ...]]] = {
    "text": ("text", "question", "description", "problem", "summary", "symptoms", "issue"),
    "expected": ("expected", "what_i_expected"),
    "actual": ("actual", "what_happened", "observed", "result"),
    "tried": ("tried", "already_tried", "what_i_already_tried", "what_i_tried"),
    "model_page": (
        "model_page",
        "runbook",
        "model_runbook",
        "runbook_followed",
        "page",
        "model",
        "link",
    ),
    "image": ("image", "docker_image", "image_tag", "image_tag_digest", "image_digest"),
    "gpus": ("gpus", "gpu_layout", "gpus_and_topology", "layout", "topology", "hardware"),
    "settings": ("settings", "tp_dcp_mtp_dspark", "parallel", "parallelism", "backend"),
    "command": (
        "command",
        "launch",
        "launch_command",
        "launch_command_or_compose_file",
        "compose",
        "docker_run",
    ),
    "client": ("client", "client_command"),
    "log": ("log", "logs", "server_log", "server_log_last_100_300_lines"),
}
_KEY_RE: Final = re.compile(r"[^a-z0-9]+")
_MD_PATH_RE: Final = re.compile(r"[\w./-]{1,200}\.md\b")


# --------------------------------------------------------------------- request


@dataclass(frozen=True, slots=True)
class TriageRequest:
    """A help request. Every field is plain (possibly secret-bearing) text."""

    text: str = ""
    expected: str = ""
    actual: str = ""
    tried: str = ""
    model_page: str = ""
    image: str = ""
    gpus: str = ""
    settings: str = ""
    command: str = ""
    client: str = ""
    log: str = ""

    @classmethod
    def from_mapping(cls, data: Mapping[Any, Any]) -> tuple[TriageRequest, tuple[str, ...]]:
        """Read a request from a YAML/JSON mapping; unknown keys go into ``text``.

        Returns the request and problem codes ``kind:key`` (``field_ignored``,
        ``field_type``), worded later from the templates. Values are *not* redacted
        here: the run redacts them before anything reads them.
        """
        lookup = {alias: name for name, aliases in FIELD_ALIASES.items() for alias in aliases}
        values: dict[str, list[str]] = {name: [] for name in FIELDS}
        problems: list[str] = []
        for key, value in data.items():
            raw_key = str(key)[:80]
            name = lookup.get(_KEY_RE.sub("_", raw_key.casefold()).strip("_"))
            text = _as_text(value)
            if not isinstance(value, str) and value is not None:
                problems.append(f"field_type:{raw_key}")
            if name is None:
                if text.strip():
                    values["text"].append(f"{raw_key}: {text}")
                    problems.append(f"field_ignored:{raw_key}")
                continue
            if text:
                values[name].append(text)
        request = cls(**{name: "\n".join(parts) for name, parts in values.items()})
        return request, tuple(problems)

    def as_mapping(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in FIELDS}


def _as_text(value: object, depth: int = 0) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if depth > 8:
        return ""
    if isinstance(value, Mapping):
        return "\n".join(f"{k}: {_as_text(v, depth + 1)}" for k, v in list(value.items())[:500])
    if isinstance(value, (list, tuple)):
        return "\n".join(_as_text(v, depth + 1) for v in value[:10_000])
    return str(value)


# --------------------------------------------------------------------- result


@dataclass(frozen=True, slots=True)
class Suggestion:
    page: str
    title: str
    why: tuple[str, ...]
    score: float

    def to_json(self) -> dict[str, object]:
        return {
            "page": self.page,
            "title": self.title,
            "why": "; ".join(self.why),
            "reasons": list(self.why),
            "score": round(self.score, 3),
        }


@dataclass(frozen=True, slots=True)
class TriageResult:
    redactions: tuple[Redaction, ...]
    launch: Launch | None
    findings: tuple[Finding, ...]
    known_errors: tuple[KnownErrorMatch, ...]
    log_summary: LogSummary | None
    suggestions: tuple[Suggestion, ...]
    confidence: str
    completeness: Completeness
    family: FamilyInfo | None = None
    #: Worded problems with the input itself (cut fields, unknown keys).
    problems: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The ``--json`` object. Strings are redacted once more on the way out."""
        data: dict[str, object] = {
            "redactions": [
                {"kind": r.kind, "field": r.field, "count": r.count} for r in self.redactions
            ],
            "launch": to_jsonable(self.launch, properties=_JSON_PROPERTIES),
            "findings": to_jsonable(self.findings),
            "known_errors": [k.to_json() for k in self.known_errors],
            "log_summary": to_jsonable(self.log_summary),
            "suggestions": [s.to_json() for s in self.suggestions],
            "confidence": self.confidence,
            "completeness": to_jsonable(self.completeness),
            "family": _family_json(self.family),
            "problems": list(self.problems),
        }
        scrubbed, found = redact_fields(data)
        if found:  # defence in depth: something built from redacted pieces looked secret
            log.warning("triage output needed %d more redactions", sum(r.count for r in found))
            extra = scrubbed.setdefault("redactions", [])
            if isinstance(extra, list):
                extra.extend(
                    {"kind": r.kind, "field": f"output.{r.field}", "count": r.count} for r in found
                )
        return scrubbed


def _family_json(info: FamilyInfo | None) -> dict[str, object] | None:
    if info is None:
        return None
    return {
        "key": info.family.key,
        "name": info.family.name,
        "runbook": info.runbook.page,
        "runbook_title": info.runbook.page_title,
        "how": info.how,
        "named_page": info.named_page,
    }


#: Computed attributes the ``--json`` output shows beside the fields.
_JSON_PROPERTIES: Final = {ImageRef: ("name",)}


# --------------------------------------------------------------------- context


class _Searcher(Protocol):
    def __call__(self, query: str, *, limit: int) -> SearchResults | None: ...


@dataclass(frozen=True, slots=True)
class _FamilyFacts:
    family: Family
    #: Paths of the family's hub, current page and every version page.
    pages: frozenset[str]
    #: Lower-case model ids (``org/name`` and ``name``) the family's runbooks launch.
    models: frozenset[str]


@dataclass(frozen=True, slots=True)
class TriageContext:
    """Everything triage needs from one loaded wiki, prepared once."""

    wiki: Wiki
    catalogue: Catalogue | None
    known_errors: KnownErrors
    rules: BoundRules
    checklist: Checklist
    templates: Templates
    search: _Searcher | None = None
    families: tuple[_FamilyFacts, ...] = ()
    statuses: Mapping[str, str] = field(default_factory=dict)
    #: Lower-case word -> number of sections holding it (picks a query's telling words).
    word_sections: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_kb(cls, kb: Any, *, rules: RuleSet | None = None) -> TriageContext:
        """From a :class:`~knowledge.service.KnowledgeBase` (its wiki, catalogue and index)."""
        return cls.build(kb.wiki, kb.catalogue, kb.search_sections, rules=rules)

    @classmethod
    def build(
        cls,
        wiki: Wiki,
        catalogue: Catalogue | None = None,
        search: _Searcher | None = None,
        *,
        rules: RuleSet | None = None,
        templates: Templates | None = None,
    ) -> TriageContext:
        catalogue = catalogue if catalogue is not None else Catalogue.from_wiki(wiki)
        templates = templates or load_templates("triage.yaml")
        statuses = dict(catalogue.statuses()) if catalogue.families else {}
        bound = (rules or RuleSet.load()).bind(wiki, statuses)
        checklist = load_checklist(wiki, find_front_page(wiki), templates)
        return cls(
            wiki=wiki,
            catalogue=catalogue,
            known_errors=KnownErrors.from_wiki(wiki),
            rules=bound,
            checklist=checklist,
            templates=templates,
            search=search,
            families=tuple(_family_facts(wiki, catalogue)),
            statuses=statuses,
            word_sections=_word_sections(wiki),
        )

    def run(self, request: TriageRequest | Mapping[str, Any]) -> TriageResult:
        """Triage one request. Never raises on any text in any field."""
        return _Triage(self).run(request)


_WORD_RE: Final = re.compile(r"[^\W_]+")


def _word_sections(wiki: Wiki) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for page in wiki.pages.values():
        for section in page.sections:
            counts.update(set(_WORD_RE.findall(f"{section.title} {section.text}".lower())))
    return dict(counts)


def _focused_query(text: str, word_sections: Mapping[str, int], keep: int) -> str:
    """The ``keep`` most telling words of ``text`` (fewest sections holding them, but some),
    in their original order: a short query the index answers fast and on topic."""
    words: list[str] = []
    for word in _WORD_RE.findall(text[:4000].lower()):
        if word not in words and word not in STOP and len(word) > 1 and word_sections.get(word):
            words.append(word)
    if len(words) <= keep:
        return " ".join(words)
    chosen = set(sorted(words, key=lambda w: (word_sections[w], -len(w)))[:keep])
    return " ".join(w for w in words if w in chosen)


def _model_keys(model: str | None) -> set[str]:
    if not model:
        return set()
    text = model.strip().strip("/").casefold()
    text = hf_cache_repo(text) or text
    keys = {text}
    if "/" in text:
        keys.add(text.rsplit("/", 1)[-1])
    return {k for k in keys if len(k) >= 3}


def _family_facts(wiki: Wiki, catalogue: Catalogue) -> list[_FamilyFacts]:
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
                    if len(block.text) > 64 * 1024:
                        continue
                    if (
                        "serve" in block.text
                        or "launch_server" in block.text
                        or ("services:" in block.text)
                    ):
                        models |= _model_keys(parse_launch(block.text).model)
        facts.append(_FamilyFacts(family, frozenset(pages), frozenset(models)))
    return facts


def triage(kb_or_context: Any, request: TriageRequest | Mapping[str, Any]) -> TriageResult:
    """Triage ``request`` against a ``TriageContext`` or a ``KnowledgeBase``."""
    context = (
        kb_or_context
        if isinstance(kb_or_context, TriageContext)
        else TriageContext.from_kb(kb_or_context)
    )
    return context.run(request)


# --------------------------------------------------------------------- the run


def _cut(value: str, limit: int, keep_end: bool) -> tuple[str, bool]:
    if len(value) <= limit:
        return value, False
    if keep_end:
        cut = value[-limit:]
        newline = cut.find("\n")
        return (cut[newline + 1 :] if 0 <= newline < 4096 else cut), True
    return value[:limit], True


@dataclass(slots=True)
class _Candidate:
    page: str
    title: str
    scores: list[float] = field(default_factory=list)
    why: list[str] = field(default_factory=list)

    def add(self, score: float, why: str) -> None:
        self.scores.append(max(0.0, min(1.0, score)))
        if why and why not in self.why:
            self.why.append(why)

    @property
    def score(self) -> float:
        remaining = 1.0
        for s in self.scores:
            remaining *= 1.0 - s
        return 1.0 - remaining


class _Triage:
    """One request's run (holds per-request state; the context is shared)."""

    def __init__(self, context: TriageContext) -> None:
        self.c = context
        self.t = context.templates
        self.problems: list[str] = []

    # -- entry -------------------------------------------------------------------

    def run(self, request: TriageRequest | Mapping[str, Any]) -> TriageResult:
        clean, redactions = self._redacted(request)
        launch = parse_launch(clean.command) if clean.command.strip() else None
        summary = summarise_log(clean.log) if clean.log.strip() else None
        stated = parse_stated(clean.settings, clean.gpus)
        stated_image = _image_from_field(clean.image)
        image = (launch.image if launch is not None else None) or stated_image
        named = self._named_pages(clean)
        try:
            family = self._family(clean, named, launch, summary, image)
        except Exception:  # advice, not a verdict: a bug here costs the family, no more
            log.exception("triage: family resolution failed")
            family = None
        layers: list[tuple[str, Mapping[str, object]]] = []
        if launch is not None:
            layers.append(("launch", launch_settings(launch)))
        if summary is not None:
            layers.append(("log", _log_settings(summary)))
        layers.append(("stated", stated_settings(stated)))
        settings = Settings.merge(layers)
        completeness = assess(
            self.c.checklist,
            RequestFacts(
                model_page=clean.model_page,
                page_found=bool(named) or (family is not None and family.how == "page"),
                image_text=clean.image,
                image=image,
                command=clean.command,
                launch=launch,
                gpus=clean.gpus,
                settings=clean.settings,
                log_lines=_content_lines(clean.log),
                client=clean.client,
            ),
            self.t,
        )
        subject = Subject(
            log_settings=_log_settings(summary) if summary is not None else {},
            log_model=summary.model if summary is not None else None,
            wiki=self.c.wiki,
            launch=launch,
            command=clean.command,
            stated=stated,
            settings=settings,
            image=image,
            stated_image=stated_image,
            family=family,
            catalogue=self.c.catalogue,
            completeness=completeness,
        )
        wiki = self.c.wiki
        findings = [
            replace(f, page=_with_anchor(wiki, f.page)) if f.page else f
            for f in self.c.rules.evaluate(subject)
        ]
        known = [replace(k, page=_with_anchor(wiki, k.page)) for k in self._known_errors(clean)]
        try:
            suggestions, coverage = self._suggestions(
                clean, known, findings, family, summary, image
            )
        except Exception:
            log.exception("triage: suggestions failed")
            suggestions, coverage = [], 0.0
        confidence = _confidence(known, findings, family, suggestions, coverage)
        return TriageResult(
            redactions=redactions,
            launch=launch,
            findings=tuple(findings),
            known_errors=tuple(known),
            log_summary=summary,
            suggestions=tuple(suggestions),
            confidence=confidence,
            completeness=completeness,
            family=family,
            problems=tuple(self.problems),
        )

    # -- redaction first -----------------------------------------------------------

    def _redacted(
        self, request: TriageRequest | Mapping[str, Any]
    ) -> tuple[TriageRequest, tuple[Redaction, ...]]:
        if isinstance(request, TriageRequest):
            typed, codes = request, ()
        else:
            typed, codes = TriageRequest.from_mapping(request)
        raw: dict[str, object] = {}
        for name in FIELDS:
            value = getattr(typed, name)
            value = value if isinstance(value, str) else _as_text(value)
            limit = MAX_LOG_CHARS if name == "log" else MAX_FIELD_CHARS
            value, cut = _cut(value, limit, keep_end=name == "log")
            if cut:
                self.problems.append(self.t("problems.field_cut", field=name, limit=limit))
            raw[name] = value
        redacted, reports = redact_fields(raw)
        for code in codes:
            kind, _, key = code.partition(":")
            shown = redact_fields({"k": key})[0]["k"]
            self.problems.append(self.t(f"problems.{kind}", field=shown))
        clean = TriageRequest(**{name: str(redacted.get(name, "")) for name in FIELDS})
        return clean, reports

    # -- family ----------------------------------------------------------------------

    def _named_pages(self, request: TriageRequest) -> list[str]:
        """Wiki pages the page field names (a path, URL, file stem or title), then pages
        whose path the free text mentions."""
        found: list[str] = []
        wiki = self.c.wiki
        named = request.model_page.strip()[:2000]
        for text in (named, request.text[:20_000]):
            for m in _MD_PATH_RE.finditer(text):
                path = _resolve_path(wiki, m.group(0))
                if path is not None and path not in found:
                    found.append(path)
        if named and not found:
            key = fold_key(named.split("#", 1)[0][:200])
            for path, page in wiki.pages.items():
                names = (
                    path.rsplit("/", 1)[-1].removesuffix(".md"),
                    page.title,
                    page.title.split(":", 1)[0],
                )
                if key and any(key == fold_key(name) for name in names):
                    found.append(path)
                    break
        return found

    def _family(
        self,
        request: TriageRequest,
        named: Sequence[str],
        launch: Launch | None,
        summary: LogSummary | None,
        image: ImageRef | None,
    ) -> FamilyInfo | None:
        catalogue = self.c.catalogue
        if catalogue is None or not self.c.families:
            return None
        for path in named:
            owners = [f for f in self.c.families if path in f.pages]
            owners.sort(key=lambda f: (f.family.group != "main", f.family.hub == path))
            if owners:
                return self._info(owners[0].family, "page", path)
        models: set[str] = set()
        for source in (
            (launch.model if launch else None, launch.hf_model_id if launch else None),
            (summary.model if summary else None,),
        ):
            keys: set[str] = set()
            for model in source:
                keys |= _model_keys(model)
            models |= keys
            owners = [f for f in self.c.families if f.models & keys] if keys else []
            if len(owners) == 1:
                return self._info(owners[0].family, "model", None)
        if image is not None and image.tag:
            ref = f"{image.repository}:{image.tag}"
            owners = [
                f
                for f in self.c.families
                if any(ref in _page_code(self.c.wiki.pages.get(p)) for p in f.pages)
            ]
            if len(owners) == 1:
                return self._info(owners[0].family, "image", None)
        named_family = _family_named_in(self.c.families, request)
        if named_family is not None:
            return self._info(named_family, "name", None)
        for query in (request.model_page, *(sorted(models, key=len, reverse=True)[:2])):
            query = query.strip()[:100]
            if not query:
                continue
            match = catalogue.match(query)
            if match.family is not None and not match.ambiguous:
                return self._info(match.family, "name", None)
        return None

    def _info(self, family: Family, how: str, named: str | None) -> FamilyInfo | None:
        catalogue = self.c.catalogue
        if catalogue is None:
            return None
        runbook = catalogue.runbook(family)
        return FamilyInfo(family=family, runbook=runbook, how=how, named_page=named)

    # -- known errors ------------------------------------------------------------------

    def _known_errors(self, request: TriageRequest) -> list[KnownErrorMatch]:
        matches: list[KnownErrorMatch] = []
        seen: set[str] = set()
        sources = (
            ("log", request.log, True),
            ("client", request.client, True),
            ("text", "\n".join(filter(None, (request.text, request.actual, request.tried))), False),
        )
        for name, text, is_log in sources:
            if not text.strip():
                continue
            for match in self.c.known_errors.match(text, name, is_log=is_log):
                if match.page not in seen:
                    seen.add(match.page)
                    matches.append(match)
        matches.sort(key=lambda m: -m.score)
        return matches

    # -- suggestions ---------------------------------------------------------------------

    def _title(self, path: str, anchor: str | None) -> str:
        page = self.c.wiki.pages.get(path)
        if page is None:
            return path
        section = page.section(anchor) if anchor else None
        if section is None or section.title == page.title:
            return page.title
        return f"{page.title} › {section.title}"

    def _suggestions(
        self,
        request: TriageRequest,
        known: Sequence[KnownErrorMatch],
        findings: Sequence[Finding],
        family: FamilyInfo | None,
        summary: LogSummary | None,
        image: ImageRef | None,
    ) -> tuple[list[Suggestion], float]:
        candidates: dict[str, _Candidate] = {}

        def add(ref: str, score: float, why: str, title: str | None = None) -> None:
            ref = _with_anchor(self.c.wiki, ref)
            path, _, anchor = ref.partition("#")
            if path not in self.c.wiki.pages:
                return
            cand = candidates.get(ref)
            if cand is None:
                cand = candidates[ref] = _Candidate(ref, title or self._title(path, anchor or None))
            cand.add(score, why)

        for match in known:
            if match.lines and match.field != "text":
                why = self.t("why.known_error", field=match.field, line=match.lines[0].number)
            else:
                why = self.t("why.known_error_text", field=match.field)
            add(match.page, match.score, why, match.title)
        if family is not None:
            rb = family.runbook
            ref = f"{rb.page}#{rb.launch_anchor}" if rb.launch_anchor else rb.page
            strength = 0.55 if family.how in ("page", "model", "image") else 0.4
            add(ref, strength, self.t("why.runbook", family=family.family.name))
            if family.named_page and family.named_page != rb.page:
                add(family.named_page, 0.3, self.t("why.named_page"))
        weights = {"error": 0.5, "warning": 0.4, "info": 0.15}
        for finding in findings:
            if finding.page and not finding.id.startswith("checklist."):
                add(
                    finding.page,
                    weights.get(finding.severity, 0.15),
                    self.t("why.finding", id=finding.id),
                )
        coverage = 0.0
        symptoms = " ".join(filter(None, (request.actual, request.text, request.expected)))
        if symptoms.strip():
            coverage = self._search(symptoms, 0.5, "symptoms", add)
        if summary is not None and summary.first_error and not known:
            self._search(summary.first_error, 0.45, "first_error", add)
        if image is not None and image.tag:
            for ref in self._image_sections(image):
                add(ref, 0.25, self.t("why.image"))
        ranked = sorted(candidates.values(), key=lambda c: (-c.score, c.page))
        suggestions = [
            Suggestion(c.page, c.title, tuple(c.why), c.score)
            for c in ranked[:MAX_SUGGESTIONS]
            if c.score > 0.0
        ]
        return suggestions, coverage

    def _image_sections(self, image: ImageRef, limit: int = 3) -> list[str]:
        """Sections whose code names exactly this image (repository and tag), current first."""
        ref = f"{image.repository}:{image.tag}"
        found: list[tuple[float, str]] = []
        for page in self.c.wiki.pages.values():
            for section in page.sections:
                if any(ref in block.text for block in section.code):
                    rank = -status_weight(self.c.statuses.get(page.path))
                    found.append((rank, f"{page.path}#{section.anchor}"))
                    break
        found.sort()
        return [ref for _, ref in found[:limit]]

    def _search(self, text: str, weight: float, reason: str, add: Callable[..., None]) -> float:
        """Run ``text``'s telling words through the index; add the hits; return the top
        hit's share of the query terms."""
        if self.c.search is None:
            return 0.0
        query = _focused_query(text, self.c.word_sections, QUERY_WORDS)[:QUERY_CHARS]
        if not query:
            return 0.0
        try:
            results = self.c.search(query, limit=MAX_SUGGESTIONS)
        except Exception:  # the index is advice too
            log.exception("triage search failed")
            return 0.0
        if results is None or not results.hits:
            return 0.0
        terms = _terms(text[:4000])  # fit is judged against everything the user wrote
        top = results.hits[0].score or 1.0
        best = 0.0
        for hit in results.hits:
            covered, shared = _coverage(terms, self.c.wiki, hit.path, hit.anchor)
            if len(shared) < MIN_SHARED_TERMS and covered < 0.5:
                continue  # a word or two in common is no reason to read a page
            if len(shared) >= MIN_SHARED_TERMS:
                best = max(best, covered)
            relative = (hit.score / top) if top > 0 else 0.0
            score = weight * relative * (0.35 + 0.65 * covered)
            if reason == "symptoms":
                words = _words_for(text[:4000], shared)[:5]
                why = self.t("why.symptoms", terms=", ".join(words) or query[:40])
            else:
                why = self.t(f"why.{reason}")
            add(hit.id, score, why, _hit_title(hit.page_title, hit.section_title))
        return best


def _family_named_in(families: Sequence[_FamilyFacts], request: TriageRequest) -> Family | None:
    """The one family whose name the page field or the free text spells out (longest wins)."""
    text = " " + fold_key(" ".join((request.model_page[:500], request.text[:4000]))) + " "
    found: list[tuple[int, Family]] = []
    for facts in families:
        name = fold_key(facts.family.name)
        if name and f" {name} " in text:
            found.append((len(name), facts.family))
    if not found:
        return None
    found.sort(key=lambda item: -item[0])
    if len(found) > 1 and found[0][0] == found[1][0]:
        return None
    return found[0][1]


def _hit_title(page: str, section: str) -> str:
    return page if not section or section == page else f"{page} › {section}"


def _terms(text: str) -> list[str]:
    analyze = make_term_analyzer()
    return list(dict.fromkeys(analyze(text)))[:MAX_TERMS]


def _coverage(terms: Sequence[str], wiki: Wiki, path: str, anchor: str) -> tuple[float, list[str]]:
    if not terms:
        return 0.0, []
    page = wiki.pages.get(path)
    section = page.section(anchor) if page is not None else None
    if section is None:
        return 0.0, []
    analyze = make_term_analyzer()
    text = " ".join((page.title if page else "", section.title, section.text[:20_000]))
    present = set(analyze(text))
    shared = [t for t in terms if t in present and t not in STOP]
    return len(shared) / len(terms), shared


def _words_for(query: str, stems: Sequence[str]) -> list[str]:
    """The user's own words behind analysed ``stems``, in query order."""
    wanted = set(stems)
    analyze = make_term_analyzer()
    words: list[str] = []
    for word in re.findall(r"[^\W_]+", query)[:200]:
        if any(t in wanted for t in analyze(word)) and word.casefold() not in words:
            words.append(word.casefold())
    return words


def _confidence(
    known: Sequence[KnownErrorMatch],
    findings: Sequence[Finding],
    family: FamilyInfo | None,
    suggestions: Sequence[Suggestion],
    coverage: float,
) -> str:
    if not suggestions:
        return "none"
    if any(k.kind in ("error", "message", "last-line") for k in known):
        return "high"
    if any(f.severity == "error" and f.page for f in findings):
        return "high"
    if known or (family is not None and family.how != "name") or coverage >= 0.75:
        return "medium"
    return "low"


def _with_anchor(wiki: Wiki, ref: str) -> str:
    """``path#anchor`` for a reference; a bare page path gets its first heading's anchor."""
    if "#" in ref:
        return ref
    page = wiki.pages.get(ref)
    anchor = next((s.anchor for s in page.sections if s.anchor), None) if page else None
    return f"{ref}#{anchor}" if anchor else ref


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


def _image_from_field(text: str) -> ImageRef | None:
    digest = SHA256_DIGEST_RE.search(text[:4096])
    for word in text[:4096].replace(",", " ").split():
        word = word.strip("`'\"()[]<>")
        if "/" not in word and ":" not in word:
            continue
        if word.startswith("sha256:"):
            continue
        ref = parse_image(word)
        if ref is not None:
            if ref.digest is None and digest is not None:
                ref = ImageRef(ref.raw, ref.registry, ref.repository, ref.tag, digest.group(0))
            return ref
    return None


def _log_settings(summary: LogSummary) -> dict[str, object]:
    return dict(summary.parallel_settings())


def _content_lines(text: str) -> int:
    if not text:
        return 0
    return sum(1 for line in text.split("\n") if line.strip())


# --------------------------------------------------------------------- rendering


def render_text(result: TriageResult, templates: Templates | None = None) -> str:
    """The result as plain text for a terminal, worded by ``templates/triage.yaml``."""
    t = templates or load_templates("triage.yaml")
    out: list[str] = [t("heading"), t(f"confidence.{result.confidence}"), ""]

    def section(key: str, lines: list[str]) -> None:
        out.append(f"## {t(f'sections.{key}')}")
        out.extend(lines)
        out.append("")

    if result.redactions:
        section(
            "redactions",
            [t("redaction", count=r.count, kind=r.kind, field=r.field) for r in result.redactions],
        )
    if result.problems:
        section("problems", [t("problem", problem=p) for p in result.problems])
    if result.family is not None:
        info = result.family
        section(
            "family",
            [
                t(
                    "family",
                    family=info.family.name,
                    runbook=info.runbook.page,
                    how=t(f"family_how.{info.how}"),
                )
            ],
        )
    section("launch", _launch_lines(result.launch, t))
    findings: list[str] = []
    for f in result.findings:
        findings.append(t("finding", severity=f.severity, message=f.message))
        findings.extend(t("finding_evidence", evidence=e) for e in f.evidence)
        if f.page:
            findings.append(t("finding_page", page=f.page))
    section("findings", findings or [t("no_findings")])
    known: list[str] = []
    for k in result.known_errors:
        known.append(t("known_error", title=k.title, page=k.page))
        known.extend(t("known_error_line", number=ln.number, text=ln.text) for ln in k.lines)
        known.append(t("known_error_fix", fix=k.fix) if k.fix else t("known_error_no_fix"))
    section("known_errors", known or [t("no_known_errors")])
    section("log_summary", _log_lines(result.log_summary, t))
    suggestions: list[str] = []
    for rank, s in enumerate(result.suggestions, 1):
        suggestions.append(
            t("suggestion", rank=rank, title=s.title, page=s.page, score=f"{s.score:.2f}")
        )
        suggestions.extend(t("suggestion_why", why=w) for w in s.why)
    section("suggestions", suggestions or [t("no_suggestions")])
    items = [
        t(
            "completeness_item",
            status=t(f"status.{i.status}"),
            label=i.label,
            detail=t("completeness_detail", detail=i.detail) if i.detail else "",
        )
        for i in result.completeness.items
    ]
    source = result.completeness.source
    items.append(t("completeness_source", source=source) if source else t("completeness_builtin"))
    section("completeness", items)
    return "\n".join(out).rstrip() + "\n"


def _launch_lines(launch: Launch | None, t: Templates) -> list[str]:
    if launch is None:
        return [t("no_launch")]
    lines = [t("launch.kind", kind=launch.kind)]
    if launch.image is not None:
        lines.append(t("launch.image", image=launch.image.raw))
    if launch.model:
        lines.append(t("launch.model", model=launch.model))
    if launch.engine:
        lines.append(t("launch.engine", engine=launch.engine))
    parallel = _parallel_text(launch.tp, launch.dcp, launch.dp, launch.pp)
    if parallel:
        lines.append(t("launch.parallel", parallel=parallel))
    if launch.spec_tokens:
        lines.append(t("launch.spec", method=launch.spec_method or "?", tokens=launch.spec_tokens))
    if launch.gpus is not None:
        gpus = launch.gpus if isinstance(launch.gpus, str) else ",".join(map(str, launch.gpus))
        lines.append(t("launch.gpus", gpus=gpus))
    lines.extend(t("launch.problem", problem=p) for p in launch.problems)
    return lines


def _parallel_text(tp: object, dcp: object, dp: object, pp: object) -> str:
    parts = [
        f"{name}={value}"
        for name, value in (("TP", tp), ("DCP", dcp), ("DP", dp), ("PP", pp))
        if value is not None
    ]
    return " ".join(parts)


def _log_lines(summary: LogSummary | None, t: Templates) -> list[str]:
    if summary is None:
        return [t("no_log")]
    lines = []
    if summary.engine:
        lines.append(t("log.engine", engine=summary.engine, version=summary.version or ""))
    if summary.model:
        lines.append(t("log.model", model=summary.model))
    parallel = _parallel_text(summary.tp, summary.dcp, summary.dp, summary.pp)
    if parallel:
        lines.append(t("log.parallel", parallel=parallel))
    if summary.attention_backend or summary.moe_backend:
        lines.append(
            t(
                "log.backends",
                attention=summary.attention_backend or "?",
                moe=summary.moe_backend or "?",
            )
        )
    if summary.kv_cache_tokens is not None:
        lines.append(t("log.kv", tokens=f"{summary.kv_cache_tokens:,}"))
    lines.append(t("log.ready") if summary.server_ready else t("log.not_ready"))
    if summary.first_error:
        lines.append(
            t("log.first_error", line=summary.first_error_line or "?", error=summary.first_error)
        )
    if summary.last_traceback is not None and summary.last_traceback.exception:
        lines.append(t("log.traceback", exception=summary.last_traceback.exception))
    return lines
