"""``docker run`` options: env, env files, volumes, name, GPUs; the image and command.

The image is the first argument that is not an option; the container command follows
it. Also ``podman`` and ``nerdctl``, which take the same options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from knowledge.launch.shell import ARRAY_REF_RE

__all__ = [
    "DOCKER_BOOL_OPTIONS",
    "DOCKER_CLIS",
    "DOCKER_SHORT_BOOL",
    "DockerRun",
    "parse_docker_run",
]

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


@dataclass(slots=True)
class DockerRun:
    """The options of one ``docker run`` other than ``-e`` (those go to the caller's env)."""

    image_word: str | None
    options: dict[str, str | bool]
    volumes: list[str]
    env_files: list[str]
    name: str | None
    gpus: str | None


def parse_docker_run(
    words: list[str], env: dict[str, str], problems: list[str]
) -> tuple[DockerRun, list[str]]:
    """Options up to the image; ``-e`` values are written into ``env``."""
    docker = DockerRun(None, {}, [], [], None, None)
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        if w == "--":
            i += 1
            break
        if ARRAY_REF_RE.fullmatch(w):
            problems.append(f"docker options from an unknown array: {w}")
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
                problems.append(f"docker option --{key} has no value")
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
                problems.append(f"docker option -{key} has no value")
                value = True
        _docker_option(docker, key, value, env)
        i += 1
    docker.image_word = words[i] if i < n else None
    if docker.image_word is None:
        problems.append("docker run without an image")
    return docker, words[i + 1 :]


def _docker_option(docker: DockerRun, key: str, value: str | bool, env: dict[str, str]) -> None:
    if key in ("e", "env") and isinstance(value, str):
        name, eq, val = value.partition("=")
        if eq and name:
            env[name] = val
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
