"""What the lint reports: one :class:`Finding` per problem, in markdownlint's shape.

A finding names the file and line, the rule (a stable id such as
``link-missing-page``), its severity, one sentence saying what is wrong and one
saying what would fix it. The sentences are worded by ``templates/lint.yaml``
under ``rules.<rule>.problem`` / ``.fix`` from the finding's ``values``.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Finding", "LintReport", "Rule", "Severity"]


class Severity(enum.IntEnum):
    """How much a finding matters; ``--fail-on`` compares against it."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.strip().upper()]


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule: its id, the check (``--only`` name) it belongs to, and its severity."""

    id: str
    check: str
    severity: Severity


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    rule: Rule
    #: Placeholders of the rule's sentences (text from the wiki, already plain).
    values: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    problem: str = ""
    fix: str = ""

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    def sort_key(self) -> tuple[str, int, str]:
        return (self.path, self.line, self.rule.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "rule": self.rule.id,
            "check": self.rule.check,
            "severity": self.severity.label,
            "problem": self.problem,
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class LintReport:
    """Every finding of one run, sorted by file and line, and what was checked."""

    findings: tuple[Finding, ...]
    checks: tuple[str, ...]
    pages: int
    revision: str
    seconds: float = 0.0

    def at_least(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity >= severity]

    def per_check(self) -> dict[str, int]:
        counts = Counter(f.rule.check for f in self.findings)
        return {check: counts.get(check, 0) for check in self.checks}

    def per_rule(self) -> dict[str, int]:
        return dict(sorted(Counter(f.rule.id for f in self.findings).items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "pages": self.pages,
            "checks": list(self.checks),
            "per_check": self.per_check(),
            "per_rule": self.per_rule(),
            "findings": [f.to_json() for f in self.findings],
        }
