"""The gaps report worded: ``wikibot gaps`` prints it, ``/wiki gaps`` shows it as a reply."""

from __future__ import annotations

from knowledge.gaps.report import GapsReport
from knowledge.reply import Field, PageRef, Reply
from knowledge.templates import Templates
from knowledge.text import escape_markdown, truncate

__all__ = ["GROUPS_SHOWN", "gaps_reply", "render_text"]

#: Groups shown in a reply (an embed holds 25 fields; the largest groups come first).
GROUPS_SHOWN = 10
#: Characters of one example query shown.
EXAMPLE_CHARS = 160


def _when(t: Templates, days: int | None) -> str:
    return t("when.days", days=days) if days is not None else t("when.kept")


def gaps_reply(report: GapsReport, t: Templates, *, recording: bool = True) -> Reply:
    when = _when(t, report.since_days)
    if not report.groups:
        text = t("reply.none", when=when)
        if not recording:
            text += "\n" + t("reply.off")
        return Reply("gaps", t("reply.title"), text, ephemeral=True)
    fields = []
    for group in report.groups[:GROUPS_SHOWN]:
        lines = [
            t("reply.example", query=escape_markdown(truncate(q, EXAMPLE_CHARS)))
            for q in group.examples
        ]
        if group.pages:
            lines.append(t("reply.pages", pages=", ".join(f"`{p}`" for p in group.pages)))
        terms = escape_markdown(", ".join(group.terms)) or "-"
        fields.append(Field(t("reply.group", terms=terms, count=group.count), "\n".join(lines)))
    text = t("reply.summary", requests=report.requests, groups=len(report.groups), when=when)
    if len(report.groups) > GROUPS_SHOWN:
        text += "\n" + t("reply.more", count=len(report.groups) - GROUPS_SHOWN)
    if not recording:
        text += "\n" + t("reply.off")
    pages = tuple(PageRef(p) for g in report.groups[:GROUPS_SHOWN] for p in g.pages[:1])
    return Reply("gaps", t("reply.title"), text, fields=tuple(fields), pages=pages, ephemeral=True)


def render_text(report: GapsReport, t: Templates) -> str:
    """The report for a terminal: one block per group, largest first."""
    when = _when(t, report.since_days)
    if not report.groups:
        return t("reply.none", when=when)
    out = [t("text.summary", requests=report.requests, groups=len(report.groups), when=when)]
    for group in report.groups:
        out.append(t("text.group", terms=", ".join(group.terms) or "-", count=group.count))
        out.extend(t("text.example", query=q) for q in group.examples)
        if group.pages:
            out.append(t("text.pages", pages=", ".join(group.pages)))
    return "\n".join(out)
