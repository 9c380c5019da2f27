"""Tests for knowledge.triage.logs: real startup logs, synthetic failures, line normalisation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.triage import logs
from knowledge.triage.logs import (
    MAX_LINE_CHARS,
    LogLine,
    Traceback,
    normalise_line,
    split_line,
    summarise_log,
)
from tests.support import SAMPLE_LOGS, hang_guard


def sample(name: str) -> str:
    path = SAMPLE_LOGS / name
    if not path.is_file():
        pytest.skip(f"{name} not present in shared sample-logs")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "dcp", "spec_method", "spec_tokens", "kv_tokens", "concurrency"),
    [
        ("vllm-glm51-dcp1-mtp0-startup.log", 1, None, 0, 341_504, 1.68),
        ("vllm-glm51-dcp4-mtp1-startup.log", 4, "mtp", 3, 1_271_040, 6.27),
    ],
)
def test_real_startup_logs(
    name: str,
    dcp: int,
    spec_method: str | None,
    spec_tokens: int,
    kv_tokens: int,
    concurrency: float,
) -> None:
    summary = summarise_log(sample(name))
    assert summary.engine == "vllm"
    assert summary.version == "0.20.2rc1.dev249+glmkimirebase20260514"
    assert summary.model == "lukealonso/GLM-5.1-NVFP4-MTP"
    assert summary.served_model_name == "GLM-5"
    assert (summary.tp, summary.pp, summary.dp, summary.dcp) == (8, 1, 1, dcp)
    assert (summary.spec_method, summary.spec_tokens) == (spec_method, spec_tokens)
    assert summary.kv_cache_tokens == kv_tokens
    assert summary.max_concurrency == concurrency
    assert summary.max_model_len == 202_752
    assert summary.attention_backend == "B12X_MLA_SPARSE"
    assert summary.moe_backend == "B12X"
    assert summary.quantization == "modelopt_fp4"
    assert summary.kv_cache_dtype == "fp8"
    assert summary.server_ready
    assert summary.first_error is None
    assert summary.first_error_line is None
    assert summary.errors == 0
    assert summary.last_traceback is None
    assert summary.warnings > 0
    assert summary.args["tensor_parallel_size"] == 8
    assert summary.problems == ()


def test_real_log_line_count_matches_newlines() -> None:
    text = sample("vllm-glm51-dcp1-mtp0-startup.log")
    assert summarise_log(text).lines == text.count("\n") + (not text.endswith("\n"))


VLLM_CRASH = """\
(APIServer pid=1) INFO 06-01 10:00:00 [api_server.py:1] vLLM API server version 0.11.0
(APIServer pid=1) INFO 06-01 10:00:00 [utils.py:2] non-default args: {'model_tag': 'org/m', \
'model': 'org/m', 'tensor_parallel_size': 2, 'enable_expert_parallel': True, \
'speculative_config': {'method': 'ngram', 'num_speculative_tokens': 4}, \
'compilation_config': {'mode': <CompilationMode.VLLM_COMPILE: 3>}}
(EngineCore_DP0 pid=77) WARNING 06-01 10:00:05 [cuda.py:10] something looks odd
(EngineCore_DP0 pid=77) ERROR 06-01 10:00:09 [core.py:700] EngineCore failed to start.
(EngineCore_DP0 pid=77) ERROR 06-01 10:00:09 [core.py:700] Traceback (most recent call last):
(EngineCore_DP0 pid=77) ERROR 06-01 10:00:09 [core.py:700]   File "/x/vllm/core.py", line 9, in run
(EngineCore_DP0 pid=77) ERROR 06-01 10:00:09 [core.py:700]     engine = Engine()
(EngineCore_DP0 pid=77) ERROR 06-01 10:00:09 [core.py:700] torch.OutOfMemoryError: CUDA OOM
(APIServer pid=1) Traceback (most recent call last):
(APIServer pid=1)   File "/usr/bin/vllm", line 8, in <module>
(APIServer pid=1)     sys.exit(main())
(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above.
"""


def test_vllm_crash_log() -> None:
    summary = summarise_log(VLLM_CRASH)
    assert summary.lines == 12
    assert summary.engine == "vllm"
    assert summary.version == "0.11.0"
    assert summary.model == "org/m"
    assert summary.tp == 2
    assert summary.ep is True
    assert (summary.spec_method, summary.spec_tokens) == ("ngram", 4)
    assert summary.first_error == "EngineCore failed to start."
    assert summary.first_error_line == 4
    assert summary.warnings == 1
    assert summary.errors == 6  # five ERROR lines and one bare exception line
    assert not summary.server_ready
    assert summary.last_traceback == Traceback(
        line=9,
        lines=(
            "Traceback (most recent call last):",
            '  File "/usr/bin/vllm", line 8, in <module>',
            "    sys.exit(main())",
            "RuntimeError: Engine core initialization failed. See root cause above.",
        ),
        exception="RuntimeError: Engine core initialization failed. See root cause above.",
    )


INTERLEAVED = """\
(Worker pid=10) Traceback (most recent call last):
(Worker pid=11) Traceback (most recent call last):
(Worker pid=10)   File "a.py", line 1, in f
(Worker pid=11)   File "b.py", line 2, in g
(Worker pid=11) KeyError: 'b'
(Worker pid=10)     f()
(Worker pid=10) ValueError: a
"""


def test_interleaved_tracebacks_are_kept_apart() -> None:
    summary = summarise_log(INTERLEAVED)
    assert summary.last_traceback == Traceback(
        line=1,
        lines=(
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "    f()",
            "ValueError: a",
        ),
        exception="ValueError: a",
    )
    assert summary.first_error == "KeyError: 'b'"
    assert summary.first_error_line == 5


SGLANG = """\
[2025-07-01 10:00:00] server_args=ServerArgs(model_path='org/sg', tokenizer_path='org/sg', \
tp_size=4, dp_size=1, ep_size=4, pp_size=1, attention_backend='flashinfer', quantization='fp8', \
kv_cache_dtype='auto', speculative_algorithm='EAGLE', speculative_num_steps=3, context_length=None)
[2025-07-01 10:00:10 TP0] Load weight end. dtype=torch.bfloat16, avail mem=30.00 GB
[2025-07-01 10:00:11 TP0] KV Cache is allocated. #tokens: 250000, K size: 10.00 GB
[2025-07-01 10:00:20] The server is fired up and ready to roll!
[2025-07-01 10:05:00 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl/python/sglang/srt/managers/scheduler.py", line 100, in run
    step()
ValueError: bad batch 0x7f00deadbeef
"""


def test_sglang_log() -> None:
    summary = summarise_log(SGLANG)
    assert summary.engine == "sglang"
    assert summary.model == "org/sg"
    assert (summary.tp, summary.dp, summary.pp, summary.ep) == (4, 1, 1, 4)
    assert (summary.spec_method, summary.spec_tokens) == ("EAGLE", 3)
    assert summary.attention_backend == "flashinfer"
    assert summary.quantization == "fp8"
    assert summary.kv_cache_tokens == 250_000
    assert summary.server_ready
    assert summary.first_error == "ValueError: bad batch 0x7f00deadbeef"
    assert summary.first_error_line == 8
    assert summary.last_traceback is not None
    assert summary.last_traceback.line == 5
    assert summary.last_traceback.exception == "ValueError: bad batch 0x7f00deadbeef"
    assert len(summary.last_traceback.lines) == 4


def test_truncated_traceback_is_reported_without_exception() -> None:
    text = 'boot\nTraceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
    summary = summarise_log(text)
    assert summary.last_traceback == Traceback(
        2, ("Traceback (most recent call last):", '  File "x.py", line 3, in <module>'), None
    )
    assert summary.first_error is None


def test_broken_args_dict_is_a_problem_not_a_crash() -> None:
    text = "(APIServer pid=1) INFO 01-01 00:00:00 [u.py:1] non-default args: {'model': 'x', 'tp"
    summary = summarise_log(text)
    assert summary.problems == ("non-default args could not be parsed",)
    assert summary.args == {}


def test_very_long_lines_are_capped() -> None:
    text = "ERROR: " + "x" * (10 * MAX_LINE_CHARS) + "\nINFO: Application startup complete.\n"
    summary = summarise_log(text)
    assert summary.lines == 2
    assert summary.first_error is not None
    assert len(summary.first_error) <= 1000
    assert summary.server_ready


def test_empty_log() -> None:
    summary = summarise_log("")
    assert summary.lines == 0
    assert summary.engine is None
    assert summary.first_error is None


# ---------------------------------------------------------------- line splitting

SPLITS = [
    (
        "(APIServer pid=1) INFO 05-15 04:23:11 [utils.py:240] hello",
        LogLine("INFO", "APIServer pid=1", "hello"),
    ),
    (
        "(Worker pid=351) (Worker pid=356) WARNING 05-15 04:23:43 [symm.py:66] odd",
        LogLine("WARNING", "Worker pid=351", "odd"),
    ),
    (
        '(EngineCore pid=9) ERROR 05-15 04:23:43 [core.py:7]   File "x.py", line 1',
        LogLine("ERROR", "EngineCore pid=9", '  File "x.py", line 1'),
    ),
    ("[2025-06-26 02:16:20 TP0] Decode batch.", LogLine(None, "TP0", "Decode batch.")),
    ("[2025-06-26 02:16:20] Prefill batch.", LogLine(None, None, "Prefill batch.")),
    (
        "[rank3]:[W515 04:23:11.123456 ProcessGroupNCCL.cpp:1234] timeout",
        LogLine("WARNING", "rank3", "timeout"),
    ),
    (
        "srv-1  | INFO:     Started server process [1]",
        LogLine("INFO", None, "Started server process [1]"),
    ),
    (
        "2025-05-15T04:23:11.123456789Z ERROR 05-15 04:23:11 [a.py:1] boom",
        LogLine("ERROR", None, "boom"),
    ),
    ("2025-05-15 04:23:11,123 - app - ERROR - broken", LogLine("ERROR", None, "broken")),
    ("ERROR:root:failed here", LogLine("ERROR", None, "failed here")),
    ("plain text (no pid)", LogLine(None, None, "plain text (no pid)")),
]


@pytest.mark.parametrize(("line", "expected"), SPLITS, ids=[s[0][:30] for s in SPLITS])
def test_split_line(line: str, expected: LogLine) -> None:
    assert split_line(line) == expected


NORMALISED = [
    (
        "(Worker_TP3 pid=353) INFO 05-15 04:23:44 [cuda.py:313] Loaded 11/11 shards in 41.48 s",
        "Loaded <n>/<n> shards in <n> s",
    ),
    (
        '  File "/opt/venv/lib/python3.12/site-packages/vllm/x.py", line 691, in run',
        'File "<path>", line <n>, in run',
    ),
    (
        "RuntimeError: CUDA error at 0x7f3a2b1c0000 (device 3): an illegal memory access",
        "RuntimeError: CUDA error at <hex> (device <n>): an illegal memory access",
    ),
    (
        "request 123e4567-e89b-12d3-a456-426614174000 from http://10.0.0.5:8000/v1/x failed",
        "request <uuid> from <url> failed",
    ),
    (
        "saved to ./cache/4b9d663456/rank_0_0 and ~/logs/run.txt, hash 9fad22224f0dfc5f",
        "saved to <path> and <path>, hash <hex>",
    ),
    ("size: 1,271,040 tokens; fp8 on TP3 sm_120a", "size: <n> tokens; fp8 on TP3 sm_120a"),
    ("\x1b[1;36m(APIServer pid=1)\x1b[0;0m WARNING 05-15 04:23:11 [a.py:1] x", "x"),
    ("Capturing 1%|  | 1/33\rCapturing 100%| | 33/33", "Capturing <n>%| | <n>/<n>"),
    ("  many    spaces\there  ", "many spaces here"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "expected"), NORMALISED, ids=[n[1][:30] for n in NORMALISED])
def test_normalise_line(line: str, expected: str) -> None:
    assert normalise_line(line) == expected


def test_normalise_keeps_a_signature_stable_across_ranks_and_runs() -> None:
    a = "(Worker_TP0 pid=350) ERROR 05-15 04:23:44 [x.py:1] NCCL error: unhandled (run 1)"
    b = "(Worker_TP7 pid=901) ERROR 06-02 11:02:03 [x.py:1] NCCL error: unhandled (run 2)"
    assert normalise_line(a) == normalise_line(b)


# ---------------------------------------------------------------- properties

FRAGMENTS = st.sampled_from(
    [
        "(APIServer pid=1) ",
        "INFO 05-15 04:23:11 [a.py:1] ",
        "ERROR 05-15 04:23:11 [a.py:1] ",
        "[rank1]:",
        "[2025-01-01 00:00:00 TP0] ",
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
        "ValueError: x",
        "non-default args: {'a': ",
        "<E.X: 1>",
        "}",
        "\n",
        "\r",
        "\x1b[1m",
        "0x1f",
        "/a/b",
        "123",
        "1,234.5",
        "version 1.2.3",
        "GPU KV cache size: 12 tokens",
        " ",
    ]
)
LOG_TEXT = st.one_of(st.text(), st.lists(st.one_of(FRAGMENTS, st.text(max_size=4))).map("".join))


@settings(deadline=None, max_examples=300)
@given(LOG_TEXT)
def test_summarise_never_raises(text: str) -> None:
    summary = summarise_log(text)
    assert summary.lines == (text.count("\n") + (not text.endswith("\n")) if text else 0)


MARKED_TEXT = st.lists(
    st.one_of(
        FRAGMENTS,
        st.sampled_from(logs._LINE_MARKERS),
        st.sampled_from(["model x\n", "█ model m", "Using FLASH_ATTN backend", "\x1b[0m"]),
        st.text(max_size=4),
    )
).map("".join)


@settings(deadline=None, max_examples=300)
@given(st.one_of(LOG_TEXT, MARKED_TEXT))
def test_lines_without_a_marker_read_alike_when_skipped(text: str) -> None:
    with pytest.MonkeyPatch.context() as patched:  # every line read in full
        patched.setattr(logs, "_marks", lambda _text: None)
        full = summarise_log(text)
    assert summarise_log(text) == full


@pytest.mark.skipif(not SAMPLE_LOGS.is_dir(), reason="shared sample logs not present")
def test_real_logs_read_alike_when_lines_without_a_marker_are_skipped() -> None:
    for path in sorted(SAMPLE_LOGS.glob("*.log")):
        text = path.read_text("utf-8", errors="replace")
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(logs, "_marks", lambda _text: None)
            full = summarise_log(text)
        assert summarise_log(text) == full, path.name


HEAD_TEXT = st.lists(
    st.one_of(
        FRAGMENTS,
        st.sampled_from(["(", ")", "(x pid=2)", "(rank=1)", " ", "  ", "WARN", "INFO", "05-15"]),
        st.sampled_from([" 04:23:11 ", "[a.py:1]", "[", "]", "\t", "pid=", "|", "a |"]),
        st.text(max_size=3),
    ),
    max_size=10,
).map("".join)


HEADED_LINE = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(
            ["(APIServer pid=1)", "(x rank=3)", "(x)", "(pid=1", "(" + "a" * 160 + " pid=1)"]
        ),
        st.sampled_from(["", " ", "  ", "\t", " \t"]),
        st.sampled_from(
            [
                "INFO 05-15 04:23:11 [a.py:1] ",
                "WARN 05-15 04:23:11.123 [x]\t",
                "ERROR 05-15 04:23:11 a.py:1] ",
                "INFO: x ",
                "INFO 5-15 ",
                "[rank1]:",
                "web | ",
                "2025-01-02T03:04:05Z ",
            ]
        ),
        HEAD_TEXT,
    ),
)


QUIET_LOG = st.lists(
    st.one_of(
        st.builds(
            "".join,
            st.tuples(
                st.sampled_from(["(APIServer pid=1) ", "(EngineCore_DP0 pid=3) ", "(x rank=3)"]),
                st.sampled_from(
                    [
                        "INFO 05-15 04:23:11 [a.py:1] ",
                        "DEBUG 05-15 04:23:11.5 [b.py:2]\t",
                        "WARN 05-15 04:23:11 [c.py:3] ",
                        "ERROR 05-15 04:23:11 [d.py:4] ",
                    ]
                ),
                st.one_of(HEAD_TEXT, FRAGMENTS, st.sampled_from(logs._LINE_MARKERS)),
            ),
        ),
        HEADED_LINE,
        FRAGMENTS,
        st.text(max_size=4),
    ),
    max_size=20,
).map("\n".join)


@settings(deadline=None, max_examples=300)
@given(st.one_of(QUIET_LOG, LOG_TEXT))
def test_quiet_lines_read_for_their_tag_alone_read_alike(text: str) -> None:
    """A line a vLLM head opens at INFO or DEBUG, without a marker, is read for its tag
    alone: the summary is the one reading every such line in full gives."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(logs, "_quiet_line", lambda _reader, _line: False)
        full = summarise_log(text)
    assert summarise_log(text) == full


def test_a_server_log_of_quiet_lines_is_read_alike_and_counted_as_vllm() -> None:
    lines = [
        f"(EngineCore_DP0 pid=310) INFO 05-15 03:30:{n % 60:02d} [r.py:{n}] step {n}"
        for n in range(50)
    ]
    lines[20:20] = ["(EngineCore_DP0 pid=310) ERROR 05-15 03:30:20 [r.py:9] NCCL error: x"]
    text = "\n".join(lines)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(logs, "_quiet_line", lambda _reader, _line: False)
        full = summarise_log(text)
    summary = summarise_log(text)
    assert summary == full
    assert summary.engine == "vllm" and summary.errors == 1 and summary.first_error_line == 21


def test_a_traceback_opened_on_a_quiet_looking_line_is_followed() -> None:
    head = "(APIServer pid=1) {} 05-15 04:23:11 [a.py:1] "
    text = "\n".join(
        [
            head.format("INFO") + "step 1",
            head.format("INFO") + "Traceback (most recent call last):",
            head.format("ERROR") + '  File "x.py", line 1',
            head.format("ERROR") + "ValueError: x",
        ]
    )
    traceback = summarise_log(text).last_traceback
    assert traceback is not None and traceback.line == 2
    assert traceback.exception == "ValueError: x"


@settings(deadline=None, max_examples=500)
@given(st.one_of(HEAD_TEXT, HEADED_LINE))
def test_a_tag_and_level_read_at_once_split_as_one_by_one(text: str) -> None:
    with pytest.MonkeyPatch.context() as patched:  # the loop alone
        patched.setattr(logs, "_VLLM_HEAD_RE", re.compile(r"(?!)"))
        slow = split_line(text)
    assert split_line(text) == slow


@settings(deadline=None, max_examples=300)
@given(LOG_TEXT)
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise_line(text)
    assert normalise_line(once) == once
    assert "\n" not in once or "\n" in text


def _normalise_unguarded(line: str) -> str:
    """``normalise_line`` as the module doc states it: every replacement on every pass,
    to the fixpoint (the module skips a pattern when what it needs is absent)."""

    def once(text: str) -> str:
        message = split_line(text.lstrip()).message
        for pattern, placeholder in (
            (logs._UUID_RE, "<uuid>"),
            (logs._URL_RE, "<url>"),
            (logs._HEX_PTR_RE, "<hex>"),
            (logs._PATH_RE, "<path>"),
            (logs._HEX_HASH_RE, "<hex>"),
            (logs._NUMBER_RE, "<n>"),
        ):
            message = pattern.sub(placeholder, message)
        return " ".join(message.split())

    result = once(logs._clean(line))
    while (again := once(result)) != result:
        result = again
    return result


def _split_line_unguarded(line: str) -> LogLine:
    """``split_line`` trying every prefix pattern in turn on every pass, as the module
    doc lists them (the module tries a pattern only when the line can start with it)."""
    level: str | None = None
    source: str | None = None
    rest = line
    while rest:
        before = rest
        m = logs._COMPOSE_PREFIX_RE.match(rest) or logs._ISO_TS_RE.match(rest)
        if m:
            rest = rest[m.end() :]
        elif rest.startswith("("):
            close = rest.find(")", 1, 160)
            inner = rest[1:close] if close > 0 else ""
            if "pid=" not in inner and "rank=" not in inner:
                break
            source = source or inner
            rest = rest[close + 1 :]
            rest = rest[1:] if rest.startswith(" ") else rest
        elif rest.startswith("["):
            if m := logs._RANK_RE.match(rest):
                source = source or f"rank{m.group(1)}"
            elif m := logs._GLOG_RE.match(rest):
                level = level or logs._GLOG_LEVELS[m.group(1)]
            elif m := logs._SGLANG_TS_RE.match(rest):
                source = source or (m.group(2).strip() or None)
            else:
                break
            rest = rest[m.end() :]
        elif m := logs._VLLM_LEVEL_RE.match(rest) or logs._COLON_LEVEL_RE.match(rest):
            level = level or logs._LEVEL_ALIASES.get(m.group(1), m.group(1))
            rest = rest[m.end() :]
            if m.re is logs._COLON_LEVEL_RE:
                rest = rest.lstrip(" \t")
        elif m := logs._PY_TS_LEVEL_RE.match(rest):
            level = level or m.group(1)
            rest = rest[m.end() :]
        else:
            break
        if rest == before:
            break
    return LogLine(level, source, rest)


#: Every prefix split_line knows, its near misses, and a compose name of the longest kind.
PREFIX_FRAGMENTS = st.sampled_from(
    [
        "srv-1  | ",
        "a" * 64 + " " * 32 + "| ",
        "a" * 64 + " " * 33 + "| ",
        "2025-01-02T03:04:05.123Z ",
        "2025-01-02 03:04:05,123 INFO ",
        "2025-01-02 03:04:05 - vllm - WARNING - ",
        "(APIServer pid=1) ",
        "[rank3]: ",
        "[W515 04:23:11.1 file.cpp:12] ",
        "INFO 05-15 04:23:11 [a.py:1] ",
        "WARN 05-15 04:23:11 x.py:1] ",
        "ERROR:root:",
        "CRITICAL: ",
        "[2025-01-02 03:04:05 TP0] ",
        "202",
        "5-",
        "|",
        "(",
        "[",
        "I",
        " ",
        "٣٣٣٣-",
    ]
)


@settings(deadline=None, max_examples=1000)
@given(st.lists(st.one_of(PREFIX_FRAGMENTS, st.text(max_size=3)), max_size=8).map("".join))
def test_split_line_tries_only_prefixes_the_line_can_start_with(text: str) -> None:
    assert split_line(text) == _split_line_unguarded(text)


#: Pieces that each replacement (and its guard) looks for, and near misses.
NORMALISE_FRAGMENTS = st.sampled_from(
    [
        "123e4567-e89b-12d3-a456-426614174000",
        "123e4567-e89b-12d3",
        "-abcd-",
        "https://h.example/p?q=1",
        "x://",
        "0x7f3a",
        "0X",
        "/usr/lib/x.so",
        "./a",
        "~/b",
        "deadbeef12",
        "abcdef12/",
        "٣",
        "1,271,040",
        "3.74",
        "TP3",
        "fp8",
        "srv-1  | ",
        "INFO 05-15 04:23:11 [a.py:1] ",
        "(Worker_TP0 pid=3) ",
        " ",
        "\t",
    ]
)


@settings(deadline=None, max_examples=1000)
@given(st.lists(st.one_of(NORMALISE_FRAGMENTS, st.text(max_size=3)), max_size=12).map("".join))
def test_normalise_skips_only_replacements_that_cannot_match(text: str) -> None:
    assert normalise_line(text) == _normalise_unguarded(text)


#: Hostile logs: each must finish (the alarm is a hang guard, not a timing assertion).
HOSTILE = {
    "one-long-line": "x" * 2_000_000,
    "unclosed-args": "non-default args: {" + "'a': [" * 50_000,
    "many-traceback-heads": "".join(
        f"(W pid={i}) Traceback (most recent call last):\n" for i in range(20_000)
    ),
    "endless-frames": "Traceback (most recent call last):\n" + "  frame\n" * 100_000,
    "empty-lines": "\n" * 500_000,
    "prefix-chain": "(a pid=1) " * 100_000,
    "rank-chain": "[rank1]:" * 100_000,
    "number-list": "1," * 500_000,
    "exception-lines": "ValueError: x\n" * 50_000,
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_log_finishes(text: str) -> None:
    with hang_guard(30):
        summary = summarise_log(text)
        normalise_line(text)
    assert summary.lines == text.count("\n") + (not text.endswith("\n"))
    if summary.last_traceback is not None:
        assert len(summary.last_traceback.lines) <= 200
