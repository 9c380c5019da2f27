"""Rules applied to a request: load the rule files, bind them to a wiki, evaluate.

``RuleSet.load()`` reads every rule file (see :mod:`knowledge.triage.rules.schema`);
``bind(wiki, statuses, templates)`` resolves each rule's justifying wiki section once
per loaded wiki; ``BoundRules.evaluate(subject)`` returns the findings for one
request, errors first. Generic shapes are evaluated here, coded checks in
:mod:`knowledge.triage.rules.checks`. Rules never see raw secrets: the request is
redacted before it is parsed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Final

from knowledge.templates import Templates, load_templates
from knowledge.triage.rules.checks import CHECKS, Evidence, RuleHit
from knowledge.triage.rules.schema import (
    ENV_SHAPES,
    SEVERITIES,
    Condition,
    Rule,
    parse_rules,
    shown,
)
from knowledge.triage.rules.subject import PageMemo, Subject
from knowledge.wiki import Page, Section, Wiki, status_weight

__all__ = ["MAX_HITS_PER_RULE", "BoundRules", "Finding", "RuleSet"]

log = logging.getLogger(__name__)

#: Most findings one rule may produce for one request.
MAX_HITS_PER_RULE: Final = 8


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a helper would point out about the request."""

    id: str
    severity: str
    message: str
    #: ``path#anchor`` of the wiki section that justifies it, or None.
    page: str | None = None
    evidence: tuple[str, ...] = ()
    #: The coded check that found it (``check:`` of its rule), None for a generic rule.
    check: str | None = None


@dataclass(frozen=True, slots=True)
class RuleSet:
    rules: tuple[Rule, ...]

    @classmethod
    def load(cls, directory: Path | None = None) -> RuleSet:
        """Every ``*.yaml`` in ``directory`` (default: the bundled rule files)."""
        files: list[tuple[str, str]] = []
        if directory is None:
            folder = resources.files("knowledge.triage.rules")
            for item in sorted(folder.iterdir(), key=lambda p: p.name):
                if item.name.endswith(".yaml"):
                    files.append((item.name, item.read_text(encoding="utf-8")))
        else:
            for path in sorted(Path(directory).glob("*.yaml")):
                files.append((path.name, path.read_text(encoding="utf-8")))
        return cls.from_texts(files)

    @classmethod
    def from_texts(cls, files: Sequence[tuple[str, str]]) -> RuleSet:
        """Rules from ``(file name, YAML text)`` pairs; :class:`RuleError` when one is bad."""
        return cls(parse_rules(files))

    def bind(
        self,
        wiki: Wiki,
        statuses: Mapping[str, str] | None = None,
        templates: Templates | None = None,
    ) -> BoundRules:
        """Resolve every rule's justification against ``wiki`` once; evidence is worded
        by ``templates`` (default ``templates/triage.yaml``)."""
        finder = _TopicFinder(wiki, statuses or {})
        pages = {rule.id: finder.resolve(rule.see, rule.topic) for rule in self.rules}
        return BoundRules(self.rules, pages, templates or load_templates("triage.yaml"))


@dataclass(frozen=True, slots=True)
class BoundRules:
    rules: tuple[Rule, ...]
    #: rule id -> ``path#anchor`` justifying it in the bound wiki, or None.
    pages: Mapping[str, str | None]
    templates: Templates
    #: What the checks read from the bound wiki's pages, kept for every request on it
    #: (``Subject.memo``).
    memo: PageMemo = field(default_factory=PageMemo, compare=False, repr=False)

    def evaluate(self, subject: Subject) -> list[Finding]:
        """Every finding for ``subject``, errors first. A failing rule is logged, not raised."""
        findings: list[Finding] = []
        for rule in self.rules:
            try:
                hits = _run(rule, subject)
                worded = [self._worded(rule, hit) for hit in hits[:MAX_HITS_PER_RULE]]
            except Exception:  # one broken check must not take the triage down
                log.exception("rule %s failed", rule.id)
                continue
            for hit, (values, evidence) in zip(hits, worded, strict=False):
                findings.append(
                    Finding(
                        id=f"{rule.id}.{hit.suffix}" if hit.suffix else rule.id,
                        severity=rule.severity,
                        message=rule.text(hit.variant, values),
                        page=hit.page or self._page(rule, subject),
                        evidence=evidence,
                        check=rule.check,
                    )
                )
        order = {s: i for i, s in enumerate(SEVERITIES)}
        findings.sort(key=lambda f: order.get(f.severity, len(order)))
        return findings

    def _worded(self, rule: Rule, hit: RuleHit) -> tuple[dict[str, object], tuple[str, ...]]:
        """The hit's message values and evidence lines, :class:`Evidence` worded."""

        def word(item: object) -> object:
            if isinstance(item, Evidence):
                return self.templates(f"evidence.{rule.check}.{item.key}", **item.values)
            if isinstance(item, tuple) and item and isinstance(item[0], Evidence):
                return str(self.templates.raw("evidence.joiner")).join(str(word(i)) for i in item)
            return item

        values = {key: word(value) for key, value in hit.values.items()}
        return values, tuple(shown(word(e)) for e in hit.evidence)

    def _page(self, rule: Rule, subject: Subject) -> str | None:
        if rule.params.get("justify") == "checklist" and subject.completeness is not None:
            return subject.completeness.source or self.pages.get(rule.id)
        return self.pages.get(rule.id)


def _run(rule: Rule, subject: Subject) -> list[RuleHit]:
    if rule.check is not None:
        return list(CHECKS[rule.check](subject, rule.params))
    values: dict[str, object] = {}
    evidence: list[str] = []
    for condition in rule.conditions:
        result = _holds(condition, subject)
        if result is None:
            return []
        for key, value in result[0].items():
            values.setdefault(key, value)
        evidence.extend(result[1])
    return [RuleHit(values=values, evidence=tuple(evidence))]


# ------------------------------------------------------------ generic shapes


def _env_hit(env: Mapping[str, str], names: Sequence[str]) -> tuple[str, str] | None:
    for name in names:
        if name in env:
            return name, env[name]
    folded = {k.casefold(): k for k in env}
    for name in names:
        key = folded.get(name.casefold())
        if key is not None:
            return key, env[key]
    return None


def _flag_hit(
    flags: Mapping[str, str | bool], names: Sequence[str]
) -> tuple[str, str | bool] | None:
    for name in names:
        key = name.lstrip("-")
        head, dot, tail = key.partition(".")
        key = head.replace("_", "-") + dot + tail
        if key in flags:
            return key, flags[key]
    return None


def _as_number(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(str(value).strip().strip("\"'"))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _out_of_range(number: float, condition: Condition) -> bool:
    return (condition.min is not None and number < condition.min) or (
        condition.max is not None and number > condition.max
    )


def _holds(c: Condition, s: Subject) -> tuple[dict[str, object], list[str]] | None:
    """(values, evidence) when the condition holds for the subject, else None."""
    launch = s.launch
    if c.shape == "engine":
        engine = (launch.engine or "") if launch else ""
        return ({"engine": engine}, []) if engine.casefold() in c.values else None
    if c.shape == "launch_kind":
        kind = launch.kind if launch else ""
        return ({"kind": kind}, []) if kind.casefold() in c.values else None
    if launch is None:
        return None
    if c.shape in ENV_SHAPES:
        hit = _env_hit(launch.env, c.names)
        if c.shape == "env_unset":
            return ({"name": c.names[0]}, []) if hit is None else None
        if hit is None:
            return None
        name, value = hit
        evidence = [f"{name}={value!r}" if value == "" else f"{name}={value}"]
        base: dict[str, object] = {"name": name, "value": value}
        if c.shape == "env_empty":
            return (base, evidence) if value.strip().strip("\"'") == "" else None
        if c.shape == "env_set":
            return base, evidence
        if c.shape == "env_equals":
            return (base, evidence) if value.strip().casefold() in c.values else None
        number = _as_number(value)
        if number is None or not _out_of_range(number, c):
            return None
        return {**base, "min": c.min, "max": c.max}, evidence
    flag = _flag_hit(launch.flags, c.names)
    if c.shape == "flag_absent":
        return ({"name": c.names[0]}, []) if flag is None and launch.command else None
    if flag is None:
        return None
    name, value = flag
    evidence = [f"--{name}" if value is True else f"--{name} {value}"]
    base = {"name": name, "value": "" if value is True else value}
    if c.shape == "flag_present":
        return base, evidence
    if c.shape == "flag_equals":
        text = "true" if value is True else str(value).strip().strip("\"'").casefold()
        return (base, evidence) if text in c.values else None
    number = _as_number(value)
    if number is None or not _out_of_range(number, c):
        return None
    return {**base, "min": c.min, "max": c.max}, evidence


# ------------------------------------------------------------ justification


#: Labelled paragraphs that make a section a statement about a problem and its fix.
_JUSTIFYING_LABELS: Final = ("error", "symptom", "symptoms", "cause", "fix", "workaround")
#: Justification points per unit of page-status weight above or below a neutral page.
_STATUS_POINTS: Final = 5.0


class _TopicFinder:
    """Finds the wiki section that best justifies a rule: by reference or by topic.

    A topic matches sections whose title or prose (not code: a justification is a
    statement, not a command) holds every topic word, case-insensitively, and that
    are about it: a topic word in the title, an Error/Cause/Fix paragraph, or a
    top-level page (the front page, the glossary). Otherwise the rule links nothing.
    """

    def __init__(self, wiki: Wiki, statuses: Mapping[str, str]) -> None:
        self.wiki = wiki
        self.statuses = statuses
        self._folded: list[tuple[Page, Section, str, str]] | None = None

    def resolve(self, see: Sequence[str], topic: Sequence[str]) -> str | None:
        for ref in see:
            path, _, anchor = ref.partition("#")
            page = self.wiki.pages.get(path)
            if page is not None and (not anchor or page.section(anchor) is not None):
                return f"{path}#{anchor}" if anchor else path
        if topic:
            return self.best(topic)
        return None

    def _sections(self) -> list[tuple[Page, Section, str, str]]:
        if self._folded is None:
            self._folded = [
                (page, section, section.title.casefold(), section.text.casefold())
                for page in self.wiki.pages.values()
                for section in page.sections
            ]
        return self._folded

    def best(self, topic: Sequence[str]) -> str | None:
        words = [w.casefold() for w in topic if w.strip()]
        if not words:
            return None
        best: tuple[float, str] | None = None
        for page, section, title, text in self._sections():
            if not all(w in title or w in text for w in words):
                continue
            in_title = sum(w in title for w in words)
            labelled = section.label(*_JUSTIFYING_LABELS) is not None
            top_level = "/" not in page.path
            if not (in_title or labelled or top_level):
                continue  # a passing mention deep in some page justifies nothing
            score = 3.0 * in_title
            if labelled:
                score += 2.0
            # +1 for a current page down to -1.5 for an archived one
            score += _STATUS_POINTS * (status_weight(self.statuses.get(page.path)) - 1.0)
            if top_level:
                score += 1.0  # the front page and the wiki's own guides
            score -= min(len(text), 20_000) / 20_000  # a focused section beats a long one
            if best is None or score > best[0]:
                best = (score, f"{page.path}#{section.anchor}" if section.anchor else page.path)
        return best[1] if best else None
