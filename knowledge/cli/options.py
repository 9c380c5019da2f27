"""What every knowledge command shares: the ``--wiki``/``--data`` options and a progress bar."""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge.paths import default_data_dir, demo_wiki_dir
from knowledge.templates import Templates
from knowledge.wiki.load import WikiFolderError, check_wiki_folder

if TYPE_CHECKING:
    from tqdm import tqdm

    from knowledge.service import KnowledgeBase, Progress

__all__ = [
    "add_wiki_options",
    "fetched_link_base",
    "open_knowledge",
    "paused_gc",
    "progress_bar",
    "wiki_folders",
    "wiki_problem",
]


def add_wiki_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wiki",
        type=Path,
        default=None,
        help="wiki folder (default: the demo wiki shipped with the package)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="data folder for the index (default: per-wiki cache folder); without --wiki,"
        " the wiki fetched into it by `wikibot wiki fetch` is used",
    )


#: The line for each problem a wiki folder can have (see WikiFolderError).
_WIKI_PROBLEMS = {
    "missing": "cli.wiki_not_found",
    "not_a_folder": "cli.wiki_not_a_folder",
    "unreadable": "cli.wiki_unreadable",
}


def wiki_problem(exc: WikiFolderError, t: Templates) -> str:
    """One line saying what is wrong with the wiki folder."""
    return t(_WIKI_PROBLEMS[exc.problem], path=exc.path, reason=exc.reason)


def wiki_folders(args: argparse.Namespace, t: Templates) -> tuple[Path, Path]:
    """The wiki and data folders the options name (defaults: the wiki fetched into
    ``--data`` by ``wikibot wiki fetch`` if any, else the demo wiki; per-wiki cache).

    Exits with one line when the wiki folder is missing, a file, or cannot be read.
    """
    if args.wiki is None and args.data is not None:
        from knowledge.source.follow import fetched_wiki  # httpx: only for a fetched wiki

        fetched = fetched_wiki(args.data)
        if fetched is not None:
            return fetched.path, args.data
    wiki = args.wiki if args.wiki is not None else demo_wiki_dir()
    try:
        check_wiki_folder(wiki)
    except WikiFolderError as exc:
        raise SystemExit(wiki_problem(exc, t)) from None
    return wiki, args.data if args.data is not None else default_data_dir(wiki)


def open_knowledge(
    args: argparse.Namespace,
    t: Templates,
    *,
    progress: Progress | None = None,
    lazy_index: bool = False,
) -> KnowledgeBase:
    """The knowledge base for a read-only command: without a usable data folder (or
    when the first index build fails) it answers from an index in memory.

    ``lazy_index``: open the search index only when an answer needs it (one command).
    """
    from knowledge.service import KnowledgeBase  # the wiki and its answers: only when opened

    wiki, data = wiki_folders(args, t)
    try:
        return KnowledgeBase.open(
            wiki,
            data,
            link_base=fetched_link_base(args),
            progress=progress,
            memory_fallback=True,
            templates=t,
            lazy_index=lazy_index,
        )
    except WikiFolderError as exc:  # became unreadable since the check above
        raise SystemExit(wiki_problem(exc, t)) from None


def fetched_link_base(args: argparse.Namespace) -> str | None:
    """Page links of a fetched wiki point at its commit on GitHub."""
    if args.wiki is not None or args.data is None:
        return None
    from knowledge.source.follow import fetched_wiki

    fetched = fetched_wiki(args.data)
    return fetched.link_base if fetched is not None else None


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Progress]:
    """A progress callback drawing a tqdm bar on standard error, if that is a terminal.

    The bar appears at the first report (so a reused index draws nothing) and is
    closed on leaving the block, whatever happens inside it.
    """
    bar: tqdm | None = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            from tqdm import tqdm  # only when an index is being built

            # disable=None: no output at all when stderr is not a terminal.
            bar = tqdm(total=total, desc=label, unit="page", file=sys.stderr, disable=None)
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        if bar is not None:
            bar.close()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the block (on again after it, if it was).

    For a command that loads the wiki once and ends: reference counting still frees
    everything that is not in a cycle.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
