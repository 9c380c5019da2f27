"""Command-line commands that need no Discord: console, ask, index.

``bot.cli`` adds ``serve`` and ``sync`` to the same parser and is the
``wikibot`` entry point; nothing here imports discord.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from pathlib import Path

from knowledge.cli.console import dispatch, render_text
from knowledge.service import KnowledgeBase, default_data_dir, demo_wiki_dir

__all__ = ["add_knowledge_commands", "open_knowledge", "progress_bar"]

log = logging.getLogger(__name__)


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
        help="data folder for the index (default: per-wiki cache folder)",
    )


def progress_bar(stream=sys.stderr):
    """A progress callback drawing ``[####....] 120/282`` on a terminal."""
    state = {"last": 0.0}

    def update(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - state["last"] < 0.05:
            return
        state["last"] = now
        width = 30
        filled = int(width * done / total) if total else width
        stream.write(f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return update


def _folders(args: argparse.Namespace) -> tuple[Path, Path]:
    """The wiki and data folders the options name (defaults: demo wiki, per-wiki cache)."""
    wiki = args.wiki if args.wiki is not None else demo_wiki_dir()
    if not wiki.is_dir():
        raise SystemExit(f"wikibot: wiki folder not found: {wiki}")
    return wiki, args.data if args.data is not None else default_data_dir(wiki)


def open_knowledge(args: argparse.Namespace, *, progress=None) -> KnowledgeBase:
    wiki, data = _folders(args)
    return KnowledgeBase.open(wiki, data, progress=progress)


def _console(args: argparse.Namespace) -> int:
    kb = open_knowledge(args, progress=progress_bar() if sys.stderr.isatty() else None)
    state = kb.state
    print(
        f"wikibot console: {state.wiki.root} ({len(state.wiki.pages)} pages, "
        f"revision {state.wiki.revision}). Type /help, /quit to leave."
    )
    history = kb.data_dir / "console_history"
    readline = None
    try:
        import readline

        with contextlib.suppress(OSError):
            readline.read_history_file(history)
    except ImportError:
        pass
    try:
        while True:
            try:
                line = input("wiki> ")
            except EOFError:
                print()
                break
            line = line.strip()
            if not line:
                continue
            if line.lstrip("/").casefold() in ("quit", "exit", "q"):
                break
            try:
                print(render_text(dispatch(kb, line)))
            except Exception:  # keep the console alive whatever one command does
                log.exception("command failed: %s", line[:200])
                print("Something went wrong with that command; the details are in the log.")
            print()
    except KeyboardInterrupt:
        print()
    finally:
        if readline is not None:
            try:
                readline.set_history_length(1000)
                readline.write_history_file(history)
            except OSError:
                pass
        kb.close()
    return 0


def _ask(args: argparse.Namespace) -> int:
    kb = open_knowledge(args)
    try:
        reply = dispatch(kb, " ".join(args.command))
    finally:
        kb.close()
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(reply))
    return 0 if reply.ok else 1


def _index(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    kb = KnowledgeBase(*_folders(args))
    built = kb.reload(force=args.full, progress=progress_bar())
    state = kb.state
    kb.close()
    sections = sum(len(p.sections) for p in state.wiki.pages.values())
    print(
        f"pages {len(state.wiki.pages)} (skipped {len(state.wiki.skipped)}), "
        f"sections {sections}, glossary terms {len(state.glossary.entries)}, "
        f"families {len(state.catalogue.families)}"
    )
    print(
        f"index {built.mode} ({built.changed_pages} pages changed) in {built.seconds:.2f}s; "
        f"total {time.perf_counter() - started:.2f}s; data {kb.data_dir}"
    )
    for path, reason in state.wiki.skipped:
        print(f"skipped {path}: {reason}")
    return 0


def add_knowledge_commands(sub: argparse._SubParsersAction) -> None:
    console = sub.add_parser("console", help="interactive prompt taking /runbook, /acronym, ...")
    add_wiki_options(console)
    console.set_defaults(func=_console)

    ask = sub.add_parser("ask", help='one command, e.g. wikibot ask "/runbook qwen"')
    add_wiki_options(ask)
    ask.add_argument("--json", action="store_true", help="print the reply as JSON")
    ask.add_argument("command", nargs="+", help="the command line, e.g. /acronym DCP")
    ask.set_defaults(func=_ask)

    index = sub.add_parser("index", help="build or update the search index")
    add_wiki_options(index)
    index.add_argument("--full", action="store_true", help="force a full rebuild")
    index.set_defaults(func=_index)

    from knowledge.cli.triage import add_triage_command  # registers ``wikibot triage``

    add_triage_command(sub)
