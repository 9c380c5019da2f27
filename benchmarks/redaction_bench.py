"""Redaction figures: leaks over the disguised-log corpus, and what the forum post's
last line of defence masks where nothing is secret.

    python -m benchmarks.redaction_bench [--wiki DIR] [--logs DIR]

- ``corpus_*``: the cases of ``tests/knowledge/triage/disguise_corpus.py`` (every token
  kind x disguise x line context x LF/CRLF) and how many still show any of their
  secret after :func:`~knowledge.triage.redact.redact` (target 0; the outputs of
  the triage, the ticket and the forum post are checked by the tests).
- ``masked_*``: strings :func:`~knowledge.triage.redact.mask_credentials` masks in
  the sample logs and in the code blocks of the wiki snapshots beside the project
  (none of them is a secret: each one masked is a false positive), out of the runs
  of 24 characters or more it judged.
- ``random_<n>_found``: share of random letters-and-digits strings of ``n``
  characters it masks (what it is for).

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import time
from pathlib import Path

from knowledge.triage.redact import looks_like_credential, mask_credentials, redact

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
_RUN_RE = re.compile(r"[A-Za-z0-9+/_=-]{24,}")
_BLOCK_RE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def _masked(texts: list[str]) -> tuple[int, int, list[str]]:
    runs = masked = 0
    examples: list[str] = []
    for text in texts:
        runs += len(_RUN_RE.findall(text))
        found = mask_credentials(text).count
        masked += found
        if found:
            examples += [m for m in _RUN_RE.findall(text) if looks_like_credential(m)][:3]
    return runs, masked, examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, action="append", help="a wiki folder (repeatable)")
    parser.add_argument("--logs", type=Path, default=SHARED / "sample-logs")
    args = parser.parse_args(argv)
    from tests.knowledge.triage.disguise_corpus import corpus, leaks

    started = time.perf_counter()
    cases = leaking = 0
    for case in corpus():
        cases += 1
        leaking += bool(leaks(redact(case.log, "log").text, case))
    print(f"{'corpus_cases':<34}{cases:>10}")
    print(f"{'corpus_leaking_after_redact':<34}{leaking:>10}")
    print(f"{'corpus_seconds':<34}{time.perf_counter() - started:>10.1f}")
    sources: dict[str, list[str]] = {}
    if args.logs.is_dir():
        files = sorted(p for p in args.logs.iterdir() if p.is_file())
        sources["sample_logs"] = [p.read_text("utf-8", "replace") for p in files]
    wikis = args.wiki or sorted(SHARED.glob("wiki-snapshot*"))
    for wiki in wikis:
        blocks = [
            block
            for page in sorted(wiki.rglob("*.md"))
            for block in _BLOCK_RE.findall(page.read_text("utf-8", "replace"))
        ]
        sources[f"code_blocks_{wiki.name}"] = blocks
    for name, texts in sources.items():
        runs, masked, examples = _masked(texts)
        print(f"{'texts_' + name:<34}{len(texts):>10}")
        print(f"{'runs_' + name:<34}{runs:>10}")
        print(f"{'masked_' + name:<34}{masked:>10}")
        for example in examples[:5]:
            print(f"    masked: {example[:80]}")
    rng = random.Random(0)
    alphabet = string.ascii_letters + string.digits
    for size in (24, 32, 40):
        found = sum(
            looks_like_credential("".join(rng.choice(alphabet) for _ in range(size)))
            for _ in range(2000)
        )
        print(f"{f'random_{size}_found':<34}{found / 2000:>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
