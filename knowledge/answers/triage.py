"""A triage result as a :class:`~knowledge.reply.Reply`: the console, ``wikibot triage``
and Discord show it alike.

Layout: the confidence as the text, one field per part of the result (secrets
removed, input problems, model family, launch, findings, known errors, log,
suggested pages, checklist), the suggested and cited sections as ``pages``. Every
line is a template of ``templates/triage.yaml``. Values from the request or the wiki
are redacted once more, each on its own as the JSON's strings are (the result is
built from a redacted request, but a shell can assemble a secret from harmless
pieces), then Markdown-escaped. A part longer than a Discord field goes on in fields
named ``sections.continued``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from knowledge.launch import Launch
from knowledge.reply import LIMITS, Field, PageRef, Reply
from knowledge.templates import Templates
from knowledge.text import escape_markdown, markdown_link, truncate
from knowledge.triage.engine import TriageResult
from knowledge.triage.logs import LogSummary
from knowledge.triage.redact import redact

if TYPE_CHECKING:
    from knowledge.answers._state import Links

__all__ = ["triage_reply"]


def triage_reply(result: TriageResult, templates: Templates, links: Links | None = None) -> Reply:
    """``result`` worded by ``templates`` (``templates/triage.yaml``); with ``links`` (the
    wiki's published URLs) every page named is a link to it."""
    t = templates

    def page(ref: str) -> str:
        path, _, anchor = ref.partition("#")
        url = links.url(path, anchor or None) if links is not None else None
        return markdown_link(_safe(ref), url)

    parts: list[tuple[str, list[list[str]]]] = []
    if result.redactions:
        parts.append(
            (
                "redactions",
                [
                    [t("redaction", count=r.count, kind=_md(r.kind), field=_md(r.field))]
                    for r in result.redactions
                ],
            )
        )
    if result.problems:
        parts.append(("problems", [[t("problem", problem=_md(p))] for p in result.problems]))
    if result.family is not None:
        info = result.family
        line = t(
            "family",
            family=_md(info.family.name),
            runbook=page(info.runbook.page),
            how=t(f"family_how.{info.how}"),
        )
        parts.append(("family", [[line]]))
    parts.append(("launch", [_launch_lines(result.launch, t)]))
    parts.append(("findings", _finding_blocks(result, t, page) or [[t("no_findings")]]))
    parts.append(("known_errors", _known_blocks(result, t, page) or [[t("no_known_errors")]]))
    parts.append(("log_summary", [_log_lines(result.log_summary, t)]))
    suggested = _suggestion_blocks(result, t, page)
    parts.append(("suggestions", suggested or [[t("no_suggestions")]]))
    parts.append(("completeness", [_completeness_lines(result, t)]))
    fields: list[Field] = []
    for key, blocks in parts:
        fields.extend(_fields(t(f"sections.{key}"), blocks, t))
    return Reply(
        "triage",
        t("heading"),
        t(f"confidence.{result.confidence}"),
        fields=tuple(fields),
        pages=_pages(result),
        meta={
            "confidence": result.confidence,
            "family": result.family.family.key if result.family is not None else None,
            "findings": [f.id for f in result.findings],
        },
    )


def _md(value: object) -> str:
    """A value from the request or the wiki, secrets removed, as literal Markdown text."""
    return escape_markdown(_safe(str(value)))


def _safe(text: str) -> str:
    """``text`` with anything that still reads as a secret removed."""
    return redact(text, "reply").text


def _fields(name: str, blocks: Sequence[Sequence[str]], t: Templates) -> list[Field]:
    """``blocks`` of lines under ``name``, over as many fields as Discord's size needs: a
    block (one finding with its evidence) starts a new field rather than being split,
    unless it is longer than a field on its own."""
    fields: list[Field] = []
    chunk: list[str] = []

    def flush() -> None:
        nonlocal name
        if chunk:
            fields.append(Field(name, "\n".join(chunk)))
            name = t("sections.continued", section=name)
            chunk.clear()

    for block in blocks:
        lines = [truncate(line, LIMITS.field_value) for line in block]
        if chunk and len("\n".join([*chunk, *lines])) > LIMITS.field_value:
            flush()
        for line in lines:
            if chunk and len("\n".join([*chunk, line])) > LIMITS.field_value:
                flush()
            chunk.append(line)
    flush()
    return fields


def _pages(result: TriageResult) -> tuple[PageRef, ...]:
    """Suggested sections best first, then the sections findings and known errors cite."""
    refs: dict[str, str] = {}
    for s in result.suggestions:
        refs.setdefault(s.page, s.title)
    for k in result.known_errors:
        refs.setdefault(k.page, k.title)
    for f in result.findings:
        if f.page:
            refs.setdefault(f.page, "")
    out = []
    for ref, title in refs.items():
        path, _, anchor = ref.partition("#")
        out.append(PageRef(path, anchor or None, title))
    return tuple(out)


def _parallel(t: Templates, sizes: Iterable[tuple[str, object]]) -> str:
    return " ".join(t("parallel_part", name=n, value=v) for n, v in sizes if v is not None)


def _launch_lines(launch: Launch | None, t: Templates) -> list[str]:
    if launch is None:
        return [t("no_launch")]
    lines = [t("launch.kind", kind=_md(launch.kind))]
    if launch.image is not None:
        lines.append(t("launch.image", image=_md(launch.image.raw)))
    if launch.model:
        lines.append(t("launch.model", model=_md(launch.model)))
    if launch.engine:
        lines.append(t("launch.engine", engine=_md(launch.engine)))
    parallel = _parallel(
        t, (("TP", launch.tp), ("DCP", launch.dcp), ("DP", launch.dp), ("PP", launch.pp))
    )
    if parallel:
        lines.append(t("launch.parallel", parallel=parallel))
    if launch.spec_tokens:
        method = _md(launch.spec_method) if launch.spec_method else t("unknown")
        lines.append(t("launch.spec", method=method, tokens=launch.spec_tokens))
    if launch.gpus is not None:
        gpus = launch.gpus if isinstance(launch.gpus, str) else ",".join(map(str, launch.gpus))
        lines.append(t("launch.gpus", gpus=_md(gpus)))
    lines.extend(t("launch.problem", problem=_md(p)) for p in launch.problems)
    return lines


#: Checks whose findings the reply's checklist field already lists, item by item.
SHOWN_IN_CHECKLIST = frozenset({"checklist"})


def _finding_blocks(
    result: TriageResult, t: Templates, page: Callable[[str], str]
) -> list[list[str]]:
    blocks = []
    for f in result.findings:
        if f.check in SHOWN_IN_CHECKLIST:  # said once, in the checklist, not twice
            continue
        lines = [t("finding", severity=f.severity, message=_md(f.message))]
        lines.extend(t("finding_evidence", evidence=_md(e)) for e in f.evidence)
        if f.page:
            lines.append(t("finding_page", page=page(f.page)))
        blocks.append(lines)
    return blocks


def _known_blocks(
    result: TriageResult, t: Templates, page: Callable[[str], str]
) -> list[list[str]]:
    blocks = []
    for k in result.known_errors:
        lines = [t("known_error", title=_md(k.title), page=page(k.page))]
        lines.extend(t("known_error_line", number=ln.number, text=_md(ln.text)) for ln in k.lines)
        lines.append(t("known_error_fix", fix=_md(k.fix)) if k.fix else t("known_error_no_fix"))
        blocks.append(lines)
    return blocks


def _log_lines(summary: LogSummary | None, t: Templates) -> list[str]:
    if summary is None:
        return [t("no_log")]
    unknown = t("unknown")
    lines = []
    if summary.engine:
        lines.append(
            t("log.engine", engine=_md(summary.engine), version=_md(summary.version or ""))
        )
    if summary.model:
        lines.append(t("log.model", model=_md(summary.model)))
    parallel = _parallel(
        t, (("TP", summary.tp), ("DCP", summary.dcp), ("DP", summary.dp), ("PP", summary.pp))
    )
    if parallel:
        lines.append(t("log.parallel", parallel=parallel))
    if summary.attention_backend or summary.moe_backend:
        lines.append(
            t(
                "log.backends",
                attention=_md(summary.attention_backend) if summary.attention_backend else unknown,
                moe=_md(summary.moe_backend) if summary.moe_backend else unknown,
            )
        )
    if summary.kv_cache_tokens is not None:
        lines.append(t("log.kv", tokens=summary.kv_cache_tokens))
    lines.append(t("log.ready") if summary.server_ready else t("log.not_ready"))
    if summary.first_error:
        line = summary.first_error_line if summary.first_error_line is not None else unknown
        lines.append(t("log.first_error", line=line, error=_md(summary.first_error)))
    if summary.last_traceback is not None and summary.last_traceback.exception:
        lines.append(t("log.traceback", exception=_md(summary.last_traceback.exception)))
    return lines


def _suggestion_blocks(
    result: TriageResult, t: Templates, page: Callable[[str], str]
) -> list[list[str]]:
    blocks = []
    for rank, s in enumerate(result.suggestions, 1):
        lines = [t("suggestion", rank=rank, title=_md(s.title), page=page(s.page), score=s.score)]
        lines.extend(t("suggestion_why", why=_md(w)) for w in s.why)
        blocks.append(lines)
    return blocks


def _completeness_lines(result: TriageResult, t: Templates) -> list[str]:
    lines = [
        t(
            "completeness_item",
            status=t(f"status.{i.status}"),
            label=_md(i.label),
            detail=t("completeness_detail", detail=_md(i.detail)) if i.detail else "",
        )
        for i in result.completeness.items
    ]
    source = result.completeness.source
    lines.append(
        t("completeness_source", source=_md(source)) if source else t("completeness_builtin")
    )
    return lines
