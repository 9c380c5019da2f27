"""Launch settings from engine flags first, then from environment variables.

Through the alias tables ``FLAG_ALIASES`` and ``ENV_ALIASES`` (wrapper scripts and
compose files often pass ``TP=8``, ``DCP_SIZE=4``, ``MTP=3``). ``MTP=N`` is read as N
speculative tokens with method ``mtp`` unless a more specific variable
(``MTP_TOKENS``...) is set; ``*DISABLE_MTP=1`` means no speculative decoding
(``spec_tokens == 0``).

GPU selection: the most specific list wins, in the order ``CUDA_VISIBLE_DEVICES``,
``GPUS``, ``--gpus device=...`` / compose ``device_ids``, ``NVIDIA_VISIBLE_DEVICES``;
otherwise ``"all"`` when anything says all. ``gpu_count`` is the list's length, or the
count given by ``--gpus N`` / compose ``count``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from knowledge.launch.model import Gpus

__all__ = [
    "ENV_ALIASES",
    "FLAG_ALIASES",
    "alias",
    "env_lookup",
    "ep_field",
    "flag_lookup",
    "gpu_fields",
    "gpu_value",
    "int_field",
    "int_or_none",
    "json_object",
    "spec_fields",
]

#: Launch field -> engine flags that set it (normalised: no leading dashes, ``_`` -> ``-``
#: before the first ``.``). The first flag present wins.
FLAG_ALIASES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("tp", ("tensor-parallel-size", "tp", "tp-size")),
    ("pp", ("pipeline-parallel-size", "pp", "pp-size")),
    ("dp", ("data-parallel-size", "dp", "dp-size")),
    ("dcp", ("decode-context-parallel-size", "dcp", "dcp-size")),
    ("ep", ("expert-parallel-size", "ep", "ep-size", "enable-expert-parallel")),
    ("model", ("model", "model-path", "model-tag")),
    ("served_model_name", ("served-model-name",)),
    (
        "spec_method",
        ("speculative-algorithm", "speculative-method", "speculative-config.method"),
    ),
    (
        "spec_tokens",
        (
            "num-speculative-tokens",
            "speculative-num-steps",
            "speculative-config.num_speculative_tokens",
            "speculative-config.num-speculative-tokens",
        ),
    ),
    ("spec_config", ("speculative-config",)),
)

#: Launch field -> environment variables that set it. ``*X`` matches names ending in X.
#: Earlier names win. Used only where no flag set the field.
ENV_ALIASES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("tp", ("TENSOR_PARALLEL_SIZE", "TP_SIZE", "TP", "TENSOR_PARALLEL")),
    ("pp", ("PIPELINE_PARALLEL_SIZE", "PP_SIZE", "PP")),
    ("dp", ("DATA_PARALLEL_SIZE", "DP_SIZE", "DP")),
    ("dcp", ("DECODE_CONTEXT_PARALLEL_SIZE", "DCP_SIZE", "DCP")),
    ("ep", ("EXPERT_PARALLEL_SIZE", "EP_SIZE", "EP", "ENABLE_EXPERT_PARALLEL")),
    ("model", ("MODEL", "MODEL_PATH", "MODEL_ID", "MODEL_NAME", "HF_MODEL")),
    ("served_model_name", ("SERVED_MODEL_NAME",)),
    ("image", ("IMAGE", "DOCKER_IMAGE", "CONTAINER_IMAGE")),
    ("spec_method", ("SPECULATIVE_ALGORITHM", "SPECULATIVE_METHOD", "SPEC_METHOD")),
    (
        "spec_tokens",
        (
            "NUM_SPECULATIVE_TOKENS",
            "SPECULATIVE_TOKENS",
            "SPEC_TOKENS",
            "MTP_TOKENS",
            "SPECULATIVE_NUM_STEPS",
            "MTP",
        ),
    ),
    ("spec_config", ("SPECULATIVE_CONFIG", "SPEC_CONFIG", "*_SPEC_CONFIG", "*_SPEC_CONFIG_JSON")),
    ("spec_disabled", ("DISABLE_MTP", "*_DISABLE_MTP")),
    ("cuda_visible_devices", ("CUDA_VISIBLE_DEVICES",)),
    ("gpus", ("GPUS",)),
    ("nvidia_visible_devices", ("NVIDIA_VISIBLE_DEVICES",)),
)


def env_lookup(env: Mapping[str, str], names: Sequence[str]) -> tuple[str, str] | None:
    for name in names:
        if name.startswith("*"):
            suffix = name[1:]
            hit = next((k for k in env if k.endswith(suffix) and env[k] != ""), None)
            if hit is not None:
                return hit, env[hit]
        elif env.get(name, "") != "":
            return name, env[name]
    return None


def alias(table: Sequence[tuple[str, tuple[str, ...]]], key: str) -> tuple[str, ...]:
    return next(names for field_name, names in table if field_name == key)


def flag_lookup(flags: Mapping[str, str | bool], key: str) -> tuple[str, str | bool] | None:
    for name in alias(FLAG_ALIASES, key):
        if name in flags:
            return name, flags[name]
    return None


def _to_int(value: str | bool, what: str, problems: list[str]) -> int | None:
    if isinstance(value, bool):
        return None
    text = value.strip().strip("\"'")
    try:
        return int(text)
    except ValueError:
        problems.append(f"{what}: {text[:60]!r} is not a number")
        return None


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def int_field(
    key: str, flags: Mapping[str, str | bool], env: Mapping[str, str], problems: list[str]
) -> int | None:
    hit = flag_lookup(flags, key)
    if hit is not None:
        return _to_int(hit[1], f"--{hit[0]}", problems)
    env_hit = env_lookup(env, alias(ENV_ALIASES, key))
    return None if env_hit is None else _to_int(env_hit[1], env_hit[0], problems)


def ep_field(
    flags: Mapping[str, str | bool], env: Mapping[str, str], problems: list[str]
) -> bool | int | None:
    hit = flag_lookup(flags, "ep")
    if hit is not None:
        if hit[0] == "enable-expert-parallel":
            return hit[1] is True or (isinstance(hit[1], str) and _truthy(hit[1]))
        return _to_int(hit[1], f"--{hit[0]}", problems)
    env_hit = env_lookup(env, alias(ENV_ALIASES, "ep"))
    if env_hit is None:
        return None
    if env_hit[0] == "ENABLE_EXPERT_PARALLEL":
        return _truthy(env_hit[1])
    return _to_int(env_hit[1], env_hit[0], problems)


def json_object(value: str | bool, what: str, problems: list[str]) -> dict[str, object] | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        if "$" in value:
            problems.append(f"{what}: not read, it is built by shell expansion")
        else:
            problems.append(f"{what}: not valid JSON")
        return None
    if not isinstance(parsed, dict):
        problems.append(f"{what}: JSON is not an object")
        return None
    return parsed


def spec_fields(
    flags: Mapping[str, str | bool], env: Mapping[str, str], problems: list[str]
) -> tuple[str | None, int | None]:
    method: str | None = None
    tokens: int | None = None
    config_hit = flag_lookup(flags, "spec_config")
    if config_hit is not None:
        config = json_object(config_hit[1], "--speculative-config", problems) or {}
        method = _str_or_none(config.get("method"))
        tokens = int_or_none(config.get("num_speculative_tokens"))
    hit = flag_lookup(flags, "spec_method")
    if hit is not None and isinstance(hit[1], str):
        method = hit[1]
    hit = flag_lookup(flags, "spec_tokens")
    if hit is not None:
        tokens = _to_int(hit[1], f"--{hit[0]}", problems)
    if method is not None or tokens is not None:
        return method, tokens
    env_config = env_lookup(env, alias(ENV_ALIASES, "spec_config"))
    if env_config is not None and env_config[1].lstrip().startswith("{"):
        config = json_object(env_config[1], env_config[0], problems) or {}
        method = _str_or_none(config.get("method"))
        tokens = int_or_none(config.get("num_speculative_tokens"))
    env_method = env_lookup(env, alias(ENV_ALIASES, "spec_method"))
    if env_method is not None:
        method = env_method[1]
    env_tokens = env_lookup(env, alias(ENV_ALIASES, "spec_tokens"))
    if env_tokens is not None and tokens is None:
        tokens = _to_int(env_tokens[1], env_tokens[0], problems)
    mtp = env_lookup(env, ("MTP", "MTP_TOKENS"))
    if method is None and tokens and mtp is not None and int_or_none(mtp[1]):
        method = "mtp"
    disabled = env_lookup(env, alias(ENV_ALIASES, "spec_disabled"))
    if disabled is not None and _truthy(disabled[1]):
        return None, 0
    return method, tokens


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def gpu_value(value: str, count_if_number: bool) -> tuple[Gpus | None, int | None]:
    """Read ``all``, ``device=0,1``, ``0,1,2`` or (for ``--gpus``) a count."""
    text = value.strip().strip("\"'")
    parts = [p.strip().strip("\"'") for p in text.split(",")]
    first = parts[0]
    if first.startswith("device="):
        parts[0] = first.removeprefix("device=")
    elif first.startswith("count="):
        count = first.removeprefix("count=")
        return ("all", None) if count == "all" else (None, int_or_none(count))
    parts = [p for p in parts if p and "=" not in p]
    if not parts:
        return None, None
    if parts[0].lower() == "all":
        return "all", None
    if all(p.isdigit() for p in parts):
        if count_if_number and len(parts) == 1 and not first.startswith("device="):
            return None, int(parts[0])
        return tuple(int(p) for p in parts), len(parts)
    return None, None


def gpu_fields(
    env: Mapping[str, str],
    docker_gpus: str | None,
    compose_gpus: tuple[Gpus | None, int | None] | None,
) -> tuple[Gpus | None, int | None]:
    """The GPUs a launch selects and how many, from the most specific source."""
    candidates: list[tuple[Gpus | None, int | None]] = []
    for key in ("cuda_visible_devices", "gpus"):
        hit = env_lookup(env, alias(ENV_ALIASES, key))
        if hit is not None:
            candidates.append(gpu_value(hit[1], count_if_number=False))
    if docker_gpus is not None:
        candidates.append(gpu_value(docker_gpus, count_if_number=True))
    if compose_gpus is not None:
        candidates.append(compose_gpus)
    hit = env_lookup(env, alias(ENV_ALIASES, "nvidia_visible_devices"))
    if hit is not None:
        candidates.append(gpu_value(hit[1], count_if_number=False))
    for gpus, count in candidates:
        if isinstance(gpus, tuple):
            return gpus, count
    count = next((c for g, c in candidates if g is None and c is not None), None)
    if any(g == "all" for g, _ in candidates):
        return "all", count
    return None, count
