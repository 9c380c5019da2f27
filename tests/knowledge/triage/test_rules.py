"""Rules as data and the checks against the wiki, on launches parsed by knowledge.launch.

Each rule has a positive and a negative case. Generic shapes are tested with rule
files written here (adding a rule needs no code); coded checks with the demo wiki's
runbooks, whose GLM-5 v3/v4 and Qwen3 v2 pages differ in exactly the ways checked.
"""

from __future__ import annotations

import dataclasses

import pytest

from knowledge.launch import parse_image, parse_launch
from knowledge.service import demo_wiki_dir
from knowledge.templates import Templates, load_templates
from knowledge.triage.family import FamilyInfo
from knowledge.triage.onboarding import Completeness, ItemStatus
from knowledge.triage.rules import (
    CHECKS,
    PageMemo,
    RuleError,
    RuleSet,
    Settings,
    Subject,
    compare_image_tags,
    find_pinned_values,
    launch_settings,
    parse_stated,
    stated_settings,
    unstable_limits,
)
from knowledge.wiki import Catalogue, load_wiki
from tests.support import SAMPLE_LOGS, SNAPSHOT

WIKI = load_wiki(demo_wiki_dir())
CATALOGUE = Catalogue.from_wiki(WIKI)
RULES = RuleSet.load().bind(WIKI, CATALOGUE.statuses())

V3_PATTERN = "FFSFSSFSSFFSSFSFSSFFSSFSFFSSFSSFSFFSSFSS"
V4_PATTERN = "FFFSSFSSSFSSFFSSSFSSSFFSSSFSSSFSSFFSSSFS"
V4_IMAGE = "demo-registry/vllm:lantern-v4-cu130-20260722"
V3_IMAGE = "demo-registry/vllm:lantern-v3-cu130-20260605"


def family(name: str, how: str = "model") -> FamilyInfo:
    fam = next(f for f in CATALOGUE.families if f.name == name)
    return FamilyInfo(fam, CATALOGUE.runbook(fam), how)


def subject(
    command: str = "",
    *,
    settings: str = "",
    gpus: str = "",
    fam: str | None = None,
    image: str = "",
    log_settings: dict | None = None,
    log_model: str | None = None,
    completeness: Completeness | None = None,
) -> Subject:
    launch = parse_launch(command) if command else None
    stated = parse_stated(settings, gpus)
    layers = [("launch", launch_settings(launch))] if launch else []
    layers.append(("stated", stated_settings(stated)))
    stated_image = parse_image(image) if image else None
    return Subject(
        wiki=WIKI,
        launch=launch,
        command=command,
        stated=stated,
        settings=Settings.merge(layers),
        image=(launch.image if launch else None) or stated_image,
        stated_image=stated_image,
        family=family(fam) if fam else None,
        catalogue=CATALOGUE,
        completeness=completeness,
        log_settings=log_settings or {},
        log_model=log_model,
    )


def ids(s: Subject) -> list[str]:
    return [f.id for f in RULES.evaluate(s)]


def run(image: str = V4_IMAGE, env: str = "", args: str = "", gpus: str = "--gpus all") -> str:
    return f"docker run -d {gpus} --ipc=host {env} {image} vllm serve demo-org/GLM-5-NVFP4 {args}"


# --- coded checks: positive and negative, table-driven ------------------------------

CASES = [
    # (rule id, subject kwargs) that must fire ...
    ("env.nccl-graph-file-empty", dict(command=run(env="-e NCCL_GRAPH_FILE="))),
    ("env.nccl-graph-file-empty", dict(command='export NCCL_GRAPH_FILE=""\nvllm serve m')),
    (
        "env.nccl-graph-file-empty",
        dict(
            command="services:\n  s:\n    image: a/b:c\n    environment:\n"
            "      NCCL_GRAPH_FILE: ''\n"
        ),
    ),
    ("parallel.dcp-divides-tp", dict(command=run(args="-tp 8 --decode-context-parallel-size 3"))),
    ("parallel.dcp-divides-tp", dict(settings="TP2 DCP4")),
    ("parallel.too-few-gpus", dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1", args="-tp 4"))),
    ("parallel.too-few-gpus", dict(command=run(gpus="--gpus 2", args="-tp 2 -pp 2"))),
    ("parallel.too-few-gpus", dict(settings="TP8 DCP4", gpus="4x RTX PRO 6000")),
    (
        "parallel.unused-gpus",
        dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1,2,3", args="-tp 2")),
    ),
    ("parallel.gpu-lists", dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1,1", args="-tp 2"))),
    (
        "parallel.gpu-lists",
        dict(command=run(gpus="--gpus device=4,5", env="-e CUDA_VISIBLE_DEVICES=4,5")),
    ),
    ("parallel.gpu-lists", dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1"), gpus="8 GPUs")),
    ("settings.stated-differs.tp", dict(command=run(args="-tp 8"), settings="TP4")),
    ("settings.stated-differs.spec-tokens", dict(command=run(args="-tp 8"), settings="TP8 MTP3")),
    ("image.stated-differs", dict(command=run(image=V3_IMAGE), image=V4_IMAGE)),
    ("runbook.image-older", dict(command=run(image=V3_IMAGE), fam="GLM-5")),
    ("runbook.image-older", dict(image="demo-registry/vllm:lantern-v2-cu130", fam="GLM-5")),
    (
        "runbook.pinned-pattern",
        dict(
            command=run(args=f'--hf-overrides \'{{"index_topk_pattern": "{V3_PATTERN}"}}\''),
            fam="GLM-5",
        ),
    ),
    (
        "runbook.pinned-pattern",
        dict(command=run(env=f"-e GLM5_INDEX_TOPK_PATTERN={V4_PATTERN[:30]}"), fam="GLM-5"),
    ),
    (
        "runbook.spec-unstable",
        dict(
            command=run(
                args='--speculative-config \'{"method":"mtp","num_speculative_tokens":4}\''
            ),
            fam="Qwen3",
        ),
    ),
    ("runbook.spec-unstable", dict(settings="TP2 MTP5", fam="Qwen3")),
    ("log.other-launch", dict(command=run(args="-tp 8"), log_settings={"tp": 4})),
    ("log.other-launch", dict(command=run(), log_model="org/Other-Model")),
    ("launch.unreadable", dict(command=run(args="--hf-overrides '{broken'"))),
    ("flag.gpu-memory-utilization-high", dict(command=run(args="--gpu-memory-utilization 0.97"))),
    ("env.gpu-memory-utilization-high", dict(command="GPU_MEMORY_UTILIZATION=0.99\nvllm serve m")),
    ("flag.load-format-fastsafetensors", dict(command=run(args="--load-format fastsafetensors"))),
    ("env.nccl-p2p-disabled", dict(command=run(env="-e NCCL_P2P_DISABLE=1"))),
    ("flag.enforce-eager", dict(command=run(args="--enforce-eager"))),
]

NEGATIVE = [
    # ... and the same rule must stay quiet here.
    ("env.nccl-graph-file-empty", dict(command=run(env="-e NCCL_GRAPH_FILE=/etc/nccl/g.xml"))),
    (
        "env.nccl-graph-file-empty",
        dict(
            command="docker run -e NCCL_GRAPH_FILE= img:1 bash -lc 'unset NCCL_GRAPH_FILE; "
            "vllm serve m'"
        ),
    ),
    ("env.nccl-graph-file-empty", dict(command=run())),
    ("parallel.dcp-divides-tp", dict(command=run(args="-tp 8 --decode-context-parallel-size 4"))),
    ("parallel.dcp-divides-tp", dict(settings="DCP4")),
    ("parallel.too-few-gpus", dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1", args="-tp 2"))),
    ("parallel.too-few-gpus", dict(command=run(args="-tp 8"))),  # --gpus all: count unknown
    ("parallel.too-few-gpus", dict(settings="TP8 DCP4", gpus="GPUs 0-7")),
    ("parallel.unused-gpus", dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1", args="-tp 2"))),
    (
        "parallel.gpu-lists",
        dict(command=run(gpus="--gpus device=4,5", env="-e CUDA_VISIBLE_DEVICES=0,1")),
    ),
    (
        "parallel.gpu-lists",
        dict(command=run(env="-e CUDA_VISIBLE_DEVICES=0,1"), gpus="2x PRO 6000"),
    ),
    ("settings.stated-differs.tp", dict(command=run(args="-tp 8"), settings="TP8 DCP1")),
    ("image.stated-differs", dict(command=run(image=V4_IMAGE), image=V4_IMAGE)),
    ("image.stated-differs", dict(command=run(image=V4_IMAGE), image="demo-registry/vllm")),
    ("runbook.image-older", dict(command=run(image=V4_IMAGE), fam="GLM-5")),
    (
        "runbook.image-older",
        dict(command=run(image="other/vllm:lantern-v1-cu130-20250101"), fam="GLM-5"),
    ),
    ("runbook.image-older", dict(command=run(image=V3_IMAGE))),  # family unknown
    (
        "runbook.pinned-pattern",
        dict(
            command=run(args=f'--hf-overrides \'{{"index_topk_pattern": "{V4_PATTERN}"}}\''),
            fam="GLM-5",
        ),
    ),
    (
        "runbook.pinned-pattern",
        dict(
            command=run(args=f'--hf-overrides \'{{"index_topk_pattern": "{V3_PATTERN}"}}\''),
            fam="Qwen3",
        ),  # Qwen3's runbook pins no pattern
    ),
    (
        "runbook.spec-unstable",
        dict(
            command=run(
                args='--speculative-config \'{"method":"mtp","num_speculative_tokens":3}\''
            ),
            fam="Qwen3",
        ),
    ),
    ("runbook.spec-unstable", dict(settings="MTP5", fam="GLM-5")),  # GLM-5 v4 says nothing
    ("runbook.spec-unstable", dict(settings="DSpark 5", fam="Qwen3")),  # not MTP
    ("log.other-launch", dict(command=run(args="-tp 8"), log_settings={"tp": 8, "dcp": 1})),
    ("log.other-launch", dict(command=run(), log_model="demo-org/GLM-5-NVFP4")),
    ("launch.unreadable", dict(command=run(args="-tp 8"))),
    ("flag.gpu-memory-utilization-high", dict(command=run(args="--gpu-memory-utilization 0.93"))),
    ("flag.gpu-memory-utilization-high", dict(command=run(args="--gpu-memory-utilization auto"))),
    ("env.gpu-memory-utilization-high", dict(command="GPU_MEMORY_UTILIZATION=0.9\nvllm serve m")),
    ("flag.load-format-fastsafetensors", dict(command=run(args="--load-format safetensors"))),
    ("env.nccl-p2p-disabled", dict(command=run(env="-e NCCL_P2P_DISABLE=0"))),
    (
        "flag.enforce-eager",
        dict(command="docker run img:1 python -m sglang.launch_server --enforce-eager"),
    ),
]


@pytest.mark.parametrize(("rule_id", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires(rule_id, kwargs):
    assert rule_id in ids(subject(**kwargs))


@pytest.mark.parametrize(("rule_id", "kwargs"), NEGATIVE, ids=[c[0] for c in NEGATIVE])
def test_rule_stays_quiet(rule_id, kwargs):
    assert rule_id not in ids(subject(**kwargs))


def test_one_memo_shared_by_every_request_gives_each_the_findings_of_a_fresh_one():
    shared = PageMemo()
    for _, kwargs in CASES + NEGATIVE + CASES:  # the second round answers from the memo
        fresh = subject(**kwargs)
        alone = RULES.evaluate(fresh)
        assert RULES.evaluate(dataclasses.replace(fresh, memo=shared)) == alone, kwargs


def test_the_page_memo_never_answers_for_another_version_of_a_page():
    memo = PageMemo()
    page = WIKI.pages["models/glm5_v4.md"]
    edited = dataclasses.replace(page, sha=page.sha + "0")
    assert memo.get("pinned", page, "x", lambda: ("old",)) == ("old",)
    assert memo.get("pinned", page, "x", lambda: ("never asked",)) == ("old",)
    assert memo.get("pinned", edited, "x", lambda: ("new",)) == ("new",)
    assert memo.get("pinned", page, "y", lambda: ("other setting",)) == ("other setting",)
    assert memo.get("unstable", page, "x", lambda: ("other fact",)) == ("other fact",)


def test_every_bundled_rule_has_a_positive_and_a_negative_case():
    fired = {case[0].split(".", 2)[0] + "." + case[0].split(".", 2)[1] for case in CASES}
    quiet = {case[0].split(".", 2)[0] + "." + case[0].split(".", 2)[1] for case in NEGATIVE}
    bundled = {r.id for r in RULES.rules if not r.id.startswith("checklist.")}
    bundled.discard("env.nccl-graph-dump-file-empty")  # same shape as the graph-file rule
    assert bundled <= fired, bundled - fired
    assert bundled <= quiet, bundled - quiet


def test_a_clean_current_launch_raises_nothing():
    command = WIKI.pages["models/glm5_v4.md"].section("launch").code[0].text
    assert (
        ids(subject(command, fam="GLM-5", gpus="8x RTX PRO 6000", settings="TP8 DCP4 MTP3")) == []
    )


def test_pattern_findings_say_truncated_or_differs_and_link_the_runbook_section():
    cut = RULES.evaluate(subject(run(env=f"-e INDEX_TOPK_PATTERN={V4_PATTERN[:30]}"), fam="GLM-5"))
    (finding,) = [f for f in cut if f.id == "runbook.pinned-pattern"]
    assert "cut short" in finding.message and "30 characters" in finding.message
    assert finding.page == "models/glm5_v4.md#launch"
    old = RULES.evaluate(
        subject(
            run(args=f'--hf-overrides \'{{"index_topk_pattern": "{V3_PATTERN}"}}\''), fam="GLM-5"
        )
    )
    (finding,) = [f for f in old if f.id == "runbook.pinned-pattern"]
    assert "differs" in finding.message
    assert any("GLM-5 v3" in e for e in finding.evidence)  # the historical page it came from


def test_image_older_names_both_images_and_the_historical_page():
    (finding,) = [
        f
        for f in RULES.evaluate(subject(run(image=V3_IMAGE), fam="GLM-5"))
        if f.id == "runbook.image-older"
    ]
    assert V3_IMAGE in finding.message and V4_IMAGE in finding.message
    assert finding.page == "models/glm5_v4.md#image-and-model"
    assert any("GLM-5 v3" in e for e in finding.evidence)


def test_an_image_the_current_page_keeps_for_comparison_is_still_older():
    # qwen3_v2 lists the v1 image only to compare figures: someone running it is told
    older = "demo-registry/vllm:orchard-v1-cu129-20260412"
    command = f"docker run -d --gpus all --ipc=host {older} vllm serve Qwen/Qwen3-Next"
    (finding,) = [
        f for f in RULES.evaluate(subject(command, fam="Qwen3")) if f.id == "runbook.image-older"
    ]
    assert older in finding.message and "orchard-v3-cu130-20260801" in finding.message


def test_spec_unstable_quotes_the_runbook_and_links_its_section():
    (finding,) = [
        f
        for f in RULES.evaluate(subject(settings="MTP4", fam="Qwen3"))
        if f.id == "runbook.spec-unstable"
    ]
    assert finding.page == "models/qwen3_v2.md#known-limits"
    assert any("unstable" in e.casefold() for e in finding.evidence)


def test_nccl_graph_file_rule_links_the_wiki_section_about_it():
    (finding,) = [
        f for f in RULES.evaluate(subject(run(env="-e NCCL_GRAPH_FILE="))) if f.severity == "error"
    ]
    assert finding.page == "troubleshooting/common-issues.md#nccl_graph_file-set-to-an-empty-string"
    assert finding.evidence == ("NCCL_GRAPH_FILE=''",)


def test_checklist_rules_report_missing_and_thin_items():
    completeness = Completeness(
        (
            ItemStatus("logs", "Server log", "thin", detail="12 lines"),
            ItemStatus("client", "Client command", "missing", detail="not given"),
            ItemStatus("image", "Image", "present"),
            ItemStatus("other", "Something else", "unchecked"),
        ),
        "docs/newcomer-onboarding.md#before-you-ask",
    )
    found = RULES.evaluate(subject(completeness=completeness))
    assert [f.id for f in found] == ["checklist.missing.client", "checklist.thin.logs"]
    assert all(f.page == "docs/newcomer-onboarding.md#before-you-ask" for f in found)


def test_findings_come_errors_first():
    found = RULES.evaluate(
        subject(run(image=V3_IMAGE, env="-e NCCL_GRAPH_FILE=", args="--enforce-eager"), fam="GLM-5")
    )
    order = {"error": 0, "warning": 1, "info": 2}
    assert [order[f.severity] for f in found] == sorted(order[f.severity] for f in found)


# --- generic shapes: rules written as data only ----------------------------------------

GENERIC = """
rules:
  - id: t.empty
    severity: error
    if: {env_empty: [A_VAR, B_VAR]}
    message: "{name} is empty"
  - id: t.set
    severity: info
    if: {env_set: DEBUG_X}
    message: "{name}={value}"
  - id: t.unset
    severity: warning
    if: {env_unset: MUST_HAVE}
    message: "{name} missing"
  - id: t.equals
    severity: warning
    if: {env_equals: {name: LEVEL, value: [loc, 4]}}
    message: "{name} is {value}"
  - id: t.env-range
    severity: warning
    if: {env_range: {name: THREADS, min: 64, max: 512}}
    message: "{name} {value} outside {min}..{max}"
  - id: t.flag-present
    severity: info
    if: {flag_present: [enforce-eager]}
    message: "--{name}"
  - id: t.flag-absent
    severity: info
    if: {flag_absent: trust-remote-code, engine: vllm}
    message: "no --{name}"
  - id: t.flag-equals
    severity: info
    if: {flag_equals: {name: kv-cache-dtype, value: fp8}}
    message: "kv {value}"
  - id: t.flag-range
    severity: warning
    if: {flag_range: {name: max-num-seqs, max: 256}, launch_kind: [docker-run]}
    message: "--{name} {value} above {max}"
"""
GENERIC_RULES = RuleSet.from_texts([("generic.yaml", GENERIC)]).bind(WIKI)


def generic_ids(command: str) -> list[str]:
    return [f.id for f in GENERIC_RULES.evaluate(subject(command))]


SHAPES = [
    ("t.empty", "B_VAR= vllm serve m --trust-remote-code", "A_VAR=x vllm serve m"),
    ("t.set", "DEBUG_X=1 vllm serve m", "vllm serve m"),
    ("t.unset", "vllm serve m", "MUST_HAVE=1 vllm serve m"),
    ("t.equals", "LEVEL=LOC vllm serve m", "LEVEL=SYS vllm serve m"),
    ("t.env-range", "THREADS=1024 vllm serve m", "THREADS=256 vllm serve m"),
    ("t.env-range", "THREADS=32 vllm serve m", "THREADS=many vllm serve m"),
    ("t.flag-present", "vllm serve m --enforce-eager", "vllm serve m"),
    ("t.flag-absent", "vllm serve m", "vllm serve m --trust-remote-code"),
    ("t.flag-equals", "vllm serve m --kv-cache-dtype FP8", "vllm serve m --kv-cache-dtype auto"),
    (
        "t.flag-range",
        "docker run i:1 vllm serve m --max-num-seqs 512",
        "vllm serve m --max-num-seqs 512",
    ),
]


@pytest.mark.parametrize(("rule_id", "fires", "quiet"), SHAPES)
def test_generic_shapes_need_no_code(rule_id, fires, quiet):
    assert rule_id in generic_ids(fires)
    assert rule_id not in generic_ids(quiet)


def test_generic_messages_are_filled_from_the_launch():
    found = {f.id: f for f in GENERIC_RULES.evaluate(subject("THREADS=1024 vllm serve m"))}
    assert found["t.env-range"].message == "THREADS 1024 outside 64..512"
    assert found["t.env-range"].evidence == ("THREADS=1024",)


def test_a_rule_file_in_a_folder_is_picked_up(tmp_path):
    (tmp_path / "extra.yaml").write_text(GENERIC, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    assert len(RuleSet.load(tmp_path).rules) == GENERIC.count("- id:")


BAD_RULES = [
    ("rules: {}", "top-level 'rules' list"),
    ("rules: [{id: x, severity: error, message: m}]", "exactly one of"),
    ("rules: [{id: X Y, severity: error, message: m, if: {env_set: A}}]", "'id'"),
    ("rules: [{id: x, severity: fatal, message: m, if: {env_set: A}}]", "severity"),
    ("rules: [{id: x, severity: error, if: {env_set: A}}]", "'message'"),
    ("rules: [{id: x, severity: error, message: m, if: {env_nope: A}}]", "unknown shape"),
    ("rules: [{id: x, severity: error, message: m, if: {env_range: {name: A}}}]", "min"),
    (
        "rules: [{id: x, severity: error, message: m, if: {env_range: {name: A, max: hi}}}]",
        "number",
    ),
    ("rules: [{id: x, severity: error, message: m, if: {engine: vllm}}]", "at least one"),
    ("rules: [{id: x, severity: error, message: m, check: nope}]", "unknown check"),
    (
        "rules: [{id: x, severity: error, message: m, if: {env_set: A}}, "
        "{id: x, severity: error, message: m, if: {env_set: B}}]",
        "already used",
    ),
    ("rules: [[", "not valid YAML"),
]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("rules: [{id: x, sevrity: error, message: m, if: {env_set: A}}]", "'sevrity'"),
        (
            "rules: [{id: x, severity: error, message: m, if: {env_range: {name: A, max: hi}}}]",
            "'if.env_range.max'",
        ),
        ("rules: [{id: x, severity: error, message: {a: ''}, check: checklist}]", "'message'"),
        (
            "rules: [{id: x, severity: error, message: m, if: {flag_equals: {name: f}}}]",
            "'if.flag_equals.value'",
        ),
    ],
)
def test_rule_file_errors_name_the_rule_and_the_key(text, key):
    with pytest.raises(RuleError) as info:
        RuleSet.from_texts([("bad.yaml", text)])
    assert str(info.value).startswith("bad.yaml: rule x: ") and key in str(info.value)


@pytest.mark.parametrize(("text", "says"), BAD_RULES)
def test_bad_rule_files_fail_naming_the_file_and_the_problem(text, says):
    with pytest.raises(RuleError) as info:
        RuleSet.from_texts([("bad.yaml", text)])
    assert "bad.yaml" in str(info.value) and says in str(info.value)


def test_every_bundled_rule_names_a_known_check_and_formats_cleanly():
    for rule in RULES.rules:
        assert rule.check is None or rule.check in CHECKS
        for variant in rule.message if isinstance(rule.message, dict) else [None]:
            text = rule.text(variant, {})
            assert text.strip()


# --- the pure helpers the checks use ------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "theirs", "order"),
    [
        ("lantern-v3-cu130-20260605", "lantern-v4-cu130-20260722", -1),
        ("lantern-v4-cu130-20260722", "lantern-v3-cu130-20260605", 1),
        ("eldritch-v5-cu132-20260707", "fathomless-v19-cu132-20260709", -1),
        ("v0.11.2", "v0.12.0", -1),
        ("0.12.0", "v0.11.2", 1),
        ("lantern-v3-cu130", "lantern-v4-cu130", -1),
        ("nightly", "lantern-v4-cu130-20260722", None),
        ("same", "same", 0),
        ("build-20261399", "build-20260101", None),  # not a date
    ],
)
def test_compare_image_tags(mine, theirs, order):
    assert compare_image_tags(mine, theirs) == order


@pytest.mark.parametrize(
    ("settings", "gpus", "expected"),
    [
        ("TP8 DCP4 MTP3", "", dict(tp=8, dcp=4, spec_method="mtp", spec_tokens=3)),
        ("tp=2, dcp=1, MTP off", "", dict(tp=2, dcp=1, spec_tokens=0)),
        ("--tensor-parallel-size 4", "", dict(tp=4)),
        ("DSpark 5", "", dict(spec_method="dspark", spec_tokens=5)),
        ("", "8x RTX PRO 6000", dict(gpu_count=8)),
        ("", "GPUs 0-3", dict(gpu_count=4, gpu_ids=(0, 1, 2, 3))),
        ("", "CUDA_VISIBLE_DEVICES=4,5", dict(gpu_count=2, gpu_ids=(4, 5))),
        ("", "two cards", {}),
        ("TP99999", "", {}),
    ],
)
def test_parse_stated(settings, gpus, expected):
    stated = parse_stated(settings, gpus)
    for name, value in expected.items():
        assert getattr(stated, name) == value, name
    if not expected:
        assert stated.empty


def test_unstable_limits_come_from_the_runbook_text():
    limits = unstable_limits(WIKI.pages["models/qwen3_v2.md"])
    assert {(lim.method, lim.op, lim.tokens) for lim in limits} >= {("mtp", ">", 3)}
    assert all(lim.anchor == "known-limits" for lim in limits)
    assert unstable_limits(WIKI.pages["models/glm5_v4.md"]) == []


def test_find_pinned_values_reads_json_env_and_compose_defaults():
    text = (
        '--hf-overrides \'{"index_topk_pattern": "FFS"}\'\n'
        "GLM52_INDEX_TOPK_PATTERN: ${GLM52_INDEX_TOPK_PATTERN:-FSSF}\n"
        'HF_OVERRIDES="{\\"index_topk_pattern\\":\\"$PATTERN\\"}"\n'
    )
    assert find_pinned_values(text, "index_topk_pattern") == ["FFS", "FSSF"]
    assert find_pinned_values("nothing here", "index_topk_pattern") == []


# --- the same checks on the real wiki and a real compose file, where present ----------

COMPOSE = SAMPLE_LOGS / "glm52-v14-compose.yml"


@pytest.mark.skipif(
    not SNAPSHOT.is_dir() or not COMPOSE.is_file(),
    reason=f"real wiki snapshot or sample compose file not present under {SNAPSHOT.parent}",
)
def test_real_compose_against_the_real_wiki():
    wiki = load_wiki(SNAPSHOT)
    catalogue = Catalogue.from_wiki(wiki)
    rules = RuleSet.load().bind(wiki, catalogue.statuses())
    glm = next(f for f in catalogue.families if f.name == "GLM-5.2")
    info = FamilyInfo(glm, catalogue.runbook(glm), "model")
    compose = COMPOSE.read_text("utf-8")
    pattern = find_pinned_values(compose, "index_topk_pattern")[0]

    def findings(text: str) -> dict[str, str]:
        launch = parse_launch(text)
        s = Subject(
            wiki=wiki,
            launch=launch,
            command=text,
            settings=Settings.merge([("launch", launch_settings(launch))]),
            image=launch.image,
            family=info,
            catalogue=catalogue,
        )
        return {f.id: f.message for f in rules.evaluate(s)}

    as_given = findings(compose)
    assert "runbook.pinned-pattern" not in as_given  # the v14 file pins the current pattern
    assert "runbook.image-older" in as_given  # but runs an older image than the runbook's
    cut = findings(compose.replace(pattern, pattern[:60]))
    assert "cut short" in cut["runbook.pinned-pattern"]


def test_evidence_is_worded_by_the_templates():
    wording = load_templates("triage.yaml")
    reworded = Templates({**wording.entries, "evidence.image_older.yours": "YOUR IMAGE {image}"})
    rules = RuleSet.load().bind(WIKI, CATALOGUE.statuses(), reworded)
    found = [
        f
        for f in rules.evaluate(subject(run(image=V3_IMAGE), fam="GLM-5"))
        if f.id == "runbook.image-older"
    ]
    assert found and found[0].evidence[0] == f"YOUR IMAGE {V3_IMAGE}"
    assert found[0].evidence[2].startswith("named on ")
