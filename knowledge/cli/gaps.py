"""``wikibot gaps``: what people asked that the wiki did not answer, grouped.

Reads ``gaps.sqlite3`` of the data folder (the bot's, with ``--data``), groups the
requests by the terms that tell them apart (weighed against the wiki) and prints
each group with its count, three example queries and the closest pages, or
``--json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge.cli.options import add_wiki_options, wiki_folders
from knowledge.templates import load_templates

if TYPE_CHECKING:
    from knowledge.intake.similar import SolvedAnswer
    from knowledge.wiki import Wiki

__all__ = ["add_gaps_command"]


def _gaps(args: argparse.Namespace) -> int:
    from knowledge.gaps import GapStore, TermWeights, gaps_report
    from knowledge.gaps.answer import render_text
    from knowledge.lint.folder import load_for_lint

    t = load_templates("gaps.yaml")
    wiki_dir, data_dir = wiki_folders(args, load_templates())
    records = GapStore.read(data_dir, args.since)
    wiki, _, _ = load_for_lint(wiki_dir, data_dir)
    report = gaps_report(records, TermWeights.of(wiki), since_days=args.since)
    solved = _solved_not_in_wiki(data_dir, wiki)
    if args.json:
        data = report.to_json()
        data["solved_not_in_wiki"] = [
            {"ticket": a.ticket_id, "title": a.title, "url": a.url or None, "nearest": ref}
            for a, ref, _ in solved
        ]
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    print(render_text(report, t))
    if solved:
        print("\n" + t("text.solved", count=len(solved)))
        for a, ref, _ in solved:
            print(t("text.solved_line", id=a.ticket_id, title=a.title, url=a.url or "-", ref=ref))
    return 0


def _solved_not_in_wiki(data_dir: Path, wiki: Wiki) -> list[tuple[SolvedAnswer, str, float]]:
    """Answers marked on solved tickets (the bot's ticket store in ``data_dir``, when
    there is one) that no wiki section holds: pages worth writing, said by helpers."""
    from knowledge.intake.similar import not_in_wiki
    from knowledge.intake.sqlite import FILE_NAME, SqliteTicketStore
    from knowledge.intake.store import StoreError

    if not (data_dir / FILE_NAME).is_file():
        return []
    try:
        store = SqliteTicketStore.in_folder(data_dir)
    except (StoreError, OSError):
        return []  # `wikibot tickets` says what is wrong with the store; gaps go on
    try:
        answers = store.solved_answers()
    finally:
        store.close()
    return not_in_wiki(answers, wiki) if answers else []


def _days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(load_templates("gaps.yaml")("command.bad_days"))
    return value


def add_gaps_command(sub: argparse._SubParsersAction) -> None:
    gaps = sub.add_parser(
        "gaps", help="what people asked that the wiki did not answer, grouped by subject"
    )
    add_wiki_options(gaps)
    gaps.add_argument(
        "--since", type=_days, default=None, metavar="DAYS", help="only the last DAYS days"
    )
    gaps.add_argument("--json", action="store_true", help="print the groups as JSON")
    gaps.set_defaults(func=_gaps)
