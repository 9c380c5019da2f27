"""Read a pasted server launch into one typed ``Launch``.

Shapes understood (``Launch.kind``):

``docker-run``  ``docker run ...`` (also ``podman``/``nerdctl``, ``sudo``), with ``\\``
                continuations, comments, ``-e/--env``, ``--env-file``, ``--gpus``, ``--name``,
                ``-v``, ``--entrypoint``; the image is the first argument that is not an
                option, the container command follows it.
``compose``     a Docker Compose file (``yaml.safe_load``), also inside a shell heredoc,
                or a ``docker compose`` command line when the file is not included.
``vllm-serve``  ``vllm serve MODEL ...`` or ``python -m vllm.entrypoints.openai.api_server``.
``sglang``      ``python -m sglang.launch_server --model-path ...``.
``env-file``    ``KEY=value`` / ``export KEY=value`` lines and comments only.
``unknown``     none of the above.

Shell text is cut into logical lines by a small quote-aware scanner (continuations,
comments and heredoc bodies handled there) and each line is split into words by
``shlex`` in POSIX mode. A line with broken quoting is split leniently on white space
and a ``problems`` entry says so; ``parse_launch`` never raises.

``$VAR``, ``${VAR}``, ``${VAR:-default}`` and ``"${ARR[@]}"`` are expanded from the
assignments seen so far (exports, ``VAR=x cmd`` prefixes, ``-e``, compose
``environment``, ``ARR=(...)`` arrays); unknown references stay as written. Expansion
does not know shell quoting (a ``'$X'`` is expanded too). In compose values ``$$`` is
``$`` and ``${VAR:-default}`` takes the default, as Compose does without a host value.

Settings come from engine flags first, then from environment variables, through the
alias tables ``FLAG_ALIASES`` and ``ENV_ALIASES`` (wrapper scripts and compose files
often pass ``TP=8``, ``DCP_SIZE=4``, ``MTP=3``). ``MTP=N`` is read as N speculative
tokens with method ``mtp`` unless a more specific variable (``MTP_TOKENS``...) is set;
``*DISABLE_MTP=1`` means no speculative decoding (``spec_tokens == 0``).

GPU selection: the most specific list wins, in the order ``CUDA_VISIBLE_DEVICES``,
``GPUS``, ``--gpus device=...`` / compose ``device_ids``, ``NVIDIA_VISIBLE_DEVICES``;
otherwise ``"all"`` when anything says all. ``gpu_count`` is the list's length, or the
count given by ``--gpus N`` / compose ``count``.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import yaml

__all__ = [
    "ENV_ALIASES",
    "FLAG_ALIASES",
    "LAUNCH_KINDS",
    "MAX_LAUNCH_CHARS",
    "ImageRef",
    "Launch",
    "parse_image",
    "parse_launch",
]

log = logging.getLogger(__name__)

LAUNCH_KINDS: Final = ("docker-run", "compose", "vllm-serve", "sglang", "env-file", "unknown")

#: Longest input read; the rest is ignored with a ``problems`` entry.
MAX_LAUNCH_CHARS: Final = 128 * 1024
#: How deep ``bash -c '...'`` scripts inside commands are followed.
MAX_SCRIPT_DEPTH: Final = 4

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

#: ``docker run`` options that take no value (long and one-letter forms).
DOCKER_BOOL_OPTIONS: Final = frozenset(
    {
        "detach",
        "rm",
        "interactive",
        "tty",
        "privileged",
        "init",
        "read-only",
        "publish-all",
        "no-healthcheck",
        "oom-kill-disable",
        "quiet",
        "help",
        "sig-proxy",
        "use-api-socket",
    }
)
DOCKER_SHORT_BOOL: Final = frozenset("ditPq")
DOCKER_CLIS: Final = frozenset({"docker", "podman", "nerdctl"})
SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ash"})
#: Words that may precede a command without changing it.
COMMAND_PREFIXES: Final = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "nohup"}
    | {"command", "builtin", "stdbuf"}
)
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
#: Image-name fragments -> engine, checked in this order.
IMAGE_ENGINE_HINTS: Final = (
    ("sglang", "sglang"),
    ("vllm", "vllm"),
    ("tensorrt-llm", "other"),
    ("tritonserver", "other"),
    ("text-generation-inference", "other"),
    ("llama.cpp", "other"),
    ("llama-cpp", "other"),
    ("lmdeploy", "other"),
    ("ollama", "other"),
)

_SCAN_SPECIAL: Final = re.compile(r"[\\'\"#\n<$]")
_DQ_SPECIAL: Final = re.compile(r'[\\"]')
_PAREN_RE: Final = re.compile(r"[()]")
_HEREDOC_RE: Final = re.compile(
    r"<<(-?)[ \t]*(?:'([^'\n]{1,64})'|\"([^\"\n]{1,64})\"|\\?([A-Za-z_][A-Za-z0-9_.-]{0,63}))"
)
_OPERATORS: Final = frozenset({";", ";;", "&", "&&", "|", "||", "|&"})
# A redirection word: optional fd, operator, optional attached target (``2>&1``, ``>log``).
_REDIRECT_RE: Final = re.compile(r"[0-9]*(?:&>>|&>|>>|>&|>\||>|<<<|<<-|<<|<&|<>|<)(.*)", re.DOTALL)
_ASSIGN_RE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)", re.DOTALL)
_ARRAY_START_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_ARRAY_REF_RE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}")
# Defaults stop at ``$``: ``${A:-$B}`` stays as written, and each scan ends at the next
# reference, so a word full of unclosed ``${`` costs linear time.
_VAR_RE: Final = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=?+])([^}$]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)
_COMPOSE_VAR_RE: Final = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}$]*))?\}")
_ENV_LINE_RE: Final = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)=(.*)")
_COMPOSE_HINT_RE: Final = re.compile(r"(?m)^services[ \t]*:")
_COMPOSE_HANDLED: Final = frozenset(
    {"image", "container_name", "environment", "volumes", "env_file", "command", "entrypoint"}
)
_FENCE_RE: Final = re.compile(r"^[ \t]*(```|~~~)")
_PYTHON_RE: Final = re.compile(r"python(?:\d+(?:\.\d+)?)?")
_DIGEST_RE: Final = re.compile(r"[A-Za-z0-9_+.-]+:[0-9a-fA-F]{32,}")
_REPO_RE: Final = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
_TAG_RE: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_HOST_RE: Final = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]+)?")
_HF_CACHE_RE: Final = re.compile(r"models--([^/]+?)--([^/]+)")

Gpus = tuple[int, ...] | Literal["all"]


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A container image reference ``[registry/]repository[:tag][@digest]``."""

    raw: str
    registry: str | None
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def name(self) -> str:
        """Last path component of the repository (``vllm`` in ``voipmonitor/vllm``)."""
        return self.repository.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Launch:
    """Everything read from one pasted launch. Fields not found are ``None`` or empty."""

    kind: str
    image: ImageRef | None = None
    model: str | None = None
    served_model_name: str | None = None
    #: ``"vllm"``, ``"sglang"``, ``"other"`` or None, from the command, image or env.
    engine: str | None = None
    tp: int | None = None
    dp: int | None = None
    #: True for ``--enable-expert-parallel``; a size for ``--ep N``.
    ep: bool | int | None = None
    dcp: int | None = None
    pp: int | None = None
    spec_method: str | None = None
    #: Speculative tokens; 0 when the launch explicitly turns speculation off.
    spec_tokens: int | None = None
    gpus: Gpus | None = None
    gpu_count: int | None = None
    #: Every assignment seen: exports, ``VAR=x cmd``, ``-e``, compose environment.
    env: dict[str, str] = field(default_factory=dict)
    #: Engine flags, keys without dashes (``tensor-parallel-size``); bare flags are True.
    flags: dict[str, str | bool] = field(default_factory=dict)
    hf_overrides: dict[str, object] | None = None
    #: The engine command's words after expansion (``vllm serve MODEL ...``); without
    #: one, the container's command (entrypoint + command), e.g. a wrapper script.
    command: tuple[str, ...] = ()
    #: ``docker run`` options other than env, volumes and name (``gpus``, ``ipc`` ...), or
    #: a compose service's other scalar keys (``network-mode``, ``shm-size`` ...).
    runtime_flags: dict[str, str | bool] = field(default_factory=dict)
    container_name: str | None = None
    volumes: tuple[str, ...] = ()
    env_files: tuple[str, ...] = ()
    #: The compose service read, when there were several.
    service: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def hf_model_id(self) -> str | None:
        """``org/name`` of the model: from a Hugging Face cache path or an id itself."""
        if not self.model:
            return None
        m = _HF_CACHE_RE.search(self.model)
        if m:
            return f"{m.group(1)}/{m.group(2)}"
        parts = self.model.split("/")
        if len(parts) == 2 and all(parts) and not self.model.startswith((".", "~", "$")):
            return self.model
        return None


# ------------------------------------------------------------------- images


def parse_image(ref: str) -> ImageRef | None:
    """Split ``[registry[:port]/]repository[:tag][@digest]``; None when not an image."""
    raw = ref.strip()
    if not raw or "$" in raw or any(c.isspace() for c in raw) or len(raw) > 512:
        return None
    name, _, digest = raw.partition("@")
    if digest and not _DIGEST_RE.fullmatch(digest):
        return None
    first, slash, rest = name.partition("/")
    registry = None
    path = name
    if slash and ("." in first or ":" in first or first == "localhost"):
        if not _HOST_RE.fullmatch(first):
            return None
        registry, path = first, rest
    tag = None
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        path, _, tag = path.rpartition(":")
        if not _TAG_RE.fullmatch(tag):
            return None
    if not path or not all(_REPO_RE.fullmatch(part) for part in path.split("/")):
        return None
    return ImageRef(raw, registry, path, tag, digest or None)


def _image_engine(image: ImageRef | None) -> str | None:
    if image is None:
        return None
    name = image.repository.lower()
    return next((engine for hint, engine in IMAGE_ENGINE_HINTS if hint in name), None)


# ------------------------------------------------------------------- shell text


def _closing_quote(text: str, start: int) -> int:
    """Index of the quote closing the one at ``start``, or -1."""
    if text[start] == "'":
        return text.find("'", start + 1)
    i = start + 1
    while True:
        m = _DQ_SPECIAL.search(text, i)
        if m is None:
            return -1
        if text[m.start()] == '"':
            return m.start()
        i = m.start() + 2


def _paren_pairs(text: str) -> dict[int, int]:
    """Index of each ``(`` -> index of its ``)`` (quotes not considered), in one pass."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _PAREN_RE.finditer(text):
        if m.group(0) == "(":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def _read_heredoc(text: str, i: int, delim: str, strip_tabs: bool, out: list[str]) -> int:
    body: list[str] = []
    n = len(text)
    while i < n:
        nl = text.find("\n", i)
        end = n if nl < 0 else nl
        line = text[i:end]
        check = line.lstrip("\t") if strip_tabs else line
        i = end + 1
        if check.rstrip("\r") == delim:
            break
        body.append(line)
    out.append("\n".join(body))
    return min(i, n)


def _logical_lines(text: str, quote_aware: bool) -> tuple[list[str], list[str], bool]:
    """Cut shell text into logical lines; also return heredoc bodies and whether a quote
    was left open. Continuations are joined, comments dropped, heredoc bodies set aside.
    Quotes are kept so ``shlex`` sees them; with ``quote_aware=False`` they are ignored.
    """
    lines: list[str] = []
    heredocs: list[str] = []
    buf: list[str] = []
    pending: list[tuple[str, bool]] = []
    parens: dict[int, int] | None = None
    i, n = 0, len(text)
    while i < n:
        m = _SCAN_SPECIAL.search(text, i)
        j = n if m is None else m.start()
        buf.append(text[i:j])
        if m is None:
            break
        c = text[j]
        i = j + 1
        if c == "\n":
            lines.append("".join(buf))
            buf = []
            for delim, strip_tabs in pending:
                i = _read_heredoc(text, i, delim, strip_tabs, heredocs)
            pending = []
        elif c == "\\":
            if text.startswith("\n", i):
                buf.append(" ")
                i += 1
            elif text.startswith("\r\n", i):
                buf.append(" ")
                i += 2
            else:
                buf.append(text[j : j + 2])
                i = j + 2
        elif c in "'\"":
            end = _closing_quote(text, j) if quote_aware else j
            if end < 0:
                return lines, heredocs, True
            segment = text[j : end + 1]
            buf.append(segment.replace("\\\n", "") if c == '"' else segment)
            i = end + 1
        elif c == "$":
            end = -1
            if text.startswith("(", i):
                parens = _paren_pairs(text) if parens is None else parens
                end = parens.get(i, -1)
            if end < 0:
                buf.append(c)
            else:  # $( ... ) stays one piece of its word: single-quote it for shlex
                buf.append("'" + text[j : end + 1].replace("'", "'\"'\"'") + "'")
                i = end + 1
        elif c == "#":
            if j == 0 or text[j - 1] in " \t\n;&|(":
                nl = text.find("\n", j)
                i = n if nl < 0 else nl
            else:
                buf.append(c)
        else:  # <
            hd = _HEREDOC_RE.match(text, j) if not text.startswith("<<<", j) else None
            if hd:
                delim = hd.group(2) or hd.group(3) or hd.group(4)
                pending.append((delim, bool(hd.group(1))))
                buf.append(text[j : hd.end()])
                i = hd.end()
            else:
                buf.append(c)
    if any(buf):
        lines.append("".join(buf))
    return lines, heredocs, False


def _words(line: str, problems: list[str]) -> list[str]:
    """Split one logical line into words with ``shlex`` (POSIX); leniently if broken."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:
        problems.append(f"malformed quoting ({exc}); words split on white space")
        return [w.strip("\"'") for w in line.split() if w.strip("\"'")]


def _statements(words: Sequence[str]) -> list[list[str]]:
    """Split words at ``;``, ``&&``, pipes and subshell brackets; drop redirections.
    ``NAME=( a b )`` arrays keep their brackets in the statement.
    """
    out: list[list[str]] = []
    cur: list[str] = []
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        if w == "(" and cur and _ARRAY_START_RE.fullmatch(cur[-1]):
            k = i + 1
            while k < n and words[k] != ")":
                k += 1
            cur.extend(["(", *words[i + 1 : k], ")"])
            i = k + 1
            continue
        if w in _OPERATORS or w in ("(", ")"):
            if cur:
                out.append(cur)
            cur = []
        elif _is_redirect(w):
            if not _REDIRECT_RE.fullmatch(w).group(1):  # type: ignore[union-attr]
                i += 1  # the target is the next word
        else:
            cur.append(w)
        i += 1
    if cur:
        out.append(cur)
    return out


def _is_redirect(word: str) -> bool:
    """``>``, ``2>&1``, ``<<EOF``...; not a ``<placeholder>`` as written in docs."""
    if not word or word[0] not in "0123456789<>&":
        return False
    if word[0] == "<" and ">" in word[1:] and not word.startswith(("<<", "<>", "<&")):
        return False
    return _REDIRECT_RE.fullmatch(word) is not None


def _expand(word: str, env: Mapping[str, str]) -> str:
    """Expand ``$VAR``/``${VAR}``/``${VAR:-x}``/``${VAR:+x}`` from ``env``; keep unknowns."""
    if "$" not in word:
        return word

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(4)
        op, arg = m.group(2), m.group(3) or ""
        value = env.get(name)
        if op is None:
            return m.group(0) if value is None else value
        unset = value is None or (op.startswith(":") and value == "")
        if op.endswith(("-", "=")):
            return arg if unset else str(value)
        if op.endswith("+"):
            return "" if unset else arg
        return m.group(0) if unset else str(value)  # ${VAR:?message}

    return _VAR_RE.sub(sub, word)


def _compose_interpolate(value: str) -> str:
    """Compose-file interpolation without a host environment: ``$$`` -> ``$``,
    ``${VAR:-default}`` -> ``default``; plain ``${VAR}`` stays as written."""
    if "$" not in value:
        return value

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return m.group(2) if m.group(2) is not None else m.group(0)

    return _COMPOSE_VAR_RE.sub(sub, value)


# ------------------------------------------------------------------- evaluation


@dataclass(slots=True)
class _Engine:
    engine: str
    argv: list[str]
    args: list[str]
    model_positional: bool


@dataclass(slots=True)
class _Docker:
    image_word: str | None
    options: dict[str, str | bool]
    volumes: list[str]
    env_files: list[str]
    name: str | None
    gpus: str | None


@dataclass(slots=True)
class _State:
    """Accumulator for one ``parse_launch`` call (never shared between calls)."""

    env: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    docker: _Docker | None = None
    engine: _Engine | None = None
    container_argv: list[str] | None = None
    compose_cli: bool = False
    compose_bodies: list[str] = field(default_factory=list)
    commands: int = 0
    image_engine: str | None = None
    compose_gpus: tuple[Gpus | None, int | None] | None = None
    service: str | None = None
    compose_image: str | None = None
    compose_name: str | None = None
    compose_volumes: list[str] = field(default_factory=list)
    compose_env_files: list[str] = field(default_factory=list)
    compose_options: dict[str, str | bool] = field(default_factory=dict)


def _run_script(text: str, state: _State, depth: int) -> None:
    lines, heredocs, unbalanced = _logical_lines(text, quote_aware=True)
    if unbalanced:
        lines, heredocs, _ = _logical_lines(text, quote_aware=False)
    state.compose_bodies.extend(h for h in heredocs if _COMPOSE_HINT_RE.search(h))
    for line in lines:
        for statement in _statements(_words(line, state.problems)):
            _eval_statement(statement, state, depth)


def _expand_words(words: Iterable[str], state: _State) -> list[str]:
    out: list[str] = []
    for w in words:
        m = _ARRAY_REF_RE.fullmatch(w)
        if m and m.group(1) in state.arrays:
            out.extend(state.arrays[m.group(1)])
        else:
            out.append(_expand(w, state.env))
    return out


def _take_assignments(words: list[str], state: _State) -> int:
    """Apply leading ``NAME=value`` and ``NAME=( ... )`` words; return how many words."""
    i = 0
    while i < len(words):
        m = _ASSIGN_RE.fullmatch(words[i])
        if not m:
            break
        name, append, value = m.groups()
        if value == "" and i + 1 < len(words) and words[i + 1] == "(":
            close = words.index(")", i + 1) if ")" in words[i + 1 :] else len(words)
            items = _expand_words(words[i + 2 : close], state)
            state.arrays[name] = (state.arrays.get(name, []) if append else []) + items
            i = close + 1
            continue
        expanded = _expand(value, state.env)
        state.env[name] = state.env.get(name, "") + expanded if append else expanded
        i += 1
    return i


def _eval_statement(words: list[str], state: _State, depth: int) -> None:
    while words and words[0] in COMMAND_PREFIXES:
        words = words[1:]
    words = words[_take_assignments(words, state) :]
    if not words:
        return
    words = _expand_words(words, state)
    while words and posixpath.basename(words[0]) in ("sudo", "env"):
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[1:]
        words = words[_take_assignments(words, state) :]
    if not words:
        return
    state.commands += 1
    cmd = posixpath.basename(words[0])
    if cmd in ("export", "declare", "typeset", "local", "readonly"):
        for w in words[1:]:
            if not w.startswith("-"):
                _take_assignments([w], state)
        state.commands -= 1
    elif cmd == "unset":
        for name in words[1:]:
            state.env.pop(name, None)
        state.commands -= 1
    elif cmd in DOCKER_CLIS or cmd == "docker-compose":
        _eval_docker(words, state, depth)
    else:
        _eval_command(words, state, depth, image_engine=None)


def _eval_docker(words: list[str], state: _State, depth: int) -> None:
    rest = words[1:]
    if posixpath.basename(words[0]) == "docker-compose" or rest[:1] == ["compose"]:
        state.compose_cli = True
        return
    if rest[:2] in (["container", "run"], ["container", "exec"]):
        rest = rest[1:]
    if rest[:1] == ["exec"]:  # docker exec [options] CONTAINER COMMAND...
        scratch = _State(env=state.env, problems=[])
        _, argv = _parse_docker_run(rest[1:], scratch)
        _eval_command(argv, state, depth, image_engine=None)
        return
    if rest[:1] != ["run"] or state.docker is not None:
        return
    docker, argv = _parse_docker_run(rest[1:], state)
    state.docker = docker
    image = parse_image(docker.image_word) if docker.image_word else None
    entrypoint = docker.options.get("entrypoint")
    if isinstance(entrypoint, str) and entrypoint:
        argv = [*_safe_split(entrypoint, state.problems), *argv]
    state.container_argv = argv
    _eval_command(argv, state, depth, image_engine=_image_engine(image))


def _parse_docker_run(words: list[str], state: _State) -> tuple[_Docker, list[str]]:
    docker = _Docker(None, {}, [], [], None, None)
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        if w == "--":
            i += 1
            break
        if _ARRAY_REF_RE.fullmatch(w):
            state.problems.append(f"docker options from an unknown array: {w}")
            i += 1
            continue
        if not w.startswith("-") or w == "-":
            break
        key: str
        value: str | bool
        if w.startswith("--"):
            key, eq, text = w[2:].partition("=")
            if eq:
                value = text
            elif key in DOCKER_BOOL_OPTIONS:
                value = True
            elif i + 1 < n:
                i += 1
                value = words[i]
            else:
                state.problems.append(f"docker option --{key} has no value")
                value = True
        else:
            letters = w[1:]
            k = next((x for x, c in enumerate(letters) if c not in DOCKER_SHORT_BOOL), None)
            if k is None:
                for c in letters:
                    docker.options[c] = True
                i += 1
                continue
            for c in letters[:k]:
                docker.options[c] = True
            key, attached = letters[k], letters[k + 1 :].removeprefix("=")
            if attached:
                value = attached
            elif i + 1 < n:
                i += 1
                value = words[i]
            else:
                state.problems.append(f"docker option -{key} has no value")
                value = True
        _docker_option(docker, key, value, state)
        i += 1
    docker.image_word = words[i] if i < n else None
    if docker.image_word is None:
        state.problems.append("docker run without an image")
    return docker, words[i + 1 :]


def _docker_option(docker: _Docker, key: str, value: str | bool, state: _State) -> None:
    if key in ("e", "env") and isinstance(value, str):
        name, eq, val = value.partition("=")
        if eq and name:
            state.env[name] = val
    elif key == "env-file" and isinstance(value, str):
        docker.env_files.append(value)
    elif key in ("v", "volume", "mount") and isinstance(value, str):
        docker.volumes.append(value)
    elif key == "name" and isinstance(value, str):
        docker.name = value
    else:
        if key == "gpus" and isinstance(value, str):
            docker.gpus = value
        docker.options[key] = value


def _shell_script(argv: Sequence[str]) -> str | None:
    """The script of ``bash [-opts]c SCRIPT``, or None."""
    if not argv or posixpath.basename(argv[0]) not in SHELLS:
        return None
    for k, w in enumerate(argv[1:], start=1):
        if w.startswith("-") and not w.startswith("--") and "c" in w:
            return argv[k + 1] if k + 1 < len(argv) else None
        if not w.startswith("-"):
            return None
    return None


def _find_engine(argv: Sequence[str]) -> _Engine | None:
    if not argv:
        return None
    cmd = posixpath.basename(argv[0])
    if cmd == "vllm" and len(argv) > 1 and argv[1] == "serve":
        return _Engine("vllm", list(argv), list(argv[2:]), True)
    if _PYTHON_RE.fullmatch(cmd):
        for k, w in enumerate(argv[1:-1], start=1):
            if w == "-m":
                module = argv[k + 1]
                if module == VLLM_CLI_MODULE and argv[k + 2 : k + 3] == ["serve"]:
                    return _Engine("vllm", list(argv), list(argv[k + 3 :]), True)
                if module in VLLM_MODULES:
                    return _Engine("vllm", list(argv), list(argv[k + 2 :]), False)
                if module in SGLANG_MODULES:
                    return _Engine("sglang", list(argv), list(argv[k + 2 :]), False)
                return None
    if cmd in OTHER_ENGINE_COMMANDS:
        return _Engine("other", list(argv), list(argv[1:]), False)
    return None


def _eval_command(argv: list[str], state: _State, depth: int, image_engine: str | None) -> None:
    if image_engine and state.image_engine is None:
        state.image_engine = image_engine
    if not argv:
        return
    script = _shell_script(argv)
    if script is not None:
        if depth >= MAX_SCRIPT_DEPTH:
            state.problems.append("shell scripts nested too deep; inner one not read")
            return
        _run_script(script, state, depth + 1)
        return
    found = _find_engine(argv)
    if found is None and image_engine in ("vllm", "sglang"):
        head = argv[0]
        if head.startswith("-") or ("/" in head and not head.startswith(("/", "."))):
            found = _Engine(image_engine, list(argv), list(argv), image_engine == "vllm")
    if found is not None and state.engine is None:
        state.engine = found


# ------------------------------------------------------------------- engine flags


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


def _parse_engine_args(args: Sequence[str]) -> tuple[dict[str, str | bool], list[str]]:
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


# ------------------------------------------------------------------- resolution


def _env_lookup(env: Mapping[str, str], names: Sequence[str]) -> tuple[str, str] | None:
    for name in names:
        if name.startswith("*"):
            suffix = name[1:]
            hit = next((k for k in env if k.endswith(suffix) and env[k] != ""), None)
            if hit is not None:
                return hit, env[hit]
        elif env.get(name, "") != "":
            return name, env[name]
    return None


def _alias(table: Sequence[tuple[str, tuple[str, ...]]], key: str) -> tuple[str, ...]:
    return next(names for field_name, names in table if field_name == key)


def _flag_lookup(flags: Mapping[str, str | bool], key: str) -> tuple[str, str | bool] | None:
    for name in _alias(FLAG_ALIASES, key):
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


def _int_field(
    key: str, flags: Mapping[str, str | bool], env: Mapping[str, str], problems: list[str]
) -> int | None:
    hit = _flag_lookup(flags, key)
    if hit is not None:
        return _to_int(hit[1], f"--{hit[0]}", problems)
    env_hit = _env_lookup(env, _alias(ENV_ALIASES, key))
    return None if env_hit is None else _to_int(env_hit[1], env_hit[0], problems)


def _ep_field(
    flags: Mapping[str, str | bool], env: Mapping[str, str], problems: list[str]
) -> bool | int | None:
    hit = _flag_lookup(flags, "ep")
    if hit is not None:
        if hit[0] == "enable-expert-parallel":
            return hit[1] is True or (isinstance(hit[1], str) and _truthy(hit[1]))
        return _to_int(hit[1], f"--{hit[0]}", problems)
    env_hit = _env_lookup(env, _alias(ENV_ALIASES, "ep"))
    if env_hit is None:
        return None
    if env_hit[0] == "ENABLE_EXPERT_PARALLEL":
        return _truthy(env_hit[1])
    return _to_int(env_hit[1], env_hit[0], problems)


def _json_object(value: str | bool, what: str, problems: list[str]) -> dict[str, object] | None:
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


def _spec_fields(
    flags: Mapping[str, str | bool], env: Mapping[str, str], problems: list[str]
) -> tuple[str | None, int | None]:
    method: str | None = None
    tokens: int | None = None
    config_hit = _flag_lookup(flags, "spec_config")
    if config_hit is not None:
        config = _json_object(config_hit[1], "--speculative-config", problems) or {}
        method = _str_or_none(config.get("method"))
        tokens = _int_or_none(config.get("num_speculative_tokens"))
    hit = _flag_lookup(flags, "spec_method")
    if hit is not None and isinstance(hit[1], str):
        method = hit[1]
    hit = _flag_lookup(flags, "spec_tokens")
    if hit is not None:
        tokens = _to_int(hit[1], f"--{hit[0]}", problems)
    if method is not None or tokens is not None:
        return method, tokens
    env_config = _env_lookup(env, _alias(ENV_ALIASES, "spec_config"))
    if env_config is not None and env_config[1].lstrip().startswith("{"):
        config = _json_object(env_config[1], env_config[0], problems) or {}
        method = _str_or_none(config.get("method"))
        tokens = _int_or_none(config.get("num_speculative_tokens"))
    env_method = _env_lookup(env, _alias(ENV_ALIASES, "spec_method"))
    if env_method is not None:
        method = env_method[1]
    env_tokens = _env_lookup(env, _alias(ENV_ALIASES, "spec_tokens"))
    if env_tokens is not None and tokens is None:
        tokens = _to_int(env_tokens[1], env_tokens[0], problems)
    mtp = _env_lookup(env, ("MTP", "MTP_TOKENS"))
    if method is None and tokens and mtp is not None and _int_or_none(mtp[1]):
        method = "mtp"
    disabled = _env_lookup(env, _alias(ENV_ALIASES, "spec_disabled"))
    if disabled is not None and _truthy(disabled[1]):
        return None, 0
    return method, tokens


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _gpu_value(value: str, count_if_number: bool) -> tuple[Gpus | None, int | None]:
    """Read ``all``, ``device=0,1``, ``0,1,2`` or (for ``--gpus``) a count."""
    text = value.strip().strip("\"'")
    parts = [p.strip().strip("\"'") for p in text.split(",")]
    first = parts[0]
    if first.startswith("device="):
        parts[0] = first.removeprefix("device=")
    elif first.startswith("count="):
        count = first.removeprefix("count=")
        return ("all", None) if count == "all" else (None, _int_or_none(count))
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


def _gpu_fields(state: _State, docker_gpus: str | None) -> tuple[Gpus | None, int | None]:
    candidates: list[tuple[Gpus | None, int | None]] = []
    for key in ("cuda_visible_devices", "gpus"):
        hit = _env_lookup(state.env, _alias(ENV_ALIASES, key))
        if hit is not None:
            candidates.append(_gpu_value(hit[1], count_if_number=False))
    if docker_gpus is not None:
        candidates.append(_gpu_value(docker_gpus, count_if_number=True))
    if state.compose_gpus is not None:
        candidates.append(state.compose_gpus)
    hit = _env_lookup(state.env, _alias(ENV_ALIASES, "nvidia_visible_devices"))
    if hit is not None:
        candidates.append(_gpu_value(hit[1], count_if_number=False))
    for gpus, count in candidates:
        if isinstance(gpus, tuple):
            return gpus, count
    count = next((c for g, c in candidates if g is None and c is not None), None)
    if any(g == "all" for g, _ in candidates):
        return "all", count
    return None, count


def _build(kind: str, state: _State) -> Launch:
    problems = state.problems
    flags: dict[str, str | bool] = {}
    positionals: list[str] = []
    command: tuple[str, ...] = ()
    engine = None
    if state.engine is not None:
        flags, positionals = _parse_engine_args(state.engine.args)
        command = tuple(state.engine.argv)
        engine = state.engine.engine
    elif state.container_argv:
        command = tuple(state.container_argv)
    env = state.env
    docker = state.docker
    image_word = docker.image_word if docker else state.compose_image
    image = None
    if image_word is None:
        env_image = _env_lookup(env, _alias(ENV_ALIASES, "image"))
        image_word = env_image[1] if env_image else None
    if image_word is not None:
        image = parse_image(image_word)
        if image is None:
            problems.append(f"image {image_word[:80]!r} is not a resolvable image reference")
    engine = engine or _image_engine(image) or state.image_engine
    if engine is None and image is not None:  # a launcher image: the env may name the server's
        env_image = _env_lookup(env, _alias(ENV_ALIASES, "image"))
        engine = _image_engine(parse_image(env_image[1])) if env_image else None
    if engine is None and any(k.startswith("VLLM_") for k in env):
        engine = "vllm"
    if engine is None and any(k.startswith(("SGLANG_", "SGL_")) for k in env):
        engine = "sglang"

    model_hit = _flag_lookup(flags, "model")
    model: str | None = None
    if model_hit is not None and isinstance(model_hit[1], str):
        model = model_hit[1]
    elif state.engine is not None and state.engine.model_positional and positionals:
        model = positionals[0]
    else:
        env_model = _env_lookup(env, _alias(ENV_ALIASES, "model"))
        model = env_model[1] if env_model else None
    served_hit = _flag_lookup(flags, "served_model_name")
    served = served_hit[1] if served_hit and isinstance(served_hit[1], str) else None
    if served is None:
        env_served = _env_lookup(env, _alias(ENV_ALIASES, "served_model_name"))
        served = env_served[1] if env_served else None

    hf_overrides = None
    if "hf-overrides" in flags:
        hf_overrides = _json_object(flags["hf-overrides"], "--hf-overrides", problems)
    spec_method, spec_tokens = _spec_fields(flags, env, problems)
    gpus, gpu_count = _gpu_fields(state, docker.gpus if docker else None)
    return Launch(
        kind=kind,
        image=image,
        model=model,
        served_model_name=served,
        engine=engine,
        tp=_int_field("tp", flags, env, problems),
        dp=_int_field("dp", flags, env, problems),
        ep=_ep_field(flags, env, problems),
        dcp=_int_field("dcp", flags, env, problems),
        pp=_int_field("pp", flags, env, problems),
        spec_method=spec_method,
        spec_tokens=spec_tokens,
        gpus=gpus,
        gpu_count=gpu_count,
        env=dict(env),
        flags=flags,
        hf_overrides=hf_overrides,
        command=command,
        runtime_flags=dict(docker.options) if docker else dict(state.compose_options),
        container_name=docker.name if docker else state.compose_name,
        volumes=tuple(docker.volumes if docker else state.compose_volumes),
        env_files=tuple(docker.env_files if docker else state.compose_env_files),
        service=state.service,
        problems=tuple(dict.fromkeys(problems)),
    )


# ------------------------------------------------------------------- compose


def _as_words(value: object) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return [_compose_interpolate(str(v)) for v in value]
    return [_compose_interpolate(str(value))]


def _compose_env(value: object, state: _State) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            if v is None:
                continue
            text = ("true" if v else "false") if isinstance(v, bool) else str(v)
            state.env[str(k)] = _compose_interpolate(text)
    elif isinstance(value, list):
        for item in value:
            name, eq, val = str(item).partition("=")
            if eq and name:
                state.env[name.strip()] = _compose_interpolate(val)


def _compose_device_gpus(service: Mapping[str, object]) -> tuple[Gpus | None, int | None] | None:
    gpus = service.get("gpus")
    if gpus == "all":
        return "all", None
    deploy = service.get("deploy")
    devices: object = None
    if isinstance(deploy, Mapping):
        resources = deploy.get("resources")
        if isinstance(resources, Mapping):
            reservations = resources.get("reservations")
            if isinstance(reservations, Mapping):
                devices = reservations.get("devices")
    if isinstance(gpus, list):
        devices = gpus
    if not isinstance(devices, list):
        return None
    for device in devices:
        if not isinstance(device, Mapping):
            continue
        ids = device.get("device_ids")
        if isinstance(ids, list) and ids and all(str(x).strip().isdigit() for x in ids):
            found = tuple(int(str(x).strip()) for x in ids)
            return found, len(found)
        count = device.get("count")
        if count == "all":
            return "all", None
        if _int_or_none(count) is not None:
            return None, _int_or_none(count)
    return None


def _pick_service(services: Mapping[str, object]) -> str:
    def mentions_engine(svc: object) -> bool:
        if not isinstance(svc, Mapping):
            return False
        text = " ".join(str(svc.get(k, "")) for k in ("image", "command", "entrypoint"))
        return "vllm" in text.lower() or "sglang" in text.lower()

    return next(
        (name for name, svc in services.items() if mentions_engine(svc)), next(iter(services))
    )


def _parse_compose(data: Mapping[str, object], state: _State) -> None:
    services = data.get("services")
    if not isinstance(services, Mapping) or not services:
        state.problems.append("compose file has no services")
        return
    name = str(_pick_service(services))
    if len(services) > 1:
        state.service = name
    svc = services[name]
    if not isinstance(svc, Mapping):
        state.problems.append(f"compose service {name!r} is not a mapping")
        return
    _compose_env(svc.get("environment"), state)
    image = svc.get("image")
    if isinstance(image, str):
        state.compose_image = _compose_interpolate(image)
    container = svc.get("container_name")
    if isinstance(container, str):
        state.compose_name = _compose_interpolate(container)
    volumes = svc.get("volumes")
    if isinstance(volumes, list):
        for v in volumes:
            if isinstance(v, Mapping):
                v = f"{v.get('source', '')}:{v.get('target', '')}"
            state.compose_volumes.append(_compose_interpolate(str(v)))
    env_file = svc.get("env_file")
    for item in env_file if isinstance(env_file, list) else [env_file] if env_file else []:
        path = item.get("path") if isinstance(item, Mapping) else item
        state.compose_env_files.append(str(path))
    state.compose_gpus = _compose_device_gpus(svc)
    for key, value in svc.items():
        if isinstance(value, (str, int, float, bool)) and key not in _COMPOSE_HANDLED:
            option = str(key).replace("_", "-")
            text = value if isinstance(value, bool) else _compose_interpolate(str(value))
            state.compose_options[option] = text
    entrypoint = _as_words(svc.get("entrypoint"))
    command_value = svc.get("command")
    command = _as_words(command_value)
    argv: list[str] = []
    if entrypoint is not None:
        argv = entrypoint if isinstance(svc.get("entrypoint"), list) else _safe_split(entrypoint[0])
    if command is not None:
        if isinstance(command_value, list) or (argv and _shell_script([*argv, "x"]) == "x"):
            argv = [*argv, *command]
        else:
            argv = [*argv, *_safe_split(command[0], state.problems)]
    image_ref = parse_image(state.compose_image) if state.compose_image else None
    state.container_argv = argv
    _eval_command(argv, state, 0, image_engine=_image_engine(image_ref))


def _safe_split(text: str, problems: list[str] | None = None) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        if problems is not None:
            problems.append(f"malformed quoting ({exc}); words split on white space")
        return text.split()


def _load_compose(text: str, state: _State) -> str | None:
    """Read ``text`` as a compose file into ``state``: None when done, else why not."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return f"compose YAML could not be parsed{where}"
    except RecursionError:  # PyYAML builds nested nodes recursively
        return "compose YAML is nested too deeply"
    if not isinstance(data, Mapping) or "services" not in data:
        return "YAML without a services section"
    _parse_compose(data, state)
    return None


# ------------------------------------------------------------------- entry point


def _strip_fences(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(line for line in lines if not _FENCE_RE.match(line))


def _env_file(text: str, state: _State) -> bool:
    """Read ``KEY=value`` lines; False (and nothing recorded) if any line is not one."""
    found: dict[str, str] = {}
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _ENV_LINE_RE.fullmatch(line.rstrip("\r"))
        if not m:
            return False
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif any(c.isspace() for c in value):
            return False  # `A=1 B=2 cmd`: a command line, not an env file
        found[m.group(1)] = value
    if not found:
        return False
    state.env.update(found)
    return True


def parse_launch(text: str) -> Launch:
    """Read a pasted launch command, compose file, env file or script. Never raises."""
    try:
        return _parse_launch(text)
    except Exception:  # a bug here must not take the caller down with it
        log.exception("parse_launch failed")
        return Launch(kind="unknown", problems=("internal error while reading the launch",))


def _parse_launch(text: str) -> Launch:
    state = _State()
    if len(text) > MAX_LAUNCH_CHARS:
        state.problems.append(f"input longer than {MAX_LAUNCH_CHARS} characters; rest ignored")
        text = text[:MAX_LAUNCH_CHARS]
    text = _strip_fences(text.replace("\r\n", "\n"))
    if not text.strip():
        return Launch(kind="unknown", problems=("empty input",))
    yaml_problem = None
    if _COMPOSE_HINT_RE.search(text):
        yaml_problem = _load_compose(text, state)
        if yaml_problem is None:
            return _build("compose", state)
    if _env_file(text, state):
        return _build("env-file", state)
    _run_script(text, state, 0)
    if state.docker is not None:
        return _build("docker-run", state)
    if state.compose_bodies:
        body_problem = _load_compose(state.compose_bodies[0], state)
        if body_problem is None:
            return _build("compose", state)
        state.problems.append(f"heredoc: {body_problem}")
    if state.engine is not None and state.engine.engine == "vllm":
        return _build("vllm-serve", state)
    if state.engine is not None and state.engine.engine == "sglang":
        return _build("sglang", state)
    if state.compose_cli:
        state.problems.append("docker compose command without its compose file")
        return _build("compose", state)
    if state.commands == 0 and state.env:
        return _build("env-file", state)
    if yaml_problem is not None:
        state.problems.append(yaml_problem)
    return _build("unknown", state)
