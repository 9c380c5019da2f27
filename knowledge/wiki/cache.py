"""The parsed-page cache: a restart costs reading the files, not parsing them again.

One pickle file holds ``{"version": ..., "pages": {path: Page}}``. The version names
the cache format, the parser and markdown-it-py, so a parse made by other code is
never reused; a damaged or foreign file only costs a re-parse.
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from importlib.metadata import version as package_version
from pathlib import Path

from knowledge.files import write_atomic
from knowledge.wiki.model import Page
from knowledge.wiki.parse import PARSER_VERSION

__all__ = ["CACHE_FORMAT", "PAGE_CACHE_FILE", "PageCache"]

log = logging.getLogger(__name__)

#: Bump when the layout of the cached data or the home of the pickled classes changes.
CACHE_FORMAT = 2
#: The cache's file name inside a data folder.
PAGE_CACHE_FILE = "pages.pickle"


@dataclass(frozen=True, slots=True)
class PageCache:
    """The cache file at ``path``."""

    path: Path

    @classmethod
    def in_folder(cls, data_dir: Path) -> PageCache:
        return cls(Path(data_dir) / PAGE_CACHE_FILE)

    @staticmethod
    def version() -> str:
        """Changes with the format, the parser, markdown-it-py or the pickled classes' home."""
        mdit = package_version("markdown-it-py")
        return f"{CACHE_FORMAT}/{PARSER_VERSION}/{mdit}/{Page.__module__}"

    def read(self) -> dict[str, Page]:
        """The cached pages by path; empty when missing, stale or unreadable."""
        try:
            with open(self.path, "rb") as fh:
                data = pickle.load(fh)
            if data.get("version") == self.version():
                return data["pages"]
        except FileNotFoundError:
            pass
        except Exception as exc:  # a damaged cache only costs a re-parse
            log.warning("ignoring unreadable page cache %s: %r", self.path, exc)
        return {}

    def write(self, pages: dict[str, Page]) -> None:
        """Replace the cache with ``pages``; a failure is logged, not raised."""
        data = {"version": self.version(), "pages": pages}
        try:
            write_atomic(self.path, pickle.dumps(data, pickle.HIGHEST_PROTOCOL))
        except OSError as exc:
            log.warning("could not write page cache: %s", exc)
