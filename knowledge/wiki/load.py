"""Read a folder of Markdown pages into a :class:`~knowledge.wiki.model.Wiki`.

Files are read with a size bound and only when they are regular files (a symbolic
link, FIFO or binary file is skipped with a reason); a page whose bytes hash the
same as a page parsed before is reused instead of parsed again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from knowledge.files import FileTooLarge, NotRegularFile, read_regular_bytes
from knowledge.wiki.model import Page, Wiki
from knowledge.wiki.parse import PageTooComplex, parse_page

__all__ = ["MAX_PAGE_BYTES", "SKIP_DIRS", "load_wiki", "read_page"]

log = logging.getLogger(__name__)

#: Pages above this size are skipped: the real wiki's largest page is ~150 kB.
MAX_PAGE_BYTES = 2 * 1024 * 1024
#: Folders never read: images and other non-page data, VCS and tool folders.
SKIP_DIRS = frozenset({"images", "img", "assets", "data", "node_modules", "__pycache__"})


def _category(path: str) -> str:
    parts = PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else "general"


def _iter_markdown(root: Path) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d.lower() not in SKIP_DIRS
        )
        for name in sorted(filenames):
            if name.lower().endswith(".md") and not name.startswith("."):
                yield Path(dirpath) / name


def read_page(
    root: Path, file: Path, cache: Mapping[str, Page] | None = None
) -> tuple[Page | None, str | None]:
    """One file -> (page, None) or (None, reason it was skipped).

    ``cache`` maps paths to pages parsed before; a page whose bytes hash the
    same is reused instead of parsed again.
    """
    rel = file.relative_to(root).as_posix()
    try:
        if file.is_symlink():
            return None, "symbolic link"
        raw = read_regular_bytes(file, MAX_PAGE_BYTES)
    except FileTooLarge as exc:
        return None, f"too large ({exc.size} bytes > {MAX_PAGE_BYTES})"
    except NotRegularFile:
        return None, "not a regular file"
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if b"\x00" in raw[:8192]:
        return None, "binary content"
    sha = hashlib.sha256(raw).hexdigest()[:16]
    cached = cache.get(rel) if cache else None
    if cached is not None and cached.sha == sha:
        return cached, None
    problems: list[str] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        problems.append("invalid UTF-8 replaced")
    text = unicodedata.normalize("NFC", text.lstrip("\ufeff"))
    try:
        title, sections, parse_problems = parse_page(rel, text)
    except PageTooComplex as exc:
        return None, str(exc)
    except Exception as exc:  # a parser bug must not take the whole wiki down
        log.warning("page %s could not be parsed: %r", rel, exc)
        return None, f"parse error: {type(exc).__name__}"
    problems.extend(parse_problems)
    page = Page(
        path=rel,
        title=title,
        category=_category(rel),
        sections=tuple(sections),
        sha=sha,
        size=len(raw),
        problems=tuple(problems),
    )
    return page, None


def load_wiki(root: str | os.PathLike[str], cache: Mapping[str, Page] | None = None) -> Wiki:
    """Load every Markdown page under ``root``. Bad pages are skipped with a reason.

    Pages in ``cache`` (e.g. the previous load's ``Wiki.pages``) are reused when
    their content is unchanged, which makes a reload cost little more than reading
    the files.
    """
    root_path = Path(root).resolve()
    if not root_path.is_dir():
        raise FileNotFoundError(f"wiki folder not found: {root_path}")
    wiki = Wiki(root=root_path, pages={})
    for file in _iter_markdown(root_path):
        page, reason = read_page(root_path, file, cache)
        if page is None:
            rel = file.relative_to(root_path).as_posix()
            log.warning("skipped %s: %s", rel, reason)
            wiki.skipped.append((rel, reason or "unknown"))
            continue
        for problem in page.problems:
            log.info("page %s: %s", page.path, problem)
        wiki.pages[page.path] = page
    return wiki
