"""Read a folder of Markdown pages into a :class:`~knowledge.wiki.model.Wiki`.

Files are read with a size bound and only when they are regular files (a symbolic
link, FIFO or binary file is skipped with a reason); a page whose bytes hash the
same as a page parsed before is reused instead of parsed again.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from knowledge.wiki.model import FileStat, Page, Wiki
from knowledge.wiki.pagefile import content_sha, parse_bytes, read_bytes

__all__ = ["SKIP_DIRS", "WikiFolderError", "check_wiki_folder", "load_wiki", "page_files"]

log = logging.getLogger(__name__)

#: Folders never read (besides those whose name starts with a dot: VCS, tool settings):
#: installed tool files, never pages. A folder named for images or data is read like any
#: other, since a page kept there is still a page (only its ``.md`` files are read).
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})


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


def page_files(root: str | os.PathLike[str]) -> list[str]:
    """The wiki paths of the Markdown files :func:`load_wiki` would read under ``root``
    (before any is refused for its size or content), for counts such as the doctor's."""
    return [rel for rel, _ in _iter_markdown(Path(root), [])]


def _iter_markdown(root: Path, skipped: list[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    """``(wiki path, file name)`` of the Markdown files under ``root``, in a stable order
    (the names as strings: a status is taken of every one, at 10x the wiki in thousands);
    a sub-folder that cannot be listed goes to ``skipped``."""

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
        folder = Path(dirpath)
        prefix = folder.relative_to(root).as_posix() + "/" if folder != root else ""
        for name in sorted(filenames):
            if name.lower().endswith(".md") and not name.startswith("."):
                yield prefix + name, os.path.join(dirpath, name)


def load_wiki(
    root: str | os.PathLike[str],
    cache: Mapping[str, Page] | None = None,
    *,
    helper_min_bytes: int | None = None,
    stats: Mapping[str, FileStat] | None = None,
) -> Wiki:
    """Load every Markdown page under ``root``. Bad pages are skipped with a reason.

    Pages in ``cache`` (e.g. the previous load's ``Wiki.pages``, or the page cache's
    :class:`~knowledge.wiki.cache.CachedPages`) are reused when their content is
    unchanged, which makes a reload cost little more than reading the files; with
    ``stats`` (the previous load's ``Wiki.stats``), a file whose status vouches for
    the cached page (:meth:`FileStat.vouches_for`) is not even read. With
    ``helper_min_bytes``, when pages of at least that many bytes need parsing, a
    second process parses some of them meanwhile (:mod:`knowledge.wiki.helper`):
    the same wiki, sooner on two cores. A wiki folder that is missing, not a folder
    or cannot be listed raises :class:`WikiFolderError` (never an empty wiki); a
    sub-folder that cannot be listed is skipped with its reason.
    """
    root_path = check_wiki_folder(root)
    started = time.time_ns()
    wiki = Wiki(root=root_path, pages={})
    #: per file, in order: (wiki path, page or None, reason skipped)
    results: list[tuple[str, Page | None, str | None]] = []
    todo: list[tuple[int, Path, bytes]] = []
    for rel, file in _iter_markdown(root_path, wiki.skipped):
        try:
            info: os.stat_result | None = os.lstat(file)
        except OSError:
            info = None  # said when the file is read
        cached = cache.get(rel) if cache else None
        known = stats.get(rel) if stats else None
        if (
            cached is not None
            and known is not None
            and info is not None
            and cached.sha == known.sha
            and known.vouches_for(info)
        ):
            wiki.stats[rel] = known
            results.append((rel, cached, None))
            continue
        raw, reason = read_bytes(Path(file))
        if raw is None:
            results.append((rel, None, reason))
            continue
        sha = content_sha(raw)
        if info is not None:
            wiki.stats[rel] = FileStat.of(sha, info, started)
        if cached is not None and cached.sha == sha:
            results.append((rel, cached, None))
            continue
        todo.append((len(results), Path(file), raw))
        results.append((rel, None, None))
    parsed = _parse_all(root_path, todo, helper_min_bytes)
    for (index, _, _), (page, reason) in zip(todo, parsed, strict=True):
        results[index] = (results[index][0], page, reason)
    for rel, page, reason in results:
        if page is None:
            # Said once per change by the knowledge base, not on every load.
            log.debug("skipped %s: %s", rel, reason)
            wiki.skipped.append((rel, reason or "unknown"))
            wiki.stats.pop(rel, None)
            continue
        for problem in page.problems:
            log.info("page %s: %s", page.path, problem)
        wiki.pages[page.path] = page
    return wiki


def _parse_all(
    root: Path, todo: list[tuple[int, Path, bytes]], helper_min_bytes: int | None
) -> list[tuple[Page | None, str | None]]:
    """The pages of the files in ``todo`` (their bytes read), in order: parsed here, or
    with a helper process when they hold at least ``helper_min_bytes`` bytes."""
    raw = {file: data for _, file, data in todo}

    def here(file: Path) -> tuple[Page | None, str | None]:
        return parse_bytes(file.relative_to(root).as_posix(), raw[file])

    files = [file for _, file, _ in todo]
    if helper_min_bytes is None or sum(map(len, raw.values())) < helper_min_bytes or not files:
        return [here(file) for file in files]
    from knowledge.wiki.helper import parse_files  # a process and a socket: only when used

    return parse_files(root, files, here)
