"""``wikibot gaps``: what people asked that the wiki did not answer, grouped.

Reads ``gaps.sqlite3`` of the data folder (the bot's, with ``--data``), groups the
requests by the terms that tell them apart (weighed against the wiki) and prints
each group with its count, three example queries and the closest pages, or
``--json``.
"""

from __future__ import annotations

import argparse
import json

from knowledge.cli.options import add_wiki_options, wiki_folders
from knowledge.templates import load_templates

__all__ = ["add_gaps_command"]


def _gaps(args: argparse.Namespace) -> int:
    from knowledge.gaps import GapStore, TermWeights, gaps_report
    from knowledge.gaps.answer import render_text
    from knowledge.gaps.solved import solved_not_in_wiki
    from knowledge.lint.folder import load_for_lint

    t = load_templates("gaps.yaml")
    wiki_dir, data_dir = wiki_folders(args, load_templates())
    records = GapStore.read(data_dir, args.since)
    wiki, _, _ = load_for_lint(wiki_dir, data_dir)
    report = gaps_report(records, TermWeights.of(wiki), since_days=args.since)
    solved = solved_not_in_wiki(data_dir, wiki)
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
