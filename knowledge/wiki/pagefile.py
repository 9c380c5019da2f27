"""One page file read and parsed: the bytes of a regular file within a size cap, then the
:class:`~knowledge.wiki.model.Page` they make (or why the file is skipped).

Both the whole-wiki load (:mod:`knowledge.wiki.load`) and the parse helper process
(:mod:`knowledge.wiki.helper`) read pages through here, so neither needs the other:
the load starts the helper, and the helper only reads pages.
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from knowledge.files import FileTooLarge, NotRegularFile, read_regular_bytes
from knowledge.wiki.model import Page
from knowledge.wiki.parse import PageTooComplex, parse_page

__all__ = [
    "MAX_PAGE_BYTES",
    "content_sha",
    "page_category",
    "parse_bytes",
    "read_bytes",
    "read_page",
]

log = logging.getLogger(__name__)

#: Pages above this size are skipped: the real wiki's largest page is ~150 kB.
MAX_PAGE_BYTES = 2 * 1024 * 1024


def page_category(path: str) -> str:
    parts = PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else "general"


def read_bytes(file: Path) -> tuple[bytes | None, str | None]:
    """The bytes of a page file, or None and why it is skipped."""
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
    return raw, None


def content_sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def parse_bytes(rel: str, raw: bytes) -> tuple[Page | None, str | None]:
    """The page a file's bytes make, or None and why it is skipped."""
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
        category=page_category(rel),
        sections=tuple(sections),
        sha=content_sha(raw),
        size=len(raw),
        problems=tuple(problems),
    )
    return page, None


def read_page(
    root: Path, file: Path, cache: Mapping[str, Page] | None = None
) -> tuple[Page | None, str | None]:
    """One file -> (page, None) or (None, reason it was skipped).

    ``cache`` maps paths to pages parsed before; a page whose bytes hash the
    same is reused instead of parsed again.
    """
    rel = file.relative_to(root).as_posix()
    raw, reason = read_bytes(file)
    if raw is None:
        return None, reason
    cached = cache.get(rel) if cache else None
    if cached is not None and cached.sha == content_sha(raw):
        return cached, None
    return parse_bytes(rel, raw)
