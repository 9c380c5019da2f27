"""Replay help requests through /search and print the gaps report they leave.

Run from the repository root::

    .venv/bin/python -m benchmarks.gaps_replay [--wiki DIR] [REQUESTS.jsonl ...]

Each request's question (with its error lines, as a user pastes them) goes through
the knowledge base's /search with gap recording on, into a temporary data folder;
then the report is printed as ``wikibot gaps`` prints it, with how many requests
were recorded (found nothing or not confident) of how many, which of those the
set marks as unanswerable (``expected_pages`` empty), and the time the grouping
took. For judging the grouping by hand: nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def main(argv: list[str] | None = None) -> int:
    from knowledge.gaps import GapSettings, GapStore, TermWeights, gaps_report
    from knowledge.gaps.answer import render_text
    from knowledge.service import KnowledgeBase
    from knowledge.templates import load_templates

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=SHARED / "wiki-snapshot")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("requests", nargs="*", type=Path)
    args = parser.parse_args(argv)
    files = args.requests or sorted((SHARED / "eval-dev").glob("*.jsonl"))
    if not args.wiki.is_dir() or not files:
        print("gaps_replay needs a wiki and request files", file=sys.stderr)
        return 2
    requests = [json.loads(line) for f in files for line in f.read_text().splitlines() if line]
    with tempfile.TemporaryDirectory(prefix="gaps-replay-") as data:
        kb = KnowledgeBase.open(args.wiki, Path(data))
        try:
            kb.record_gaps(GapSettings())
            unanswerable = 0
            for request in requests:
                pasted = "\n".join([request["question"], *request.get("error_lines", [])])
                before = kb.gaps.flush() and len(GapStore.read(Path(data)))  # type: ignore[union-attr]
                kb.search(pasted)
                assert kb.gaps is not None and kb.gaps.flush()
                if len(GapStore.read(Path(data))) > before and not request["expected_pages"]:
                    unanswerable += 1
            records = GapStore.read(Path(data))
            started = time.perf_counter()
            report = gaps_report(records, TermWeights.of(kb.wiki))
            took = time.perf_counter() - started
        finally:
            kb.close()
    total_unanswerable = sum(1 for r in requests if not r["expected_pages"])
    print(
        f"{len(records)} of {len(requests)} requests recorded (found nothing or not confident);"
        f" {unanswerable} of the {total_unanswerable} the set marks unanswerable among them;"
        f" grouped in {took:.2f} s"
    )
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(report, load_templates("gaps.yaml")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
