"""Build interaction ``data`` the way the Discord client would, from what the bot sent.

Slash command options are typed from the *synced schema* (so a command the bot
never synced cannot be invoked, just like in Discord), components are found in
the message the bot sent (a user can only press what is there and enabled), and
modal submissions mirror the modal the bot opened with ``value``/``values`` filled
in. Anything a real client would refuse raises ``ValueError`` / ``LookupError``
with a sentence saying why.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

__all__ = [
    "CONTEXT_NAMES",
    "INSTALL_NAMES",
    "Resolver",
    "build_chat_input_options",
    "find_command",
    "find_component",
    "mirror_modal",
    "offered_in",
    "select_resolved",
    "snowflake_of",
    "walk_components",
]

COMMAND_TYPES = {1: "slash", 2: "user context menu", 3: "message context menu"}
SELECT_TYPES = {3, 5, 6, 7, 8}


class Resolver(Protocol):
    """Looks up guild objects for the ``resolved`` part of an interaction."""

    def resolve_user(self, user_id: int) -> tuple[dict[str, Any], dict[str, Any] | None]: ...

    def resolve_channel(self, channel_id: int) -> dict[str, Any]: ...

    def resolve_role(self, role_id: int) -> dict[str, Any]: ...

    def is_role(self, object_id: int) -> bool: ...


def snowflake_of(value: Any) -> int:
    """An ID from an int, a digit string, or anything with an ``id`` attribute/key."""
    if isinstance(value, bool):
        raise TypeError(f"expected an ID, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, Mapping) and "id" in value:
        return int(value["id"])
    if hasattr(value, "id"):
        return int(value.id)
    raise TypeError(f"expected an ID (int, digit string or object with .id), got {value!r}")


#: Interaction contexts (0 guild, 1 the bot's DM, 2 other DMs and group DMs) and
#: installation types (0 guild install, 1 user install), as Discord numbers them.
CONTEXT_NAMES = {0: "a server", 1: "a DM with the bot", 2: "a DM or group DM between users"}
INSTALL_NAMES = {0: "installed to the server", 1: "installed to the user"}


def offered_in(command: Mapping[str, Any], context: int, install: int) -> bool:
    """Whether Discord offers a global ``command`` in ``context`` for an ``install``.

    Unset ``contexts`` means every context (the DM one only if ``dm_permission``
    is not false); unset ``integration_types`` means a guild install only.
    """
    contexts = command.get("contexts")
    if contexts is None:
        contexts = [0, 2] if command.get("dm_permission") is False else [0, 1, 2]
    installs = command.get("integration_types") or [0]
    return context in contexts and install in installs


def find_command(
    commands: Mapping[int | None, list[dict[str, Any]]],
    name: str,
    kind: int,
    guild_id: int,
    *,
    context: int = 0,
    install: int = 0,
) -> dict[str, Any]:
    """The synced command (guild scope first, then global) called ``name``, as offered
    to a user in ``context`` through an ``install`` (outside the stand-in's guild only
    global commands exist)."""
    scopes = (guild_id, None) if (context, install) == (0, 0) else (None,)
    refused = None
    for scope in scopes:
        for command in commands.get(scope, []):
            if command["name"] != name or command.get("type", 1) != kind:
                continue
            if scope is None and not offered_in(command, context, install):
                refused = command
                continue
            return command
    if refused is not None:
        raise LookupError(
            f"Discord would not offer {name!r} in {CONTEXT_NAMES.get(context, context)} when"
            f" {INSTALL_NAMES.get(install, install)}: its contexts are"
            f" {refused.get('contexts')} and integration_types {refused.get('integration_types')}"
        )
    synced = ", ".join(
        f"{c['name']} ({COMMAND_TYPES.get(c.get('type', 1), '?')}, "
        f"{'global' if scope is None else 'guild'})"
        for scope, cmds in commands.items()
        for c in cmds
    )
    raise LookupError(
        f"no {COMMAND_TYPES.get(kind, kind)} command {name!r} was synced, so Discord would not"
        f" offer it (a command added after tree.sync() is never registered). "
        f"Synced: {synced or 'nothing'}"
    )


def _check_range(option: Mapping[str, Any], value: Any, label: str) -> None:
    low, high = option.get("min_value"), option.get("max_value")
    if low is not None and value < low:
        raise ValueError(f"{label}: {value!r} is below min_value {low}")
    if high is not None and value > high:
        raise ValueError(f"{label}: {value!r} is above max_value {high}")


def _convert(
    option: Mapping[str, Any],
    value: Any,
    resolver: Resolver,
    resolved: dict[str, dict[str, Any]],
    label: str,
) -> Any:
    kind = option["type"]
    choices = option.get("choices") or []
    if kind == 3:
        if not isinstance(value, str):
            raise TypeError(f"{label} is a string option, got {value!r}")
        low, high = option.get("min_length", 0), option.get("max_length", 6000)
        if not low <= len(value) <= high:
            raise ValueError(f"{label}: length {len(value)} is outside {low}..{high}")
    elif kind == 4:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{label} is an integer option, got {value!r}")
        _check_range(option, value, label)
    elif kind == 10:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise TypeError(f"{label} is a number option, got {value!r}")
        _check_range(option, value, label)
    elif kind == 5:
        if not isinstance(value, bool):
            raise TypeError(f"{label} is a boolean option, got {value!r}")
    elif kind in (6, 9) and not (kind == 9 and resolver.is_role(snowflake_of(value))):
        user_id = snowflake_of(value)
        user, member = resolver.resolve_user(user_id)
        resolved.setdefault("users", {})[str(user_id)] = user
        if member is not None:
            resolved.setdefault("members", {})[str(user_id)] = member
        return str(user_id)
    elif kind in (8, 9):
        role_id = snowflake_of(value)
        resolved.setdefault("roles", {})[str(role_id)] = resolver.resolve_role(role_id)
        return str(role_id)
    elif kind == 7:
        channel_id = snowflake_of(value)
        channel = resolver.resolve_channel(channel_id)
        allowed = option.get("channel_types")
        if allowed and channel["type"] not in allowed:
            raise ValueError(f"{label} accepts channel types {allowed}, not {channel['type']}")
        resolved.setdefault("channels", {})[str(channel_id)] = channel
        return str(channel_id)
    elif kind == 11:
        if not isinstance(value, Mapping) or "url" not in value:
            raise TypeError(f"{label} is an attachment option: pass Standin.attachment(...)")
        resolved.setdefault("attachments", {})[str(value["id"])] = dict(value)
        return str(value["id"])
    else:
        raise ValueError(f"{label}: option type {kind} is not supported by the stand-in")
    if choices and value not in [c["value"] for c in choices]:
        names = ", ".join(repr(c["value"]) for c in choices)
        raise ValueError(f"{label}: {value!r} is not one of its choices ({names})")
    return value


def build_chat_input_options(
    command: Mapping[str, Any],
    path: Sequence[str],
    values: Mapping[str, Any],
    resolver: Resolver,
    *,
    focused: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """``(options, resolved)`` for ``/command path... name=value``.

    ``path`` names subcommand groups / subcommands below the command. With
    ``focused`` (autocomplete) the focused option is sent as the partial string
    typed so far with ``"focused": true`` and required options may be missing.
    """
    node: Mapping[str, Any] = command
    chain: list[Mapping[str, Any]] = []
    label = f"/{command['name']}"
    for segment in path:
        found = next(
            (o for o in node.get("options") or [] if o["name"] == segment and o["type"] in (1, 2)),
            None,
        )
        if found is None:
            subs = [o["name"] for o in node.get("options") or [] if o["type"] in (1, 2)]
            raise LookupError(f"{label} has no subcommand {segment!r} (it has: {subs})")
        chain.append(found)
        node = found
        label += f" {segment}"
    params = list(node.get("options") or [])
    subs = [o["name"] for o in params if o["type"] in (1, 2)]
    if subs:
        raise LookupError(f"{label} needs a subcommand: one of {subs}")
    names = [p["name"] for p in params]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"{label} has no option(s) {unknown}; its options are {names}")
    if focused is not None and focused not in names:
        raise ValueError(f"{label} has no option {focused!r} to autocomplete; options: {names}")
    resolved: dict[str, dict[str, Any]] = {}
    built: list[dict[str, Any]] = []
    for param in params:
        name = param["name"]
        if name == focused:
            if not param.get("autocomplete"):
                raise ValueError(
                    f"{label} option {name!r} has no autocomplete, so Discord would not ask"
                )
            typed = values.get(name, "")
            built.append(
                {"name": name, "type": param["type"], "value": str(typed), "focused": True}
            )
            continue
        if name not in values:
            if param.get("required") and focused is None:
                raise ValueError(
                    f"{label} requires option {name!r}; the Discord client would not send it"
                )
            continue
        value = _convert(param, values[name], resolver, resolved, f"{label} {name}")
        built.append({"name": name, "type": param["type"], "value": value})
    for parent in reversed(chain):
        built = [{"name": parent["name"], "type": parent["type"], "options": built}]
    return built, resolved


def walk_components(components: Sequence[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for component in components:
        yield component
        yield from walk_components(component.get("components") or [])
        for key in ("component", "accessory"):
            child = component.get(key)
            if isinstance(child, Mapping):
                yield from walk_components([child])


def find_component(message: Mapping[str, Any], custom_id: str) -> Mapping[str, Any]:
    """The component with ``custom_id`` in a message, if a user could use it."""
    components = message.get("components") or []
    for component in walk_components(components):
        if component.get("custom_id") == custom_id:
            if component.get("disabled"):
                raise ValueError(f"component {custom_id!r} is disabled; a user cannot use it")
            return component
    present = [c.get("custom_id") for c in walk_components(components) if c.get("custom_id")]
    raise LookupError(
        f"message {message.get('id')} has no component {custom_id!r} (it has: {present})"
    )


def select_resolved(
    component: Mapping[str, Any], values: Sequence[str], resolver: Resolver
) -> dict[str, dict[str, Any]]:
    """Check chosen values as the client would, and build ``resolved`` for entity selects."""
    kind = component["type"]
    low = component.get("min_values", 1)
    high = component.get("max_values", 1)
    if not low <= len(values) <= high:
        raise ValueError(
            f"select {component.get('custom_id')!r} takes {low}..{high} values, got {len(values)}"
        )
    if kind == 3:
        options = [o["value"] for o in component.get("options") or []]
        bad = [v for v in values if v not in options]
        if bad:
            raise ValueError(f"{bad} are not options of {component.get('custom_id')!r}: {options}")
        return {}
    resolved: dict[str, dict[str, Any]] = {}
    for value in values:
        object_id = snowflake_of(value)
        if kind in (5, 7) and not resolver.is_role(object_id):
            user, member = resolver.resolve_user(object_id)
            resolved.setdefault("users", {})[str(object_id)] = user
            if member is not None:
                resolved.setdefault("members", {})[str(object_id)] = member
        elif kind in (6, 7):
            resolved.setdefault("roles", {})[str(object_id)] = resolver.resolve_role(object_id)
        elif kind == 8:
            resolved.setdefault("channels", {})[str(object_id)] = resolver.resolve_channel(
                object_id
            )
        else:
            raise ValueError(f"{value!r} does not fit select type {kind}")
    return resolved


def _submit_input(
    component: Mapping[str, Any], remaining: dict[str, Any], next_id: Iterator[int]
) -> dict[str, Any]:
    custom_id = component["custom_id"]
    component_id = component.get("id") or next(next_id)
    if component["type"] == 4:
        value = remaining.pop(custom_id, component.get("value") or "")
        if not isinstance(value, str):
            raise TypeError(f"text input {custom_id!r} takes a string, got {value!r}")
        if not value:
            if component.get("required", True):
                raise ValueError(
                    f"text input {custom_id!r} is required; the client would not submit it empty"
                )
        else:
            low = component.get("min_length") or 0
            high = component.get("max_length") or 4000
            if not low <= len(value) <= high:
                raise ValueError(
                    f"text input {custom_id!r} takes {low}..{high} characters, got {len(value)};"
                    " the client would not let a user type that"
                )
        return {"type": 4, "id": component_id, "custom_id": custom_id, "value": value}
    if component["type"] == 3:
        values = list(remaining.pop(custom_id, []))
        if not values and not component.get("required", True):
            return {"type": 3, "id": component_id, "custom_id": custom_id, "values": []}
        select_resolved(component, values, _NoResolver())
        return {"type": 3, "id": component_id, "custom_id": custom_id, "values": values}
    raise ValueError(
        f"modal input {custom_id!r} of type {component['type']} is not supported by the stand-in"
    )


class _NoResolver:
    def resolve_user(self, user_id: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
        raise ValueError("entity selects in modals are not supported by the stand-in")

    def resolve_channel(self, channel_id: int) -> dict[str, Any]:
        raise ValueError("entity selects in modals are not supported by the stand-in")

    def resolve_role(self, role_id: int) -> dict[str, Any]:
        raise ValueError("entity selects in modals are not supported by the stand-in")

    def is_role(self, object_id: int) -> bool:
        return False


def mirror_modal(modal: Mapping[str, Any], values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``components`` of a modal submit: the modal's inputs with values filled in.

    Inputs not named in ``values`` keep the modal's pre-filled ``value`` (or stay
    empty, which a required input refuses).
    """
    remaining = dict(values)
    next_id = iter(range(1000, 2000))
    out: list[dict[str, Any]] = []
    for component in modal.get("components") or []:
        kind = component["type"]
        component_id = component.get("id") or next(next_id)
        if kind == 1:
            children = [_submit_input(c, remaining, next_id) for c in component["components"]]
            out.append({"type": 1, "id": component_id, "components": children})
        elif kind == 18:
            child = _submit_input(component["component"], remaining, next_id)
            out.append({"type": 18, "id": component_id, "component": child})
        elif kind == 10:
            out.append({"type": 10, "id": component_id})
    if remaining:
        inputs = [
            c.get("custom_id")
            for c in walk_components(modal.get("components") or [])
            if c.get("custom_id")
        ]
        raise ValueError(
            f"modal {modal.get('custom_id')!r} has no input(s) {sorted(remaining)};"
            f" its inputs are {inputs}"
        )
    return out
