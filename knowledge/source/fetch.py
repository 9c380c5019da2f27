"""One check of the source: resolve, download, unpack, check, swap. Synchronous; run it in
a worker thread from async code.

The live generation only ever moves to a generation that was downloaded in full,
unpacked within the caps and passed ``check``; anything else raises
:class:`~knowledge.source.http.FetchError`, :class:`~knowledge.source.extract.ArchiveError`
or :class:`~knowledge.source.store.StoreBusy`, records the error in the state and
leaves the live generation as it was.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from .extract import ArchiveError, Caps, Extracted, extract_tarball
from .http import FetchError, RateLimited, WikiHttp
from .spec import Source
from .store import Generation, Store

__all__ = ["CheckFailed", "FetchOutcome", "fetch_once"]

log = logging.getLogger(__name__)

#: Called with the unpacked tree before it goes live; raises to refuse it.
TreeCheck = Callable[[Path], None]


class CheckFailed(Exception):
    """The unpacked wiki was refused by the caller's check (it cannot be served)."""


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    #: The generation live after this check.
    live: Generation
    #: True when a new generation went live.
    changed: bool
    #: The generation live before (None on the first fetch).
    previous: Generation | None = None
    extracted: Extracted | None = None
    #: Seconds spent downloading and unpacking (0 when unchanged).
    seconds: float = 0.0


def fetch_once(
    store: Store,
    source: Source,
    http: WikiHttp,
    caps: Caps,
    *,
    check: TreeCheck | None = None,
    clock: Callable[[], float] = time.time,
) -> FetchOutcome:
    """Bring the store's live generation up to date with ``source`` (one check)."""
    with store.locked():
        store.clean()
        try:
            # One deadline for the commit lookup and the download, whatever the server does.
            with http.time_limit():
                outcome = _fetch(store, source, http, caps, check, clock)
        except (FetchError, ArchiveError, CheckFailed, OSError) as exc:
            state = store.state()
            retry_at = clock() + exc.wait if isinstance(exc, RateLimited) else 0.0
            same = state.source == source.text
            store.update_state(
                source=source.text,
                etag=state.etag if same else None,
                checked_at=clock(),
                last_error=_one_line(exc),
                retry_at=retry_at,
                failures=(state.failures if same else 0) + 1,
            )
            raise
        return outcome


def _fetch(
    store: Store,
    source: Source,
    http: WikiHttp,
    caps: Caps,
    check: TreeCheck | None,
    clock: Callable[[], float],
) -> FetchOutcome:
    state = store.state()
    live = store.live()
    # When the config names another source now, its wiki is fetched afresh.
    live_for_source = live if live is not None and live.source == source.text else None
    # An ETag only says "unchanged" about the generation it was stored with.
    etag = state.etag if live_for_source is not None and state.source == source.text else None

    def unchanged(new_etag: str | None, serving: Generation | None = None) -> FetchOutcome:
        serving = serving or live_for_source
        assert serving is not None
        store.update_state(
            source=source.text,
            etag=new_etag,
            checked_at=clock(),
            last_error=None,
            retry_at=0.0,
            failures=0,
        )
        return FetchOutcome(serving, changed=False, previous=None)

    def same_tree(commit: str, new_etag: str | None) -> FetchOutcome:
        """The live generation holds this content already, fetched under another source
        string (``@main`` pinned to its commit, a fork at the same commit, the same
        tarball at another URL): serve it, now named after this source."""
        assert live is not None
        relabelled = replace(
            live,
            source=source.text,
            link_base=source.page_base(http.settings.api_url, commit) if commit else None,
            commit_url=source.commit_url(http.settings.api_url, commit) if commit else None,
        )
        log.info("%s: %s is live already (from %s); serving it", source.text, live.id, live.source)
        return unchanged(new_etag, store.relabel(relabelled))

    started = time.perf_counter()
    work = store.new_work_dir()
    try:
        archive = work / "archive.tar.gz"
        if source.is_github:
            resolved = http.resolve(source, etag)
            if resolved.commit is None:
                return unchanged(etag)
            if live_for_source is not None and live_for_source.commit == resolved.commit:
                return unchanged(resolved.etag)
            if live is not None and live.id == resolved.commit:
                return same_tree(resolved.commit, resolved.etag)
            commit, new_etag = resolved.commit, resolved.etag
            url = http.settings.api_url + source.tarball_path(commit)
            http.download(
                url,
                archive,
                limit=caps.download_bytes,
                what=f"{source.text}: the tarball of {commit[:12]}",
                auth=True,
            )
            gen_id = commit
        else:
            got = http.download(
                source.url,
                archive,
                limit=caps.download_bytes,
                etag=etag,
                what=f"{source.text}",
            )
            if not got.changed:
                return unchanged(etag)
            commit, new_etag = "", got.etag
            gen_id = "u" + got.sha256[:40]
            if live_for_source is not None and live_for_source.id == gen_id:
                return unchanged(new_etag)
            if live is not None and live.id == gen_id:
                return same_tree("", new_etag)
        tree = work / "tree"
        extracted = extract_tarball(archive, tree, caps)
        archive.unlink()
        if check is not None:
            check(tree)
        generation = Generation(
            id=gen_id,
            path=tree,
            source=source.text,
            commit=commit,
            fetched_at=clock(),
            pages=extracted.pages,
            files=extracted.files,
            bytes=extracted.bytes,
            link_base=source.page_base(http.settings.api_url, commit) if commit else None,
            commit_url=source.commit_url(http.settings.api_url, commit) if commit else None,
        )
        installed = store.install(tree, generation)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    store.update_state(
        source=source.text,
        etag=new_etag,
        checked_at=clock(),
        last_error=None,
        retry_at=0.0,
        failures=0,
    )
    took = time.perf_counter() - started
    log.info(
        "fetched %s at %s: %d pages, %d files, %d bytes in %.2f s",
        source.text,
        commit[:12] or gen_id[:13],
        extracted.pages,
        extracted.files,
        extracted.bytes,
        took,
    )
    return FetchOutcome(installed, True, live, extracted, took)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
