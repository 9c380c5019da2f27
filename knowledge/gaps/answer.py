"""The gaps report worded: ``wikibot gaps`` prints it, ``/wiki gaps`` shows it as a reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from knowledge.gaps.report import GapsReport
from knowledge.reply import LIMITS, Field, PageRef, Reply
from knowledge.templates import Templates
from knowledge.text import escape_markdown, markdown_link, truncate

if TYPE_CHECKING:
    from knowledge.intake.similar import SolvedAnswer

__all__ = ["GROUPS_SHOWN", "gaps_reply", "render_text"]

#: Groups shown in a reply (an embed holds 25 fields; the largest groups come first).
GROUPS_SHOWN = 10
#: Characters of one example query shown.
EXAMPLE_CHARS = 160


def _when(t: Templates, days: int | None) -> str:
    return t("when.days", days=days) if days is not None else t("when.kept")


def gaps_reply(
    report: GapsReport,
    t: Templates,
    *,
    recording: bool = True,
    solved: Sequence[tuple[SolvedAnswer, str, float]] = (),
) -> Reply:
    """The report as a reply: the largest groups as fields, then one field listing the
    ``solved`` tickets whose answer no section holds (see
    :func:`knowledge.gaps.solved.solved_not_in_wiki`), kept whole within Discord's
    embed limits: groups are left out, the smallest first, to make room for it."""
    when = _when(t, report.since_days)
    listed = _solved_field(t, solved)
    if not report.groups:
        text = t("reply.none", when=when)
        if not recording:
            text += "\n" + t("reply.recording_off")
        fields = (listed,) if listed else ()
        return Reply("gaps", t("reply.title"), text, fields=fields, ephemeral=True).fitted()
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
    while True:
        shown = len(fields)
        text = t("reply.summary", requests=report.requests, groups=len(report.groups), when=when)
        if len(report.groups) > shown:
            text += "\n" + t("reply.more", count=len(report.groups) - shown)
        if not recording:
            text += "\n" + t("reply.recording_off")
        pages = tuple(PageRef(p) for g in report.groups[:shown] for p in g.pages[:1])
        reply = Reply(
            "gaps",
            t("reply.title"),
            text,
            fields=(*fields, *([listed] if listed else [])),
            pages=pages,
            ephemeral=True,
        ).fitted()
        if listed is None or not fields or reply.fields[-1:] == (listed,):
            return reply
        fields.pop()


def _solved_field(t: Templates, solved: Sequence[tuple[SolvedAnswer, str, float]]) -> Field | None:
    """One field: a line per solved ticket (its title linked to its thread, the nearest
    section), as many as a field holds, then how many more ``wikibot gaps`` lists."""
    if not solved:
        return None
    lines: list[str] = []
    more = ""
    for i, (answer, ref, _) in enumerate(solved):
        line = t(
            "reply.solved_line",
            id=answer.ticket_id,
            title=markdown_link(truncate(answer.title, 80), answer.url or None),
            ref=f"`{ref.replace('`', '')}`" if ref else "-",
        )
        rest = t("reply.solved_more", count=len(solved) - i)
        if sum(len(x) + 1 for x in lines) + len(line) + 1 + len(rest) > LIMITS.field_value:
            more = rest
            break
        lines.append(line)
    return Field(t("reply.solved", count=len(solved)), "\n".join([*lines, more] if more else lines))


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
