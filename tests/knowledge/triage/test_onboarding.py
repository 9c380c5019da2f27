"""The onboarding checklist: read from the wiki's own table, each item present, missing or thin."""

from __future__ import annotations

import pytest

from knowledge.jsonable import to_jsonable
from knowledge.launch import parse_image, parse_launch
from knowledge.service import demo_wiki_dir
from knowledge.templates import load_templates
from knowledge.triage.onboarding import (
    RequestFacts,
    assess,
    find_checklist,
    item_kind,
    load_checklist,
)
from knowledge.wiki import find_front_page, load_wiki
from tests.support import SNAPSHOT

T = load_templates("triage.yaml")
DEMO = load_wiki(demo_wiki_dir())
CHECKLIST = load_checklist(DEMO, find_front_page(DEMO), T)
KEYS = ["runbook", "image", "launch", "layout", "logs", "client"]


def test_the_demo_checklist_is_read_from_the_onboarding_table():
    assert CHECKLIST.source == "docs/newcomer-onboarding.md#before-you-ask"
    assert [item.key for item in CHECKLIST.items] == KEYS
    logs = CHECKLIST.items[4]
    assert logs.min_lines == 100  # "The last 100-300 lines" asks for at least 100
    assert logs.why.startswith("Backend choices")


@pytest.mark.skipif(not SNAPSHOT.is_dir(), reason=f"real wiki snapshot not present at {SNAPSHOT}")
def test_the_real_checklist_is_read_the_same_way():
    wiki = load_wiki(SNAPSHOT)
    checklist = find_checklist(wiki, find_front_page(wiki))
    assert checklist is not None and checklist.source.startswith("docs/newcomer-onboarding.md#")
    assert [item.key for item in checklist.items] == KEYS


def test_without_an_onboarding_page_the_built_in_list_is_used(tmp_path):
    (tmp_path / "README.md").write_text("# Wiki\n\nNothing about onboarding.\n", "utf-8")
    wiki = load_wiki(tmp_path)
    assert find_checklist(wiki, find_front_page(wiki)) is None
    checklist = load_checklist(wiki, find_front_page(wiki), T)
    assert checklist.source is None
    assert [item.key for item in checklist.items] == KEYS


def test_a_page_named_onboarding_is_found_without_a_front_page_link(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "onboarding-notes.md").write_text(
        "# Notes\n\n## Bring\n\n| Checklist | Why |\n|---|---|\n"
        "| Your logs, 50 lines or more | x |\n| The exact docker image tag | y |\n"
        "| Your favourite colour | z |\n",
        "utf-8",
    )
    checklist = find_checklist(load_wiki(tmp_path))
    assert checklist is not None and checklist.source == "guide/onboarding-notes.md#bring"
    assert [(i.key, i.min_lines) for i in checklist.items] == [
        ("logs", 50),
        ("image", None),
        ("other", None),
    ]


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("Exact model page or runbook link", "runbook"),
        ("Docker image tag and digest if known", "image"),
        ("Full launch command or compose file", "launch"),
        ("GPU layout and TP/DCP/MTP/DSpark settings", "layout"),
        ("Last 100-300 server log lines", "logs"),
        ("Client command and observed output", "client"),
        ("Your mood", "other"),
    ],
)
def test_item_kind(label, key):
    assert item_kind(label) == key


LOG_150 = "\n".join(f"INFO line {i}" for i in range(150))
LAUNCH = "docker run --gpus all demo-registry/vllm:lantern-v4-cu130-20260722 vllm serve m -tp 2"

STATUS_CASES = [
    # (facts, expected status per key)
    (RequestFacts(), dict.fromkeys(KEYS, "missing")),
    (
        RequestFacts(
            model_page="models/glm5_v4.md",
            page_found=True,
            image=parse_image("demo-registry/vllm:lantern-v4-cu130-20260722"),
            command=LAUNCH,
            launch=parse_launch(LAUNCH),
            gpus="0,1",
            log_lines=150,
            client="curl ...\n{...}",
        ),
        dict.fromkeys(KEYS, "present"),
    ),
    (
        RequestFacts(
            model_page="some page nobody wrote",
            image_text="not an image!",
            command="please help",
            launch=parse_launch("please help"),
            settings="TP2",
            log_lines=12,
            client="curl http://127.0.0.1:8000/v1/models",
        ),
        dict(
            runbook="thin", image="thin", launch="thin", layout="thin", logs="thin", client="thin"
        ),
    ),
    (
        RequestFacts(
            image=parse_image("demo-registry/vllm:latest"),
            command="vllm serve m -tp 2",
            launch=parse_launch("vllm serve m -tp 2"),
            gpus="8x",
        ),
        dict(image="thin", launch="present", layout="present"),
    ),
    (
        RequestFacts(
            image=parse_image("demo-registry/vllm"),
            command="vllm serve m",
            launch=parse_launch("vllm serve m"),
            gpus="8x",
        ),
        dict(image="thin", launch="present", layout="thin"),
    ),
    (
        RequestFacts(command="vllm serve m", launch=parse_launch("vllm serve m")),
        dict(launch="thin", image="missing"),  # a launch command without an image
    ),
]


@pytest.mark.parametrize(("facts", "expected"), STATUS_CASES)
def test_statuses(facts, expected):
    found = {item.key: item for item in assess(CHECKLIST, facts, T).items}
    for key, status in expected.items():
        assert found[key].status == status, key
        assert bool(found[key].detail) == (status != "present"), key


def test_thin_logs_say_how_many_lines_and_how_many_are_needed():
    completeness = assess(CHECKLIST, RequestFacts(log_lines=42), T)
    logs = next(i for i in completeness.items if i.key == "logs")
    assert "42" in logs.detail and "100" in logs.detail
    assert to_jsonable(completeness)["source"] == CHECKLIST.source
