"""Writing files so a reader never sees half of one, and reading files with a bound.

``write_atomic`` is the one way this code base replaces a file: a temp file of its
own in the same folder (so ``os.replace`` never crosses a file system), written,
flushed and fsynced, moved over the target, then the folder fsynced so the rename
itself survives a power cut. Two writers at once each use their own temp file; the
last ``os.replace`` wins and the file is always one whole version.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = [
    "DEFAULT_MODE",
    "FileTooLarge",
    "NotRegularFile",
    "fsync_dir",
    "read_regular_bytes",
    "read_regular_text",
    "write_atomic",
]

#: Permissions of a written file: ``mkstemp`` makes 0600, but a health check or a
#: second process may read our files as another user.
DEFAULT_MODE = 0o644


class FileTooLarge(OSError):
    """A file is larger than the caller allows; ``size`` is its size (or a lower bound)."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


class NotRegularFile(OSError):
    """A path names a FIFO, device, socket or folder, not a regular file."""


def fsync_dir(path: Path) -> None:
    """Flush a folder's entries (a rename in it) to disk; a no-op where unsupported."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(
    path: Path, data: str | bytes, *, encoding: str = "utf-8", mode: int = DEFAULT_MODE
) -> None:
    """Replace ``path`` with ``data`` (text or bytes) in one step; create its folder.

    On any failure the target keeps its old content and no temp file is left behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode(encoding) if isinstance(data, str) else data
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(name, mode)
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
        raise
    fsync_dir(path.parent)


def read_regular_bytes(path: Path, max_bytes: int) -> bytes:
    """The content of ``path`` if it is a regular file of at most ``max_bytes``.

    Symlinks are followed; a folder, device or FIFO raises ``NotRegularFile`` (without
    blocking on it), and a larger file raises ``FileTooLarge``.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise FileTooLarge(
                f"{path} is {info.st_size} bytes, more than {max_bytes}", info.st_size
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise FileTooLarge(f"{path} is more than {max_bytes} bytes", len(data))
    return data


def read_regular_text(path: Path, max_bytes: int, *, encoding: str = "utf-8") -> str:
    """``read_regular_bytes`` decoded (invalid bytes replaced, newlines as written)."""
    return read_regular_bytes(path, max_bytes).decode(encoding, errors="replace")
