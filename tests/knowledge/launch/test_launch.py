"""Tests for knowledge.launch: each launch shape, expansion, aliases, GPU selection."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.launch import MAX_LAUNCH_CHARS, ImageRef, Launch, parse_image, parse_launch
from tests.support import SAMPLE_LOGS, hang_guard

DIGEST = "sha256:" + "0f" * 32


def check(launch: Launch, expected: dict[str, Any]) -> None:
    got = {name: getattr(launch, name) for name in expected}
    assert got == expected, launch.problems


DOCKER_RUN_VLLM_IMAGE = """\
# start the server
docker run -d --rm --name test-srv \\
  --gpus '"device=2,3"' --ipc=host \\
  -e HF_HOME=/cache -e VLLM_LOGGING_LEVEL=DEBUG \\
  --env NCCL_P2P_LEVEL=SYS --env-file ./server.env \\
  -v /data/models:/models:ro -p 8000:8000 \\
  vllm/vllm-openai:v0.11.0 \\
  --model /models/Some-Model-FP8 --tensor-parallel-size 2 \\
  --max-model-len 32768  # trailing comment
"""

DOCKER_RUN_BASH = f"""\
docker run --gpus all --entrypoint /bin/bash \\
  -e MODEL=org/example-7b -e TP=4 \\
  example.registry.io:5000/team/server@{DIGEST} \\
  -lc 'set -e; exec vllm serve "$MODEL" --tp "${{TP}}" --enable-expert-parallel'
"""

DOCKER_RUN_COUNT = "docker run -it --gpus 2 lmsysorg/sglang:latest python3 -m sglang.launch_server \
--model-path org/m --tp-size 2"

VLLM_SERVE = """\
vllm serve org/big-model \\
  --tensor_parallel_size 8 \\
  --decode-context-parallel-size=4 \\
  --pipeline-parallel-size 1 \\
  --enable-expert-parallel \\
  --trust-remote-code \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' \\
  --hf-overrides '{"index_topk_pattern": "FSSF", "use_cache": true}' \\
  -cc.pass_config.fuse_allreduce_rms=True \\
  --port 8000 2>&1 | tee /tmp/server.log
"""

PYTHON_VLLM = (
    "python3 -m vllm.entrypoints.openai.api_server --model org/m --data-parallel-size 2 "
    "--num-speculative-tokens 5 --speculative-model org/draft"
)

SGLANG = """\
NCCL_P2P_LEVEL=4 python -m sglang.launch_server \\
  --model-path org/sg-model --tp 8 --ep 8 --dp 2 \\
  --speculative-algorithm EAGLE --speculative-num-steps 3 \\
  --model-loader-extra-config '{"enable_multithread_load": true}' \\
  --enable-dp-attention --mem-fraction-static 0.9
"""

ENV_PREFIX = "CUDA_VISIBLE_DEVICES=4,5 VLLM_USE_V1=1 vllm serve org/m --tensor-parallel-size 2"

SCRIPT = """\
#!/bin/bash
set -euo pipefail
export MODEL=/models/m
export TP=4 DCP_SIZE=2
SPEC_ARGS=()
if [ "${MTP:-1}" = "1" ]; then
  SPEC_ARGS=(--speculative-config '{"method":"mtp","num_speculative_tokens":2}')
fi
cd /srv && exec vllm serve "$MODEL" \\
  --tensor-parallel-size "${TP:-1}" \\
  --decode-context-parallel-size "$DCP_SIZE" \\
  "${SPEC_ARGS[@]}"
"""

WRAPPER_ENV = """\
IMAGE=team/vllm:nightly
TP=8
DCP=4
MTP=3
GPUS=0,1,2,3,4,5,6,7
docker run --gpus all -e TP=$TP -e DCP=$DCP -e MTP=$MTP "$IMAGE" run-server
"""

COMPOSE = """\
services:
  server:
    image: ${IMAGE:-team/vllm:release-1}
    container_name: ${NAME:-srv}
    network_mode: host
    shm_size: 16g
    environment:
      - MODEL=${MODEL:-org/compose-model}
      - TP_SIZE=${TP_SIZE:-4}
      - SPEC=${SPEC:-}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["4", "5", "6", "7"]
              capabilities: [gpu]
    entrypoint: ["/bin/bash", "-lc"]
    command: |
      ARGS=(--max-model-len 8192)
      exec vllm serve "$${MODEL}" --tensor-parallel-size "$${TP_SIZE}" "$${ARGS[@]}"
  bench:
    image: curlimages/curl
    command: ["curl", "http://127.0.0.1:8000/health"]
"""

COMPOSE_MAPPING_ENV = """\
name: x
services:
  sg:
    image: lmsysorg/sglang:v0.5
    gpus: all
    environment:
      CUDA_VISIBLE_DEVICES: "0,1"
      DISABLE_MTP: "true"
    command: python3 -m sglang.launch_server --model-path org/m --tp 2
"""

COMPOSE_COUNT = """\
services:
  s:
    image: team/vllm:x
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2}]}}}
    command: ["--model", "org/m"]
"""

HEREDOC_COMPOSE = """\
mkdir -p /tmp/run
cat > /tmp/run/compose.yaml <<'EOF'
services:
  main:
    image: team/vllm:heredoc
    environment:
      DCP_SIZE: "2"
    command: ["vllm", "serve", "org/h", "--tensor-parallel-size", "4"]
EOF
TP=8 docker compose -f /tmp/run/compose.yaml up -d
"""

ENV_FILE = """\
# server settings
IMAGE=team/vllm:envfile
MODEL="org/env-model"
export DCP_SIZE=1
GLM_DISABLE_MTP=1
GPU_MEMORY_UTILIZATION=0.9

HF_HOME='/root/.cache/huggingface'
"""

FENCED = """\
```bash
vllm serve org/fenced --tensor-parallel-size 2
```
"""

DOCKER_EXEC = (
    "docker exec -d <container> bash -c 'SGLANG_X=1 python3 -m sglang.launch_server "
    "--model org/exec --tensor-parallel-size 4 2>&1 | tee /tmp/log'"
)

PLACEHOLDERS = (
    "docker run --rm -v <checkout>/bench:/bench:ro -v $(pwd):/work:ro "
    "--entrypoint /bin/sh team/vllm:tools -lc 'python3 /work/run.py'"
)

CASES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "docker-run-image-entrypoint",
        DOCKER_RUN_VLLM_IMAGE,
        {
            "kind": "docker-run",
            "engine": "vllm",
            "image": ImageRef("vllm/vllm-openai:v0.11.0", None, "vllm/vllm-openai", "v0.11.0"),
            "model": "/models/Some-Model-FP8",
            "tp": 2,
            "gpus": (2, 3),
            "gpu_count": 2,
            "container_name": "test-srv",
            "volumes": ("/data/models:/models:ro",),
            "env_files": ("./server.env",),
            "env": {"HF_HOME": "/cache", "VLLM_LOGGING_LEVEL": "DEBUG", "NCCL_P2P_LEVEL": "SYS"},
            "flags": {
                "model": "/models/Some-Model-FP8",
                "tensor-parallel-size": "2",
                "max-model-len": "32768",
            },
            "runtime_flags": {
                "d": True,
                "rm": True,
                "gpus": '"device=2,3"',
                "ipc": "host",
                "p": "8000:8000",
            },
            "problems": (),
        },
    ),
    (
        "docker-run-bash-script",
        DOCKER_RUN_BASH,
        {
            "kind": "docker-run",
            "engine": "vllm",
            "image": ImageRef(
                f"example.registry.io:5000/team/server@{DIGEST}",
                "example.registry.io:5000",
                "team/server",
                None,
                DIGEST,
            ),
            "model": "org/example-7b",
            "tp": 4,
            "ep": True,
            "gpus": "all",
            "gpu_count": None,
            "command": ("vllm", "serve", "org/example-7b", "--tp", "4", "--enable-expert-parallel"),
        },
    ),
    (
        "docker-run-gpu-count-sglang",
        DOCKER_RUN_COUNT,
        {
            "kind": "docker-run",
            "engine": "sglang",
            "model": "org/m",
            "tp": 2,
            "gpus": None,
            "gpu_count": 2,
            "runtime_flags": {"i": True, "t": True, "gpus": "2"},
        },
    ),
    (
        "vllm-serve",
        VLLM_SERVE,
        {
            "kind": "vllm-serve",
            "engine": "vllm",
            "model": "org/big-model",
            "tp": 8,
            "dcp": 4,
            "pp": 1,
            "ep": True,
            "dp": None,
            "spec_method": "mtp",
            "spec_tokens": 3,
            "hf_overrides": {"index_topk_pattern": "FSSF", "use_cache": True},
            "problems": (),
        },
    ),
    (
        "python-vllm-api-server",
        PYTHON_VLLM,
        {
            "kind": "vllm-serve",
            "engine": "vllm",
            "model": "org/m",
            "dp": 2,
            "spec_method": None,
            "spec_tokens": 5,
        },
    ),
    (
        "sglang",
        SGLANG,
        {
            "kind": "sglang",
            "engine": "sglang",
            "model": "org/sg-model",
            "tp": 8,
            "ep": 8,
            "dp": 2,
            "spec_method": "EAGLE",
            "spec_tokens": 3,
            "env": {"NCCL_P2P_LEVEL": "4"},
        },
    ),
    (
        "env-prefix",
        ENV_PREFIX,
        {
            "kind": "vllm-serve",
            "env": {"CUDA_VISIBLE_DEVICES": "4,5", "VLLM_USE_V1": "1"},
            "gpus": (4, 5),
            "gpu_count": 2,
            "tp": 2,
        },
    ),
    (
        "script-exports-arrays",
        SCRIPT,
        {
            "kind": "vllm-serve",
            "model": "/models/m",
            "tp": 4,
            "dcp": 2,
            "spec_method": "mtp",
            "spec_tokens": 2,
            "problems": (),
        },
    ),
    (
        "wrapper-env-aliases",
        WRAPPER_ENV,
        {
            "kind": "docker-run",
            "engine": "vllm",
            "tp": 8,
            "dcp": 4,
            "spec_method": "mtp",
            "spec_tokens": 3,
            "gpus": (0, 1, 2, 3, 4, 5, 6, 7),
            "command": ("run-server",),
            "flags": {},
        },
    ),
    (
        "compose",
        COMPOSE,
        {
            "kind": "compose",
            "engine": "vllm",
            "service": "server",
            "image": ImageRef("team/vllm:release-1", None, "team/vllm", "release-1"),
            "model": "org/compose-model",
            "tp": 4,
            "gpus": (4, 5, 6, 7),
            "gpu_count": 4,
            "container_name": "srv",
            "env": {"MODEL": "org/compose-model", "TP_SIZE": "4", "SPEC": ""},
            "flags": {"tensor-parallel-size": "4", "max-model-len": "8192"},
            "runtime_flags": {"network-mode": "host", "shm-size": "16g"},
        },
    ),
    (
        "compose-mapping-env",
        COMPOSE_MAPPING_ENV,
        {
            "kind": "compose",
            "engine": "sglang",
            "tp": 2,
            "gpus": (0, 1),
            "spec_tokens": 0,
            "env": {"CUDA_VISIBLE_DEVICES": "0,1", "DISABLE_MTP": "true"},
        },
    ),
    (
        "compose-count",
        COMPOSE_COUNT,
        {"kind": "compose", "engine": "vllm", "model": "org/m", "gpus": None, "gpu_count": 2},
    ),
    (
        "heredoc-compose",
        HEREDOC_COMPOSE,
        {
            "kind": "compose",
            "model": "org/h",
            "tp": 4,  # the flag wins over TP=8 in the environment
            "dcp": 2,
            "image": ImageRef("team/vllm:heredoc", None, "team/vllm", "heredoc"),
        },
    ),
    (
        "env-file",
        ENV_FILE,
        {
            "kind": "env-file",
            "engine": "vllm",
            "image": ImageRef("team/vllm:envfile", None, "team/vllm", "envfile"),
            "model": "org/env-model",
            "dcp": 1,
            "spec_tokens": 0,
            "env": {
                "IMAGE": "team/vllm:envfile",
                "MODEL": "org/env-model",
                "DCP_SIZE": "1",
                "GLM_DISABLE_MTP": "1",
                "GPU_MEMORY_UTILIZATION": "0.9",
                "HF_HOME": "/root/.cache/huggingface",
            },
        },
    ),
    ("fenced", FENCED, {"kind": "vllm-serve", "model": "org/fenced", "tp": 2}),
    (
        "docker-exec",
        DOCKER_EXEC,
        {"kind": "sglang", "model": "org/exec", "tp": 4, "env": {"SGLANG_X": "1"}},
    ),
    (
        "placeholders-and-substitution",
        PLACEHOLDERS,
        {
            "kind": "docker-run",
            "volumes": ("<checkout>/bench:/bench:ro", "$(pwd):/work:ro"),
            "image": ImageRef("team/vllm:tools", None, "team/vllm", "tools"),
            "command": ("/bin/sh", "-lc", "python3 /work/run.py"),
        },
    ),
    (
        "flags-win-over-env",
        "TP=4 DCP=2 vllm serve org/m --tensor-parallel-size 8",
        {"tp": 8, "dcp": 2},
    ),
    ("unknown", "echo hello world", {"kind": "unknown", "engine": None, "problems": ()}),
    ("empty", "   \n", {"kind": "unknown", "problems": ("empty input",)}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parse_launch(text: str, expected: dict[str, Any]) -> None:
    check(parse_launch(text), expected)


def test_redirection_is_not_a_flag_value() -> None:
    launch = parse_launch(VLLM_SERVE)
    assert launch.flags["port"] == "8000"
    assert launch.flags["cc.pass_config.fuse_allreduce_rms"] == "True"
    assert "tee" not in launch.command


@pytest.mark.parametrize(
    "text",
    [
        'vllm serve org/m --tensor-parallel-size 2 --hf-overrides \'{"a": 1}',
        'docker run -e "A=1 vllm/vllm-openai --model org/m',
        "vllm serve org/m --tensor-parallel-size 2 \\\n  --speculative-config '{bad json}'",
    ],
    ids=["unterminated-single", "unterminated-double", "bad-json"],
)
def test_malformed_input_is_reported_not_raised(text: str) -> None:
    launch = parse_launch(text)
    assert launch.problems
    assert launch.kind in ("vllm-serve", "docker-run")


def test_malformed_quoting_keeps_what_it_can() -> None:
    launch = parse_launch('vllm serve org/m --tensor-parallel-size 2 --hf-overrides \'{"a": 1}')
    assert launch.model == "org/m"
    assert launch.tp == 2
    assert any("malformed quoting" in p for p in launch.problems)


def test_unresolved_numbers_are_problems() -> None:
    launch = parse_launch('vllm serve org/m --tensor-parallel-size "${TP_SIZE}"')
    assert launch.tp is None
    assert launch.problems == ("--tensor-parallel-size: '${TP_SIZE}' is not a number",)


def test_overlong_input_is_cut() -> None:
    launch = parse_launch("vllm serve org/m --tp 2\n" + "#" * (MAX_LAUNCH_CHARS + 10))
    assert launch.tp == 2
    assert any("longer than" in p for p in launch.problems)


TRITON = "nvcr.io/nvidia/tritonserver:24.05-py3"
LOCAL = f"localhost:5000/a/b:t@{DIGEST}"
IMAGES: list[tuple[str, ImageRef | None]] = [
    ("ubuntu", ImageRef("ubuntu", None, "ubuntu")),
    ("vllm/vllm-openai:v1", ImageRef("vllm/vllm-openai:v1", None, "vllm/vllm-openai", "v1")),
    (TRITON, ImageRef(TRITON, "nvcr.io", "nvidia/tritonserver", "24.05-py3")),
    (LOCAL, ImageRef(LOCAL, "localhost:5000", "a/b", "t", DIGEST)),
    ("$IMAGE", None),
    ("${IMAGE:-x}", None),
    ("Upper/Case", None),
    ("repo@sha256:short", None),
    ("a b", None),
    ("", None),
]


@pytest.mark.parametrize(("ref", "expected"), IMAGES)
def test_parse_image(ref: str, expected: ImageRef | None) -> None:
    assert parse_image(ref) == expected


@pytest.mark.parametrize(
    ("model", "hf_id"),
    [
        ("/root/.cache/huggingface/hub/models--org--Name-1.5/snapshots/abc", "org/Name-1.5"),
        ("org/name", "org/name"),
        ("/models/local", None),
        ("./rel/path", None),
    ],
)
def test_hf_model_id(model: str, hf_id: str | None) -> None:
    assert Launch(kind="unknown", model=model).hf_model_id == hf_id


@pytest.mark.skipif(not SAMPLE_LOGS.is_dir(), reason="shared sample-logs not present")
def test_real_compose_file() -> None:
    path = SAMPLE_LOGS / "glm52-v14-compose.yml"
    if not path.is_file():
        pytest.skip("compose sample not present")
    launch = parse_launch(path.read_text(encoding="utf-8"))
    check(
        launch,
        {
            "kind": "compose",
            "engine": "vllm",
            "tp": 8,
            "dcp": 1,
            "spec_tokens": 0,
            "gpus": tuple(range(8)),
            "gpu_count": 8,
            "problems": (),
        },
    )
    assert launch.image is not None and launch.image.repository == "voipmonitor/vllm"
    assert launch.hf_model_id == "lukealonso/GLM-5.2-NVFP4"
    assert launch.env["MAX_MODEL_LEN"] == "131072"  # ${VAR:-default} took the default
    assert launch.env["GRAPH"] == ""


@pytest.mark.skipif(not SAMPLE_LOGS.is_dir(), reason="shared sample-logs not present")
def test_real_env_file() -> None:
    path = SAMPLE_LOGS / "vllm-glm51-dcp1-mtp0-docker-run.env"
    if not path.is_file():
        pytest.skip("env sample not present")
    launch = parse_launch(path.read_text(encoding="utf-8"))
    check(
        launch,
        {"kind": "env-file", "engine": "vllm", "model": "GLM-5", "dcp": 1, "spec_tokens": 0},
    )
    assert launch.env["ATTENTION_BACKEND"] == "B12X_MLA_SPARSE"
    assert launch.image is not None and launch.image.name == "vllm"


FRAGMENTS = st.sampled_from(
    [
        "docker run ",
        "vllm serve ",
        "python -m sglang.launch_server ",
        "services:\n  a:\n    image: x\n",
        "--gpus ",
        '"device=0,1" ',
        "-e ",
        "A=1 ",
        "${A:-",
        "}",
        "$(",
        ")",
        "(",
        "'",
        '"',
        "\\\n",
        "\n",
        "<<EOF\n",
        "EOF\n",
        "# c\n",
        "--speculative-config ",
        '{"method": "mtp"} ',
        "bash -lc ",
        "2>&1 ",
        "| ",
        "; ",
        "--tp ",
        "8 ",
    ]
)


@settings(deadline=None, max_examples=300)
@given(st.one_of(st.text(), st.lists(st.one_of(FRAGMENTS, st.text(max_size=4))).map("".join)))
def test_parse_launch_never_raises(text: str) -> None:
    launch = parse_launch(text)
    assert launch.kind in ("docker-run", "compose", "vllm-serve", "sglang", "env-file", "unknown")
    assert "internal error while reading the launch" not in launch.problems


#: Hostile pastes: each must finish (the alarm is a hang guard, not a timing assertion).
HOSTILE = {
    "unclosed-substitutions": "$(" * 10_000,
    "open-parens": "(" * 20_000,
    "unclosed-defaults": "echo " + "${A:-" * 4_000,
    "quotes": '"' * 20_000,
    "continuations": "\\\n" * 10_000,
    "heredoc-openers": "<<EOF\n" * 4_000,
    "array-openers": "A=( " * 5_000,
    "many-flags": "vllm serve m " + "--x " * 5_000,
    "many-env": "docker run " + "-e A=1 " * 3_000 + "img",
    "deep-yaml": "services:\n  s:\n    command: " + "[" * 5_000,
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_finishes(text: str) -> None:
    with hang_guard(20):
        launch = parse_launch(text)
    assert "internal error while reading the launch" not in launch.problems
