"""The lint as a reply: counts per check, the first findings, and all of them as a file.

What ``/wiki lint`` shows (:meth:`knowledge.service.KnowledgeBase.lint`): a short
summary fits an embed, the whole list (``wikibot lint``'s text) goes beside it.
"""

from __future__ import annotations

from knowledge.lint._model import LintReport, Severity
from knowledge.lint.run import render_text
from knowledge.reply import Attachment, Field, Reply
from knowledge.templates import Templates

__all__ = ["SHOWN_PER_CHECK", "lint_reply"]

#: Findings shown in the embed per check (most severe first); the file holds all.
SHOWN_PER_CHECK = 3


def lint_reply(report: LintReport, t: Templates) -> Reply:
    findings = report.findings
    counts = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    text = t(
        "reply.summary",
        findings=len(findings),
        errors=counts[Severity.ERROR],
        warnings=counts[Severity.WARNING],
        infos=counts[Severity.INFO],
        pages=report.pages,
        revision=report.revision,
    )
    fields = []
    for check, count in report.per_check().items():
        if not count:
            continue
        mine = sorted(
            (f for f in findings if f.rule.check == check),
            key=lambda f: (-f.severity, f.path, f.line),
        )
        lines = [
            t("reply.line", path=f.path, line=f.line, severity=f.severity.label, problem=f.problem)
            for f in mine[:SHOWN_PER_CHECK]
        ]
        if count > SHOWN_PER_CHECK:
            lines.append(t("reply.more", count=count - SHOWN_PER_CHECK))
        fields.append(Field(t("reply.check", check=check, count=count), "\n".join(lines)))
    files = (Attachment("wiki-lint.txt", render_text(report, t)),) if findings else ()
    title = t("reply.title") if findings else t("reply.clean_title")
    meta = {"revision": report.revision, "per_check": report.per_check()}
    return Reply("lint", title, text, fields=tuple(fields), files=files, meta=meta)
