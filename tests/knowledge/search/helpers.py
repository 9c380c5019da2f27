"""Made-up wikis and helpers shared by the search index tests."""

from __future__ import annotations

import random
from pathlib import Path

from knowledge.search import SearchResults
from knowledge.search.pages import PageRanker
from knowledge.wiki import Catalogue, Glossary, Wiki, load_wiki
from tests.support import DEMO

__all__ = [
    "PAGES",
    "SPROCKETS",
    "Boom",
    "big_wiki",
    "demo_ranker",
    "ids",
    "manifest_path",
    "write_wiki",
]

# A small made-up wiki: each page exercises one ranking rule.
PAGES = {
    "guides/airships.md": """\
# Airship Handbook

Intro text about lighter than air craft and their crews.

## Zeppelin Mooring

How to tie the craft to a mast in wind.

## Ballast

Water ballast keeps the gondola level. Drop it slowly.
""",
    "guides/misc.md": """\
# Assorted Notes

## Weather

A zeppelin drifts; a zeppelin in fog is hard to see, and zeppelin crews hate fog.
Quartermaster duties include checking the frobnicator every morning before launch.
The handbook says so, and the handbook is always right about the handbook.
""",
    "models/flux-old.md": """\
# Flux Runbook Old

## Launch

Start the flux capacitor with the standard warmup and wait for the green lamp.
""",
    "models/flux-new.md": """\
# Flux Runbook New

## Launch

Start the flux capacitor with the standard warmup and wait for the green lamp.
""",
    "troubleshooting/faults.md": """\
# Fault Catalogue

## Capacitor Overheat

**Error**:
```
FluxError: capacitor temperature exceeded 451 kelvin in stage three
```

**Fix**: Lower the warmup rate.

## Lamp Stays Red

**Error**: lamp stays red after warmup, the frobnicator clicks twice

**Fix**: Replace the frobnicator.
""",
}

#: Sections that all mention "sprocket", to page through.
SPROCKETS = "# Sprocket Index\n\n" + "".join(
    f"## Sprocket Part {i}\n\nThe sprocket number {i} turns the wheel.\n\n" for i in range(12)
)


def write_wiki(root: Path, pages: dict[str, str]) -> Path:
    for rel, text in pages.items():
        file = root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return root


def ids(results: SearchResults) -> list[str]:
    return [hit.id for hit in results.hits]


def manifest_path(data_dir: Path) -> Path:
    return data_dir / "current" / "manifest.json"


class Boom(RuntimeError):
    pass


def big_wiki(root: Path, chars: int) -> Path:
    """Made-up pages with at least ``chars`` characters of section text in all."""
    rng = random.Random(20)
    syllables = ["ka", "lo", "mi", "ten", "dra", "vo", "zu", "rek", "pa", "sil", "or", "nex"]
    vocabulary = ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(3000)]
    pages: dict[str, str] = {}
    written = 0
    while written < chars:
        sections = []
        for n in range(4):
            text = " ".join(rng.choices(vocabulary, k=rng.randint(40, 160)))
            sections.append(f"## {' '.join(rng.choices(vocabulary, k=2))} {n}\n\n{text}\n")
            written += len(text)
        pages[f"area{len(pages) % 7}/page{len(pages)}.md"] = f"# Page {len(pages)}\n\n" + "\n".join(
            sections
        )
    return write_wiki(root, pages)


def demo_ranker(
    wiki_dir: Path = DEMO, previous: PageRanker | None = None
) -> tuple[Wiki, Catalogue, PageRanker]:
    """A wiki (the demo wiki unless told), its catalogue and its page ranker, built as
    the bot builds them (from ``previous``, the ranker of an earlier load, if given)."""
    wiki = load_wiki(wiki_dir)
    catalogue = Catalogue.from_wiki(wiki)
    ranker = PageRanker.build(
        wiki,
        catalogue.statuses(),
        catalogue=catalogue,
        glossary=Glossary.from_wiki(wiki, catalogue.wiki.find_page("README.md")),
        previous=previous,
    )
    return wiki, catalogue, ranker
