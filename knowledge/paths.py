"""Where a wiki and its data live by default: the bundled demo wiki, the per-wiki data folder.

Kept apart from :mod:`knowledge.service` so commands that only need a folder
(``wikibot health``, ``wikibot tickets list``) do not load the search engine.
"""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from pathlib import Path

__all__ = ["data_root", "default_data_dir", "demo_wiki_dir"]


def demo_wiki_dir() -> Path:
    """The small demo wiki that ships inside the package."""
    return Path(str(resources.files("knowledge").joinpath("demo_wiki")))


def data_root() -> Path:
    """Where default data folders go: ``$WIKIBOT_DATA``, else the user's cache folder."""
    base = os.environ.get("WIKIBOT_DATA")
    if base:
        return Path(base)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "wikibot"


def default_data_dir(wiki_dir: Path) -> Path:
    """Per-wiki data folder under :func:`data_root`."""
    digest = hashlib.sha256(str(wiki_dir.resolve()).encode()).hexdigest()[:10]
    return data_root() / f"{wiki_dir.resolve().name}-{digest}"
