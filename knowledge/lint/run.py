"""Run the checks on a loaded wiki, word the findings, and print them.

:data:`CHECKS` names each check (``--only`` takes these names) with its rules;
:func:`lint_wiki` runs them on a :class:`~knowledge.wiki.Wiki` with its glossary
and catalogue (a knowledge base's state, or a wiki loaded for the purpose) and
words every finding by ``templates/lint.yaml``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from knowledge.lint import _glossary, _hubs, _links, _orphans, _runbooks, _troubleshooting
from knowledge.lint._context import LintContext, LintOptions
from knowledge.lint._model import Finding, LintReport, Rule, Severity
from knowledge.templates import Templates, load_templates
from knowledge.wiki import Catalogue, Glossary, Wiki

__all__ = ["CHECKS", "RULES", "lint_wiki", "render_text", "unknown_checks"]

Check = Callable[[LintContext], Iterator[Finding]]

#: check name -> (the function, its rules), in the order they run and are listed.
CHECKS: dict[str, tuple[Check, tuple[Rule, ...]]] = {
    "hubs": (_hubs.check_hubs, _hubs.RULES),
    "links": (_links.check_links, _links.RULES),
    "acronyms": (_glossary.check_acronyms, _glossary.ACRONYM_RULES),
    "glossary": (_glossary.check_glossary_rows, _glossary.ROW_RULES),
    "troubleshooting": (_troubleshooting.check_troubleshooting, _troubleshooting.RULES),
    "runbooks": (_runbooks.check_runbooks, _runbooks.RULES),
    "orphans": (_orphans.check_orphans, _orphans.RULES),
}
RULES: tuple[Rule, ...] = tuple(rule for _, rules in CHECKS.values() for rule in rules)


def unknown_checks(names: Iterable[str]) -> list[str]:
    return [name for name in names if name not in CHECKS]


def lint_wiki(
    wiki: Wiki,
    glossary: Glossary,
    catalogue: Catalogue,
    *,
    only: Iterable[str] | None = None,
    options: LintOptions | None = None,
    templates: Templates | None = None,
) -> LintReport:
    """Every finding of the checks named in ``only`` (all when None), worded, sorted."""
    started = time.perf_counter()
    t = templates or load_templates("lint.yaml")
    names = tuple(only) if only is not None else tuple(CHECKS)
    bad = unknown_checks(names)
    if bad:
        raise ValueError(f"unknown check(s): {', '.join(bad)}")
    ctx = LintContext(wiki, glossary, catalogue, options or LintOptions())
    findings: list[Finding] = []
    for name in CHECKS:
        if name in names:
            check, _ = CHECKS[name]
            findings.extend(_worded(f, t) for f in check(ctx))
    findings.sort(key=Finding.sort_key)
    return LintReport(
        findings=tuple(findings),
        checks=tuple(n for n in CHECKS if n in names),
        pages=len(wiki.pages),
        revision=wiki.revision,
        seconds=time.perf_counter() - started,
    )


def _worded(finding: Finding, t: Templates) -> Finding:
    values = finding.values
    head = f"rules.{finding.rule.id}"
    problem = t(f"{head}.problem", **values)
    extra = t.raw(f"{head}.problem_more") if f"{head}.problem_more" in t.entries else None
    if extra and _has_more(finding):
        problem = f"{problem} {t(f'{head}.problem_more', **values)}"
    return replace(finding, problem=problem, fix=t(f"{head}.fix", **values))


def _has_more(finding: Finding) -> bool:
    """Whether the rule's optional second sentence applies (a meaning found, more pages)."""
    return bool(finding.values.get("meaning") or finding.values.get("others"))


def render_text(report: LintReport, t: Templates, *, limit: int | None = None) -> str:
    """markdownlint's shape: ``path:line rule-id [severity] problem (fix)``, then counts."""
    lines = [
        t(
            "text.finding",
            path=f.path,
            line=f.line,
            rule=f.rule.id,
            severity=f.severity.label,
            problem=f.problem,
            fix=f.fix,
        )
        for f in report.findings[:limit]
    ]
    if limit is not None and len(report.findings) > limit:
        lines.append(t("text.more", count=len(report.findings) - limit))
    counts = ", ".join(f"{name} {count}" for name, count in report.per_check().items())
    severities = {s: len([f for f in report.findings if f.severity is s]) for s in Severity}
    lines.append(
        t(
            "text.summary",
            findings=len(report.findings),
            errors=severities[Severity.ERROR],
            warnings=severities[Severity.WARNING],
            infos=severities[Severity.INFO],
            pages=report.pages,
            counts=counts,
            seconds=report.seconds,
        )
    )
    return "\n".join(lines)
