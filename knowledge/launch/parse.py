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

This module walks the statements of the text (:mod:`~knowledge.launch.shell`) keeping
the assignments seen so far (exports, ``VAR=x cmd`` prefixes, ``-e``, compose
``environment``, ``ARR=(...)`` arrays), follows ``docker run``
(:mod:`~knowledge.launch.docker`), compose files (:mod:`~knowledge.launch.compose`) and
``bash -c`` scripts down to the engine command (:mod:`~knowledge.launch.engines`), and
reads the settings (:mod:`~knowledge.launch.settings`). ``parse_launch`` never raises.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from knowledge.launch.compose import COMPOSE_HINT_RE, ComposeService, read_compose
from knowledge.launch.docker import DOCKER_CLIS, DockerRun, parse_docker_run
from knowledge.launch.engines import EngineCommand, find_engine, parse_engine_args
from knowledge.launch.images import engine_of_image, parse_image
from knowledge.launch.model import Launch
from knowledge.launch.settings import (
    ENV_ALIASES,
    alias,
    env_lookup,
    ep_field,
    flag_lookup,
    gpu_fields,
    int_field,
    json_object,
    spec_fields,
)
from knowledge.launch.shell import (
    ARRAY_REF_RE,
    ASSIGN_RE,
    COMMAND_PREFIXES,
    expand,
    logical_lines,
    safe_split,
    shell_script,
    split_words,
    statements,
)

__all__ = ["MAX_LAUNCH_CHARS", "MAX_SCRIPT_DEPTH", "parse_launch"]

log = logging.getLogger(__name__)

#: Longest input read; the rest is ignored with a ``problems`` entry.
MAX_LAUNCH_CHARS: Final = 128 * 1024
#: How deep ``bash -c '...'`` scripts inside commands are followed.
MAX_SCRIPT_DEPTH: Final = 4

_ENV_LINE_RE: Final = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)=(.*)")
_FENCE_RE: Final = re.compile(r"^[ \t]*(```|~~~)")


@dataclass(slots=True)
class _State:
    """Accumulator for one ``parse_launch`` call (never shared between calls)."""

    env: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    docker: DockerRun | None = None
    engine: EngineCommand | None = None
    container_argv: list[str] | None = None
    compose_cli: bool = False
    compose_bodies: list[str] = field(default_factory=list)
    commands: int = 0
    image_engine: str | None = None
    #: The compose service read (empty when none was).
    compose: ComposeService = field(default_factory=ComposeService)


def _run_script(text: str, state: _State, depth: int) -> None:
    lines, heredocs, unbalanced = logical_lines(text, quote_aware=True)
    if unbalanced:
        lines, heredocs, _ = logical_lines(text, quote_aware=False)
    state.compose_bodies.extend(h for h in heredocs if COMPOSE_HINT_RE.search(h))
    for line in lines:
        for statement in statements(split_words(line, state.problems)):
            _eval_statement(statement, state, depth)


def _expand_words(words: Iterable[str], state: _State) -> list[str]:
    out: list[str] = []
    for w in words:
        m = ARRAY_REF_RE.fullmatch(w)
        if m and m.group(1) in state.arrays:
            out.extend(state.arrays[m.group(1)])
        else:
            out.append(expand(w, state.env))
    return out


def _take_assignments(words: list[str], state: _State) -> int:
    """Apply leading ``NAME=value`` and ``NAME=( ... )`` words; return how many words."""
    i = 0
    while i < len(words):
        m = ASSIGN_RE.fullmatch(words[i])
        if not m:
            break
        name, append, value = m.groups()
        if value == "" and i + 1 < len(words) and words[i + 1] == "(":
            close = words.index(")", i + 1) if ")" in words[i + 1 :] else len(words)
            items = _expand_words(words[i + 2 : close], state)
            state.arrays[name] = (state.arrays.get(name, []) if append else []) + items
            i = close + 1
            continue
        expanded = expand(value, state.env)
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
        _, argv = parse_docker_run(rest[1:], state.env, [])
        _eval_command(argv, state, depth, image_engine=None)
        return
    if rest[:1] != ["run"] or state.docker is not None:
        return
    docker, argv = parse_docker_run(rest[1:], state.env, state.problems)
    state.docker = docker
    image = parse_image(docker.image_word) if docker.image_word else None
    entrypoint = docker.options.get("entrypoint")
    if isinstance(entrypoint, str) and entrypoint:
        argv = [*safe_split(entrypoint, state.problems), *argv]
    state.container_argv = argv
    _eval_command(argv, state, depth, image_engine=engine_of_image(image))


def _eval_command(argv: list[str], state: _State, depth: int, image_engine: str | None) -> None:
    if image_engine and state.image_engine is None:
        state.image_engine = image_engine
    if not argv:
        return
    script = shell_script(argv)
    if script is not None:
        if depth >= MAX_SCRIPT_DEPTH:
            state.problems.append("shell scripts nested too deep; inner one not read")
            return
        _run_script(script, state, depth + 1)
        return
    found = find_engine(argv)
    if found is None and image_engine in ("vllm", "sglang"):
        head = argv[0]
        if head.startswith("-") or ("/" in head and not head.startswith(("/", "."))):
            found = EngineCommand(image_engine, list(argv), list(argv), image_engine == "vllm")
    if found is not None and state.engine is None:
        state.engine = found


def _build(kind: str, state: _State) -> Launch:
    problems = state.problems
    flags: dict[str, str | bool] = {}
    positionals: list[str] = []
    command: tuple[str, ...] = ()
    engine = None
    if state.engine is not None:
        flags, positionals = parse_engine_args(state.engine.args)
        command = tuple(state.engine.argv)
        engine = state.engine.engine
    elif state.container_argv:
        command = tuple(state.container_argv)
    env = state.env
    docker = state.docker
    image_word = docker.image_word if docker else state.compose.image
    image = None
    if image_word is None:
        env_image = env_lookup(env, alias(ENV_ALIASES, "image"))
        image_word = env_image[1] if env_image else None
    if image_word is not None:
        image = parse_image(image_word)
        if image is None:
            problems.append(f"image {image_word[:80]!r} is not a resolvable image reference")
    engine = engine or engine_of_image(image) or state.image_engine
    if engine is None and image is not None:  # a launcher image: the env may name the server's
        env_image = env_lookup(env, alias(ENV_ALIASES, "image"))
        engine = engine_of_image(parse_image(env_image[1])) if env_image else None
    if engine is None and any(k.startswith("VLLM_") for k in env):
        engine = "vllm"
    if engine is None and any(k.startswith(("SGLANG_", "SGL_")) for k in env):
        engine = "sglang"

    model_hit = flag_lookup(flags, "model")
    model: str | None = None
    if model_hit is not None and isinstance(model_hit[1], str):
        model = model_hit[1]
    elif state.engine is not None and state.engine.model_positional and positionals:
        model = positionals[0]
    else:
        env_model = env_lookup(env, alias(ENV_ALIASES, "model"))
        model = env_model[1] if env_model else None
    served_hit = flag_lookup(flags, "served_model_name")
    served = served_hit[1] if served_hit and isinstance(served_hit[1], str) else None
    if served is None:
        env_served = env_lookup(env, alias(ENV_ALIASES, "served_model_name"))
        served = env_served[1] if env_served else None

    hf_overrides = None
    if "hf-overrides" in flags:
        hf_overrides = json_object(flags["hf-overrides"], "--hf-overrides", problems)
    spec_method, spec_tokens = spec_fields(flags, env, problems)
    gpus, gpu_count = gpu_fields(env, docker.gpus if docker else None, state.compose.gpus)
    return Launch(
        kind=kind,
        image=image,
        model=model,
        served_model_name=served,
        engine=engine,
        tp=int_field("tp", flags, env, problems),
        dp=int_field("dp", flags, env, problems),
        ep=ep_field(flags, env, problems),
        dcp=int_field("dcp", flags, env, problems),
        pp=int_field("pp", flags, env, problems),
        spec_method=spec_method,
        spec_tokens=spec_tokens,
        gpus=gpus,
        gpu_count=gpu_count,
        env=dict(env),
        flags=flags,
        hf_overrides=hf_overrides,
        command=command,
        runtime_flags=dict(docker.options) if docker else dict(state.compose.options),
        container_name=docker.name if docker else state.compose.container_name,
        volumes=tuple(docker.volumes if docker else state.compose.volumes),
        env_files=tuple(docker.env_files if docker else state.compose.env_files),
        service=state.compose.name,
        problems=tuple(dict.fromkeys(problems)),
    )


def _load_compose(text: str, state: _State) -> str | None:
    """Read ``text`` as a compose file into ``state``: None when done, else why not."""
    found = read_compose(text, state.env, state.problems)
    if isinstance(found, str):
        return found
    state.compose = found
    if found.argv is not None:
        image = parse_image(found.image) if found.image else None
        state.container_argv = found.argv
        _eval_command(found.argv, state, 0, image_engine=engine_of_image(image))
    return None


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
    if COMPOSE_HINT_RE.search(text):
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
