"""Unpack a wiki tarball safely: stream it, keep only regular files of wanted kinds.

The archive is read once, front to back (``tarfile`` stream mode), so a huge or
hostile archive is refused as soon as its header says so, before any of it is
written: more members than ``Caps.members``, a file over ``Caps.file_bytes``,
a running total over ``Caps.unpacked_bytes``, a path deeper than ``Caps.depth``.
Refused outright (the whole archive, not only the member): absolute names,
``..``, links (symbolic or hard), devices, FIFOs, sparse members, duplicate
names, and anything outside the archive's top folder. Each member also goes
through Python's own ``tarfile.data_filter``. Files of unwanted kinds (scripts,
anything not a page or an image) are skipped and never written; what is written
is created fresh (``O_EXCL | O_NOFOLLOW``) with mode 0644, so nothing unpacked is
executable. A truncated or corrupt gzip stream stops the extraction with an
:class:`ArchiveError`, and the caller throws the half-written folder away.

GitHub's tarballs hold one top folder (``OWNER-REPO-SHA/``); it is stripped, so
the destination folder is the wiki's root.
"""

from __future__ import annotations

import gzip
import os
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["ArchiveError", "Caps", "Extracted", "extract_tarball"]

MIB = 1024 * 1024
#: Bytes read from a member at a time.
CHUNK = MIB
#: Bytes after the archive's end allowed past ``Caps.unpacked_bytes``: the end-of-archive
#: blocks and the padding of the last record (tar's default record is 10 KiB).
TAIL_SLACK = 64 * 1024
#: Kinds of file kept: the pages and the images they show.
WANTED_SUFFIXES = (".md", ".png", ".jpg", ".jpeg", ".gif", ".webp")


class ArchiveError(Exception):
    """The archive was refused or could not be read; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Caps:
    """Limits on what one fetch may download and unpack (``wiki.max_*`` in the config)."""

    #: Compressed bytes downloaded.
    download_bytes: int = 100 * MIB
    #: Members in the archive (files, folders, everything).
    members: int = 10_000
    #: Bytes written in total.
    unpacked_bytes: int = 512 * MIB
    #: Bytes of one file.
    file_bytes: int = 20 * MIB
    #: Folders deep below the wiki's root.
    depth: int = 16
    suffixes: tuple[str, ...] = WANTED_SUFFIXES


@dataclass(frozen=True, slots=True)
class Extracted:
    members: int
    #: Files written, and how many of them are Markdown pages.
    files: int
    pages: int
    bytes: int
    #: Regular files of kinds not kept (never written).
    skipped: int
    #: The top folder stripped from every name ("" when there was none).
    prefix: str


def extract_tarball(archive: Path, dest: Path, caps: Caps) -> Extracted:
    """Unpack the ``.tar.gz`` at ``archive`` into the empty folder ``dest``."""
    size = archive.stat().st_size
    if size > caps.download_bytes:
        raise ArchiveError(f"archive is {size} bytes, over the cap of {caps.download_bytes}")
    dest.mkdir(parents=True, exist_ok=True)
    state = _State(caps, dest)
    try:
        # gzip.GzipFile rather than mode "r|gz": drained to its end afterwards, it checks
        # the CRC and length, which tarfile's own stream stops short of.
        with open(archive, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            with tarfile.open(fileobj=unzipped, mode="r|") as tar:
                for member in tar:
                    state.take(tar, member)
            # What follows the archive's end counts against the unpacked cap too: a
            # small gzip can hold gigabytes of zeros after a valid archive.
            tail = 0
            while chunk := unzipped.read(CHUNK):
                tail += len(chunk)
                if state.declared + tail > caps.unpacked_bytes + TAIL_SLACK:
                    raise ArchiveError(
                        f"the archive unpacks to more than {caps.unpacked_bytes} bytes"
                        f" ({tail} or more of them after its end)"
                    )
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ArchiveError(f"the archive is truncated or corrupt ({_reason(exc)})") from None
    if state.pages == 0:
        raise ArchiveError("the archive holds no Markdown pages")
    return Extracted(
        members=state.members,
        files=state.files,
        pages=state.pages,
        bytes=state.written,
        skipped=state.skipped,
        prefix=state.prefix or "",
    )


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


class _State:
    def __init__(self, caps: Caps, dest: Path) -> None:
        self.caps = caps
        self.dest = dest
        self.members = 0
        self.files = 0
        self.pages = 0
        self.written = 0
        self.declared = 0
        self.skipped = 0
        #: None until the first member is seen.
        self.prefix: str | None = None
        #: Every member name seen (prefix stripped) -> whether it is a folder.
        self.seen: dict[str, bool] = {"": True}
        #: Folders created so far (named by a member or implied by a file inside them).
        self.made: set[str] = {""}

    def take(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        caps = self.caps
        self.members += 1
        if self.members > caps.members:
            raise ArchiveError(f"the archive has more than {caps.members} members")
        name = member.name
        shown = repr(name[:120])
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ArchiveError(f"member name is not UTF-8: {shown}") from None
        if not name or "\x00" in name or "\\" in name or any(ord(c) < 32 for c in name):
            raise ArchiveError(f"member name with control characters or backslashes: {shown}")
        if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
            raise ArchiveError(f"absolute member name: {shown}")
        parts = [p for p in PurePosixPath(name).parts if p != "."]
        if ".." in parts:
            raise ArchiveError(f"member name with '..': {shown}")
        if member.issym() or member.islnk():
            raise ArchiveError(f"link in the archive: {shown} -> {member.linkname[:120]!r}")
        if member.isdev():
            raise ArchiveError(f"device or FIFO in the archive: {shown}")
        if member.issparse():
            raise ArchiveError(f"sparse member of {member.size} bytes: {shown}")
        if not (member.isfile() or member.isdir()):
            raise ArchiveError(f"unsupported member type {member.type!r}: {shown}")
        _data_filter(member, self.dest)

        if self.prefix is None:
            self.prefix = parts[0] if member.isdir() and len(parts) == 1 else ""
        if self.prefix:
            if not parts or parts[0] != self.prefix:
                raise ArchiveError(f"member outside the archive's top folder: {shown}")
            parts = parts[1:]
        rel = "/".join(parts)
        if len(parts) > caps.depth:
            raise ArchiveError(f"path deeper than {caps.depth} folders: {shown}")
        if not rel and member.isdir():
            return  # the top folder itself
        # A folder's own entry may come after files inside it (the folder was made for
        # them then); any name given twice, or a file named like a folder, is refused.
        if rel in self.seen or (rel in self.made and not member.isdir()):
            raise ArchiveError(f"duplicate member name: {shown}")
        self.seen[rel] = member.isdir()
        if member.isdir():
            return
        if member.size > caps.file_bytes:
            raise ArchiveError(
                f"file {shown} is {member.size} bytes, over the cap of {caps.file_bytes}"
            )
        self.declared += member.size
        if self.declared > caps.unpacked_bytes:
            raise ArchiveError(f"the archive unpacks to more than {caps.unpacked_bytes} bytes")
        lowered = rel.lower()
        hidden = any(p.startswith(".") for p in parts)
        if hidden or not lowered.endswith(caps.suffixes):
            self.skipped += 1
            return
        self._write(tar, member, parts, shown)
        self.files += 1
        if lowered.endswith(".md"):
            self.pages += 1

    def _write(
        self, tar: tarfile.TarFile, member: tarfile.TarInfo, parts: list[str], shown: str
    ) -> None:
        folder = self.dest
        for i, part in enumerate(parts[:-1]):
            key = "/".join(parts[: i + 1])
            folder = folder / part
            if key in self.made:
                continue
            if self.seen.get(key) is False:
                # A file of that name came first: a folder cannot take its place.
                raise ArchiveError(f"member {shown} is below a file, not a folder")
            folder.mkdir(exist_ok=True)
            self.made.add(key)
        target = folder / parts[-1]
        source = tar.extractfile(member)
        if source is None:  # not a regular file after all
            raise ArchiveError(f"unreadable member: {shown}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o644)
        left = member.size
        with os.fdopen(fd, "wb") as out:
            while left > 0:
                chunk = source.read(min(CHUNK, left))
                if not chunk:
                    raise ArchiveError(f"the archive is truncated or corrupt (inside {shown})")
                out.write(chunk)
                left -= len(chunk)
        self.written += member.size


def _data_filter(member: tarfile.TarInfo, dest: Path) -> None:
    """Python's own ``data`` extraction filter, as a second opinion (3.11.4+)."""
    check = getattr(tarfile, "data_filter", None)
    if check is None:
        return
    try:
        check(member, str(dest))
    except tarfile.FilterError as exc:
        raise ArchiveError(f"refused by tarfile's data filter: {_reason(exc)}") from None
