"""Discord's documented limits, checked the way Discord checks them.

Every ``check_*`` function adds to a :class:`FormErrors` tree, shaped like the
``errors`` object of Discord's ``400 Invalid Form Body`` (code 50035) answer::

    {"code": 50035, "message": "Invalid Form Body",
     "errors": {"embeds": {"0": {"title": {"_errors": [
         {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 256 or fewer in length."}]}}}}}

discord.py flattens that tree into ``In embeds.0.title: Must be 256 or fewer in length.``,
so a failing test names the offending field. Nothing here talks to the network or to
discord.py; the server calls these on every request body it receives.

Sources: discord-api-docs (message, embed, component, modal, interaction and
application command resources) and ``tests/discord_standin/spec/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "AUTOCOMPLETE_MAX_CHOICES",
    "COMPONENTS_V2_FLAG",
    "CONTENT_MAX",
    "EMBEDS_MAX",
    "EMBED_TOTAL_MAX",
    "FormErrors",
    "check_allowed_mentions",
    "check_autocomplete",
    "check_commands",
    "check_components",
    "check_embeds",
    "check_message",
    "check_modal",
    "check_thread",
    "is_empty_message",
]

CONTENT_MAX = 2000
EMBEDS_MAX = 10
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELDS_MAX = 25
EMBED_FIELD_NAME_MAX = 256
EMBED_FIELD_VALUE_MAX = 1024
EMBED_FOOTER_MAX = 2048
EMBED_AUTHOR_NAME_MAX = 256
EMBED_TOTAL_MAX = 6000
ACTION_ROWS_MAX = 5
ROW_BUTTONS_MAX = 5
CUSTOM_ID_MAX = 100
BUTTON_LABEL_MAX = 80
SELECT_OPTIONS_MAX = 25
SELECT_PLACEHOLDER_MAX = 150
SELECT_OPTION_TEXT_MAX = 100
AUTOCOMPLETE_MAX_CHOICES = 25
CHOICE_NAME_MAX = 100
CHOICE_VALUE_MAX = 100
MODAL_TITLE_MAX = 45
MODAL_COMPONENTS_MAX = 5
TEXT_INPUT_VALUE_MAX = 4000
TEXT_INPUT_LABEL_MAX = 45
TEXT_INPUT_PLACEHOLDER_MAX = 100
LABEL_DESCRIPTION_MAX = 100
COMMAND_NAME_MAX = 32
COMMAND_DESCRIPTION_MAX = 100
COMMAND_OPTIONS_MAX = 25
THREAD_NAME_MAX = 100
COMPONENTS_V2_FLAG = 1 << 15
COMPONENTS_V2_TOTAL_MAX = 40
ALLOWED_MENTIONS_IDS_MAX = 100

_CHAT_INPUT_NAME = re.compile(r"^[-_'\w]{1,32}$")
#: Names, descriptions, choices and values of one command together (discord-api-docs:
#: "the combined sum ... may be no more than 8000 characters").
COMMAND_COMBINED_MAX = 8000
_SELECT_TYPES = {3, 5, 6, 7, 8}
_Path = tuple[str | int, ...]


class FormErrors:
    """Collects field errors into Discord's nested ``errors`` shape."""

    def __init__(self) -> None:
        self.tree: dict[str, Any] = {}

    def add(self, path: _Path, code: str, message: str) -> None:
        node = self.tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def __bool__(self) -> bool:
        return bool(self.tree)

    def body(self) -> dict[str, Any]:
        """The JSON body of Discord's 400 answer."""
        return {"code": 50035, "message": "Invalid Form Body", "errors": self.tree}

    def flat(self) -> list[str]:
        """``["embeds.0.title: Must be 256 or fewer in length.", ...]`` for messages."""
        out: list[str] = []

        def walk(node: Mapping[str, Any], prefix: str) -> None:
            for key, value in node.items():
                if key == "_errors":
                    out.extend(f"{prefix}: {e['message']}" for e in value)
                else:
                    walk(value, f"{prefix}.{key}" if prefix else key)

        walk(self.tree, "")
        return out

    # Small helpers shared by the checks below.
    def max_len(self, path: _Path, value: Any, limit: int) -> None:
        if isinstance(value, str) and len(value) > limit:
            self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")

    def length_between(self, path: _Path, value: Any, low: int, high: int) -> None:
        if value is None or value == "":
            if low > 0:
                self.add(path, "BASE_TYPE_REQUIRED", "This field is required")
            return
        if not isinstance(value, str):
            self.add(path, "STRING_TYPE_CONVERT", "Must be a string.")
        elif not low <= len(value) <= high:
            self.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length.")

    def max_items(self, path: _Path, value: Any, limit: int) -> None:
        if isinstance(value, list) and len(value) > limit:
            self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_empty_message(payload: Mapping[str, Any], *, has_files: bool) -> bool:
    """True when Discord would answer 50006 "Cannot send an empty message"."""
    return not (
        payload.get("content")
        or payload.get("embeds")
        or payload.get("components")
        or payload.get("sticker_ids")
        or payload.get("poll")
        or has_files
    )


def check_message(errors: FormErrors, payload: Mapping[str, Any], path: _Path = ()) -> None:
    """Content, embeds, components and allowed_mentions of one message body."""
    errors.max_len((*path, "content"), payload.get("content"), CONTENT_MAX)
    flags = payload.get("flags") or 0
    v2 = bool(int(flags) & COMPONENTS_V2_FLAG)
    if v2 and (payload.get("content") or payload.get("embeds")):
        errors.add(
            (*path, "content"),
            "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
            "The 'content' and 'embeds' fields cannot be used with the IS_COMPONENTS_V2 flag",
        )
    if "embeds" in payload and payload["embeds"] is not None:
        check_embeds(errors, _as_list(payload["embeds"]), (*path, "embeds"))
    if payload.get("components"):
        check_components(errors, _as_list(payload["components"]), (*path, "components"), v2=v2)
    if payload.get("allowed_mentions") is not None:
        check_allowed_mentions(errors, payload["allowed_mentions"], (*path, "allowed_mentions"))


def check_embeds(errors: FormErrors, embeds: Sequence[Mapping[str, Any]], path: _Path) -> None:
    errors.max_items(path, list(embeds), EMBEDS_MAX)
    total = 0
    for i, embed in enumerate(embeds):
        at = (*path, i)
        title = embed.get("title") or ""
        description = embed.get("description") or ""
        errors.max_len((*at, "title"), title, EMBED_TITLE_MAX)
        errors.max_len((*at, "description"), description, EMBED_DESCRIPTION_MAX)
        total += len(title) + len(description)
        fields = _as_list(embed.get("fields"))
        errors.max_items((*at, "fields"), fields, EMBED_FIELDS_MAX)
        for j, field in enumerate(fields):
            errors.length_between((*at, "fields", j, "name"), field.get("name"), 1, 256)
            errors.length_between((*at, "fields", j, "value"), field.get("value"), 1, 1024)
            total += len(field.get("name") or "") + len(field.get("value") or "")
        footer = embed.get("footer") or {}
        errors.max_len((*at, "footer", "text"), footer.get("text"), EMBED_FOOTER_MAX)
        total += len(footer.get("text") or "")
        author = embed.get("author") or {}
        errors.max_len((*at, "author", "name"), author.get("name"), EMBED_AUTHOR_NAME_MAX)
        total += len(author.get("name") or "")
    if total > EMBED_TOTAL_MAX:
        errors.add(
            path,
            "MAX_EMBED_SIZE_EXCEEDED",
            f"Embed size exceeds maximum size of {EMBED_TOTAL_MAX} (got {total}).",
        )


def _walk_components(components: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    for component in components:
        yield component
        yield from _walk_components(_as_list(component.get("components")))
        for key in ("component", "accessory"):
            child = component.get(key)
            if isinstance(child, Mapping):
                yield from _walk_components([child])


def check_components(
    errors: FormErrors,
    components: Sequence[Mapping[str, Any]],
    path: _Path,
    *,
    v2: bool = False,
) -> None:
    """Message components: action rows, buttons and selects (and v2 layouts)."""
    if v2:
        count = sum(1 for _ in _walk_components(components))
        if count > COMPONENTS_V2_TOTAL_MAX:
            errors.add(
                path,
                "BASE_TYPE_MAX_LENGTH",
                f"Must be {COMPONENTS_V2_TOTAL_MAX} or fewer in length (got {count}).",
            )
    else:
        errors.max_items(path, list(components), ACTION_ROWS_MAX)
    for i, component in enumerate(components):
        _check_component(errors, component, (*path, i), top_level=not v2, in_modal=False)
    seen: set[str] = set()
    for component in _walk_components(components):
        custom_id = component.get("custom_id")
        if custom_id is None:
            continue
        if custom_id in seen:
            errors.add(
                path,
                "COMPONENT_CUSTOM_ID_DUPLICATED",
                f"Component custom id cannot be duplicated ({custom_id!r}).",
            )
        seen.add(custom_id)


def _check_component(
    errors: FormErrors,
    component: Mapping[str, Any],
    path: _Path,
    *,
    top_level: bool,
    in_modal: bool,
) -> None:
    kind = component.get("type")
    if top_level and kind != 1:
        errors.add(
            (*path, "type"),
            "COMPONENT_LAYOUT_WIDTH_EXCEEDED"
            if kind in (2, *_SELECT_TYPES)
            else "BASE_TYPE_CHOICES",
            "Top-level components must be action rows (type 1) without the IS_COMPONENTS_V2 flag.",
        )
        return
    if kind == 1:
        children = _as_list(component.get("components"))
        if not children:
            errors.add(
                (*path, "components"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length."
            )
        if any(c.get("type") in _SELECT_TYPES or c.get("type") == 4 for c in children):
            if len(children) > 1:
                errors.add(
                    (*path, "components"),
                    "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                    "A select menu or text input must be alone in its action row.",
                )
        else:
            errors.max_items((*path, "components"), children, ROW_BUTTONS_MAX)
        for j, child in enumerate(children):
            _check_component(
                errors, child, (*path, "components", j), top_level=False, in_modal=in_modal
            )
    elif kind == 2:
        _check_button(errors, component, path)
    elif kind in _SELECT_TYPES:
        _check_select(errors, component, path)
    elif kind == 4:
        if not in_modal:
            errors.add(
                (*path, "type"), "BASE_TYPE_CHOICES", "Text inputs are only valid in modals."
            )
        _check_text_input(errors, component, path, needs_label=not in_modal)
    elif kind in (9, 17):  # section, container
        for j, child in enumerate(_as_list(component.get("components"))):
            _check_component(
                errors, child, (*path, "components", j), top_level=False, in_modal=in_modal
            )
        accessory = component.get("accessory")
        if isinstance(accessory, Mapping):
            _check_component(
                errors, accessory, (*path, "accessory"), top_level=False, in_modal=in_modal
            )


def _check_button(errors: FormErrors, button: Mapping[str, Any], path: _Path) -> None:
    style = button.get("style")
    if style not in (1, 2, 3, 4, 5, 6):
        errors.add(
            (*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5, 6)."
        )
    if style == 5:
        if not button.get("url"):
            errors.add((*path, "url"), "BASE_TYPE_REQUIRED", "This field is required")
        if button.get("custom_id") is not None:
            errors.add(
                (*path, "custom_id"),
                "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                "A link button cannot have a custom_id.",
            )
    elif style == 6:
        if not button.get("sku_id"):
            errors.add((*path, "sku_id"), "BASE_TYPE_REQUIRED", "This field is required")
    else:
        errors.length_between((*path, "custom_id"), button.get("custom_id"), 1, CUSTOM_ID_MAX)
    errors.max_len((*path, "label"), button.get("label"), BUTTON_LABEL_MAX)
    if style != 6 and not button.get("label") and not button.get("emoji"):
        errors.add(
            (*path, "label"),
            "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED",
            "A button needs a label or an emoji.",
        )


def _check_file_upload(errors: FormErrors, upload: Mapping[str, Any], path: _Path) -> None:
    """A file upload in a modal (type 19): 0-10 files, at least one allowed."""
    errors.length_between((*path, "custom_id"), upload.get("custom_id"), 1, CUSTOM_ID_MAX)
    if not 0 <= upload.get("min_values", 1) <= 10:
        errors.add((*path, "min_values"), "NUMBER_TYPE_MAX", "Must be between 0 and 10.")
    if not 1 <= upload.get("max_values", 1) <= 10:
        errors.add((*path, "max_values"), "NUMBER_TYPE_MAX", "Must be between 1 and 10.")


def _check_select(errors: FormErrors, select: Mapping[str, Any], path: _Path) -> None:
    errors.length_between((*path, "custom_id"), select.get("custom_id"), 1, CUSTOM_ID_MAX)
    errors.max_len((*path, "placeholder"), select.get("placeholder"), SELECT_PLACEHOLDER_MAX)
    min_values = select.get("min_values", 1)
    max_values = select.get("max_values", 1)
    if not 0 <= min_values <= 25:
        errors.add((*path, "min_values"), "NUMBER_TYPE_MAX", "Must be between 0 and 25.")
    if not 1 <= max_values <= 25:
        errors.add((*path, "max_values"), "NUMBER_TYPE_MAX", "Must be between 1 and 25.")
    if select.get("type") != 3:
        return
    options = _as_list(select.get("options"))
    if not options:
        errors.add((*path, "options"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
    errors.max_items((*path, "options"), options, SELECT_OPTIONS_MAX)
    if max_values > len(options) and options:
        errors.add(
            (*path, "max_values"),
            "SELECT_COMPONENT_MAX_VALUES_EXCEEDED",
            f"max_values ({max_values}) is more than the {len(options)} options.",
        )
    values: set[str] = set()
    for k, option in enumerate(options):
        at = (*path, "options", k)
        errors.length_between((*at, "label"), option.get("label"), 1, SELECT_OPTION_TEXT_MAX)
        errors.length_between((*at, "value"), option.get("value"), 1, SELECT_OPTION_TEXT_MAX)
        errors.max_len((*at, "description"), option.get("description"), SELECT_OPTION_TEXT_MAX)
        if option.get("value") in values:
            errors.add(
                (*at, "value"),
                "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
                "Select option values must be unique.",
            )
        values.add(option.get("value"))


def _check_text_input(
    errors: FormErrors, text_input: Mapping[str, Any], path: _Path, *, needs_label: bool
) -> None:
    errors.length_between((*path, "custom_id"), text_input.get("custom_id"), 1, CUSTOM_ID_MAX)
    if text_input.get("style") not in (1, 2):
        errors.add((*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2).")
    if needs_label:
        errors.length_between((*path, "label"), text_input.get("label"), 1, TEXT_INPUT_LABEL_MAX)
    else:
        errors.max_len((*path, "label"), text_input.get("label"), TEXT_INPUT_LABEL_MAX)
    errors.max_len(
        (*path, "placeholder"), text_input.get("placeholder"), TEXT_INPUT_PLACEHOLDER_MAX
    )
    errors.max_len((*path, "value"), text_input.get("value"), TEXT_INPUT_VALUE_MAX)
    min_length = text_input.get("min_length")
    max_length = text_input.get("max_length")
    if min_length is not None and not 0 <= min_length <= TEXT_INPUT_VALUE_MAX:
        errors.add((*path, "min_length"), "NUMBER_TYPE_MAX", "Must be between 0 and 4000.")
    if max_length is not None and not 1 <= max_length <= TEXT_INPUT_VALUE_MAX:
        errors.add((*path, "max_length"), "NUMBER_TYPE_MAX", "Must be between 1 and 4000.")


def check_modal(errors: FormErrors, modal: Mapping[str, Any], path: _Path = ()) -> None:
    """The ``data`` of a type 9 (modal) interaction callback."""
    errors.length_between((*path, "title"), modal.get("title"), 1, MODAL_TITLE_MAX)
    errors.length_between((*path, "custom_id"), modal.get("custom_id"), 1, CUSTOM_ID_MAX)
    components = _as_list(modal.get("components"))
    if not components:
        errors.add((*path, "components"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
    errors.max_items((*path, "components"), components, MODAL_COMPONENTS_MAX)
    for i, component in enumerate(components):
        at = (*path, "components", i)
        kind = component.get("type")
        if kind == 1:
            children = _as_list(component.get("components"))
            if len(children) != 1:
                errors.add(
                    (*at, "components"),
                    "BASE_TYPE_BAD_LENGTH",
                    "A modal action row holds exactly one text input.",
                )
            for j, child in enumerate(children):
                if child.get("type") != 4:
                    errors.add(
                        (*at, "components", j, "type"),
                        "BASE_TYPE_CHOICES",
                        "Only text inputs may sit in a modal action row.",
                    )
                else:
                    _check_text_input(errors, child, (*at, "components", j), needs_label=True)
        elif kind == 18:
            errors.length_between((*at, "label"), component.get("label"), 1, TEXT_INPUT_LABEL_MAX)
            errors.max_len(
                (*at, "description"), component.get("description"), LABEL_DESCRIPTION_MAX
            )
            child = component.get("component")
            if not isinstance(child, Mapping):
                errors.add((*at, "component"), "BASE_TYPE_REQUIRED", "This field is required")
            elif child.get("type") == 4:
                _check_text_input(errors, child, (*at, "component"), needs_label=False)
            elif child.get("type") in _SELECT_TYPES:
                _check_select(errors, child, (*at, "component"))
            elif child.get("type") == 19:
                _check_file_upload(errors, child, (*at, "component"))
            else:
                errors.add(
                    (*at, "component", "type"),
                    "BASE_TYPE_CHOICES",
                    "A label wraps a text input, a select menu or a file upload.",
                )
        elif kind != 10:  # a text display needs no checks beyond its content
            errors.add(
                (*at, "type"),
                "BASE_TYPE_CHOICES",
                "Modal components are action rows, labels or text displays.",
            )


def check_autocomplete(errors: FormErrors, data: Mapping[str, Any], path: _Path = ()) -> None:
    """The ``data`` of a type 8 (autocomplete result) interaction callback."""
    choices = _as_list(data.get("choices"))
    errors.max_items((*path, "choices"), choices, AUTOCOMPLETE_MAX_CHOICES)
    for i, choice in enumerate(choices):
        at = (*path, "choices", i)
        errors.length_between((*at, "name"), choice.get("name"), 1, CHOICE_NAME_MAX)
        value = choice.get("value")
        if isinstance(value, str):
            errors.max_len((*at, "value"), value, CHOICE_VALUE_MAX)
        elif not isinstance(value, int | float) or isinstance(value, bool):
            errors.add((*at, "value"), "BASE_TYPE_REQUIRED", "Must be a string or a number.")


def check_allowed_mentions(errors: FormErrors, mentions: Any, path: _Path) -> None:
    if not isinstance(mentions, Mapping):
        errors.add(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
        return
    parse = _as_list(mentions.get("parse"))
    for kind in ("users", "roles"):
        ids = mentions.get(kind)
        if ids is None:
            continue
        errors.max_items((*path, kind), ids, ALLOWED_MENTIONS_IDS_MAX)
        if kind in parse:
            errors.add(
                (*path, kind),
                "ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                f'parse:["{kind}"] and {kind}: [ids] are mutually exclusive.',
            )
    for i, item in enumerate(parse):
        if item not in ("users", "roles", "everyone"):
            errors.add(
                (*path, "parse", i),
                "BASE_TYPE_CHOICES",
                "Value must be one of ('users', 'roles', 'everyone').",
            )


def check_thread(errors: FormErrors, payload: Mapping[str, Any], *, forum: bool) -> None:
    """``POST /channels/{id}/threads``: name, and the nested first message in a forum."""
    errors.length_between(("name",), payload.get("name"), 1, THREAD_NAME_MAX)
    if payload.get("auto_archive_duration") not in (None, 60, 1440, 4320, 10080):
        errors.add(
            ("auto_archive_duration",),
            "BASE_TYPE_CHOICES",
            "Value must be one of (60, 1440, 4320, 10080).",
        )
    if not forum:
        return
    message = payload.get("message")
    if not isinstance(message, Mapping):
        errors.add(("message",), "BASE_TYPE_REQUIRED", "This field is required")
        return
    check_message(errors, message, ("message",))
    errors.max_items(("applied_tags",), payload.get("applied_tags"), 5)


def _check_command_name(errors: FormErrors, path: _Path, name: Any, *, chat_input: bool) -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= COMMAND_NAME_MAX:
        errors.add(
            (*path, "name"),
            "BASE_TYPE_BAD_LENGTH",
            f"Must be between 1 and {COMMAND_NAME_MAX} in length.",
        )
    elif chat_input and (not _CHAT_INPUT_NAME.match(name) or name != name.lower()):
        errors.add(
            (*path, "name"),
            "APPLICATION_COMMAND_INVALID_NAME",
            f"Command name is invalid ({name!r}): lower case, no spaces.",
        )


def _check_options(errors: FormErrors, options: list[Any], path: _Path) -> None:
    errors.max_items(path, options, COMMAND_OPTIONS_MAX)
    seen_optional = False
    names: set[str] = set()
    for i, option in enumerate(options):
        at = (*path, i)
        _check_command_name(errors, at, option.get("name"), chat_input=True)
        errors.length_between(
            (*at, "description"), option.get("description"), 1, COMMAND_DESCRIPTION_MAX
        )
        if option.get("name") in names:
            errors.add(
                (*at, "name"),
                "APPLICATION_COMMAND_OPTION_NAME_ALREADY_EXISTS",
                "Option names must be unique.",
            )
        names.add(option.get("name"))
        kind = option.get("type")
        if kind in (1, 2):
            _check_options(errors, _as_list(option.get("options")), (*at, "options"))
            continue
        if option.get("required"):
            if seen_optional:
                errors.add(
                    (*at, "required"),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options.",
                )
        else:
            seen_optional = True
        choices = _as_list(option.get("choices"))
        if choices and option.get("autocomplete"):
            errors.add(
                (*at, "autocomplete"),
                "APPLICATION_COMMAND_OPTION_AUTOCOMPLETE_CHOICES",
                "Autocomplete cannot be set with choices.",
            )
        errors.max_items((*at, "choices"), choices, AUTOCOMPLETE_MAX_CHOICES)
        for j, choice in enumerate(choices):
            errors.length_between(
                (*at, "choices", j, "name"), choice.get("name"), 1, CHOICE_NAME_MAX
            )
            errors.max_len((*at, "choices", j, "value"), choice.get("value"), CHOICE_VALUE_MAX)


def _combined_length(node: Mapping[str, Any]) -> int:
    total = len(str(node.get("name") or "")) + len(str(node.get("description") or ""))
    for choice in _as_list(node.get("choices")):
        total += len(str(choice.get("name") or "")) + len(str(choice.get("value") or ""))
    return total + sum(_combined_length(o) for o in _as_list(node.get("options")))


def check_commands(errors: FormErrors, commands: Sequence[Mapping[str, Any]]) -> None:
    """A bulk overwrite (``PUT .../commands``) body."""
    counts = {1: 0, 2: 0, 3: 0}
    names: set[tuple[int, str]] = set()
    for i, command in enumerate(commands):
        kind = command.get("type", 1)
        counts[kind] = counts.get(kind, 0) + 1
        _check_command_name(errors, (i,), command.get("name"), chat_input=kind == 1)
        key = (kind, command.get("name"))
        if key in names:
            errors.add(
                (i, "name"),
                "APPLICATION_COMMANDS_DUPLICATE_NAME",
                f"Application command names must be unique ({command.get('name')!r}).",
            )
        names.add(key)
        if kind == 1:
            errors.length_between(
                (i, "description"), command.get("description"), 1, COMMAND_DESCRIPTION_MAX
            )
            _check_options(errors, _as_list(command.get("options")), (i, "options"))
            combined = _combined_length(command)
            if combined > COMMAND_COMBINED_MAX:
                errors.add(
                    (i,),
                    "APPLICATION_COMMAND_TOO_LARGE",
                    f"Command is too large: {combined} characters of names, descriptions and"
                    f" choices, at most {COMMAND_COMBINED_MAX}.",
                )
        elif command.get("description"):
            errors.add(
                (i, "description"),
                "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION",
                "Context menu commands cannot have a description.",
            )
    for kind, limit in ((1, 100), (2, 15), (3, 15)):
        if counts.get(kind, 0) > limit:
            errors.add(
                (),
                "APPLICATION_COMMANDS_TOO_MANY",
                f"At most {limit} commands of type {kind} ({counts[kind]} sent).",
            )
