"""Triage a help request against the wiki: what a good helper would say in the first minute.

``triage(context, request)`` takes what a user gives the onboarding checklist (free
text, runbook page, image, GPU layout and settings, launch command, client command,
logs) and returns a :class:`TriageResult`:

1. **redactions**: secrets are removed from every field before anything else reads
   it (``redact.redact_fields``); only kind, field and count are kept.
2. **launch**: the launch command parsed by ``launch.parse_launch``.
3. **findings**: rules kept as data plus checks against the wiki (``rules``).
4. **known_errors**: the wiki's ``**Error**`` sections whose signatures appear in the
   log, the free text or the client output (``known_errors``).
5. **log_summary**: ``logs.summarise_log`` of the log.
6. **suggestions**: the best section of the best wiki pages for the whole request,
   each with why (``suggest``, which reads the request's words with the page ranker
   behind ``/search``), and an overall **confidence** (``confidence``).
7. **completeness**: the onboarding checklist item by item (``onboarding``).

A :class:`TriageContext` holds everything prepared from one loaded wiki; the
knowledge base builds it once per load (``KnowledgeBase.triage_context``). The
result's ``to_json`` is the ``wikibot triage --json`` object;
``knowledge.answers.triage`` words it as a reply. Nothing here raises on any input.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from knowledge.jsonable import to_jsonable
from knowledge.launch import SHA256_DIGEST_RE, ImageRef, Launch, parse_image, parse_launch
from knowledge.search.pages import PageRanker
from knowledge.templates import Templates, load_templates
from knowledge.triage.confidence import confidence
from knowledge.triage.family import FamilyFinder, FamilyInfo
from knowledge.triage.known_errors import KnownErrorMatch, KnownErrors, MatchedLine
from knowledge.triage.logs import LogSummary, summarise_log
from knowledge.triage.onboarding import (
    Checklist,
    Completeness,
    RequestFacts,
    assess,
    load_checklist,
)
from knowledge.triage.redact import Redaction, redact_fields
from knowledge.triage.request import FIELDS, LogPart, TriageRequest, capped, field_limit
from knowledge.triage.rules import (
    BoundRules,
    Finding,
    RuleSet,
    Settings,
    Subject,
    launch_settings,
    parse_stated,
    stated_settings,
)
from knowledge.triage.suggest import Searcher, Suggested, Suggester, Suggestion, with_anchor
from knowledge.wiki import Catalogue, Wiki, find_front_page

__all__ = ["TriageContext", "TriageResult", "triage"]

log = logging.getLogger(__name__)

#: Characters of the image field read.
_IMAGE_FIELD_CHARS: Final = 4096


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


@dataclass(frozen=True, slots=True)
class TriageContext:
    """Everything triage needs from one loaded wiki, prepared once."""

    wiki: Wiki
    catalogue: Catalogue | None
    known_errors: KnownErrors
    rules: BoundRules
    checklist: Checklist
    templates: Templates
    families: FamilyFinder
    suggester: Suggester

    @classmethod
    def build(
        cls,
        wiki: Wiki,
        catalogue: Catalogue | None = None,
        search: Searcher | None = None,
        *,
        rules: RuleSet | None = None,
        templates: Templates | None = None,
        ranker: PageRanker | None = None,
    ) -> TriageContext:
        """Prepare ``wiki`` (its catalogue, the index's ``search`` and the page
        ``ranker`` when given)."""
        catalogue = catalogue if catalogue is not None else Catalogue.from_wiki(wiki)
        templates = templates or load_templates("triage.yaml")
        statuses = dict(catalogue.statuses()) if catalogue.families else {}
        return cls(
            wiki=wiki,
            catalogue=catalogue,
            known_errors=KnownErrors.from_wiki(wiki),
            rules=(rules or RuleSet.load()).bind(wiki, statuses, templates),
            checklist=load_checklist(wiki, find_front_page(wiki), templates),
            templates=templates,
            families=FamilyFinder.build(wiki, catalogue),
            suggester=Suggester.build(wiki, templates, search, statuses, ranker),
        )

    def run(
        self,
        request: TriageRequest | Mapping[str, Any],
        *,
        known_clean: Callable[[str], bool] | None = None,
    ) -> TriageResult:
        """Triage one request. Never raises on any text in any field."""
        return triage(self, request, known_clean=known_clean)


def triage(
    context: TriageContext,
    request: TriageRequest | Mapping[str, Any],
    *,
    known_clean: Callable[[str], bool] | None = None,
) -> TriageResult:
    """Triage ``request`` (typed, or a YAML/JSON mapping) with a prepared ``context``.

    ``known_clean`` (see ``redact_fields``) names the field texts already redacted, as
    they are (the support desk's drafts): those are not scanned again."""
    t = context.templates
    clean, redactions, problems = _redacted(request, t, known_clean)
    launch = parse_launch(clean.command) if clean.command.strip() else None
    summary = summarise_log(clean.log) if clean.log.strip() else None
    if summary is not None:
        summary = _numbered_as_in_log(summary, clean.log_part)
    stated = parse_stated(clean.settings, clean.gpus)
    stated_image = _image_from_field(clean.image)
    image = (launch.image if launch is not None else None) or stated_image
    named = context.families.named_pages(clean.model_page, clean.text)
    try:
        family = context.families.find(
            page_field=clean.model_page,
            text=clean.text,
            named=named,
            launch=launch,
            log_model=summary.model if summary is not None else None,
            image=image,
        )
    except Exception:  # advice, not a verdict: a bug here costs the family, no more
        log.exception("triage: family resolution failed")
        family = None
    log_layer = summary.parallel_settings() if summary is not None else {}
    layers: list[tuple[str, Mapping[str, object]]] = []
    if launch is not None:
        layers.append(("launch", launch_settings(launch)))
    if summary is not None:
        layers.append(("log", log_layer))
    layers.append(("stated", stated_settings(stated)))
    completeness = assess(
        context.checklist,
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
        t,
    )
    subject = Subject(
        wiki=context.wiki,
        launch=launch,
        command=clean.command,
        stated=stated,
        settings=Settings.merge(layers),
        image=image,
        stated_image=stated_image,
        family=family,
        catalogue=context.catalogue,
        completeness=completeness,
        log_settings=log_layer,
        log_model=summary.model if summary is not None else None,
        memo=context.rules.memo,
    )
    wiki = context.wiki
    findings = tuple(
        replace(f, page=with_anchor(wiki, f.page)) if f.page else f
        for f in context.rules.evaluate(subject)
    )
    known = tuple(
        replace(k, page=with_anchor(wiki, k.page), lines=_lines_as_in_log(k, clean.log_part))
        for k in _known_errors(context, clean)
    )
    try:
        suggested = context.suggester.suggest(clean, known, findings, family, summary, image)
    except Exception:
        log.exception("triage: suggestions failed")
        suggested = Suggested(())
    return TriageResult(
        redactions=redactions,
        launch=launch,
        findings=findings,
        known_errors=known,
        log_summary=summary,
        suggestions=suggested.suggestions,
        confidence=confidence(known, findings, family, suggested),
        completeness=completeness,
        family=family,
        problems=problems,
    )


def _redacted(
    request: TriageRequest | Mapping[str, Any],
    t: Templates,
    known_clean: Callable[[str], bool] | None = None,
) -> tuple[TriageRequest, tuple[Redaction, ...], tuple[str, ...]]:
    """The capped request with every secret removed, what was removed, worded problems."""
    typed, codes = capped(request)
    redacted, reports = redact_fields(typed.texts(), known_clean=known_clean)
    problems = []
    for code in codes:
        kind, _, key = code.partition(":")
        shown = redact_fields({"k": key})[0]["k"]  # an unknown key may be a secret too
        problems.append(t(f"problems.{kind}", field=shown, limit=field_limit(key)))
    part = typed.log_part
    clean = TriageRequest(**{name: str(redacted.get(name, "")) for name in FIELDS}, log_part=part)
    if part.cut:
        problems.insert(0, _part_read(part, t))
    return clean, reports, tuple(problems)


def _part_read(part: LogPart, t: Templates) -> str:
    """Which part of a long log was read, as one sentence."""
    values = {"skipped": part.skipped, "unit": part.unit, "total": part.total or part.skipped}
    if part.first_line is None:
        return t("problems.log_part_unnumbered", **values)
    return t("problems.log_part", first=part.first_line, **values)


def _numbered_as_in_log(summary: LogSummary, part: LogPart) -> LogSummary:
    """``summary`` of the part read, its line numbers those of the whole log."""
    offset = part.offset
    if not offset and not part.cut:
        return summary
    traceback = summary.last_traceback
    return replace(
        summary,
        first_line=offset + 1,
        first_error_line=(
            summary.first_error_line + offset if summary.first_error_line is not None else None
        ),
        last_traceback=(
            replace(traceback, line=traceback.line + offset) if traceback is not None else None
        ),
    )


def _lines_as_in_log(match: KnownErrorMatch, part: LogPart) -> tuple[MatchedLine, ...]:
    if match.field != "log" or not part.offset:
        return match.lines
    return tuple(replace(line, number=line.number + part.offset) for line in match.lines)


def _known_errors(context: TriageContext, request: TriageRequest) -> list[KnownErrorMatch]:
    matches: list[KnownErrorMatch] = []
    seen: set[str] = set()
    free_text = "\n".join(filter(None, (request.text, request.actual, request.tried)))
    sources = (
        ("log", request.log, True),
        ("client", request.client, True),
        ("text", free_text, False),
    )
    for name, text, is_log in sources:
        if not text.strip():
            continue
        for match in context.known_errors.match(text, name, is_log=is_log):
            if match.page not in seen:
                seen.add(match.page)
                matches.append(match)
    matches.sort(key=lambda m: -m.score)
    return matches


def _image_from_field(text: str) -> ImageRef | None:
    """The first image reference in the image field, with a digest given beside it."""
    head = text[:_IMAGE_FIELD_CHARS]
    digest = SHA256_DIGEST_RE.search(head)
    for word in head.replace(",", " ").split():
        word = word.strip("`'\"()[]<>")
        if ("/" not in word and ":" not in word) or word.startswith("sha256:"):
            continue
        ref = parse_image(word)
        if ref is not None:
            if ref.digest is None and digest is not None:
                ref = ImageRef(ref.raw, ref.registry, ref.repository, ref.tag, digest.group(0))
            return ref
    return None


def _content_lines(text: str) -> int:
    if not text:
        return 0
    return sum(1 for line in text.split("\n") if line.strip())
