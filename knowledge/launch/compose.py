"""Docker Compose files: the service that runs the engine, read with ``yaml.safe_load``.

In compose values ``$$`` is ``$`` and ``${VAR:-default}`` takes the default, as
Compose does without a host value; a plain ``${VAR}`` stays as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import yaml

from knowledge.launch.model import Gpus
from knowledge.launch.settings import int_or_none
from knowledge.launch.shell import safe_split, shell_script
from knowledge.safe_yaml import YamlTooLarge, load_yaml

__all__ = ["COMPOSE_HINT_RE", "ComposeService", "compose_interpolate", "read_compose"]

_COMPOSE_VAR_RE: Final = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}$]*))?\}")
#: Text that looks like a compose file (or a heredoc holding one).
COMPOSE_HINT_RE: Final = re.compile(r"(?m)^services[ \t]*:")
_COMPOSE_HANDLED: Final = frozenset(
    {"image", "container_name", "environment", "volumes", "env_file", "command", "entrypoint"}
)


@dataclass(slots=True)
class ComposeService:
    """The one service read from a compose file: the one that mentions an engine."""

    #: The service's name, when the file has several.
    name: str | None = None
    image: str | None = None
    container_name: str | None = None
    volumes: list[str] = field(default_factory=list)
    env_files: list[str] = field(default_factory=list)
    gpus: tuple[Gpus | None, int | None] | None = None
    #: Other scalar keys (``network-mode``, ``shm-size`` ...).
    options: dict[str, str | bool] = field(default_factory=dict)
    #: Entrypoint and command as words; None when the service could not be read.
    argv: list[str] | None = None


def compose_interpolate(value: str) -> str:
    """Compose-file interpolation without a host environment: ``$$`` -> ``$``,
    ``${VAR:-default}`` -> ``default``; plain ``${VAR}`` stays as written."""
    if "$" not in value:
        return value

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return m.group(2) if m.group(2) is not None else m.group(0)

    return _COMPOSE_VAR_RE.sub(sub, value)


def _as_words(value: object) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return [compose_interpolate(str(v)) for v in value]
    return [compose_interpolate(str(value))]


def _compose_env(value: object, env: dict[str, str]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            if v is None:
                continue
            text = ("true" if v else "false") if isinstance(v, bool) else str(v)
            env[str(k)] = compose_interpolate(text)
    elif isinstance(value, list):
        for item in value:
            name, eq, val = str(item).partition("=")
            if eq and name:
                env[name.strip()] = compose_interpolate(val)


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
        if int_or_none(count) is not None:
            return None, int_or_none(count)
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


def read_compose(text: str, env: dict[str, str], problems: list[str]) -> ComposeService | str:
    """Read ``text`` as a compose file: its service, or why it is not a compose file.

    The service's ``environment`` is written into ``env``.
    """
    try:
        data = load_yaml(text)  # aliases and sizes capped: compose text is pasted by users
    except YamlTooLarge as exc:
        return f"compose YAML refused: {exc}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return f"compose YAML could not be parsed{where}"
    except RecursionError:  # PyYAML builds nested nodes recursively
        return "compose YAML is nested too deeply"
    if not isinstance(data, Mapping) or "services" not in data:
        return "YAML without a services section"
    return _read_service(data, env, problems)


def _read_service(
    data: Mapping[str, object], env: dict[str, str], problems: list[str]
) -> ComposeService:
    services = data.get("services")
    if not isinstance(services, Mapping) or not services:
        problems.append("compose file has no services")
        return ComposeService()
    name = str(_pick_service(services))
    found = ComposeService(name=name if len(services) > 1 else None)
    svc = services[name]
    if not isinstance(svc, Mapping):
        problems.append(f"compose service {name!r} is not a mapping")
        return found
    _compose_env(svc.get("environment"), env)
    image = svc.get("image")
    if isinstance(image, str):
        found.image = compose_interpolate(image)
    container = svc.get("container_name")
    if isinstance(container, str):
        found.container_name = compose_interpolate(container)
    volumes = svc.get("volumes")
    if isinstance(volumes, list):
        for v in volumes:
            if isinstance(v, Mapping):
                v = f"{v.get('source', '')}:{v.get('target', '')}"
            found.volumes.append(compose_interpolate(str(v)))
    env_file = svc.get("env_file")
    for item in env_file if isinstance(env_file, list) else [env_file] if env_file else []:
        path = item.get("path") if isinstance(item, Mapping) else item
        found.env_files.append(str(path))
    found.gpus = _compose_device_gpus(svc)
    for key, value in svc.items():
        if isinstance(value, (str, int, float, bool)) and key not in _COMPOSE_HANDLED:
            option = str(key).replace("_", "-")
            text = value if isinstance(value, bool) else compose_interpolate(str(value))
            found.options[option] = text
    entrypoint = _as_words(svc.get("entrypoint"))
    command_value = svc.get("command")
    command = _as_words(command_value)
    argv: list[str] = []
    if entrypoint is not None:
        argv = entrypoint if isinstance(svc.get("entrypoint"), list) else safe_split(entrypoint[0])
    if command is not None:
        if isinstance(command_value, list) or (argv and shell_script([*argv, "x"]) == "x"):
            argv = [*argv, *command]
        else:
            argv = [*argv, *safe_split(command[0], problems)]
    found.argv = argv
    return found
