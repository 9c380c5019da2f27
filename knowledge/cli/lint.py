"""``wikibot lint``: what the wiki gets wrong, found from its own structure.

Prints one line per finding (``path:line rule [severity] problem Fix: ...``, the shape
of markdownlint) and a summary, or ``--json``. Exit code 1 when a finding is at or
above ``--fail-on`` (default ``error``), 2 for a bad option, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from knowledge.cli.options import add_wiki_options, wiki_folders
from knowledge.templates import load_templates

__all__ = ["add_lint_command"]


def _lint(args: argparse.Namespace) -> int:
    from knowledge.lint import CHECKS, LintOptions, Severity, lint_wiki, render_text
    from knowledge.lint.folder import load_for_lint

    t = load_templates("lint.yaml")
    only = [name.strip() for name in args.only.split(",") if name.strip()] if args.only else None
    bad = [name for name in only or () if name not in CHECKS]
    if bad:
        known = ", ".join(CHECKS)
        print(t("command.bad_check", names=", ".join(bad), known=known), file=sys.stderr)
        return 2
    wiki_dir, data_dir = wiki_folders(args, load_templates())
    wiki, glossary, catalogue = load_for_lint(wiki_dir, data_dir)
    options = LintOptions(files=args.files, acronym_pages=args.acronym_pages)
    report = lint_wiki(wiki, glossary, catalogue, only=only, options=options, templates=t)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(report, t))
    failing = report.at_least(Severity.parse(args.fail_on))
    return 1 if failing else 0


def _acronym_pages(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def add_lint_command(sub: argparse._SubParsersAction) -> None:
    lint = sub.add_parser(
        "lint",
        help="check the wiki: hubs, links, glossary, troubleshooting, runbooks, orphans",
    )
    add_wiki_options(lint)
    lint.add_argument("--json", action="store_true", help="print the findings as JSON")
    lint.add_argument(
        "--only",
        metavar="CHECK,...",
        default=None,
        help="run these checks only: hubs, links, acronyms, glossary, troubleshooting,"
        " runbooks, orphans",
    )
    lint.add_argument(
        "--fail-on",
        choices=("error", "warning", "info"),
        default="error",
        help="exit 1 when a finding is at least this severe (default: error)",
    )
    lint.add_argument(
        "--files",
        action="store_true",
        help="check links to files other than pages too (a full checkout has them)",
    )
    lint.add_argument(
        "--acronym-pages",
        type=_acronym_pages,
        default=10,
        metavar="N",
        help="report an acronym the glossary lacks once it is used on N pages (default 10)",
    )
    lint.set_defaults(func=_lint)
