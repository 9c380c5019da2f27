"""A wiki folder loaded for the lint alone: its pages (parsed ones reused from the data
folder's page cache, as the knowledge base does), glossary and catalogue, no index.

A CI job on a fresh checkout parses every page once (a second process helps on two
cores); the maintainer's second run, or the bot's data folder, reads the cache.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from knowledge.wiki import Catalogue, Glossary, PageCache, Wiki, find_front_page, load_wiki
from knowledge.wiki.helper import HELPER_MIN_BYTES

__all__ = ["load_for_lint"]

log = logging.getLogger(__name__)


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def load_for_lint(wiki_dir: Path, data_dir: Path | None) -> tuple[Wiki, Glossary, Catalogue]:
    """The wiki of ``wiki_dir`` with its glossary and catalogue; with ``data_dir``, the
    page cache there is read and brought up to date (when the folder can be written)."""
    cache = PageCache.in_folder(data_dir) if data_dir is not None else None
    cached = cache.read(wiki_dir) if cache is not None else None
    try:
        wiki = load_wiki(
            wiki_dir,
            cache=cached,
            helper_min_bytes=HELPER_MIN_BYTES,
            stats=cached.stats if cached is not None else None,
        )
        if cache is not None and cached is not None and data_dir is not None:
            fresh = [p for p, page in wiki.pages.items() if cached.get(p) is not page]
            gone = any(p not in wiki.pages for p in cached)
            if (fresh or gone) and _writable(data_dir):
                cache.update(wiki.pages, fresh, wiki.stats)
        front = find_front_page(wiki)
        glossary = Glossary.from_wiki(wiki, front)
        catalogue = Catalogue.from_wiki(wiki, glossary)
        # Every section is read by the checks: decoded now, while the cache is open.
        for page in wiki.pages.values():
            _ = page.sections
    finally:
        if cached is not None:
            cached.close()
    return wiki, glossary, catalogue
