"""A runbook whose launch command names an image other than its release image.

The runbooks are the pages the catalogue's families list (current pages, version
maps, recommendations). The release image is what the page's image block says:
an image reference standing alone in a code block of a section whose heading
speaks of an image, neither that heading nor the prose before the block speaking
of the past (the catalogue's own reading of "previous", "original", ...), or an
image named in a row of a status table whose field speaks of an image. The
launch command is the block the catalogue takes as the page's launch
(:attr:`knowledge.wiki.Runbook.launch`); its image comes from the launch parser
(``${IMAGE:-default}`` is its default). Only an image of the same repository with
another tag or digest is a mismatch: a page may document another engine's image.
"""

from __future__ import annotations

from collections.abc import Iterator

from knowledge.launch import image_default, parse_image, parse_launch
from knowledge.lint._context import LintContext
from knowledge.lint._model import Finding, Rule, Severity
from knowledge.wiki import Page
from knowledge.wiki.catalogue import clean_image_ref, launch_block, speaks_of_the_past

__all__ = ["RULES", "check_runbooks"]

IMAGE_MISMATCH = Rule("runbook-image-mismatch", "runbooks", Severity.ERROR)
RULES = (IMAGE_MISMATCH,)

#: A code block of at most this many lines can be an image block.
_IMAGE_BLOCK_LINES = 4


def _release_images(page: Page) -> list[tuple[str, int]]:
    """(image reference, line) of the page's release image block(s), in page order."""
    found: list[tuple[str, int]] = []
    for section in page.sections:
        if "image" not in section.title.casefold():
            for table in section.tables:
                field = table.column("field", "item", "key")
                value = table.column("value")
                if field is None or value is None:
                    continue
                for row in table.rows:
                    if "image" in row[field].text.casefold():
                        for code in row[value].code or (row[value].text,):
                            ref = clean_image_ref(code)
                            if ref:
                                found.append((ref, table.line))
            continue
        if any(speaks_of_the_past(t) for t in (*section.parents, section.title)):
            continue
        for block in section.code:
            lines = [ln.strip() for ln in block.text.splitlines() if ln.strip()]
            if len(lines) > _IMAGE_BLOCK_LINES or speaks_of_the_past(block.intro):
                continue
            for line in lines:
                ref = clean_image_ref(line)
                if ref and parse_image(ref) is not None and parse_image(ref).tag:
                    found.append((ref, block.line + 1))
    return found


def _runbook_pages(ctx: LintContext) -> list[str]:
    seen: dict[str, None] = {}
    for family in ctx.catalogue.families:
        for version in (*family.current, *family.versions, *family.recommendations):
            if version.path in ctx.wiki.pages:
                seen.setdefault(version.path)
    return list(seen)


def check_runbooks(ctx: LintContext) -> Iterator[Finding]:
    for path in _runbook_pages(ctx):
        page = ctx.wiki.pages[path]
        released = _release_images(page)
        if not released:
            continue
        launch, _ = launch_block(page)
        if launch is None:
            continue
        image = parse_launch(launch.text).image
        if image is None or not image.tag:
            continue
        raw = image_default(image.raw)
        repos = {}
        for ref, line in released:
            parsed = parse_image(ref)
            if parsed is not None:
                repos.setdefault((parsed.registry, parsed.repository), []).append((ref, line))
        same = repos.get((image.registry, image.repository))
        if not same or any(parse_image(ref).tag == image.tag for ref, _ in same):
            continue
        release, release_line = same[0]
        source = ctx.source(page)
        line = source.find(image.raw, launch.line, code=True) or launch.line
        yield ctx.finding(
            IMAGE_MISMATCH, path, line, launched=raw, release=release, release_line=release_line
        )
