"""The demo wiki shipped in ``knowledge/demo_wiki``: sound links, sound hubs, our own prose.

The console demo and the golden tests read this wiki, so a broken link or a hub with two
"Current" rows here would show up as confusing failures elsewhere. The last test compares
the demo prose with the real wiki snapshot to show that no sentence was copied from it.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from knowledge.wiki import Page, Wiki, load_wiki
from tests.support import DEMO, SNAPSHOT

#: A run of this many words shared with the real wiki counts as a copied sentence.
SHARED_RUN_WORDS = 12

_WORD = re.compile(r"[a-z0-9]+")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\b")
_TAG_DATE = re.compile(r"-(\d{8})$")


@cache
def _demo() -> Wiki:
    return load_wiki(DEMO)


def _page_ids() -> list[str]:
    return sorted(p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*.md"))


def _section_table(page: Page, anchor: str, *columns: str):
    section = page.section(anchor)
    assert section is not None, f"{page.path}: no section #{anchor}"
    for table in section.tables:
        if all(table.column(c) is not None for c in columns):
            return table
    raise AssertionError(f"{page.path}#{anchor}: no table with columns {columns}")


def _hubs() -> list[Page]:
    wiki = _demo()
    readme = wiki.find_page("README.md")
    assert readme is not None, "demo wiki has no README.md"
    table = _section_table(readme, "start-here", "Model family", "Start here")
    col = table.column("Start here")
    hubs = []
    for row in table.rows:
        links = [link for link in row[col].links if link.path]
        assert links, f"Start Here row {row[0].text!r} links no page"
        target = wiki.pages.get(links[0].path)
        assert target is not None, f"Start Here row {row[0].text!r}: {links[0].href} is missing"
        hubs.append(target)
    return hubs


def _image_tag(page: Page) -> str | None:
    section = page.section("image-and-model")
    if section is None or not section.code:
        return None
    return section.code[0].text.splitlines()[0].strip()


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _runs(words: list[str]) -> set[str]:
    n = SHARED_RUN_WORDS
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


# --- every page -----------------------------------------------------------------


def test_every_demo_file_loads_as_a_page():
    wiki = _demo()
    assert wiki.skipped == []
    assert sorted(wiki.pages) == _page_ids()


def test_some_page_has_no_heading_so_loaders_must_cope():
    headless = [
        page for page in _demo().pages.values() if not any(s.level >= 1 for s in page.sections)
    ]
    assert headless, "the demo wiki must keep at least one page without any heading"
    for page in headless:
        assert page.title, f"{page.path}: a headless page still needs a usable title"
        assert page.problems, f"{page.path}: the loader should record the missing heading"


@pytest.mark.parametrize("path", _page_ids())
def test_internal_links_resolve(path: str):
    wiki = _demo()
    page = wiki.pages[path]
    for link in page.links:
        if link.path is None:
            assert re.match(r"^[a-z][a-z0-9+.-]*:", link.href), (
                f"{path}: link {link.href!r} leaves the wiki folder"
            )
            continue
        target = wiki.pages.get(link.path)
        assert target is not None, f"{path}: link {link.href!r} points to a missing page"
        if link.anchor:
            anchors = {s.anchor for s in target.sections}
            assert link.anchor in anchors, f"{path}: {link.href!r} names a missing heading"


def test_every_image_section_names_a_tag_and_a_digest():
    checked = 0
    for page in _demo().pages.values():
        section = page.section("image-and-model")
        if section is None:
            continue
        checked += 1
        tag = _image_tag(page)
        assert tag and "/" in tag and ":" in tag, f"{page.path}: first code line is no image tag"
        body = section.text + "\n" + "\n".join(block.text for block in section.code)
        assert _DIGEST.search(body), f"{page.path}: image without a 64-hex sha256 digest"
    assert checked, "no page of the demo wiki has an Image And Model section"


# --- hubs -----------------------------------------------------------------------


def test_start_here_lists_hubs():
    assert len(_hubs()) >= 2


@pytest.mark.parametrize("hub", _hubs(), ids=lambda page: page.path)
def test_hub_has_exactly_one_current_page(hub: Page):
    wiki = _demo()
    if hub.section("version-map") is None:
        pytest.skip(f"{hub.path} lists pages without a version map")
    for anchor in ("current-recommendation", "current-runtime-shape", "operational-reminders"):
        assert hub.section(anchor) is not None, f"{hub.path}: missing #{anchor}"
    table = _section_table(hub, "version-map", "Page", "Status")
    status = table.column("Status")
    current = [row for row in table.rows if row[status].text.casefold() == "current"]
    assert len(current) == 1, f"{hub.path}: {len(current)} rows marked Current"
    for row in table.rows:
        assert row[0].links and row[0].links[0].path in wiki.pages, (
            f"{hub.path}: version row {row[0].text!r} does not link an existing page"
        )
    page = wiki.pages[current[0][0].links[0].path]
    page_status = page.section("status")
    assert page_status is not None and "Current" in page_status.text, (
        f"{page.path} is Current on {hub.path} but its Status section does not say so"
    )


@pytest.mark.parametrize("hub", _hubs(), ids=lambda page: page.path)
def test_current_page_has_the_newest_image(hub: Page):
    if hub.section("version-map") is None:
        pytest.skip(f"{hub.path} has no version map")
    wiki = _demo()
    table = _section_table(hub, "version-map", "Page", "Status")
    status = table.column("Status")
    dated: dict[str, tuple[str, str]] = {}
    for row in table.rows:
        page = wiki.pages[row[0].links[0].path]
        tag = _image_tag(page)
        match = _TAG_DATE.search(tag or "")
        assert match, f"{page.path}: image tag {tag!r} does not end in a date"
        dated[page.path] = (match.group(1), row[status].text)
    current = [date for date, state in dated.values() if state.casefold() == "current"]
    others = [date for date, state in dated.values() if state.casefold() != "current"]
    assert all(current[0] > date for date in others), f"{hub.path}: {dated}"


# --- our own words ----------------------------------------------------------------


@cache
def _snapshot_runs() -> frozenset[str]:
    runs: set[str] = set()
    for file in SNAPSHOT.rglob("*.md"):
        if any(part.startswith(".") for part in file.relative_to(SNAPSHOT).parts):
            continue
        runs |= _runs(_words(file.read_text(encoding="utf-8", errors="replace")))
    return frozenset(runs)


def _prose(page: Page) -> str:
    """Headings, paragraphs, lists and table cells; fenced code is left out.

    Commands, flags and error strings are facts the demo shares with the real wiki on
    purpose, so only the prose has to be our own.
    """
    return "\n".join(f"{section.title}\n{section.text}" for section in page.sections)


@pytest.mark.parametrize("path", _page_ids())
def test_prose_shares_no_long_run_with_the_real_wiki(path: str):
    if not SNAPSHOT.is_dir():
        pytest.skip(f"real wiki snapshot not found at {SNAPSHOT}")
    copied = sorted(_runs(_words(_prose(_demo().pages[path]))) & _snapshot_runs())
    assert not copied, f"{path} repeats the real wiki word for word: {copied[:3]}"


def test_the_run_check_would_catch_a_copied_sentence():
    if not SNAPSHOT.is_dir():
        pytest.skip(f"real wiki snapshot not found at {SNAPSHOT}")
    sample = next(
        text
        for file in sorted(SNAPSHOT.rglob("*.md"))
        if len(_words(text := file.read_text(encoding="utf-8", errors="replace")))
        > 4 * SHARED_RUN_WORDS
    )
    borrowed = " ".join(_words(sample)[: 2 * SHARED_RUN_WORDS])
    assert _runs(_words(f"Our intro. {borrowed} And more.")) & _snapshot_runs()
