"""An error line a page repeats near verbatim, in any line of any page
(knowledge.search.verbatim and its use by the page ranker)."""

from __future__ import annotations

from knowledge.search.pages import PageRanker
from knowledge.search.verbatim import PageLines, VerbatimIndex, verbatim_words
from knowledge.wiki import load_wiki
from tests.knowledge.search.helpers import demo_ranker

_TROUBLE = (
    "# Problems\n\n## Workers stall at start\n\n"
    "**Error**: `engine core worker stalled`\n\n"
    "**Cause**: the shared memory segment is too small for the scheduler.\n\n"
    "**Fix**: raise `--shm-size` and restart the scheduler.\n"
)
_REFERENCE = (
    "# Scheduler\n\n## Queue\n\nThe scheduler keeps a queue of requests per worker and "
    "drains the queue when the worker restarts; the queue holds tokens.\n"
)
_DAILY = (
    "# Daily Summary 2026-03-04\n\n## Key highlights\n\n"
    "- Two boxes restarted overnight; one user saw `quokka bridge refused the lattice "
    "handshake (code 17) on /srv/a/b.sock` after the driver update, fixed by pinning "
    "the older driver.\n- Someone asked about fans.\n"
)
_ERROR = "[pid 88123] quokka bridge refused the lattice handshake (code 3) on /tmp/x/y.sock"
_QUESTION = (
    "After updating the driver my scheduler restarts and the worker queue never drains; "
    "the log shows the line below. What should I do?"
)


def _wiki(tmp_path, daily: str = _DAILY):
    root = tmp_path / "wiki"
    for name, text in {
        "troubleshooting/problems.md": _TROUBLE,
        "reference/scheduler.md": _REFERENCE,
        "daily-summaries/2026-03/2026-03-04.md": daily,
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return load_wiki(root)


def test_words_leave_out_what_differs_between_machines():
    one = verbatim_words("GPU3 at /opt/venv/lib/x.py:12 addr 0x7f3a0012 rank 12: bad lattice")
    two = verbatim_words("GPU0 at /usr/lib/x.py:40 addr 0x55aa rank 3: bad lattice")
    assert one == two == ["gpu", "at", "py", "addr", "rank", "bad", "lattice"]


def test_a_dated_summary_holding_the_error_line_comes_first(tmp_path):
    ranker = PageRanker.build(_wiki(tmp_path))
    ranking = ranker.rank(_QUESTION, [_ERROR])
    top = ranking.hits[0]
    assert top.path == "daily-summaries/2026-03/2026-03-04.md"
    quote = dict(top.why)["error_quote"]
    assert "quokka bridge refused the lattice handshake" in quote
    assert ranking.confidence == "high"


def test_without_the_line_the_summary_is_not_first(tmp_path):
    daily = "# Daily Summary 2026-03-04\n\n## Key highlights\n\n- Someone asked about fans.\n"
    ranking = PageRanker.build(_wiki(tmp_path, daily)).rank(_QUESTION, [_ERROR])
    assert ranking.hits[0].path != "daily-summaries/2026-03/2026-03-04.md"
    assert all(code != "error_quote" for hit in ranking.hits for code, _ in hit.why)


def test_a_log_prefix_before_the_wiki_line_still_matches(tmp_path):
    line = (
        "(EngineCore_DP0 pid=4411) ERROR 03-04 10:11:12 [core.py:88] worker main loop: "
        "quokka bridge refused the lattice handshake (code 9) on /run/z.sock"
    )
    ranking = PageRanker.build(_wiki(tmp_path)).rank(_QUESTION, [line])
    assert ranking.hits[0].path == "daily-summaries/2026-03/2026-03-04.md"


def test_a_line_sharing_only_generic_words_does_not_count(tmp_path):
    daily = (
        "# Daily Summary 2026-03-04\n\n## Key highlights\n\n"
        "- RuntimeError: an error occurred on the device and it failed, unavailable now.\n"
    )
    line = "RuntimeError: an error occurred on the device 7 and it failed, unavailable"
    ranking = PageRanker.build(_wiki(tmp_path, daily)).rank(_QUESTION, [line])
    assert all(code != "error_quote" for hit in ranking.hits for code, _ in hit.why)
    assert ranking.hits[0].path != "daily-summaries/2026-03/2026-03-04.md"


def test_a_single_flag_is_no_error_line(tmp_path):
    wiki = _wiki(tmp_path)
    index = VerbatimIndex.build(
        ((path, PageLines.of(page)) for path, page in sorted(wiki.pages.items())), wiki.pages
    )
    assert index.find(["--shm-size"], lambda word: True) == {}
    assert index.find(["quokka bridge refused"], lambda word: True) == {}  # one shingle
    found = index.find(["quokka bridge refused the lattice"], lambda word: True)
    assert list(found) == ["daily-summaries/2026-03/2026-03-04.md"]


def test_the_demo_wiki_quote_still_leads_with_its_section():
    _, _, ranker = demo_ranker()
    ranking = ranker.rank("startup fails", ["NCCL error: Failed to CUDA calloc 2097152 bytes"])
    assert ranking.hits[0].anchor == "nccl-cannot-allocate-its-buffers"
    assert ranking.confidence == "high"


def test_a_stock_message_many_pages_repeat_tells_no_page_apart(tmp_path):
    stock = "zorbly widget lost its frumious spindle context"
    root = tmp_path / "wiki"
    root.mkdir()
    for n in range(5):
        (root / f"page{n}.md").write_text(f"# Page {n}\n\n## Log\n\nSaw: {stock} here.\n")
    (root / "other.md").write_text("# Other\n\n## Log\n\nNothing of the kind.\n")
    wiki = load_wiki(root)
    index = VerbatimIndex.build(
        ((path, PageLines.of(page)) for path, page in sorted(wiki.pages.items())), wiki.pages
    )
    assert index.find([stock], lambda word: True) == {}
    (root / "page3.md").unlink()
    (root / "page4.md").unlink()
    wiki = load_wiki(root)
    index = VerbatimIndex.build(
        ((path, PageLines.of(page)) for path, page in sorted(wiki.pages.items())), wiki.pages
    )
    assert sorted(index.find([stock], lambda word: True)) == ["page0.md", "page1.md", "page2.md"]


def test_an_error_met_again_is_not_looked_up_again(tmp_path, monkeypatch):
    from knowledge.search.pages import _verbatim_telling

    looked: list[tuple[str, ...]] = []
    lookup = VerbatimIndex._piece_hits

    def counted(self, words, telling):
        looked.append(tuple(words))
        return lookup(self, words, telling)

    monkeypatch.setattr(VerbatimIndex, "_piece_hits", counted)
    index = PageRanker.build(_wiki(tmp_path)).verbatim
    first = index.find([_ERROR], _verbatim_telling)
    assert "daily-summaries/2026-03/2026-03-04.md" in first
    pieces = len(looked)
    assert pieces == len(set(looked)) > 0
    # the same error on another machine: other numbers and paths, the same words
    again = _ERROR.replace("88123", "7").replace("(code 3)", "(code 9)").replace("/tmp/x", "/a")
    assert index.find([again], _verbatim_telling) == first
    assert len(looked) == pieces  # remembered, not looked up again
    # the next wiki generation's index starts afresh
    PageRanker.build(_wiki(tmp_path)).verbatim.find([_ERROR], _verbatim_telling)
    assert len(looked) == 2 * pieces
