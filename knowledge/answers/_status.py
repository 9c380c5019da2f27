"""``/wiki status`` and ``/help``: what the bot answers from, and how to ask it."""

from __future__ import annotations

import time

from knowledge.answers._state import WikiState
from knowledge.reply import Field, Reply
from knowledge.templates import Templates
from knowledge.text import inline_code

__all__ = ["age", "help_reply", "status"]


def status(state: WikiState, t: Templates, *, now: float | None = None) -> Reply:
    """Revision, sizes and index of the loaded wiki (``now`` defaults to the clock)."""
    loaded_for = (time.time() if now is None else now) - state.loaded_at
    wiki = state.wiki
    sections = sum(len(p.sections) for p in wiki.pages.values())
    fields = (
        Field(t("status.revision"), inline_code(wiki.revision), True),
        Field(t("status.pages"), str(len(wiki.pages)), True),
        Field(t("status.sections"), str(sections), True),
        Field(t("status.terms"), str(len(state.glossary.entries)), True),
        Field(t("status.families"), str(len(state.catalogue.families)), True),
        Field(t("status.skipped"), str(len(wiki.skipped)), True),
        Field(
            t("status.index"),
            t(
                "status.index_memory" if state.index.in_memory else "status.index_value",
                mode=state.built.mode,
                age=age(t, loaded_for),
            ),
            True,
        ),
    )
    if wiki.skipped:
        fields = (*fields, _skipped_field(wiki.skipped, t))
    problem = state.built.problem
    return Reply(
        "status",
        t("status.title"),
        t("status.index_problem", problem=problem) if problem else "",
        fields=fields,
        meta={
            "revision": wiki.revision,
            "pages": len(wiki.pages),
            "sections": sections,
            "terms": len(state.glossary.entries),
            "families": len(state.catalogue.families),
            "index_mode": state.built.mode,
            "index_in_memory": state.index.in_memory,
            "index_problem": problem,
            "loaded_at": state.loaded_at,
            "skipped": [{"path": path, "reason": reason} for path, reason in wiki.skipped],
        },
    )


#: Skipped files named in ``/wiki status``; ``wikibot index`` lists them all.
_SKIPPED_SHOWN = 10


def _skipped_field(skipped: list[tuple[str, str]], t: Templates) -> Field:
    """Which files were skipped and why, within one field."""
    lines = [
        t("status.skipped_file", path=inline_code(path), reason=reason)
        for path, reason in skipped[:_SKIPPED_SHOWN]
    ]
    if len(skipped) > _SKIPPED_SHOWN:
        lines.append(t("status.skipped_more", count=len(skipped) - _SKIPPED_SHOWN))
    return Field(t("status.skipped_files"), "\n".join(lines))


def age(t: Templates, seconds: float) -> str:
    """A duration in its largest sensible unit: ``45s``, ``12m``, ``3h``."""
    seconds = int(max(seconds, 0))
    if seconds < 120:
        return t("status.age_seconds", count=seconds)
    if seconds < 7200:
        return t("status.age_minutes", count=seconds // 60)
    return t("status.age_hours", count=seconds // 3600)


def help_reply(t: Templates, *, console: bool = False) -> Reply:
    """How to use the commands: on Discord, or (``console``) at the console prompt."""
    return Reply("help", t("help.title"), t("help.console" if console else "help.text"))
