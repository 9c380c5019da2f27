"""Generations of the fetched wiki, one folder per commit, and the pointer to the live one.

Layout, under ``<data>/fetched/``::

    live -> c-<id>        symlink to the live generation, swapped with os.replace
    c-<id>/               the wiki's pages as fetched (the archive's top folder stripped)
    c-<id>.json           what that generation is: source, commit, when it was fetched
    state.json            the checks: ETag, last check, last error, retry time
    .lock                 flock held by whoever fetches (one fetch at a time)
    .tmp-*/  .live-*      work in progress; removed by the next fetch

A new generation is unpacked under ``.tmp-*``, checked, fsynced, renamed to
``c-<id>``, described in ``c-<id>.json``, and only then does ``live`` move to it
(a new symlink renamed over the old one: atomic). A crash before that rename
leaves the old generation live; after it, the new one. The previous generation
stays until the next swap succeeds, so a process still reading it is not cut
short; older ones and leftovers are removed under the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import secrets
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from knowledge.files import fsync_dir, write_atomic

__all__ = ["FETCHED_DIR", "Generation", "SourceState", "Store", "StoreBusy"]

log = logging.getLogger(__name__)

FETCHED_DIR = "fetched"
_LIVE = "live"
_STATE = "state.json"
_GEN = "c-"
_TMP = ".tmp-"
_TMP_LINK = ".live-"


class StoreBusy(Exception):
    """Another process is fetching into the same data folder right now."""


@dataclass(frozen=True, slots=True)
class Generation:
    #: The commit's SHA (GitHub), or ``u`` + the archive's SHA-256 (a URL source).
    id: str
    path: Path
    source: str = ""
    commit: str = ""
    fetched_at: float = 0.0
    pages: int = 0
    files: int = 0
    bytes: int = 0
    #: Where page links of this generation point, and the commit's web page (GitHub).
    link_base: str | None = None
    commit_url: str | None = None


@dataclass(frozen=True, slots=True)
class SourceState:
    """What the checks found; shown by ``/wiki status``."""

    source: str = ""
    #: ETag of the last answer that matched the live generation.
    etag: str | None = None
    checked_at: float = 0.0
    #: One line; None after a check that worked.
    last_error: str | None = None
    #: Epoch seconds before which checking again is pointless (rate limited).
    retry_at: float = 0.0
    #: Checks that failed in a row.
    failures: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class Store:
    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir) / FETCHED_DIR

    # --- reading ----------------------------------------------------------------

    def live(self) -> Generation | None:
        """The live generation, or None before the first successful fetch."""
        try:
            name = os.readlink(self.root / _LIVE)
        except OSError:
            return None
        path = self.root / name
        if not name.startswith(_GEN) or "/" in name or not path.is_dir():
            log.warning("fetched wiki: %s points at %r, which is not a generation", _LIVE, name)
            return None
        return self._describe(name[len(_GEN) :], path)

    def _describe(self, gen_id: str, path: Path) -> Generation:
        meta = _read_json(self.root / f"{_GEN}{gen_id}.json")
        known = {f.name for f in fields(Generation)} - {"id", "path"}
        values = {k: v for k, v in meta.items() if k in known}
        try:
            return Generation(id=gen_id, path=path, **values)
        except TypeError:
            return Generation(id=gen_id, path=path)

    def state(self) -> SourceState:
        data = _read_json(self.root / _STATE)
        known = {f.name for f in fields(SourceState)}
        try:
            return SourceState(**{k: v for k, v in data.items() if k in known})
        except TypeError:
            return SourceState()

    # --- writing (call these inside :meth:`locked`) -------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the fetch lock; :class:`StoreBusy` if another process holds it."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise StoreBusy("another fetch into this data folder is running") from None
                raise
            yield
        finally:
            os.close(fd)

    def write_state(self, state: SourceState) -> None:
        _write_json_atomic(self.root / _STATE, asdict(state))

    def update_state(self, **changes: Any) -> SourceState:
        state = replace(self.state(), **changes)
        self.write_state(state)
        return state

    def new_work_dir(self) -> Path:
        path = self.root / f"{_TMP}{secrets.token_hex(6)}"
        path.mkdir(parents=True)
        return path

    def install(self, tree: Path, generation: Generation) -> Generation:
        """Make the fully written ``tree`` the live generation; returns it as installed."""
        name = f"{_GEN}{generation.id}"
        target = self.root / name
        live = self.live()
        if live is not None and live.id == generation.id:
            raise ValueError(f"generation {generation.id} is live already")
        _fsync_tree(tree)
        if target.exists():  # fetched before and kept as the previous one: replace it
            shutil.rmtree(target)
        os.rename(tree, target)
        installed = replace(generation, path=target)
        meta = {k: v for k, v in asdict(installed).items() if k not in ("id", "path")}
        _write_json_atomic(self.root / f"{name}.json", meta)
        link = self.root / f"{_TMP_LINK}{secrets.token_hex(4)}"
        os.symlink(name, link)
        try:
            os.replace(link, self.root / _LIVE)
        except BaseException:
            with contextlib.suppress(OSError):
                link.unlink()
            raise
        fsync_dir(self.root)
        self.clean(keep={generation.id, *([live.id] if live else [])})
        return installed

    def relabel(self, generation: Generation) -> Generation:
        """Record new facts (source, links) about the live generation, its files as they
        are; returns it as recorded."""
        live = self.live()
        if live is None or live.id != generation.id:
            raise ValueError(f"generation {generation.id} is not the live one")
        relabelled = replace(generation, path=live.path)
        meta = {k: v for k, v in asdict(relabelled).items() if k not in ("id", "path")}
        _write_json_atomic(self.root / f"{_GEN}{generation.id}.json", meta)
        return relabelled

    def clean(self, keep: set[str] | None = None) -> None:
        """Remove leftovers of interrupted fetches and generations other than ``keep``
        (default: the live one and the one before it)."""
        if keep is None:
            live = self.live()
            keep = {live.id} if live else set()
            keep |= {self._previous_id(live)} - {""}
        if not self.root.is_dir():
            return
        for child in self.root.iterdir():
            name = child.name
            if name.startswith(_TMP):
                shutil.rmtree(child, ignore_errors=True)
            elif name.startswith(_TMP_LINK) or (name.startswith(".") and name.endswith(".tmp")):
                with contextlib.suppress(OSError):
                    child.unlink()
            elif name.startswith(_GEN):
                gen_id = name[len(_GEN) :].removesuffix(".json")
                if gen_id in keep:
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        child.unlink()

    def _previous_id(self, live: Generation | None) -> str:
        """The newest generation other than the live one, by its fetch time."""
        best, when = "", -1.0
        for meta in self.root.glob(f"{_GEN}*.json"):
            gen_id = meta.name[len(_GEN) : -len(".json")]
            if live is not None and gen_id == live.id:
                continue
            if not (self.root / f"{_GEN}{gen_id}").is_dir():
                continue
            fetched = _read_json(meta).get("fetched_at", 0.0)
            if isinstance(fetched, int | float) and fetched > when:
                best, when = gen_id, float(fetched)
        return best


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable %s: %r", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True))


#: Threads flushing a new generation's files at once.
_FSYNC_THREADS = 8


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    """Flush every file and folder under ``root`` to disk (power loss, not only crashes).

    The files are flushed by several threads at once (``fsync`` waits without the
    GIL): the file system commits their waits together instead of one journal commit
    per file, which on a disk busy with other writers made a wiki's few hundred files
    take a second. The folders follow, once their files are down.
    """
    files: list[str] = []
    folders: list[str] = []
    for dirpath, _dirnames, filenames in os.walk(root):
        folders.append(dirpath)
        files.extend(os.path.join(dirpath, name) for name in filenames)
    with ThreadPoolExecutor(_FSYNC_THREADS, thread_name_prefix="fsync") as pool:
        for _ in pool.map(_fsync_file, files):
            pass
    for folder in folders:
        fsync_dir(Path(folder))
