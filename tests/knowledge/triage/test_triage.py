"""The triage engine end to end on the demo wiki: the JSON contract, redaction first,
family detection, suggestions and confidence, rendering, and property tests."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge.answers.triage import triage_reply
from knowledge.cli.console import dispatch, render_text
from knowledge.service import KnowledgeBase
from knowledge.triage import (
    CONFIDENCES,
    FIELDS,
    TriageContext,
    TriageRequest,
    TriageResult,
    triage,
)
from tests.support import DEMO, SAMPLE_LOGS

V3_LAUNCH = (
    (DEMO / "models" / "glm5_v3.md").read_text("utf-8").split("```bash\n")[1].split("```")[0]
)
HF = "hf_" + "Ab3" * 12
GITHUB = "ghp_" + "Zy9x" * 9
AWS = "AKIA" + "QWERTYUIOP123456"
ERROR = "(EngineCore pid=310) ERROR 05-15 03:31:06 [core.py:109] {}"
INFO = "(APIServer pid=1) INFO 05-15 03:30:49 [utils.py:306] line {}"


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    base = KnowledgeBase.open(DEMO, tmp_path_factory.mktemp("triage-data"))
    yield base
    base.close()


@pytest.fixture(scope="module")
def ctx(kb) -> TriageContext:
    return kb.triage_context


def shown(result: TriageResult, ctx: TriageContext) -> str:
    """The result as the console and ``wikibot triage`` print it."""
    return render_text(triage_reply(result, ctx.templates))


def v3_request(**extra: str) -> dict[str, str]:
    command = V3_LAUNCH.replace(
        "-e NCCL_GRAPH_FILE=/etc/nccl/graph.xml", f"-e NCCL_GRAPH_FILE= -e HF_TOKEN={HF}"
    )
    log = "\n".join([INFO.format(i) for i in range(120)])
    log += (
        "\n"
        + ERROR.format(
            "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"
        )
        + "\n"
    )
    return {
        "question": "GLM-5 crashes under load after I moved to eight GPUs",
        "runbook": "models/glm5_v3.md",
        "launch_command": command,
        "gpu_layout": "8x RTX PRO 6000",
        "logs": log,
        **extra,
    }


# --- the JSON contract -----------------------------------------------------------------


def test_json_has_every_field_of_the_contract(ctx):
    data = ctx.run(v3_request()).to_json()
    assert set(data) >= {
        "redactions",
        "launch",
        "findings",
        "known_errors",
        "log_summary",
        "suggestions",
        "confidence",
        "completeness",
    }
    json.dumps(data)  # plain JSON all the way down
    assert data["confidence"] in CONFIDENCES
    assert data["launch"]["image"]["tag"] == "lantern-v3-cu130-20260605"
    assert data["launch"]["tp"] == 8
    for finding in data["findings"]:
        assert set(finding) >= {"id", "severity", "message", "page", "evidence"}
        assert finding["page"] is None or "#" in finding["page"]
    for match in data["known_errors"]:
        assert set(match) >= {"page", "title", "lines", "fix"}
        assert "#" in match["page"]
    for suggestion in data["suggestions"]:
        assert set(suggestion) >= {"page", "why", "score", "title"}
        assert "#" in suggestion["page"]
    scores = [s["score"] for s in data["suggestions"]]
    assert scores == sorted(scores, reverse=True) and 3 <= len(scores) <= 5
    assert {i["key"]: i["status"] for i in data["completeness"]["items"]}["client"] == "missing"


def test_the_glm5_v3_request_gets_what_a_helper_would_say(ctx):
    result = ctx.run(v3_request())
    ids = [f.id for f in result.findings]
    assert ids[:2] == ["env.nccl-graph-file-empty", "runbook.pinned-pattern"]
    assert "runbook.image-older" in ids and "checklist.missing.client" in ids
    assert result.family is not None and result.family.family.name == "GLM-5"
    assert result.family.how == "page" and result.family.named_page == "models/glm5_v3.md"
    (known,) = result.known_errors
    assert known.page.endswith("#illegal-memory-access-under-speculative-decoding")
    assert known.lines[0].number == 121
    assert result.suggestions[0].page == known.page
    assert result.confidence == "high"
    refs = [s.page for s in result.suggestions]
    assert "models/glm5_v4.md#launch" in refs
    assert "models/glm5_v3.md#glm-5-v3-nvfp4-with-dcp1-and-mtp1" in refs  # the page followed


def test_secrets_are_removed_before_anything_reads_them(ctx):
    request = v3_request(
        client=f"curl -H 'Authorization: Bearer {GITHUB}' http://127.0.0.1:8000/v1/models\n{{}}",
        text=f"my key is {AWS} and my token {HF}",
    )
    result = ctx.run(request)
    dumped = json.dumps(result.to_json())
    for secret in (HF, GITHUB, AWS):
        assert secret not in dumped
        assert secret not in shown(result, ctx)
    kinds = {(r.kind, r.field) for r in result.redactions}
    assert ("hf-token", "command") in kinds and ("hf-token", "text") in kinds
    assert ("aws-access-key", "text") in kinds and ("authorization", "client") in kinds
    for entry in result.to_json()["redactions"]:
        assert set(entry) == {"kind", "field", "count"}
    assert result.launch is not None and result.launch.env["HF_TOKEN"].startswith("[REDACTED")


def test_secrets_assembled_by_the_shell_are_caught_on_the_way_out(ctx):
    half = len(HF) // 2
    command = f"A={HF[:half]}\nB={HF[half:]}\nvllm serve m --api-key $A$B"
    data = ctx.run({"command": command}).to_json()
    assert HF not in json.dumps(data)


# --- reading requests --------------------------------------------------------------------


def test_the_wiki_question_template_labels_are_understood():
    request, problems = TriageRequest.from_mapping(
        {
            "Runbook followed": "models/qwen3_v2.md",
            "Image tag / digest": "demo-registry/vllm:orchard-v3-cu130-20260801",
            "GPUs and topology": "2x",
            "TP / DCP / MTP / DSpark": "TP2 MTP2",
            "Launch command or compose file": "vllm serve x",
            "Client command": "curl ...",
            "What I expected": "fast",
            "What happened": "slow",
            "Server log (last 100-300 lines)": "INFO ok",
            "Already tried": "restart",
            "Mood": "tired",
            "settings": {"tp": 2, "dcp": 1},
        }
    )
    assert request.model_page == "models/qwen3_v2.md"
    assert request.image.startswith("demo-registry/vllm:")
    assert request.settings.endswith("tp: 2\ndcp: 1")
    assert request.actual == "slow" and request.tried == "restart" and request.log == "INFO ok"
    assert "Mood: tired" in request.text
    assert "field_ignored:Mood" in problems and "field_type:settings" in problems


def test_a_typed_request_and_a_mapping_give_the_same_result(ctx):
    typed = TriageRequest(text="crash", command=V3_LAUNCH, model_page="models/glm5_v3.md")
    mapped = {"text": "crash", "command": V3_LAUNCH, "model_page": "models/glm5_v3.md"}
    assert ctx.run(typed).to_json() == ctx.run(mapped).to_json()


# --- family, suggestions and confidence ---------------------------------------------------


@pytest.mark.parametrize(
    ("request_data", "family", "how"),
    [
        (
            {"model_page": "https://example.org/wiki/blob/main/models/qwen3_v1.md#launch"},
            "Qwen3",
            "page",
        ),
        ({"model_page": "Qwen3 v2"}, "Qwen3", "page"),
        ({"command": "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct-FP8 -tp 2"}, "Qwen3", "model"),
        ({"image": "demo-registry/vllm:lantern-v3-cu130-20260605"}, "GLM-5", "image"),
        ({"model_page": "deepseek"}, "DeepSeek-V4-Flash / DSpark", "name"),
        ({"text": "I followed models/ds4-dspark-v1.md"}, "DeepSeek-V4-Flash / DSpark", "page"),
    ],
)
def test_the_family_is_recognised(ctx, request_data, family, how):
    result = ctx.run(request_data)
    assert result.family is not None
    assert (result.family.family.name, result.family.how) == (family, how)


def test_a_hang_after_the_nccl_line_is_recognised_from_the_end_of_the_log(ctx):
    lines = [INFO.format(i) for i in range(150)]
    lines += ["(Worker pid=350) INFO 05-15 03:31:20 [pynccl.py:113] vLLM is using nccl==2.28.9"] * 4
    result = ctx.run({"text": "server never gets ready", "log": "\n".join(lines)})
    assert [k.page for k in result.known_errors] == [
        "troubleshooting/common-issues.md#startup-stops-after-the-nccl-version-line"
    ]
    assert result.known_errors[0].kind == "last-line"
    assert result.confidence == "high"


def test_an_error_quoted_in_the_text_is_found_too(ctx):
    result = ctx.run({"text": "I get ValueError: No valid attention backend found on start"})
    assert result.known_errors[0].field == "text"
    assert result.suggestions[0].page.endswith("#no-valid-attention-backend")


def test_symptoms_alone_give_suggestions_with_reasons(ctx):
    result = ctx.run({"text": "which NCCL_P2P_LEVEL should I use on a dual socket host"})
    assert result.suggestions
    assert any("nccl" in s.page for s in result.suggestions)
    assert all(s.why for s in result.suggestions)
    assert result.confidence in ("medium", "low")


def test_nothing_that_fits_says_so(ctx):
    result = ctx.run({"text": "how long should sourdough bread proof overnight"})
    assert result.suggestions == ()
    assert result.confidence == "none"
    assert "nothing" in shown(result, ctx)


@pytest.mark.skipif(
    not SAMPLE_LOGS.is_dir() or not list(SAMPLE_LOGS.glob("*.log")),
    reason=f"healthy sample logs not present at {SAMPLE_LOGS}",
)
def test_healthy_sample_logs_raise_no_known_error(ctx):
    for log_file in sorted(SAMPLE_LOGS.glob("*.log")):
        result = ctx.run({"log": log_file.read_text("utf-8", errors="replace")})
        assert result.known_errors == ()
        assert result.log_summary is not None and result.log_summary.server_ready


def test_the_knowledge_base_builds_the_context_once_per_load(kb):
    context = kb.triage_context
    assert kb.triage_context is context
    result = triage(context, {"text": "CUDA out of memory during graph capture"})
    assert result.known_errors and result.confidence == "high"
    kb.reload()
    assert kb.triage_context is not context
    assert kb.triage_context.wiki is kb.wiki


def test_a_context_without_search_still_triages(kb):
    ctx = TriageContext.build(kb.wiki, kb.catalogue, None)
    result = ctx.run(v3_request())
    assert result.known_errors and result.findings


def test_the_request_is_read_by_the_page_ranker_behind_search(ctx):
    assert ctx.suggester.ranker is not None
    question = (
        "Hello, I moved my setup to a new box last week and followed the runbook as well as I "
        "could. The weights load on every card, then the engine stops before it serves a "
        "single request. Is this a memory setting or something about the cards themselves?"
    )
    log = "\n".join(INFO.format(i) for i in range(40))
    log += "\n" + ERROR.format("RuntimeError: NCCL error: Failed to CUDA calloc 2097152 bytes")
    result = ctx.run({"text": question, "log": log})
    first = result.suggestions[0]
    assert first.page == "troubleshooting/common-issues.md#nccl-cannot-allocate-its-buffers"
    assert result.confidence == "high"
    paths = [s.page.partition("#")[0] for s in result.suggestions]
    assert len(paths) == len(set(paths)), "each page is suggested once, by its best section"


def test_each_page_is_suggested_once_with_all_its_reasons(ctx):
    result = ctx.run(v3_request())
    paths = [s.page.partition("#")[0] for s in result.suggestions]
    assert len(paths) == len(set(paths))
    first = result.suggestions[0]
    assert first.page.startswith("troubleshooting/common-issues.md#")
    assert len(first.why) >= 2  # its own error, and the finding or the other error it explains


def test_a_question_about_a_newer_version_of_a_family_is_not_answered_with_confidence(ctx):
    result = ctx.run({"text": "Is there a runbook for GLM-9.7 yet? I want it on eight cards."})
    assert result.confidence == "low"


def test_oversized_fields_are_cut_and_said(ctx):
    log = "\n".join(INFO.format(i) for i in range(10)) + "\n"
    huge = log * (9 * 1024 * 1024 // len(log))
    result = ctx.run({"log": huge + ERROR.format("CUDA out of memory")})
    assert result.known_errors  # the end of the log, where failures are, is kept
    assert any("log" in p for p in result.problems)


def test_the_reply_words_every_part(ctx):
    result = ctx.run(v3_request())
    reply = triage_reply(result, ctx.templates)
    text = render_text(reply)
    for heading in ("Findings", "Known errors", "Suggested pages", "Checklist", "Log summary"):
        assert f"\n{heading}" in text
    assert "Confidence: high" in text
    assert "troubleshooting/common-issues.md#nccl_graph_file-set-to-an-empty-string" in text
    assert reply.kind == "triage" and reply.fitted() == reply  # fits Discord as it is
    assert [p.ref for p in reply.pages[: len(result.suggestions)]] == [
        s.page for s in result.suggestions
    ]


def test_the_console_triages_a_line_of_text(kb):
    reply = dispatch(kb, "/triage I get ValueError: No valid attention backend found on start")
    assert reply.kind == "triage"
    assert reply.pages[0].ref.endswith("#no-valid-attention-backend")
    assert "Confidence: high" in render_text(reply)


def test_the_reply_escapes_what_users_wrote(ctx):
    result = ctx.run({"command": "vllm serve my_*odd*_model -tp 2", "text": "crash"})
    reply = triage_reply(result, ctx.templates)
    (launch,) = [f for f in reply.fields if f.name == "Launch command as read"]
    assert "my\\_\\*odd\\*\\_model" in launch.value
    assert "my_*odd*_model" in render_text(reply)


# --- property tests ------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=400)
FIELD = st.sampled_from(FIELDS)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(FIELD, TEXT, max_size=len(FIELDS)))
def test_triage_never_raises_on_arbitrary_text(ctx, data):
    result = ctx.run(data)
    assert result.confidence in CONFIDENCES
    json.dumps(result.to_json())
    shown(result, ctx)


SHELLISH = st.lists(
    st.sampled_from(
        [
            "docker run",
            "-e",
            "NCCL_GRAPH_FILE=",
            "--gpus",
            "all",
            "vllm serve",
            "-tp",
            "8",
            "'",
            '"',
            "\\\n",
            "services:",
            "  s:",
            "image:",
            "$X",
            "${Y:-z}",
            "--hf-overrides",
            '{"index_topk_pattern": "FFS"}',
            "demo-registry/vllm:lantern-v3-cu130-20260605",
            "CUDA_VISIBLE_DEVICES=0,1,1",
            "MTP=9",
            "models/glm5_v3.md",
            "Traceback",
            "\n",
        ]
    ),
    max_size=40,
).map(" ".join)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(FIELD, SHELLISH, max_size=len(FIELDS)))
def test_triage_never_raises_on_command_like_text(ctx, data):
    json.dumps(ctx.run(data).to_json())


SECRETS = st.one_of(
    st.from_regex(r"hf_[A-Za-z0-9]{34,40}", fullmatch=True),
    st.from_regex(r"ghp_[A-Za-z0-9]{36}", fullmatch=True),
    st.from_regex(r"github_pat_[A-Za-z0-9_]{82}", fullmatch=True),
    st.from_regex(r"AKIA[A-Z0-9]{16}", fullmatch=True),
)
WRAPPERS = st.sampled_from(
    [
        "{}",
        "HF_TOKEN={}",
        "export MY_API_KEY={}",
        "-e SECRET_KEY={} ",
        "Authorization: Bearer {}",
        '{{"token": "{}"}}',
        "--api-key {}",
        "https://user:{}@example.org/x",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FIELD, TEXT, TEXT, SECRETS, WRAPPERS, st.dictionaries(FIELD, TEXT, max_size=4))
def test_no_secret_survives_into_the_output(ctx, field, before, after, secret, wrapper, others):
    data = dict(others)
    data[field] = f"{before}\n{wrapper.format(secret)}\n{after}"
    result = ctx.run(data)
    assert secret not in json.dumps(result.to_json(), ensure_ascii=False)
    assert secret not in shown(result, ctx)
    assert result.redactions


def test_every_worded_value_has_its_template(ctx):
    t = ctx.templates
    for confidence in CONFIDENCES:
        assert t(f"confidence.{confidence}")
    for how in ("page", "model", "image", "name"):
        assert t(f"family_how.{how}")
    for status in ("present", "missing", "thin", "unchecked"):
        assert t(f"status.{status}")
    for kind in ("field_cut", "field_ignored", "field_type"):
        assert "{" not in t(f"problems.{kind}", field="x", limit=1)


def test_a_family_named_in_the_text_is_counted_once_the_ranker_read_it(ctx):
    text = "GLM-5 on eight cards: which NCCL_P2P_LEVEL should I use on a dual socket host?"
    ranking = ctx.suggester.ranker.rank(text, limit=10)
    result = ctx.run({"text": text})
    assert result.family is not None and result.family.how == "name"
    assert ranking.family == result.family.family.name
    pages = [s.page.partition("#")[0] for s in result.suggestions]
    assert pages[:3] == [hit.path for hit in ranking.hits[:3]]  # the ranker's order stands
    runbook = result.family.runbook.page
    assert any(s.page.startswith(runbook) and len(s.why) >= 2 for s in result.suggestions)


def test_an_error_quoted_on_several_pages_leads_with_the_page_the_ranker_puts_first(tmp_path):
    error = "ZorbelArenaError: arena overflow while the worker grows its shared q8 cache pool"
    entry = (
        f"## Zorbel arena overflow\n\n**Error**: `{error}`\n\n"
        "**Cause**: {cause}\n\n**Fix**: {fix}\n"
    )
    (tmp_path / "models").mkdir()
    (tmp_path / "troubleshooting").mkdir()
    # the runbook sorts first by path; the troubleshooting page holds more of the request
    (tmp_path / "models" / "gadget.md").write_text(
        "# Gadget\n\n" + entry.format(cause="seen once here.", fix="see the guide.")
    )
    (tmp_path / "troubleshooting" / "arena.md").write_text(
        "# Arena Problems\n\n"
        + entry.format(
            cause="the zorbel arena is too small for q8 caches under concurrent load.",
            fix="grow the zorbel arena, or shrink the q8 caches, then restart under load.",
        )
    )
    base = KnowledgeBase.open(tmp_path, tmp_path / "data")
    try:
        result = base.triage_context.run(
            {
                "text": "under concurrent load the zorbel arena overflows with q8 caches",
                "log": error,
            }
        )
    finally:
        base.close()
    known = {k.page.partition("#")[0] for k in result.known_errors}
    assert known == {"models/gadget.md", "troubleshooting/arena.md"}
    assert [s.page.partition("#")[0] for s in result.suggestions[:2]] == [
        "troubleshooting/arena.md",
        "models/gadget.md",
    ]


def test_each_missing_checklist_item_is_listed_once_in_the_checklist_not_also_as_a_finding(
    ctx,
):
    result = triage(ctx, {"text": "my GLM-5 server dies after loading"})
    missing = [f for f in result.findings if f.check == "checklist"]
    assert missing, "the findings still carry them (JSON, eval)"
    reply = triage_reply(result, ctx.templates)
    text = render_text(reply)
    for item in result.completeness.items:
        if item.status == "missing":
            assert text.count(item.label) == 1, item.label
    findings = "\n".join(f.value for f in reply.fields if f.name.startswith("Findings"))
    assert "Missing from the request" not in findings
    # A finding of another check is still shown in the findings.
    launch = triage(ctx, v3_request())
    shown_text = shown(launch, ctx)
    assert any(f.check != "checklist" and f.message[:30] in shown_text for f in launch.findings)
