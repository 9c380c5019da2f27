"""The index's folder on disk: generations, their manifests, the ``current`` pointer, the lock.

::

    data_dir/
      build.lock            held by whoever writes (filelock); readers never take it
      current -> gen-...    symlink to the live generation, swapped with os.replace
      gen-.../              engine files + manifest.json (page hashes, statuses, versions,
                            size and CRC-32 of every engine file)

A new generation is filled, its manifest written, every file fsynced, and only
then does ``current`` point at it, so a crash or an exception mid-build leaves
the previous generation serving. A published generation is never written again:
an update fills a copy (:meth:`Store.copy_generation`) and publishes that.

The manifest's checksums are computed when a generation is published and checked
when it is read (CRC-32: ~1 ms per MB; it catches damaged files, not forgery,
since whoever can write the files can write the manifest too). A generation
whose files no longer match is not used, so the caller rebuilds it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import time
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict

from knowledge.files import fsync_dir, write_atomic
from knowledge.search.engine import IndexLockedError
from knowledge.search.layout import CURRENT as _CURRENT

__all__ = [
    "FileSum",
    "Manifest",
    "PageEntry",
    "Store",
    "changed_pages",
    "checksum_files",
    "fsync_tree",
    "verify_files",
]

log = logging.getLogger(__name__)

#: (sha, status, number of sections) of one page.
PageEntry = tuple[str, str, int]
#: (size in bytes, CRC-32 as 8 hex digits) of one file of a generation.
FileSum = tuple[int, str]

_MANIFEST = "manifest.json"
_LOCK = "build.lock"
_GEN_PREFIX = "gen-"


class Manifest(BaseModel):
    """What a generation holds: the engine that wrote it and each page's entry."""

    model_config = ConfigDict(frozen=True, strict=True)

    schema_version: int
    engine_version: str
    #: path -> (sha, status, number of sections)
    pages: dict[str, PageEntry]
    #: file name -> (size, CRC-32) of each engine file, filled in by Store.publish;
    #: None in manifests written before checksums existed (such a generation is rebuilt).
    files: dict[str, FileSum] | None = None

    @property
    def sections(self) -> int:
        return sum(n for _, _, n in self.pages.values())

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, raw: str) -> Manifest:
        """Raises ValueError (pydantic's ValidationError) for anything but a whole manifest."""
        return cls.model_validate_json(raw)


def changed_pages(have: Mapping[str, PageEntry], wanted: Mapping[str, PageEntry]) -> list[str]:
    """Paths added, removed or changed (content or status), sorted."""
    paths = set(have) | set(wanted)
    return sorted(p for p in paths if have.get(p) != wanted.get(p))


def _crc32(path: Path) -> str:
    crc = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return f"{crc:08x}"


def checksum_files(gen_dir: Path) -> dict[str, FileSum]:
    """(size, CRC-32) of every file of ``gen_dir`` but its manifest, by name."""
    return {
        file.name: (file.stat().st_size, _crc32(file))
        for file in sorted(gen_dir.iterdir())
        if file.is_file() and not file.is_symlink() and file.name != _MANIFEST
    }


def verify_files(gen_dir: Path, files: Mapping[str, FileSum] | None) -> str | None:
    """None if every file the manifest lists is there with its size and CRC-32, else why not.

    Sizes are compared first, so a truncated file costs no reading.
    """
    if files is None:
        return "the manifest has no checksums"
    for name, (size, _) in files.items():
        try:
            actual = (gen_dir / name).stat().st_size
        except OSError as exc:
            return f"{name}: {exc.strerror or exc}"
        if actual != size:
            return f"{name} is {actual} bytes, the manifest says {size}"
    for name, (_, crc) in files.items():
        try:
            actual_crc = _crc32(gen_dir / name)
        except OSError as exc:
            return f"{name}: {exc.strerror or exc}"
        if actual_crc != crc:
            return f"{name} fails its checksum"
    return None


def fsync_tree(path: Path) -> None:
    """Flush every file of the folder ``path``, then the folder itself."""
    for file in path.iterdir():
        if file.is_file():
            with open(file, "rb") as handle:
                os.fsync(handle.fileno())
    fsync_dir(path)


class Store:
    """The generations kept in ``data_dir``. Methods that change it need :meth:`lock`."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)

    # -- the build lock ------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, timeout: float) -> Iterator[None]:
        """Hold the build lock, waiting up to ``timeout`` seconds for it (0: try once).

        Raises :class:`IndexLockedError` naming the holder's pid when it can.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / _LOCK
        lock = FileLock(path, timeout=max(0.0, timeout))
        try:
            lock.acquire()
        except Timeout:
            holder = ""
            with contextlib.suppress(OSError, UnicodeDecodeError):
                holder = path.read_text(encoding="ascii").strip()[:16]
            who = f" (pid {holder})" if holder else ""
            raise IndexLockedError(
                f"search index in {self.data_dir} is being written by another "
                f"process{who}; gave up after {timeout:g} s"
            ) from None
        try:
            with contextlib.suppress(OSError):
                path.write_text(str(os.getpid()), encoding="ascii")
            yield
        finally:
            with contextlib.suppress(OSError):
                os.truncate(path, 0)
            lock.release()

    # -- reading -------------------------------------------------------------------

    def read_current(self, *, level: int = logging.WARNING) -> tuple[Path, Manifest] | None:
        """The generation ``current`` points at and its manifest; None if absent or unusable.

        Why it is unusable is logged at ``level`` (lower it for a second look).
        """
        link = self.data_dir / _CURRENT
        if not link.is_symlink() and not link.exists():
            return None
        try:
            gen_dir = (self.data_dir / os.readlink(link)).resolve()
            manifest = self.read_manifest(gen_dir)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # A manifest of the wrong shape was written by another version: say that, not
            # the validator's report (several lines naming fields a user never sees).
            why = "written by another version of wikibot" if hasattr(exc, "errors") else exc
            log.log(level, "search index in %s has no usable manifest (%s); rebuilding", link, why)
            return None
        problem = verify_files(gen_dir, manifest.files)
        if problem is not None:
            log.log(level, "search index in %s is damaged (%s); rebuilding", gen_dir, problem)
            return None
        return gen_dir, manifest

    def read_manifest(self, gen_dir: Path) -> Manifest:
        return Manifest.from_json((gen_dir / _MANIFEST).read_text(encoding="utf-8"))

    def holds_manifest(self, gen_dir: Path) -> bool:
        """False once ``gen_dir`` was removed (by a newer build, perhaps in another process)."""
        return (gen_dir / _MANIFEST).exists()

    # -- writing (with the lock held) ----------------------------------------------

    def new_generation(self) -> Path:
        """A new empty generation folder (not yet current)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        gen_dir = self.data_dir / f"{_GEN_PREFIX}{stamp}-{os.getpid()}-{secrets.token_hex(3)}"
        gen_dir.mkdir()
        return gen_dir

    def copy_generation(self, source: Path) -> Path:
        """A new generation (not yet current) holding copies of ``source``'s engine files.

        Copies, not hard links: the engine may write to a file it opens, and the
        source is live. On failure (a full disk) nothing of the copy is left.
        """
        gen_dir = self.new_generation()
        try:
            for file in source.iterdir():
                if file.is_file() and not file.is_symlink() and file.name != _MANIFEST:
                    shutil.copyfile(file, gen_dir / file.name)
        except BaseException:
            self.discard(gen_dir)
            raise
        return gen_dir

    def write_manifest(self, gen_dir: Path, manifest: Manifest) -> None:
        write_atomic(gen_dir / _MANIFEST, manifest.to_json())

    def publish(self, gen_dir: Path, manifest: Manifest) -> Manifest:
        """Checksum ``gen_dir``'s files into its manifest, write it, flush it all to disk,
        then make it current. Returns the manifest as written."""
        manifest = manifest.model_copy(update={"files": checksum_files(gen_dir)})
        self.write_manifest(gen_dir, manifest)
        fsync_tree(gen_dir)
        self._swap(gen_dir)
        return manifest

    def discard(self, gen_dir: Path) -> None:
        shutil.rmtree(gen_dir, ignore_errors=True)

    def _swap(self, gen_dir: Path) -> None:
        link = self.data_dir / _CURRENT
        if link.exists() and not link.is_symlink():
            # Not ours to replace in one step (os.replace cannot overwrite a folder).
            aside = self.data_dir / f"{_GEN_PREFIX}stale-{secrets.token_hex(3)}"
            os.replace(link, aside)
        tmp = self.data_dir / f".{_CURRENT}.{secrets.token_hex(4)}"
        os.symlink(gen_dir.name, tmp)
        try:
            os.replace(tmp, link)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        fsync_dir(self.data_dir)

    def clean_old(self) -> None:
        """Remove generations other than the current one (call with the build lock)."""
        try:
            keep = Path(os.readlink(self.data_dir / _CURRENT)).name
        except OSError:
            return
        for child in self.data_dir.iterdir():
            if child.name.startswith(_GEN_PREFIX) and child.name != keep:
                shutil.rmtree(child, ignore_errors=True)
            elif child.name.startswith(f".{_CURRENT}.") and child.is_symlink():
                with contextlib.suppress(OSError):
                    child.unlink()

    def clean_if_idle(self) -> None:
        """Clean up after crashed builds, unless someone is building right now."""
        try:
            with self.lock(0):
                self.clean_old()
        except (IndexLockedError, OSError) as exc:
            log.debug("left old index generations alone: %s", exc)
