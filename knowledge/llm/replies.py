"""Replies for ``/ask``: the answer with its sources, the pages instead, or "not covered".

Pure functions of an :class:`~knowledge.llm.ask.Outcome` (and the state its plan was
made on), worded by ``templates/llm.yaml`` (``ask.*``), so the console, ``wikibot ask``
and Discord show the same thing. The sections listed under an answer are those it
cites; under the pages answer, every section the model was (or would have been) given.
"""

from __future__ import annotations

from knowledge.answers._format import link
from knowledge.answers._state import WikiState
from knowledge.llm.ask import Outcome
from knowledge.llm.prompt import Source
from knowledge.reply import Field, PageRef, Reply
from knowledge.templates import Templates
from knowledge.text import escape_markdown, neutralise_mentions, truncate

__all__ = [
    "above",
    "answer_reply",
    "declined_reply",
    "empty_reply",
    "off_reply",
    "pages_reply",
    "reply_of",
]

_SNIPPET_CHARS = 300
_TITLE_QUESTION = 200


def reply_of(state: WikiState, t: Templates, outcome: Outcome) -> Reply:
    """The reply for any outcome."""
    if outcome.status == "answered":
        return answer_reply(state, t, outcome)
    if outcome.status == "declined":
        return declined_reply(state, t, outcome)
    return pages_reply(state, t, outcome, t(f"ask.fallback.{outcome.reason or 'cancelled'}"))


def _title(outcome: Outcome) -> str:
    question = " ".join(outcome.plan.retrieval.question.split())[:_TITLE_QUESTION]
    return neutralise_mentions(escape_markdown(question))


def _field(state: WikiState, t: Templates, source: Source, name_key: str) -> Field:
    prose = " ".join(source.text.replace("```", " ").split())
    return Field(
        t(
            name_key,
            number=source.number,
            page=escape_markdown(source.page_title),
            section=escape_markdown(source.section_title),
        ),
        t(
            "ask.cited_value",
            snippet=escape_markdown(truncate(prose, _SNIPPET_CHARS)),
            link=link(t, state.links, source.section_title, source.path, source.anchor or None),
        ),
    )


def _meta(outcome: Outcome, cited: tuple[Source, ...]) -> dict[str, object]:
    retrieval = outcome.plan.retrieval
    return {
        "status": outcome.status,
        "reason": outcome.reason,
        "confidence": retrieval.confidence,
        "cited": [s.ref for s in cited],
        "given": [
            {"number": s.number, "ref": s.ref, "page": s.page_title, "section": s.section_title}
            for s in retrieval.sources
        ],
        "redacted": retrieval.redacted,
        "timings_ms": {k: round(v * 1000, 1) for k, v in outcome.timings.items()},
        "usage": dict(outcome.usage),
        "finish_reason": outcome.finish_reason,
        "model_text": outcome.model_text,
        "dropped_citations": list(outcome.checked.dropped) if outcome.checked else [],
        "links_removed": outcome.checked.links_removed if outcome.checked else 0,
    }


def answer_reply(state: WikiState, t: Templates, outcome: Outcome) -> Reply:
    """The model's checked answer, each cited section listed under it."""
    checked = outcome.checked
    assert checked is not None and checked.answer
    return Reply(
        "answer",
        t("ask.title", question=_title(outcome)),
        checked.text,
        fields=tuple(_field(state, t, s, "ask.cited_name") for s in checked.cited),
        pages=tuple(PageRef(s.path, s.anchor or None, s.section_title) for s in checked.cited),
        footer=t("ask.footer_cut" if checked.cut else "ask.footer"),
        meta=_meta(outcome, checked.cited),
    )


def pages_reply(state: WikiState, t: Templates, outcome: Outcome, sentence: str) -> Reply:
    """The sections the model was given, as a search lists them, under ``sentence``."""
    sources = outcome.plan.retrieval.sources
    return Reply(
        "search",
        t("ask.pages_title", question=_title(outcome)),
        sentence,
        fields=tuple(_field(state, t, s, "ask.given_name") for s in sources),
        pages=tuple(PageRef(s.path, s.anchor or None, s.section_title) for s in sources),
        meta=_meta(outcome, ()),
    )


def declined_reply(state: WikiState, t: Templates, outcome: Outcome) -> Reply:
    """ "The wiki does not cover this", with /support offered and the closest pages."""
    hits = outcome.plan.retrieval.hits[:3]
    fields = ()
    if hits:
        fields = (
            Field(
                t("ask.declined_pages"),
                "\n".join(
                    "- "
                    + link(t, state.links, h.section_title or h.title, h.path, h.anchor or None)
                    for h in hits
                ),
            ),
        )
    return Reply(
        "not_found",
        t("ask.declined_title"),
        t("ask.declined"),
        fields=fields,
        pages=tuple(PageRef(h.path, h.anchor or None, h.section_title or h.title) for h in hits),
        ephemeral=True,
        meta=_meta(outcome, ()),
    )


def above(answer: Reply, reply: Reply, heading: str) -> Reply:
    """``reply`` (the /support check) with ``answer`` (an answered /ask) above it: the
    answer's text first, its cited sections before the check's own fields."""
    from dataclasses import replace

    return replace(
        reply,
        text=f"{heading}\n{answer.text}\n\n{reply.text}".strip(),
        fields=answer.fields + reply.fields,
        pages=answer.pages + tuple(p for p in reply.pages if p not in answer.pages),
        meta={**reply.meta, "answer": answer.meta},
    )


def off_reply(t: Templates) -> Reply:
    return Reply("unavailable", t("ask.disabled_title"), t("ask.disabled"), ephemeral=True)


def empty_reply(t: Templates) -> Reply:
    return Reply("not_found", t("ask.empty_title"), t("ask.empty"), ephemeral=True)
