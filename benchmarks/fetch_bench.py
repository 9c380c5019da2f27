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
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge.service import KnowledgeBase
from knowledge.source import Caps, Follower, HttpSettings, SourceSettings, parse_source
from tests.github_standin import github_standin, tarball, tree_files

__all__ = ["Timed", "main"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
#: The bot's thread switch interval (bot.client.SWITCH_INTERVAL).
SWITCH_INTERVAL = 0.001


@dataclass(frozen=True, slots=True)
class Timed:
    result: Any
    #: Wall-clock seconds.
    seconds: float
    #: CPU seconds of this process (all threads) and of child processes (the index
    #: build runs in one; the loopback server's threads count too): the figure to read
    #: when the machine is busy.
    cpu: float
    #: The longest gap between two ticks of the event loop, in seconds.
    stall: float

    def line(self, name: str, what: str, target: str = "") -> str:
        aim = f"; target {target}" if target else ""
        return (
            f"{name} {self.seconds:.2f}  ({what}; cpu {self.cpu:.2f} s{aim}; "
            f"stall {self.stall * 1000:.0f} ms)"
        )


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def _timed(work: Callable[[], Any]) -> Timed:
    """``work()`` in a worker thread, timed, with the event loop ticking meanwhile."""
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
    started, cpu = time.perf_counter(), _cpu()
    try:
        result = await asyncio.to_thread(work)
    finally:
        took, cpu = time.perf_counter() - started, _cpu() - cpu
        done.set()
        await tick
    return Timed(result, took, cpu, stall)


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
            fetch = await _timed(follower.ensure)
            live = fetch.result
            index = await _timed(
                lambda: KnowledgeBase.open(live.path, data, link_base=live.link_base)
            )
            kb = index.result
            try:
                print(fetch.line("first_fetch_s", "download + unpack + swap"))
                built = kb.state.built
                what = f"parse + full index; the index {built.mode} in {built.seconds:.2f} s"
                print(index.line("first_index_s", what))
                total, total_cpu = fetch.seconds + index.seconds, fetch.cpu + index.cpu
                print(f"first_total_s {total:.2f}  (cpu {total_cpu:.2f} s; target <= 5 s)")

                same = await _timed(lambda: follower.follow(kb))
                assert not same.result.outcome.changed
                print(same.line("unchanged_check_s", "a 304"))

                gh.publish("owner", "wiki", "main", tarball(_one_page_changed(files)))
                change = await _timed(lambda: follower.follow(kb))
                changed = change.result.built
                assert change.result.outcome.changed and changed is not None
                what = (
                    f"check -> download -> unpack -> swap -> index {changed.mode}, "
                    f"{changed.changed_pages} page"
                )
                print(change.line("one_page_change_s", what, "<= 2 s"))
                worst = max(t.stall for t in (fetch, index, same, change))
                print(f"max_loop_stall_ms {worst * 1000:.0f}  (target <= 100 ms)")
                print(f"load_average {os.getloadavg()[0]:.1f}  ({os.cpu_count()} cores)")
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
