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
from collections import ChainMap
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from knowledge.files import FileTooLarge, NotRegularFile, read_regular_bytes
from knowledge.wiki.model import Page, Wiki
from knowledge.wiki.parse import PageTooComplex, parse_page

__all__ = [
    "MAX_PAGE_BYTES",
    "SKIP_DIRS",
    "WikiFolderError",
    "check_wiki_folder",
    "load_wiki",
    "read_page",
]

log = logging.getLogger(__name__)

#: Pages above this size are skipped: the real wiki's largest page is ~150 kB.
MAX_PAGE_BYTES = 2 * 1024 * 1024
#: Folders never read: images and other non-page data, VCS and tool folders.
SKIP_DIRS = frozenset({"images", "img", "assets", "data", "node_modules", "__pycache__"})


class WikiFolderError(OSError):
    """The wiki folder is missing, is not a folder, or cannot be listed.

    ``problem`` is ``"missing"``, ``"not_a_folder"`` or ``"unreadable"``; ``path``
    the folder as given and ``reason`` the system's words (empty when missing).
    """

    def __init__(self, path: Path, problem: str, reason: str = "") -> None:
        super().__init__(
            {
                "missing": f"wiki folder not found: {path}",
                "not_a_folder": f"wiki folder {path} is not a folder",
            }.get(problem, f"wiki folder {path} cannot be read: {reason}")
        )
        self.path = path
        self.problem = problem
        self.reason = reason


def check_wiki_folder(root: str | os.PathLike[str]) -> Path:
    """``root`` resolved, once it is a folder this process can list; else WikiFolderError."""
    path = Path(root)
    if not path.exists():
        raise WikiFolderError(path, "missing")
    if not path.is_dir():
        raise WikiFolderError(path, "not_a_folder")
    try:
        with os.scandir(path) as entries:
            next(entries, None)
    except OSError as exc:
        raise WikiFolderError(path, "unreadable", exc.strerror or str(exc)) from exc
    return path.resolve()


def _category(path: str) -> str:
    parts = PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else "general"


def _iter_markdown(root: Path, skipped: list[tuple[str, str]]) -> Iterable[Path]:
    """Markdown files under ``root``; a sub-folder that cannot be listed goes to ``skipped``."""

    def unreadable(exc: OSError) -> None:
        folder = Path(exc.filename or root)
        if folder == root:
            raise WikiFolderError(root, "unreadable", exc.strerror or str(exc)) from exc
        rel = folder.relative_to(root).as_posix() + "/"
        reason = f"unreadable folder: {exc.strerror or exc}"
        log.warning("skipped %s: %s", rel, reason)
        skipped.append((rel, reason))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
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


def load_wiki(
    root: str | os.PathLike[str],
    cache: Mapping[str, Page] | None = None,
    *,
    helper_min_bytes: int | None = None,
) -> Wiki:
    """Load every Markdown page under ``root``. Bad pages are skipped with a reason.

    Pages in ``cache`` (e.g. the previous load's ``Wiki.pages``) are reused when
    their content is unchanged, which makes a reload cost little more than reading
    the files. With ``helper_min_bytes``, when pages of at least that many bytes
    need parsing, a second process parses some of them meanwhile
    (:mod:`knowledge.wiki.helper`): the same wiki, sooner on two cores. A wiki
    folder that is missing, not a folder or cannot be listed raises
    :class:`WikiFolderError` (never an empty wiki); a sub-folder that cannot be
    listed is skipped with its reason.
    """
    root_path = check_wiki_folder(root)
    if helper_min_bytes is not None:
        cache = _parsed_ahead(root_path, cache, helper_min_bytes)
    wiki = Wiki(root=root_path, pages={})
    for file in _iter_markdown(root_path, wiki.skipped):
        page, reason = read_page(root_path, file, cache)
        if page is None:
            rel = file.relative_to(root_path).as_posix()
            # Said once per change by the knowledge base, not on every load.
            log.debug("skipped %s: %s", rel, reason)
            wiki.skipped.append((rel, reason or "unknown"))
            continue
        for problem in page.problems:
            log.info("page %s: %s", page.path, problem)
        wiki.pages[page.path] = page
    return wiki


def _parsed_ahead(
    root: Path, cache: Mapping[str, Page] | None, min_bytes: int
) -> Mapping[str, Page] | None:
    """``cache`` with the pages it lacks parsed ahead, in two processes, when they hold at
    least ``min_bytes`` bytes; else ``cache`` itself. The load then takes them from it."""
    todo: list[Path] = []
    size = 0
    for file in _iter_markdown(root, []):  # unreadable folders are said by the load
        try:
            if file.is_symlink():
                continue
            raw = read_regular_bytes(file, MAX_PAGE_BYTES)
        except OSError:
            continue  # said by the load
        if b"\x00" in raw[:8192]:
            continue
        rel = file.relative_to(root).as_posix()
        cached = cache.get(rel) if cache else None
        if cached is None or cached.sha != hashlib.sha256(raw).hexdigest()[:16]:
            todo.append(file)
            size += len(raw)
    if size < min_bytes:
        return cache
    from knowledge.wiki.helper import parse_files  # a process and a socket: only when used

    ahead = {
        page.path: page
        for page, _ in parse_files(root, todo, lambda file: read_page(root, file))
        if page is not None
    }
    return ChainMap(ahead, cache) if cache else ahead
