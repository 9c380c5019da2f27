"""What ``/support`` shows before anything is filed: the triage reply of the draft.

The same :func:`~knowledge.answers.triage.triage_reply` as ``wikibot triage`` (every
line a template of ``templates/triage.yaml``), with the intake's title and footer
(``templates/intake.yaml``, ``deflection.*``). The secrets listed are those removed
from the draft as each answer was saved: the triage itself only ever reads redacted
text, so on its own it would find none of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from knowledge.reply import Reply
from knowledge.templates import Templates

if TYPE_CHECKING:
    from knowledge.answers._state import Links
    from knowledge.triage.engine import TriageResult

__all__ = ["support_check_reply"]


def support_check_reply(
    result: TriageResult,
    redactions: Iterable[tuple[str, str, int]],
    triage_templates: Templates,
    intake_templates: Templates,
    *,
    draft_id: str,
    links: Links | None = None,
) -> Reply:
    """The private answer to a checked draft: ``result`` worded as every triage is,
    ``redactions`` (kind, field, count) of the draft first, private, with its id in
    ``meta``."""
    # Imported here: ``knowledge.answers`` (``wikibot ask``) must not load triage.
    from knowledge.answers.triage import triage_reply
    from knowledge.triage.redact import Redaction

    removed = [Redaction(kind, field, count) for kind, field, count in redactions]
    seen = {(r.kind, r.field) for r in removed}
    removed += [r for r in result.redactions if (r.kind, r.field) not in seen]
    reply = triage_reply(replace(result, redactions=tuple(removed)), triage_templates, links)
    return replace(
        reply,
        kind="deflection",
        title=intake_templates("deflection.title"),
        footer=intake_templates("deflection.footer"),
        ephemeral=True,
        meta={**reply.meta, "draft": draft_id},
    )
