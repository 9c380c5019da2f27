"""The knowledge commands of ``wikibot``: console, ask, index, triage, tickets and eval.

``bot.cli`` builds the ``wikibot`` parser, adds these with
:func:`add_knowledge_commands` and its own ``serve``/``sync``/``health``;
nothing here imports discord. The modules of this package import one way
(``main`` -> ``console``, ``triage``/``tickets``/``eval`` -> ``options``), never each other back.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from knowledge.cli.ask_llm import add_llm_options, llm_settings
from knowledge.cli.eval import add_eval_command
from knowledge.cli.gaps import add_gaps_command
from knowledge.cli.lint import add_lint_command
from knowledge.cli.options import (
    add_wiki_options,
    fetched_link_base,
    open_knowledge,
    paused_gc,
    progress_bar,
    wiki_folders,
    wiki_problem,
)
from knowledge.cli.tickets import add_tickets_command
from knowledge.cli.triage import add_triage_command
from knowledge.cli.wiki import add_wiki_command
from knowledge.templates import load_templates
from knowledge.wiki import WikiFolderError

if TYPE_CHECKING:
    from knowledge.reply import Reply
    from knowledge.templates import Templates

# The console, the answers and the search engine are imported by the commands
# that open a wiki, so ``wikibot health`` (and the parser) do not load them.

__all__ = ["add_knowledge_commands"]


def _render_text(reply: Reply, t: Templates) -> str:
    from knowledge.cli.console import render_text

    return render_text(reply, t)


def _console(args: argparse.Namespace) -> int:
    from knowledge.cli.console import run_console
    from knowledge.service import data_dir_problem

    t = load_templates()
    with progress_bar(t("cli.indexing")) as progress:
        kb = open_knowledge(args, t, progress=progress)
    if data_dir_problem(kb.data_dir) is None:  # what the wiki did not answer: `wikibot gaps`
        from knowledge.gaps import GapSettings

        kb.record_gaps(GapSettings())
    try:
        run_console(kb, str(kb.data_dir / "console_history"), llm_settings(args))
    finally:
        kb.close()
    return 0


def _ask(args: argparse.Namespace) -> int:
    # One command, then the process ends: the cyclic collector would only walk the
    # freshly loaded wiki again and again (a tenth of the run) to find no garbage.
    with paused_gc():
        from knowledge.cli.console import dispatch, render_text

        t = load_templates()
        # The search index is opened only if the command searches (not /runbook, /acronym).
        kb = open_knowledge(args, t, lazy_index=True)
        try:
            reply = dispatch(kb, " ".join(args.command), llm_settings(args))
        finally:
            kb.close()
    if args.json:
        print(json.dumps(reply.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(reply, t))
    return 0 if reply.ok else 1


def _index(args: argparse.Namespace) -> int:
    from knowledge.search import IndexBuildError
    from knowledge.service import KnowledgeBase

    started = time.perf_counter()
    t = load_templates()
    kb = KnowledgeBase(*wiki_folders(args, t), link_base=fetched_link_base(args), templates=t)
    try:
        with progress_bar(t("cli.indexing")) as progress:
            built = kb.reload(force=args.full, progress=progress)
        state = kb.state
    except WikiFolderError as exc:
        raise SystemExit(wiki_problem(exc, t)) from None
    except (IndexBuildError, OSError) as exc:
        print(t("cli.index_failed", error=exc, data=kb.data_dir), file=sys.stderr)
        return 1
    finally:
        kb.close()
    wiki = state.wiki
    print(
        t(
            "cli.index_summary",
            pages=len(wiki.pages),
            skipped=len(wiki.skipped),
            sections=sum(len(p.sections) for p in wiki.pages.values()),
            terms=len(state.glossary.entries),
            families=len(state.catalogue.families),
            mode=built.mode,
            changed=built.changed_pages,
            seconds=built.seconds,
            total=time.perf_counter() - started,
            data=kb.data_dir,
        )
    )
    for path, reason in wiki.skipped:
        print(t("cli.index_skipped", path=path, reason=reason))
    if built.problem is not None:
        print(t("cli.index_failed_kept", error=built.problem, data=kb.data_dir), file=sys.stderr)
        return 1
    return 0


def add_knowledge_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``console``, ``ask``, ``index`` and ``triage`` on ``wikibot``'s sub-parsers."""
    console = sub.add_parser("console", help="interactive prompt taking /runbook, /acronym, ...")
    add_wiki_options(console)
    add_llm_options(console)
    console.set_defaults(func=_console)

    ask = sub.add_parser("ask", help='one command, e.g. wikibot ask "/runbook qwen"')
    add_wiki_options(ask)
    add_llm_options(ask)
    ask.add_argument("--json", action="store_true", help="print the reply as JSON")
    ask.add_argument("command", nargs="+", help="the command line, e.g. /acronym DCP")
    ask.set_defaults(func=_ask)

    index = sub.add_parser("index", help="build or update the search index")
    add_wiki_options(index)
    index.add_argument("--full", action="store_true", help="force a full rebuild")
    index.set_defaults(func=_index)

    add_triage_command(sub, _render_text)
    add_tickets_command(sub)
    add_eval_command(sub)
    add_wiki_command(sub)
    add_lint_command(sub)
    add_gaps_command(sub)
