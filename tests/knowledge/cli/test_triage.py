"""``wikibot triage`` through ``python -m bot.cli``, as a script or a person would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "knowledge" / "demo_wiki"
HF = "hf_" + "Qz7" * 12
V3_LAUNCH = (
    (DEMO / "models" / "glm5_v3.md").read_text("utf-8").split("```bash\n")[1].split("```")[0]
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("wikibot-data")


def wikibot(data_dir: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "WIKIBOT_DATA": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "triage", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_json_from_a_request_file(data_dir, tmp_path):
    log = "\n".join(f"(APIServer pid=1) INFO 05-15 03:30:49 [x.py:1] line {i}" for i in range(120))
    log += (
        "\n(EngineCore pid=3) ERROR 05-15 03:31:06 [core.py:1] NCCL error: unhandled system error"
    )
    request = {
        "question": "startup fails right away on eight GPUs",
        "runbook": "models/glm5_v3.md",
        "launch_command": V3_LAUNCH.replace(
            "NCCL_GRAPH_FILE=/etc/nccl/graph.xml", f"NCCL_GRAPH_FILE= -e HF_TOKEN={HF}"
        ),
        "gpu_layout": "8x RTX PRO 6000",
        "logs": log,
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request), "utf-8")
    result = wikibot(data_dir, "--json", str(path))
    assert result.returncode == 0, result.stderr
    assert HF not in result.stdout and HF not in result.stderr
    data = json.loads(result.stdout)
    assert {
        "redactions",
        "launch",
        "findings",
        "known_errors",
        "log_summary",
        "suggestions",
        "confidence",
        "completeness",
    } <= set(data)
    assert {"kind": "hf-token", "field": "command", "count": 1} in data["redactions"]
    assert data["launch"]["kind"] == "docker-run" and data["launch"]["dcp"] == 1
    ids = [f["id"] for f in data["findings"]]
    assert ids[0] == "env.nccl-graph-file-empty"
    assert "runbook.pinned-pattern" in ids
    page = "troubleshooting/common-issues.md#nccl_graph_file-set-to-an-empty-string"
    assert data["known_errors"][0]["page"] == page
    assert data["known_errors"][0]["lines"][0]["number"] == 121
    assert data["suggestions"][0]["page"] == page
    assert data["suggestions"][0]["why"] and data["suggestions"][0]["score"] > 0.5
    assert data["confidence"] == "high"
    assert data["reply"]["kind"] == "triage" and data["reply"]["pages"][0] == page
    assert data["log_summary"]["first_error"].startswith("NCCL error")
    statuses = {i["key"]: i["status"] for i in data["completeness"]["items"]}
    assert statuses == {
        "runbook": "present",
        "image": "present",
        "launch": "present",
        "layout": "present",
        "logs": "present",
        "client": "missing",
    }


def test_flags_and_files_instead_of_a_request_file(data_dir, tmp_path):
    command = tmp_path / "run.sh"
    command.write_text(
        "docker run --gpus all -e CUDA_VISIBLE_DEVICES=0,1 "
        "demo-registry/vllm:orchard-v3-cu130-20260801 vllm serve "
        "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8 --tensor-parallel-size 4 "
        '--speculative-config \'{"method":"mtp","num_speculative_tokens":5}\'\n',
        "utf-8",
    )
    client = tmp_path / "client.txt"
    client.write_text('curl -s http://127.0.0.1:8000/v1/models\n{"data": []}\n', "utf-8")
    result = wikibot(
        data_dir,
        "--json",
        "--text",
        "crashes under load",
        "--command",
        str(command),
        "--client",
        str(client),
        "--gpus",
        "2x RTX PRO 6000",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    ids = {f["id"] for f in data["findings"]}
    assert {"parallel.too-few-gpus", "runbook.spec-unstable"} <= ids
    assert data["family"]["name"] == "Qwen3" and data["family"]["how"] == "model"
    client_item = next(i for i in data["completeness"]["items"] if i["key"] == "client")
    assert client_item["status"] == "present"


def test_text_output_and_a_request_on_stdin(data_dir):
    result = wikibot(data_dir, "-", stdin="text: how long should bread rise\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Triage of your request")
    assert "Confidence: none" in result.stdout
    assert "\nChecklist\n" in result.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "says"),
    [
        ((), None, "nothing to triage"),
        (("--log", "/no/such/file.log"), None, "cannot read /no/such/file.log"),
        (("-",), f"logs: [\n  {HF}\n", "not valid YAML or JSON at line"),
        (("-",), "- just\n- a list\n", "must hold a mapping"),
    ],
)
def test_bad_input_exits_2_with_one_line_that_never_echoes_the_input(data_dir, args, stdin, says):
    result = wikibot(data_dir, *args, stdin=stdin)
    assert result.returncode == 2
    assert result.stdout == ""
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert HF not in result.stderr
