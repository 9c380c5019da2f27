"""``wikibot wiki fetch``: one check of a wiki source into a data folder, from the shell.

Prints one line and exits 0 when the live wiki is current (fetched or unchanged);
prints one line to stderr and exits 1 when the fetch or a check failed, in which
case the live generation is untouched. Afterwards ``wikibot ask/console/index
--data DIR`` answer from the fetched wiki.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from knowledge.templates import load_templates

__all__ = ["add_wiki_command"]

#: The public GitHub API (``knowledge.source.DEFAULT_API_URL``, which a test keeps equal):
#: named here so building the ``wikibot`` parser does not import the fetcher (httpx).
GITHUB_API = "https://api.github.com"


def _fetch(args: argparse.Namespace) -> int:
    from knowledge.source import (
        ArchiveError,
        CheckFailed,
        FetchError,
        Follower,
        SourceError,
        SourceSettings,
        StoreBusy,
        check_api_url,
        parse_source,
    )
    from knowledge.source.follow import source_data_dir

    t = load_templates("source.yaml")
    try:
        source = parse_source(args.source)
        api_url = check_api_url(args.api_url)
    except SourceError as exc:
        print(t("fetch.bad_source", error=exc), file=sys.stderr)
        return 2
    data = args.data if args.data is not None else source_data_dir(source)
    follower = Follower(SourceSettings(source, api_url), data)
    try:
        outcome = follower.fetch()
    except StoreBusy as exc:
        print(t("fetch.busy", error=exc), file=sys.stderr)
        return 1
    except (FetchError, ArchiveError, CheckFailed, OSError) as exc:
        print(t("fetch.failed", error=" ".join(str(exc).split())), file=sys.stderr)
        return 1
    finally:
        follower.close()
    live = outcome.live
    commit = live.commit[:12] or live.id[:13]
    if outcome.changed:
        print(
            t(
                "fetch.fetched",
                source=source.text,
                commit=commit,
                pages=live.pages,
                files=live.files,
                bytes=live.bytes,
                seconds=outcome.seconds,
                path=live.path,
            )
        )
    else:
        print(t("fetch.unchanged", source=source.text, commit=commit, path=live.path))
    return 0


def add_wiki_command(sub: argparse._SubParsersAction) -> None:
    wiki = sub.add_parser("wiki", help="fetch the wiki from its source (GitHub or a tarball)")
    actions = wiki.add_subparsers(dest="wiki_cmd", metavar="ACTION", required=True)
    fetch = actions.add_parser(
        "fetch",
        help="download the wiki into the data folder and make it live (one check)",
    )
    fetch.add_argument(
        "--source",
        required=True,
        help="github:OWNER/REPO[@REF] or an https:// URL of a .tar.gz",
    )
    fetch.add_argument(
        "--api-url",
        default=GITHUB_API,
        help=f"GitHub API base URL (default: {GITHUB_API}; GitHub Enterprise: https://HOST/api/v3)",
    )
    fetch.add_argument(
        "--data",
        type=Path,
        default=None,
        help="data folder (default: a per-source folder under $WIKIBOT_DATA or ~/.cache/wikibot)",
    )
    fetch.set_defaults(func=_fetch)
