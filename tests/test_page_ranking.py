"""Page-level ranking of long, pasted help requests (knowledge.search.pages)."""

from __future__ import annotations

import json

import pytest

from knowledge.evaluation import (
    Answer,
    EvalRequest,
    EvalRequestError,
    load_requests,
    parse_requests,
    run,
)
from knowledge.search.pages import PAGE_PRIORS, PageRanker, page_kind, request_terms
from knowledge.wiki import Catalogue, Glossary, load_wiki
from tests.support import DEMO, SNAPSHOT, needs_snapshot

WIKI = load_wiki(DEMO)
CATALOGUE = Catalogue.from_wiki(WIKI)
RANKER = PageRanker.build(
    WIKI,
    CATALOGUE.statuses(),
    catalogue=CATALOGUE,
    glossary=Glossary.from_wiki(WIKI, CATALOGUE.wiki.find_page("README.md")),
)


def paths(ranking) -> list[str]:
    return [hit.path for hit in ranking.hits]


def test_an_error_line_finds_its_troubleshooting_entry_among_chatter():
    question = (
        "Hi all, I have been trying for two days to get my new box going and I read a lot "
        "of pages already. The server loads the weights and then it just dies, any idea "
        "what I am doing wrong? I tried a few things from the forums without luck."
    )
    ranking = RANKER.rank(question, ["NCCL error: Failed to CUDA calloc 10485760 bytes"])
    assert paths(ranking)[0] == "troubleshooting/common-issues.md"
    top = ranking.hits[0]
    assert top.anchor == "nccl-cannot-allocate-its-buffers"
    assert ("error_quote", "NCCL error: Failed to CUDA calloc 10485760 bytes") in top.why
    assert ranking.confidence == "high"


def test_error_lines_match_despite_other_numbers_and_paths():
    line = "[rank3]: /opt/venv/lib/nccl.py:88 NCCL error: Failed to CUDA calloc 2097152 bytes"
    ranking = RANKER.rank("startup fails", [line])
    assert ranking.hits[0].anchor == "nccl-cannot-allocate-its-buffers"


def test_a_named_family_brings_its_hub_and_current_page():
    family = next(f for f in CATALOGUE.families if f.group == "main" and f.hub)
    ranking = RANKER.rank(f"How do I launch {family.name} on four cards with the right image?")
    assert ranking.family == family.name
    assert {family.hub, family.current_page} & set(paths(ranking)[:2])


def test_each_page_appears_once():
    ranking = RANKER.rank("NCCL P2P topology nvidia-smi topo graph file tuning", limit=10)
    assert len(paths(ranking)) == len(set(paths(ranking)))


def test_a_model_the_wiki_never_names_is_not_answered_with_confidence():
    ranking = RANKER.rank(
        "Does anyone run acme/Zephyrine-70B-Instruct on two cards? The server will not start."
    )
    assert "acme/zephyrine-70b-instruct" in ranking.unknown
    assert ranking.confidence == "low"


def test_nothing_to_rank_says_none():
    assert RANKER.rank("the and of to").confidence == "none"
    assert RANKER.rank("").hits == ()


def test_identifiers_and_error_lines_weigh_more_than_words():
    terms = request_terms("please check NCCL_P2P_LEVEL and --max-num-seqs", ["OutOfMemoryError"])
    assert terms["nccl_p2p_level"] > terms["check"]
    assert terms["max-num-seqs"] > terms["check"]
    assert terms["outofmemoryerror"] > terms["nccl_p2p_level"]
    assert "please" not in terms and "and" not in terms


def test_hostile_sizes_are_capped():
    ranking = RANKER.rank("nccl " * 200_000, ["x" * 100_000] * 500)
    assert len(ranking.hits) <= 5


def test_page_kinds_come_from_structure():
    statuses = CATALOGUE.statuses()
    kinds = {path: page_kind(page, statuses.get(path)) for path, page in WIKI.pages.items()}
    assert kinds["troubleshooting/common-issues.md"] == "troubleshooting"
    for path, status in statuses.items():
        if status in ("hub", "current"):
            assert kinds[path] == status
    assert set(kinds.values()) <= set(PAGE_PRIORS)
    assert PAGE_PRIORS["troubleshooting"] > PAGE_PRIORS["dated"]
    assert PAGE_PRIORS["current"] > PAGE_PRIORS["historical"]


def test_a_dated_note_ranks_below_the_entry_it_repeats(tmp_path):
    root = tmp_path / "wiki"
    (root / "troubleshooting").mkdir(parents=True)
    (root / "daily").mkdir()
    entry = (
        "# Problems\n\n## Kernel Image Missing\n\n**Error**: `no kernel image is available`\n\n"
        "**Cause**: the wheel lacks sm_120 kernels.\n\n**Fix**: use an image built for sm_120.\n"
    )
    (root / "troubleshooting" / "problems.md").write_text(entry)
    (root / "daily" / "2026-01-02.md").write_text(
        "# Day notes 2026-01-02\n\n## Kernel image missing again\n\n"
        "Saw no kernel image is available today on sm_120, rebuilt the wheel for sm_120.\n"
    )
    wiki = load_wiki(root)
    ranker = PageRanker.build(wiki)
    ranking = ranker.rank("vLLM dies: no kernel image is available for sm_120, rebuilt the wheel")
    assert paths(ranking)[:2] == ["troubleshooting/problems.md", "daily/2026-01-02.md"]


# ------------------------------------------------------------------ evaluation


def test_scores_count_hits_mrr_and_confidence():
    requests = [
        EvalRequest("a", "q", expected=("x.md#s", "y.md")),
        EvalRequest("b", "q", expected=("z.md",)),
        EvalRequest("c", "q"),
        EvalRequest("d", "q"),
    ]
    answers = {
        "a": Answer(("y.md#t", "x.md"), "high"),
        "b": Answer(("q.md", "r.md", "s.md", "t.md", "z.md"), "medium"),
        "c": Answer(("x.md",), "low"),
        "d": Answer(("x.md",), "high"),
    }
    scores, outcomes = run(requests, {"t": lambda r: answers[r.id]})["t"]
    assert [o.rank for o in outcomes] == [1, 5, None, None]
    assert (scores.hit1, scores.hit3, scores.hit5) == (1, 1, 2)
    assert scores.mrr5 == pytest.approx((1 + 1 / 5) / 2)
    assert (scores.unanswerable, scores.declined) == (2, 1)
    assert (scores.confident, scores.confident_right) == (2, 1)


def test_repeated_pages_count_once_in_the_ranking():
    requests = [EvalRequest("a", "q", expected=("z.md",))]
    answer = Answer(("x.md#1", "x.md#2", "x.md#3", "z.md"), None)
    scores, outcomes = run(requests, {"t": lambda r: answer})["t"]
    assert outcomes[0].rank == 2
    assert not scores.has_confidence


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 1: not JSON"),
        ("[1, 2]", "line 1: each line must be a JSON object"),
        ('{"id": "a", "question": ""}', "line 1: `question` is empty"),
        ('{"id": "a", "question": "q", "error_lines": "x"}', "`error_lines` must be a list"),
        ('{"id": "a", "question": 5}', "`question` must be text"),
    ],
)
def test_bad_request_lines_name_the_line(line, message):
    with pytest.raises(EvalRequestError, match=message):
        parse_requests([line], "req.jsonl")


def test_duplicate_ids_and_missing_files_are_refused(tmp_path):
    line = json.dumps({"id": "a", "question": "q"})
    with pytest.raises(EvalRequestError, match="used twice"):
        parse_requests([line, line])
    with pytest.raises(EvalRequestError, match="no such file"):
        load_requests(tmp_path / "missing.jsonl")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * (8 * 1024 * 1024 + 2))
    with pytest.raises(EvalRequestError, match="larger than"):
        load_requests(big)


EVAL_DEV = SNAPSHOT.parent / "eval-dev" / "requests.jsonl"


@needs_snapshot
@pytest.mark.skipif(not EVAL_DEV.is_file(), reason="../shared/eval-dev is not present")
def test_the_dev_set_reads_and_every_expected_page_exists():
    requests = load_requests(EVAL_DEV)
    wiki = load_wiki(SNAPSHOT)
    assert len(requests) >= 40
    for request in requests:
        for path in request.expected_paths:
            assert path in wiki.pages, (request.id, path)


# ------------------------------------------------------------- /search, pasted

from knowledge.answers import is_pasted  # noqa: E402
from knowledge.service import KnowledgeBase  # noqa: E402

PASTED = (
    "Hello, my server loads the weights and then stops with this, what is wrong?\n"
    "RuntimeError: NCCL error: Failed to CUDA calloc 10485760 bytes\n"
    "I run vllm serve with tensor parallel 8 on the demo cluster."
)


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    base = KnowledgeBase.open(DEMO, tmp_path_factory.mktemp("data"))
    yield base
    base.close()


def test_short_words_search_sections_and_pasted_text_ranks_pages(kb):
    assert not is_pasted("nccl calloc")
    assert is_pasted(PASTED) and is_pasted("word " * 20) and is_pasted("a\nb")
    short = kb.search("nccl calloc")
    assert not short.meta.get("pasted")
    reply = kb.search(PASTED)
    assert reply.kind == "search" and reply.meta["pasted"] is True
    assert reply.pages[0].path == "troubleshooting/common-issues.md"
    assert reply.pages[0].anchor == "nccl-cannot-allocate-its-buffers"
    assert reply.meta["confidence"] == "high"
    assert len({p.path for p in reply.pages}) == len(reply.pages), "a page appears once"
    assert "Failed to CUDA calloc" in reply.fields[0].value


def test_pasted_text_about_an_unknown_model_says_so(kb):
    reply = kb.search(
        "Has anyone got acme/Zephyrine-70B-Instruct running on two cards? It crashes at load."
    )
    assert reply.meta["confidence"] == "low"
    assert "acme/zephyrine-70b-instruct" in reply.meta["unknown"]
    assert "never mentions" in reply.text


def test_pasted_text_pages_and_category(kb):
    first = kb.search(PASTED, per_page=2)
    second = kb.search(PASTED, page=2, per_page=2)
    assert first.meta["page"] == 1 and second.meta["page"] == 2
    assert not {p.path for p in first.pages} & {p.path for p in second.pages}
    limited = kb.search(PASTED, category="hardware")
    assert all(p.path.startswith("hardware/") for p in limited.pages)


def test_a_fix_with_commands_shows_them(tmp_path):
    root = tmp_path / "wiki"
    root.mkdir()
    (root / "problems.md").write_text(
        "# Problems\n\n## Peer Lockups\n\n**Error**: `peer access lockup detected`\n\n"
        "**Cause**: the IOMMU blocks peer writes.\n\n**Fix (kernel)**:\n\n"
        "```bash\nsudo grubby --update-kernel=ALL --args=iommu=pt\nsudo reboot\n```\n"
    )
    base = KnowledgeBase.open(root, tmp_path / "data")
    try:
        reply = base.search("my cards freeze\npeer access lockup detected during the first request")
    finally:
        base.close()
    assert "iommu=pt" in reply.fields[0].value
