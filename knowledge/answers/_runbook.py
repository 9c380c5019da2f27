"""``/runbook``: the current runbook of a model family, its version map and launch command."""

from __future__ import annotations

from dataclasses import replace

from knowledge.answers._format import link, names
from knowledge.answers._state import WikiState
from knowledge.reply import LIMITS, Attachment, Field, PageRef, Reply
from knowledge.search import MAX_QUERY_CHARS
from knowledge.templates import Templates
from knowledge.text import (
    clean_user_text,
    code_block,
    escape_markdown,
    inline_code,
    inline_code_head,
)
from knowledge.wiki import Family, Runbook

__all__ = ["launch", "runbook", "versions"]


def runbook(state: WikiState, t: Templates, query: str) -> Reply:
    """The family ``query`` names (typos and ambiguity handled) as its current runbook."""
    catalogue = state.catalogue
    if not catalogue.families:
        return Reply(
            "unavailable",
            t("runbook.no_catalogue_title"),
            t("runbook.no_catalogue"),
            ephemeral=True,
        )
    text = clean_user_text(query, MAX_QUERY_CHARS)
    if not text:
        return Reply(
            "not_found",
            t("runbook.empty_title"),
            t("runbook.empty", example=inline_code(catalogue.families[0].name)),
            ephemeral=True,
        )
    match = catalogue.match(text)
    safe_query = inline_code_head(text)  # in a code span (where escapes would show)
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
    code, files = _launch_code(t, family, rb, budget)
    return Reply(
        "launch",
        title,
        t("runbook.launch_body", head=head, code=code),
        pages=(PageRef(rb.page, rb.launch_anchor, rb.page_title),),
        meta={"family": family.key, "command": rb.launch.text},
        files=files,
    )


_EXTENSIONS = {"yaml": "yaml", "yml": "yaml", "json": "json", "toml": "toml", "python": "py"}


def _launch_code(
    t: Templates, family: Family, rb: Runbook, budget: int
) -> tuple[str, tuple[Attachment, ...]]:
    """The launch command as a code block when it fits ``budget``; else a note and the
    command whole as a file. A launch command is never cut: a cut one runs wrongly."""
    assert rb.launch is not None
    lang = rb.launch.lang or "bash"
    block = code_block(rb.launch.text, lang, budget + 1000)
    if len(block) <= budget:
        return block, ()
    name = f"launch-{family.key}.{_EXTENSIONS.get(lang.casefold(), 'sh')}"
    lines = rb.launch.text.count("\n") + 1
    note = t("runbook.launch_attached", name=inline_code(name), lines=lines)
    return note, (Attachment(name, rb.launch.text.rstrip("\n") + "\n"),)


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
    if page is None:
        return _missing_current(state, t, family, rb)
    parts = [
        t("runbook.intro", page=escape_markdown(rb.page_title), family=escape_markdown(family.name))
    ]
    newer = catalogue.newer_pages(family)
    if newer:
        parts.append(
            t(
                "runbook.newer",
                current=link(t, state.links, rb.page_title, rb.page),
                pages=t.raw("common.separator").join(
                    link(t, state.links, v.title, v.path, v.anchor) for v in newer[:4]
                ),
            )
        )
    if family.focus:
        parts.append(t("runbook.focus", focus=escape_markdown(family.focus)))
    fields: list[Field] = []
    if rb.images:
        fields.append(Field(t("runbook.image"), "\n".join(inline_code(i) for i in rb.images)))
        if rb.digest:
            fields.append(Field(t("runbook.digest"), inline_code(rb.digest)))
    else:
        parts.append(t("runbook.no_image"))
    if rb.older_images:
        older_images = "\n".join(inline_code(i) for i in rb.older_images)
        fields.append(Field(t("runbook.older_images"), older_images))
    fields.append(Field(t("runbook.current"), link(t, state.links, rb.page_title, rb.page), True))
    has_hub = bool(family.hub) and family.hub != rb.page
    if has_hub:
        fields.append(
            Field(t("runbook.hub"), link(t, state.links, family.hub_title, family.hub), True)
        )
    older = [v for v in family.versions if v.path != rb.page]
    if older:
        shown = t.lines(
            "runbook.older_line",
            ({"link": link(t, state.links, v.title, v.path, v.anchor)} for v in older[:5]),
        )
        if len(older) > 5:
            shown = t("runbook.older_more", lines=shown, count=len(older) - 5)
        fields.append(Field(t("runbook.older", count=len(older)), shown))
    files: tuple[Attachment, ...] = ()
    if rb.launch is not None:
        section = page.section(rb.launch_anchor or "")
        code, files = _launch_code(t, family, rb, LIMITS.code)
        parts.append(
            t(
                "runbook.launch",
                section=escape_markdown(section.title if section else rb.page_title),
                code=code,
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
            "newer": [v.path for v in newer],
        },
        files=files,
    )


def _missing_current(state: WikiState, t: Templates, family: Family, rb: Runbook) -> Reply:
    """The hub names a current page that is not in the wiki: say so, offer the hub."""
    pages = [PageRef(family.hub, None, family.hub_title)] if family.hub else []
    hub = link(t, state.links, family.hub_title, family.hub) if family.hub else ""
    return Reply(
        "unavailable",
        t("runbook.title", family=family.name),
        t(
            "runbook.current_missing",
            family=escape_markdown(family.name),
            page=inline_code(rb.page or "?"),
            hub=t("runbook.current_missing_hub", hub=hub) if hub else "",
        ),
        pages=tuple(pages),
        meta={"family": family.key, "page": rb.page, "missing": True},
    )
