"""Where a data folder keeps its search index, for a look that loads nothing heavy.

:class:`~knowledge.search.store.Store` reads and writes the generations; this
module only names the link to the live one, so ``wikibot ask`` can tell whether
an index is there without importing the store (pydantic) or the engine (Whoosh).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CURRENT", "has_index"]

#: The symbolic link, in the data folder, to the live generation.
CURRENT = "current"


def has_index(data_dir: Path) -> bool:
    """Whether ``data_dir`` holds a live generation link (usable or not: the store decides)."""
    return os.path.lexists(Path(data_dir) / CURRENT)
