"""``/runbook``: the current runbook of a model family, its version map and launch command."""

from __future__ import annotations

from dataclasses import replace

from knowledge.answers._format import link, names
from knowledge.answers._state import WikiState
from knowledge.reply import LIMITS, Field, PageRef, Reply
from knowledge.search.query import MAX_QUERY_CHARS
from knowledge.templates import Templates
from knowledge.text import clean_user_text, code_block, escape_markdown, inline_code
from knowledge.wiki import Family

__all__ = ["launch", "runbook", "versions"]


def runbook(state: WikiState, t: Templates, query: str) -> Reply:
    """The family ``query`` names (typos and ambiguity handled) as its current runbook."""
    catalogue = state.catalogue
    if not catalogue.families:
        return Reply(
            "unavailable",
            t("runbook.not_found_title", query="?"),
            t("runbook.no_catalogue"),
            ephemeral=True,
        )
    text = clean_user_text(query, MAX_QUERY_CHARS)
    if not text:
        return Reply(
            "not_found",
            t("runbook.not_found_title", query=""),
            t("runbook.empty", example=inline_code(catalogue.families[0].name)),
            ephemeral=True,
        )
    match = catalogue.match(text)
    safe_query = escape_markdown(text)
    others = [f.name for f in match.others]
    if match.ambiguous:
        listed = [f for f in match.others if f.current_page]
        return Reply(
            "ambiguous",
            t("runbook.ambiguous_title", query=safe_query),
            t(
                "runbook.ambiguous",
                names=names(t, others),
                lines=_family_lines(state, t, listed, hub_title=True),
            ),
            suggestions=tuple(others),
            pages=tuple(PageRef(f.current_page or "", None, f.name) for f in listed),
            ephemeral=True,
        )
    if match.family is None:
        main = [f.name for f in catalogue.families if f.group == "main"]
        body = t("runbook.not_found", names=names(t, main))
        if others:
            body = t("runbook.did_you_mean_then", names=names(t, others), then=body)
        return Reply(
            "not_found",
            t("runbook.not_found_title", query=safe_query),
            body,
            suggestions=tuple(others),
            ephemeral=True,
        )
    reply = _runbook_reply(state, t, match.family)
    if others:
        also = t("runbook.other_matches", names=names(t, others, limit=4))
        reply = replace(reply, footer=also, suggestions=tuple(others))
    return reply


def versions(state: WikiState, t: Templates, family_key: str) -> Reply:
    """The version map of a family's hub: every page, its status and note."""
    family = state.catalogue.family(family_key)
    if family is None:
        return runbook(state, t, family_key)
    title = t("runbook.versions_title", family=family.name)
    if not family.versions:
        return Reply(
            "versions",
            title,
            t("runbook.versions_empty", family=escape_markdown(family.name)),
            ephemeral=True,
            meta={"family": family.key},
        )
    rows = [
        {
            "link": link(t, state.links, v.title, v.path, v.anchor),
            "status": t("runbook.version_status", status=escape_markdown(v.status))
            if v.status
            else "",
            "note": t("runbook.version_note", note=escape_markdown(v.note)) if v.note else "",
        }
        for v in family.versions
    ]
    return Reply(
        "versions",
        title,
        t.lines("runbook.version_line", rows),
        pages=tuple(PageRef(v.path, v.anchor, v.title) for v in family.versions),
        meta={"family": family.key},
    )


def launch(state: WikiState, t: Templates, family_key: str) -> Reply:
    """The launch command of a family's current runbook, as much of it as fits."""
    family = state.catalogue.family(family_key)
    if family is None:
        return runbook(state, t, family_key)
    rb = state.catalogue.runbook(family)
    page = state.wiki.pages.get(rb.page)
    title = t("runbook.launch_title", family=family.name)
    if rb.launch is None or page is None:
        return Reply("not_found", title, t("runbook.no_launch"), ephemeral=True)
    section = page.section(rb.launch_anchor or "")
    head = t(
        "runbook.launch_from",
        page=escape_markdown(rb.page_title),
        section=link(
            t, state.links, section.title if section else rb.page_title, rb.page, rb.launch_anchor
        ),
    )
    budget = LIMITS.description - len(head) - 10
    return Reply(
        "launch",
        title,
        t("runbook.launch_body", head=head, code=_code(rb.launch.text, rb.launch.lang, budget)),
        pages=(PageRef(rb.page, rb.launch_anchor, rb.page_title),),
        meta={"family": family.key, "command": rb.launch.text},
    )


def _code(text: str, lang: str | None, budget: int) -> str:
    return code_block(text, lang or "bash", budget)


def _family_lines(
    state: WikiState, t: Templates, families: list[Family], *, hub_title: bool
) -> str:
    """One ``name: current page`` line per family (a family without one: its hub or name)."""
    return t.lines(
        "runbook.family_line",
        (
            {
                "name": escape_markdown(f.name),
                "link": link(
                    t,
                    state.links,
                    f.current[0].title if f.current else (f.hub_title if hub_title else f.name),
                    f.current_page or "",
                ),
            }
            for f in families
        ),
    )


def _runbook_reply(state: WikiState, t: Templates, family: Family) -> Reply:
    catalogue = state.catalogue
    if not family.current and family.hub:
        children = [f for f in catalogue.families if f.parent == family.hub]
        if children:
            return Reply(
                "runbook",
                t("runbook.group_title", family=family.name),
                t(
                    "runbook.group_intro",
                    family=escape_markdown(family.name),
                    lines=_family_lines(state, t, children, hub_title=False),
                ),
                pages=(
                    PageRef(family.hub, None, family.hub_title),
                    *(PageRef(f.current_page or "", None, f.name) for f in children),
                ),
                meta={"family": family.key},
            )
    rb = catalogue.runbook(family)
    page = state.wiki.pages.get(rb.page)
    parts = [
        t("runbook.intro", page=escape_markdown(rb.page_title), family=escape_markdown(family.name))
    ]
    if family.focus:
        parts.append(t("runbook.focus", focus=escape_markdown(family.focus)))
    fields: list[Field] = []
    if rb.images:
        fields.append(Field(t("runbook.image"), "\n".join(inline_code(i) for i in rb.images)))
        if rb.digest:
            fields.append(Field(t("runbook.digest"), inline_code(rb.digest)))
    else:
        parts.append(t("runbook.no_image"))
    fields.append(Field(t("runbook.current"), link(t, state.links, rb.page_title, rb.page), True))
    has_hub = bool(family.hub) and family.hub != rb.page
    if has_hub:
        fields.append(
            Field(t("runbook.hub"), link(t, state.links, family.hub_title, family.hub), True)
        )
    older = [v for v in family.versions if v.path != rb.page]
    if older:
        fields.append(
            Field(
                t("runbook.older"),
                t("runbook.older_count", count=len(older), family=escape_markdown(family.name)),
            )
        )
    if rb.launch is not None and page is not None:
        section = page.section(rb.launch_anchor or "")
        parts.append(
            t(
                "runbook.launch",
                section=escape_markdown(section.title if section else rb.page_title),
                code=_code(rb.launch.text, rb.launch.lang, LIMITS.code),
            )
        )
    else:
        parts.append(t("runbook.no_launch"))
    pages = [PageRef(rb.page, None, rb.page_title)]
    if rb.launch_anchor:
        pages.insert(0, PageRef(rb.page, rb.launch_anchor, rb.page_title))
    if has_hub:
        pages.append(PageRef(family.hub, None, family.hub_title))
    pages.extend(PageRef(v.path, v.anchor, v.title) for v in older)
    return Reply(
        "runbook",
        t("runbook.title", family=family.name),
        t.raw("common.paragraph_break").join(parts),
        fields=tuple(fields),
        pages=tuple(pages),
        meta={
            "family": family.key,
            "page": rb.page,
            "url": state.links.url(rb.page),
            "has_launch": rb.launch is not None,
            "older": len(older),
        },
    )
