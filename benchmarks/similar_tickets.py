"""Solved tickets answering the next question: how often the right one comes first.

    python -m benchmarks.similar_tickets [--wiki DIR] [--requests FILE]

As issue 22 asks: the dev requests with expected pages are split in two. The odd
ones are filed as solved tickets, each with its first expected page's section as
the answer. Then three sets of questions are asked:

- **paraphrases**: the solved questions reworded by hand
  (``benchmarks/data/similar_paraphrases.jsonl``): the right solved ticket should
  come first, above the threshold;
- **others**: the even requests: a solved ticket offered for one of them is
  *related* when the two share an expected page, else *unrelated*;
- **no page**: the requests the wiki has no page for: anything offered is unrelated.

Printed per threshold, never asserted: the share of paraphrases whose own ticket
comes first and is offered, and the share of other questions offered an unrelated
ticket.

Then the same questions go through the support desk as the bot runs it (the solved
tickets filed and marked in a ticket store, the wiki indexed): ``SupportDesk.similar``,
which both the /support check and /search offer from, at its own threshold. Its line
should match the table's row for that threshold (``--no-desk`` skips it: indexing
the wiki takes a while).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "measure", "through_desk"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
DEFAULT_REQUESTS = ROOT.parent / "shared" / "eval-dev" / "requests.jsonl"
PARAPHRASES = Path(__file__).parent / "data" / "similar_paraphrases.jsonl"
THRESHOLDS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)


def _section_text(wiki: Any, ref: str) -> str:
    path, _, anchor = ref.partition("#")
    page = wiki.pages.get(path)
    if page is None:
        return ""
    for section in page.sections:
        if not anchor or section.anchor == anchor:
            return f"{section.title}\n{section.text}"
    return ""


def measure(wiki_dir: Path, requests_file: Path) -> dict[str, Any]:
    from knowledge.intake.similar import SimilarTickets, SolvedAnswer
    from knowledge.wiki.load import load_wiki

    wiki = load_wiki(wiki_dir)
    requests = [json.loads(line) for line in requests_file.read_text("utf-8").splitlines() if line]
    with_pages = [r for r in requests if r.get("expected_pages")]
    solved = with_pages[0::2]
    others = with_pages[1::2]
    no_page = [r for r in requests if not r.get("expected_pages")]
    pages = {r["id"]: set(r["expected_pages"]) for r in requests}
    number = {r["id"]: i + 1 for i, r in enumerate(solved)}
    answers = [
        SolvedAnswer(
            number[r["id"]],
            r["question"][:100],
            r["question"],
            _section_text(wiki, r["expected_pages"][0]),
        )
        for r in solved
    ]
    ids = {a.ticket_id: r["id"] for a, r in zip(answers, solved, strict=True)}
    corpus = [f"{s.title}\n{s.text}" for page in wiki.pages.values() for s in page.sections]
    finder = SimilarTickets(answers, corpus, threshold=0.0)
    paraphrases = [json.loads(line) for line in PARAPHRASES.read_text("utf-8").splitlines() if line]
    paraphrases = [p for p in paraphrases if p["of"] in number]

    def best(text: str) -> tuple[str, float]:
        answer, score = finder.scores(text)[0]
        return ids[answer.ticket_id], score

    para = [(p["of"], *best(p["question"])) for p in paraphrases]
    other = [(r["id"], *best(r["question"])) for r in others + no_page]
    rows = []
    for threshold in THRESHOLDS:
        right = sum(1 for want, got, s in para if got == want and s >= threshold)
        wrong = sum(1 for want, got, s in para if got != want and s >= threshold)
        offered = [(q, got) for q, got, s in other if s >= threshold]
        unrelated = sum(1 for q, got in offered if not pages[q] & pages[got])
        rows.append(
            {
                "threshold": threshold,
                "paraphrase_right_first": f"{right}/{len(para)}",
                "paraphrase_wrong_offered": f"{wrong}/{len(para)}",
                "other_offered": f"{len(offered)}/{len(other)}",
                "other_unrelated_offered": f"{unrelated}/{len(other)}",
            }
        )
    top1 = sum(1 for want, got, _ in para if got == want)
    return {
        "solved": len(answers),
        "paraphrases": len(para),
        "other_questions": len(other),
        "paraphrase_right_first_any_score": f"{top1}/{len(para)}",
        "rows": rows,
    }


def through_desk(wiki_dir: Path, requests_file: Path) -> dict[str, Any]:
    """The paraphrases and other questions asked of a :class:`SupportDesk` whose store
    holds the solved half of the requests (filed from a draft, answer marked), as the
    /support check and /search ask it."""
    import tempfile

    from knowledge.intake.desk import IntakeSettings, SupportDesk
    from knowledge.intake.similar import DEFAULT_THRESHOLD
    from knowledge.intake.sqlite import SqliteTicketStore
    from knowledge.intake.store import RateLimit
    from knowledge.service import KnowledgeBase

    requests = [json.loads(line) for line in requests_file.read_text("utf-8").splitlines() if line]
    with_pages = [r for r in requests if r.get("expected_pages")]
    solved, others = with_pages[0::2], with_pages[1::2]
    no_page = [r for r in requests if not r.get("expected_pages")]
    pages = {r["id"]: set(r["expected_pages"]) for r in requests}
    paraphrases = [json.loads(line) for line in PARAPHRASES.read_text("utf-8").splitlines() if line]
    solved_ids = {r["id"] for r in solved}
    paraphrases = [p for p in paraphrases if p["of"] in solved_ids]
    with tempfile.TemporaryDirectory(prefix="similar-desk-") as folder:
        kb = KnowledgeBase.open(wiki_dir, Path(folder))
        store = SqliteTicketStore.in_folder(Path(folder))
        settings = IntakeSettings(rate=RateLimit(len(solved) + 1, 60))
        desk = SupportDesk(kb.triage_context, store, settings=settings)
        try:
            request_of: dict[int, str] = {}
            for r in solved:
                draft = desk.new_draft("bench:1").draft
                desk.save(draft.id, "bench:1", {"text": r["question"]})
                ticket = desk.file(draft.id, "bench:1", post=False).ticket
                answer = _section_text(kb.state.wiki, r["expected_pages"][0]) or r["question"]
                desk.mark_answer(ticket.id, actor="bench:2", staff=True, answer=answer, url="")
                request_of[ticket.id] = r["id"]

            def offered(text: str) -> str | None:
                found = desk.similar(text)
                return request_of[found[0][0].ticket_id] if found else None

            para = [(p["of"], offered(p["question"])) for p in paraphrases]
            other = [(r["id"], offered(r["question"])) for r in others + no_page]
        finally:
            store.close()
            kb.close()
    right = sum(1 for want, got in para if got == want)
    wrong = sum(1 for want, got in para if got is not None and got != want)
    unrelated = sum(1 for q, got in other if got is not None and not pages[q] & pages[got])
    return {
        "threshold": DEFAULT_THRESHOLD,
        "paraphrase_right_first": f"{right}/{len(para)}",
        "paraphrase_wrong_offered": f"{wrong}/{len(para)}",
        "other_offered": f"{sum(1 for _, got in other if got is not None)}/{len(other)}",
        "other_unrelated_offered": f"{unrelated}/{len(other)}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--requests", type=Path, default=DEFAULT_REQUESTS)
    parser.add_argument(
        "--no-desk", action="store_true", help="skip the pass through the support desk"
    )
    args = parser.parse_args(argv)
    if not args.wiki.is_dir() or not args.requests.is_file():
        print(f"{args.wiki} or {args.requests} not found", file=sys.stderr)
        return 2
    result = measure(args.wiki, args.requests)
    for key, value in result.items():
        if key != "rows":
            print(f"{key:>34}: {value}")
    for row in result["rows"]:
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    if not args.no_desk:
        row = through_desk(args.wiki, args.requests)
        print("through the support desk (the /support check and /search):")
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
