"""Serving-engine commands: which engine a command starts, and its flags.

``vllm serve MODEL ...``, ``python -m vllm.entrypoints.openai.api_server ...``,
``python -m sglang.launch_server ...`` and the server commands of other engines are
recognised; their arguments are split into flags (keys without dashes, bare flags
``True``) and positionals.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BOOL_FLAGS",
    "BOOL_FLAG_PREFIXES",
    "OTHER_ENGINE_COMMANDS",
    "SGLANG_MODULES",
    "VLLM_CLI_MODULE",
    "VLLM_MODULES",
    "EngineCommand",
    "find_engine",
    "parse_engine_args",
]

#: Engine flags that never take a value (plus every ``enable-*``/``disable-*``/``no-*``).
BOOL_FLAGS: Final = frozenset(
    {
        "trust-remote-code",
        "async-scheduling",
        "enforce-eager",
        "language-model-only",
        "sleep-on-idle",
        "skip-tokenizer-init",
        "skip-server-warmup",
        "return-tokens-as-token-ids",
        "allow-credentials",
        "force-eager",
        "mixed-chunk",
        "headless",
        "help",
        "version",
        "log-requests",
    }
)
BOOL_FLAG_PREFIXES: Final = ("enable-", "disable-", "no-")

VLLM_MODULES: Final = frozenset(
    {"vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"}
)
#: ``python -m vllm.entrypoints.cli.main serve MODEL`` is ``vllm serve MODEL``.
VLLM_CLI_MODULE: Final = "vllm.entrypoints.cli.main"
SGLANG_MODULES: Final = frozenset({"sglang.launch_server"})
#: Server commands of other engines.
OTHER_ENGINE_COMMANDS: Final = frozenset(
    {"trtllm-serve", "llama-server", "text-generation-launcher", "lmdeploy", "ollama", "tgi"}
)
_PYTHON_RE: Final = re.compile(r"python(?:\d+(?:\.\d+)?)?")


@dataclass(slots=True)
class EngineCommand:
    """A command that starts a serving engine."""

    #: ``"vllm"``, ``"sglang"`` or ``"other"``.
    engine: str
    #: The whole command, program first.
    argv: list[str]
    #: The engine's own arguments (after ``serve`` or the ``-m`` module).
    args: list[str]
    #: True when the first positional argument is the model (``vllm serve MODEL``).
    model_positional: bool


def find_engine(argv: Sequence[str]) -> EngineCommand | None:
    """The engine ``argv`` starts, or None when it starts none we know."""
    if not argv:
        return None
    cmd = posixpath.basename(argv[0])
    if cmd == "vllm" and len(argv) > 1 and argv[1] == "serve":
        return EngineCommand("vllm", list(argv), list(argv[2:]), True)
    if _PYTHON_RE.fullmatch(cmd):
        for k, w in enumerate(argv[1:-1], start=1):
            if w == "-m":
                module = argv[k + 1]
                if module == VLLM_CLI_MODULE and argv[k + 2 : k + 3] == ["serve"]:
                    return EngineCommand("vllm", list(argv), list(argv[k + 3 :]), True)
                if module in VLLM_MODULES:
                    return EngineCommand("vllm", list(argv), list(argv[k + 2 :]), False)
                if module in SGLANG_MODULES:
                    return EngineCommand("sglang", list(argv), list(argv[k + 2 :]), False)
                return None
    if cmd in OTHER_ENGINE_COMMANDS:
        return EngineCommand("other", list(argv), list(argv[1:]), False)
    return None


def _norm_flag(name: str) -> str:
    head, dot, tail = name.partition(".")
    return head.replace("_", "-") + dot + tail


def _is_option(word: str) -> bool:
    if not word.startswith("-") or word == "-":
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def parse_engine_args(args: Sequence[str]) -> tuple[dict[str, str | bool], list[str]]:
    """(flags, positionals): flag keys without dashes, ``_`` as ``-``; bare flags True."""
    flags: dict[str, str | bool] = {}
    positionals: list[str] = []
    i, n = 0, len(args)
    while i < n:
        w = args[i]
        if w == "--":
            positionals.extend(args[i + 1 :])
            break
        if _is_option(w):
            name, eq, value = w.lstrip("-").partition("=")
            key = _norm_flag(name)
            if eq:
                flags[key] = value
            elif (
                key in BOOL_FLAGS
                or key.startswith(BOOL_FLAG_PREFIXES)
                or i + 1 >= n
                or _is_option(args[i + 1])
            ):
                flags[key] = True
            else:
                flags[key] = args[i + 1]
                i += 1
        else:
            positionals.append(w)
        i += 1
    return flags, positionals
