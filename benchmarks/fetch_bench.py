"""Time following the wiki from a loopback imitation of GitHub: first fetch, a one-page
change, an unchanged check, and the longest event-loop stall meanwhile.

Run from the repository root::

    .venv/bin/python -m benchmarks fetch          # or: python -m benchmarks.fetch_bench

The real wiki (``--wiki``, default ``../shared/wiki-snapshot``) is served as a
GitHub-shaped tarball by ``tests.github_standin`` on 127.0.0.1. Each phase runs
the way the bot runs it: in a worker thread (``asyncio.to_thread``) under an
event loop whose ticker sleeps 1 ms at a time, with the bot's 1 ms switch
interval; the longest gap between two ticks is the stall users would feel.
Targets on the 2-core reference machine: first fetch and index <= 5 s, a one-page
change from check to swapped index <= 2 s, no stall over 100 ms. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from knowledge.service import KnowledgeBase
from knowledge.source import Caps, Follower, HttpSettings, SourceSettings, parse_source
from tests.github_standin import github_standin, tarball, tree_files

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
#: The bot's thread switch interval (bot.client.SWITCH_INTERVAL).
SWITCH_INTERVAL = 0.001


async def _timed(work: Callable[[], Any]) -> tuple[Any, float, float]:
    """``work()`` in a worker thread: (result, seconds, longest loop stall in seconds)."""
    stall = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal stall
        loop = asyncio.get_running_loop()
        while not done.is_set():
            before = loop.time()
            await asyncio.sleep(0.001)
            stall = max(stall, loop.time() - before - 0.001)

    tick = asyncio.create_task(ticker())
    started = time.perf_counter()
    try:
        result = await asyncio.to_thread(work)
    finally:
        took = time.perf_counter() - started
        done.set()
        await tick
    return result, took, stall


def _one_page_changed(files: dict[str, bytes]) -> dict[str, bytes]:
    """The same wiki with one page edited (a paragraph appended to the largest page)."""
    path = max(files, key=lambda p: len(files[p]) if p.endswith(".md") else -1)
    changed = dict(files)
    changed[path] = files[path] + b"\n\nA paragraph added by the benchmark.\n"
    return changed


async def _run(wiki: Path) -> None:
    files = {p: d for p, d in tree_files(wiki).items() if not p.startswith(".")}
    archive = tarball(files)
    print(
        f"wiki: {wiki} ({sum(p.endswith('.md') for p in files)} pages, "
        f"tarball {len(archive) / 1e6:.2f} MB)"
    )
    with github_standin() as gh, tempfile.TemporaryDirectory(prefix="fetch-bench-") as tmp:
        gh.publish("owner", "wiki", "main", archive)
        settings = SourceSettings(
            parse_source("github:owner/wiki"),
            api_url=gh.url,
            caps=Caps(),
            http=HttpSettings(api_url=gh.url),
        )
        data = Path(tmp) / "data"
        with Follower(settings, data, token="") as follower:
            # A fresh machine: first fetch, then the knowledge base opened on it (serve).
            live, fetch_s, fetch_stall = await _timed(follower.ensure)
            kb, index_s, index_stall = await _timed(
                lambda: KnowledgeBase.open(live.path, data, link_base=live.link_base)
            )
            try:
                print(
                    f"first_fetch_s {fetch_s:.2f}  (download + unpack + swap; stall "
                    f"{fetch_stall * 1000:.0f} ms)"
                )
                print(
                    f"first_index_s {index_s:.2f}  (parse + full index; stall "
                    f"{index_stall * 1000:.0f} ms)"
                )
                print(f"first_total_s {fetch_s + index_s:.2f}  (target <= 5 s)")

                result, same_s, same_stall = await _timed(lambda: follower.follow(kb))
                assert not result.outcome.changed
                print(f"unchanged_check_s {same_s:.3f}  (a 304; stall {same_stall * 1000:.0f} ms)")

                gh.publish("owner", "wiki", "main", tarball(_one_page_changed(files)))
                result, change_s, change_stall = await _timed(lambda: follower.follow(kb))
                built = result.built
                assert result.outcome.changed and built is not None
                print(
                    f"one_page_change_s {change_s:.2f}  (check -> download -> unpack -> "
                    f"swap -> index {built.mode}, {built.changed_pages} page; target <= 2 s; "
                    f"stall {change_stall * 1000:.0f} ms)"
                )
                worst = max(fetch_stall, index_stall, same_stall, change_stall)
                print(f"max_loop_stall_ms {worst * 1000:.0f}  (target <= 100 ms)")
            finally:
                kb.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    args = parser.parse_args(argv)
    if not args.wiki.is_dir():
        print(f"fetch benchmark needs a wiki: {args.wiki} not found", file=sys.stderr)
        return 2
    sys.setswitchinterval(SWITCH_INTERVAL)
    asyncio.run(_run(args.wiki))
    return 0


if __name__ == "__main__":
    sys.exit(main())
