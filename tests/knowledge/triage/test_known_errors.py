"""Known errors derived from the wiki's **Error** sections, matched against logs.

The acceptance checks run on the demo wiki and, where present, on the real wiki
snapshot: every Error section is matched by a log that contains its Error line, and
no known error matches anything in the healthy sample logs.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.service import demo_wiki_dir
from knowledge.triage.known_errors import TAIL_LINES, KnownErrors, _lines_with
from knowledge.wiki import Wiki, load_wiki, parse_page
from tests.support import SAMPLE_LOGS, SNAPSHOT

needs_snapshot = pytest.mark.skipif(
    not SNAPSHOT.is_dir(), reason=f"real wiki snapshot not present at {SNAPSHOT}"
)
needs_logs = pytest.mark.skipif(
    not SAMPLE_LOGS.is_dir() or not list(SAMPLE_LOGS.glob("*.log")),
    reason=f"healthy sample logs not present at {SAMPLE_LOGS}",
)

INFO = "(APIServer pid=1) INFO 05-15 03:30:49 [utils.py:306] {}"
ERROR = "(EngineCore pid=310) ERROR 05-15 03:31:06 [core.py:109] {}"
HEALTHY_HEAD = [
    INFO.format("Resolved architecture: GlmMoeDsaForCausalLM"),
    INFO.format("Using max model len 202752"),
    "(Worker pid=350) INFO 05-15 03:31:20 [pynccl.py:113] vLLM is using nccl==2.30.3",
    INFO.format("Chunked prefill is enabled with max_num_batched_tokens=8192."),
]


@pytest.fixture(scope="module")
def demo() -> tuple[Wiki, KnownErrors]:
    wiki = load_wiki(demo_wiki_dir())
    return wiki, KnownErrors.from_wiki(wiki)


@pytest.fixture(scope="module")
def snapshot() -> tuple[Wiki, KnownErrors]:
    if not SNAPSHOT.is_dir():
        pytest.skip(f"real wiki snapshot not present at {SNAPSHOT}")
    wiki = load_wiki(SNAPSHOT)
    return wiki, KnownErrors.from_wiki(wiki)


# --- the Error line of each section, read independently of known_errors -------------

_ERROR_PARA = re.compile(r"^\*\*Errors?(?::\*\*|\*\*\s*(?:\([^)]*\))?\s*:)(.*)$")
_CODE_SPAN = re.compile(r"`([^`]+)`")


def error_lines(wiki: Wiki) -> list[tuple[str, str]]:
    """(path#anchor, the line a log would contain) for every Error paragraph.

    Read straight from the Markdown: the first inline code span of the paragraph, else
    the first line of the code block that follows it, else the paragraph's own text.
    """
    found: list[tuple[str, str]] = []
    for page in wiki.pages.values():
        if not any(s.label("error", "errors") for s in page.sections):
            continue
        raw = (wiki.root / page.path).read_text(encoding="utf-8", errors="replace")
        lines = raw.splitlines()
        for section in page.sections:
            if section.label("error", "errors") is None:
                continue
            end = next((s.line for s in page.sections if s.line > section.line), len(lines) + 1)
            for i in range(section.line, end - 1):
                m = _ERROR_PARA.match(lines[i].strip())
                if not m:
                    continue
                paragraph = [m.group(1)]
                for nxt in lines[i + 1 : end - 1]:
                    if not nxt.strip() or nxt.startswith("```"):
                        break
                    paragraph.append(nxt)
                rest = " ".join(part.strip() for part in paragraph).strip()
                spans = _CODE_SPAN.findall(rest)
                if spans:
                    line = spans[0]
                elif rest:
                    line = rest
                else:
                    fence = next(j for j in range(i + 1, end - 1) if lines[j].startswith("```"))
                    line = lines[fence + 1]
                found.append((f"{page.path}#{section.anchor}", line.strip()))
                break
    return found


def log_with(line: str) -> str:
    """A plausible log whose last line reports ``line`` at ERROR level."""
    return "\n".join([*HEALTHY_HEAD, ERROR.format(line)]) + "\n"


def test_demo_wiki_has_the_expected_error_sections(demo):
    wiki, known = demo
    refs = {entry.ref for entry in known.entries}
    assert len(known.entries) == len(error_lines(wiki)) == 6
    assert "troubleshooting/common-issues.md#nccl_graph_file-set-to-an-empty-string" in refs


@pytest.mark.parametrize("which", ["demo", "snapshot"])
def test_every_error_section_is_matched_by_a_log_containing_its_error_line(which, request):
    wiki, known = request.getfixturevalue(which)
    cases = error_lines(wiki)
    assert cases, "no Error sections found"
    missed = []
    for ref, line in cases:
        matches = known.match(log_with(line), "log")
        if ref not in {m.page for m in matches}:
            missed.append((ref, line))
    assert not missed


@needs_logs
@pytest.mark.parametrize("which", ["demo", "snapshot"])
def test_no_known_error_matches_the_healthy_sample_logs(which, request):
    _, known = request.getfixturevalue(which)
    for log_file in sorted(SAMPLE_LOGS.glob("*.log")):
        text = log_file.read_text(encoding="utf-8", errors="replace")
        assert known.match(text, "log") == [], log_file.name


@needs_logs
def test_healthy_logs_stay_clean_even_when_cut_short_or_concatenated(snapshot):
    _, known = snapshot
    for log_file in sorted(SAMPLE_LOGS.glob("*.log")):
        lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()
        assert known.match("\n".join(lines[:300]), "log") == []
        assert known.match("\n".join(lines * 3), "log") == []


# --- signature kinds -----------------------------------------------------------------

HANG_REF = "troubleshooting/common-issues.md#startup-stops-after-the-nccl-version-line"


def test_a_quote_the_prose_puts_last_matches_only_at_the_end_of_the_log(demo):
    _, known = demo
    version = "(Worker pid=351) INFO 05-15 03:31:20 [pynccl.py:113] vLLM is using nccl==2.28.9"
    hung = "\n".join([*HEALTHY_HEAD[:2], version, version, ""])
    matches = known.match(hung, "log")
    assert [m.page for m in matches] == [HANG_REF]
    assert matches[0].kind == "last-line"
    assert matches[0].lines[-1].number == 4
    went_on = "\n".join([*HEALTHY_HEAD[:2], version, *HEALTHY_HEAD[3:] * TAIL_LINES])
    assert known.match(went_on, "log") == []


def test_last_line_signatures_do_not_apply_to_free_text(demo):
    _, known = demo
    assert known.match("it stops after vLLM is using nccl==2.28.9", "text", is_log=False) == []


@pytest.mark.parametrize(
    "line",
    [
        "NCCL error: Failed to CUDA calloc 20971520 bytes",
        "torch.distributed.DistBackendError: NCCL error: Failed to CUDA calloc 8 bytes",
        "[rank3]: Failed to CUDA calloc 10485760 bytes",
    ],
)
def test_numbers_and_prefixes_do_not_matter(demo, line):
    _, known = demo
    pages = [m.page for m in known.match(log_with(line), "log")]
    assert pages[0] == "troubleshooting/common-issues.md#nccl-cannot-allocate-its-buffers"


def test_the_message_alone_matches_under_another_exception_name(demo):
    _, known = demo
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    matches = known.match(log_with(line), "log")
    assert matches[0].page.endswith("#illegal-memory-access-under-speculative-decoding")
    assert matches[0].kind == "message"
    assert matches[0].fix.startswith("Use ")


@pytest.mark.parametrize(
    "line",
    [
        "NCCL error: failed to allocate",  # different words
        "CUDA calloc failed",  # the words, not the run
        "Failed to CUDA",  # too little of it
        "memory access was encountered illegal",  # order matters
    ],
)
def test_near_misses_do_not_match(demo, line):
    _, known = demo
    assert known.match(log_with(line), "log") == []


def test_a_quoted_flag_counts_only_next_to_an_error(snapshot):
    _, known = snapshot
    entry = next(e for e in known.entries if any(s.kind == "phrase" for s in e.signatures))
    phrase = next(s for s in entry.signatures if s.kind == "phrase").text
    quiet = "\n".join([*HEALTHY_HEAD, INFO.format(f"args: {phrase}"), *HEALTHY_HEAD])
    assert entry.ref not in {m.page for m in known.match(quiet, "log")}
    crash = "\n".join(
        [
            *HEALTHY_HEAD,
            INFO.format(f"args: {phrase}"),
            "Traceback (most recent call last):",
            "ModuleNotFoundError: No module named 'x'",
        ]
    )
    assert entry.ref in {m.page for m in known.match(crash, "log")}


def test_an_ellipsis_in_a_quote_is_a_gap(tmp_path):
    page = tmp_path / "issues.md"
    page.write_text(
        "# Issues\n\n## Missing Configs\n\n**Error**:\n```\n"
        "Config file not found at .../E=257,N=256,device_name=NVIDIA_X.json\n```\n\n"
        "**Fix**: Generate them.\n",
        encoding="utf-8",
    )
    known = KnownErrors.from_wiki(load_wiki(tmp_path))
    line = (
        "Config file not found at /usr/lib/python3/vllm/fused_moe/configs/"
        "E=257,N=256,device_name=NVIDIA_X.json"
    )
    matches = known.match(log_with(line), "log")
    assert [m.page for m in matches] == ["issues.md#missing-configs"]
    assert matches[0].fix == "Generate them."


def test_matches_report_line_numbers_and_the_line_itself(demo):
    _, known = demo
    text = log_with("ValueError: No valid attention backend found")
    (match,) = known.match(text, "log")
    assert match.lines[0].number == len(HEALTHY_HEAD) + 1
    assert "No valid attention backend found" in match.lines[0].text
    assert match.to_json()["lines"][0]["number"] == match.lines[0].number


def test_error_paragraph_quotes_come_from_the_parsed_page():
    _, sections, _ = parse_page(
        "t.md",
        "## A\n\n**Error**: `x failed` while `ncclCommInitRank` runs.\n\n**Fix**: `not me`\n\n"
        "- **Error**: `in a list`\n",
    )
    (error,) = [item for item in sections[0].labelled if item.label == "Error"]
    assert [code for code, _ in error.quotes] == ["x failed", "ncclCommInitRank"]
    assert error.quotes[1][1].endswith("while ")


@pytest.mark.parametrize(
    "text",
    ["", "\n" * 10_000, "x" * 200_000, "é" * 50_000 + "\n", "\x00\r\n" * 1000, "İ" * 1000],
)
def test_hostile_text_never_raises(demo, text):
    _, known = demo
    assert isinstance(known.match(text, "log"), list)


def test_a_five_megabyte_log_is_read_and_its_error_found(demo):
    _, known = demo
    filler = "\n".join(HEALTHY_HEAD) + "\n"
    text = filler * (5_000_000 // len(filler)) + ERROR.format("CUDA out of memory") + "\n"
    matches = known.match(text, "log")
    assert matches and matches[0].page.endswith("#out-of-memory-during-load-or-graph-capture")
    assert matches[0].lines[0].number == text.count("\n")


def _lines_by_alternation(lowered: str, keys: list[str]) -> list[tuple[int, int]]:
    """Candidate lines as one regular expression of every key finds them (longest key
    first, each line read once at its first hit): what ``_lines_with`` must equal."""
    if not keys:
        return []
    pattern = re.compile("|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True)))
    lines, done_to = [], -1
    for m in pattern.finditer(lowered):
        if m.start() < done_to:
            continue
        start = lowered.rfind("\n", 0, m.start()) + 1
        end = lowered.find("\n", m.end())
        end = len(lowered) if end < 0 else end
        lines.append((start, end))
        done_to = end
    return lines


@settings(deadline=None, max_examples=500)
@given(
    st.lists(st.sampled_from(["calloc", "all", "alloc", "out", "timeout", "o", "\n", " ", "x"])),
    st.lists(st.sampled_from(["calloc", "all", "alloc", "out", "oom", "ut"]), unique=True),
)
def test_candidate_lines_are_every_line_holding_a_key(pieces: list[str], keys: list[str]) -> None:
    lowered = "".join(pieces)
    assert _lines_with(lowered, keys) == _lines_by_alternation(lowered, keys)
