"""The rule files' schema: YAML in, validated :class:`Rule` values out.

Rule files (``knowledge/triage/rules/*.yaml``) hold a top-level ``rules`` list. Each
rule has an ``id``, a ``severity`` (``error``, ``warning`` or ``info``), a
``message`` (a ``str.format`` string, or a mapping of variants to strings for coded
checks) and what justifies it in the wiki: ``see`` (candidate ``path#anchor``
references, the first one present wins) and/or ``topic`` (words a section must
contain; the best such section of the loaded wiki is linked). A rule is one of:

- **generic**: an ``if`` mapping of shapes, all of which must hold; no code needed::

      if:
        env_empty: NCCL_GRAPH_FILE              # set, to nothing
        env_set: NCCL_DEBUG                     # set, to anything
        env_unset: NCCL_IB_DISABLE              # not set (only when a launch was given)
        env_equals: {name: NCCL_P2P_LEVEL, value: [4, LOC]}
        env_range: {name: NCCL_NTHREADS, min: 64, max: 512}
        flag_present: load-format               # engine flag (names without dashes)
        flag_absent: trust-remote-code
        flag_equals: {name: load-format, value: fastsafetensors}
        flag_range: {name: [gpu-memory-utilization], max: 0.95}
        engine: vllm                            # or a list
        launch_kind: [docker-run, compose]

  Names may be lists (any of them). ``env_*`` shapes see the launch's environment;
  ``flag_*`` shapes the engine flags. Values compare case-insensitively. The message
  may use ``{name}``, ``{value}``, ``{min}`` and ``{max}`` of the first shape (in the
  file's order) that names them.

- **coded**: ``check: <name>`` runs one of the functions in
  :data:`~knowledge.triage.rules.checks.CHECKS` with the rule's ``params``. With
  ``params: {justify: checklist}`` a rule links the wiki's onboarding checklist.

The schema is pydantic models; a file that breaks it raises :class:`RuleError`
naming the file, the rule and the key.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from knowledge.safe_yaml import load_yaml
from knowledge.triage.rules.checks import CHECKS

__all__ = [
    "SEVERITIES",
    "SHAPES",
    "Condition",
    "Rule",
    "RuleError",
    "format_message",
    "parse_rules",
    "shown",
]

SEVERITIES: Final = ("error", "warning", "info")
ENV_SHAPES: Final = ("env_empty", "env_set", "env_unset", "env_equals", "env_range")
FLAG_SHAPES: Final = ("flag_present", "flag_absent", "flag_equals", "flag_range")
OTHER_SHAPES: Final = ("engine", "launch_kind")
SHAPES: Final = ENV_SHAPES + FLAG_SHAPES + OTHER_SHAPES
#: Longest user value quoted in a message or as evidence.
MAX_VALUE_CHARS: Final = 120
_ID_RE: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,80}")


class RuleError(ValueError):
    """A rule file that cannot be used; the message names the file, the rule and the key."""


# ------------------------------------------------------------ the validated rule


@dataclass(frozen=True, slots=True)
class Condition:
    shape: str
    names: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str
    message: str | Mapping[str, str]
    see: tuple[str, ...] = ()
    topic: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    check: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def text(self, variant: str | None, values: Mapping[str, object]) -> str:
        template = self.message
        if isinstance(template, Mapping):
            template = template.get(variant or "default") or next(iter(template.values()))
        return format_message(template, values)


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def format_message(template: str, values: Mapping[str, object]) -> str:
    """``template`` filled from ``values`` (each cut by :func:`shown`); unknown fields stay."""
    filled = _Missing({k: shown(v) for k, v in values.items()})
    try:
        return string.Formatter().vformat(template, (), filled)
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


def shown(value: object) -> str:
    """A value as quoted in a message or as evidence: at most ``MAX_VALUE_CHARS``."""
    if isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    else:
        text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


# ------------------------------------------------------------ the schema


def _one_or_many(value: object) -> object:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise PydanticCustomError("names", "expected a name or a list of them")
    return value


def _names(value: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(v.strip() for v in value)
    if not names or not all(names):
        raise PydanticCustomError("names", "expected a name or a list of them")
    return names


def _scalars(value: object) -> object:
    items = value if isinstance(value, list) else [value]
    if value is None or not items:
        raise PydanticCustomError("values", "'value' is required")
    if not all(isinstance(v, (str, int, float, bool)) for v in items):
        raise PydanticCustomError("values", "expected a value or a list of values")
    return [str(v).casefold() for v in items]


def _words(value: object) -> object:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(v) if isinstance(v, (int, float)) else v for v in items]


def _rule_id(value: str) -> str:
    if not _ID_RE.fullmatch(value):
        raise PydanticCustomError("rule_id", "lower-case letters, digits, '.', '_' or '-' only")
    return value


def _message(value: object) -> object:
    if isinstance(value, str) and value.strip():
        return value
    if (
        isinstance(value, Mapping)
        and value
        and all(isinstance(v, str) and v.strip() for v in value.values())
    ):
        return {str(k): v for k, v in value.items()}
    raise PydanticCustomError("message", "a text, or a mapping of variant names to texts")


def _check_name(value: str | None) -> str | None:
    if value is not None and value not in CHECKS:
        known = ", ".join(sorted(CHECKS))
        raise PydanticCustomError(
            "check", "unknown check '{check}' (known: {known})", {"check": value, "known": known}
        )
    return value


Names = Annotated[tuple[str, ...], BeforeValidator(_one_or_many), AfterValidator(_names)]
Values = Annotated[tuple[str, ...], BeforeValidator(_scalars)]
Number = Annotated[float, Strict()]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _NameArg(_Spec):
    name: Names


def _name_arg(value: object) -> object:
    return value if isinstance(value, Mapping) else {"name": value}


NameArg = Annotated[_NameArg, BeforeValidator(_name_arg)]


class EqualsArg(_Spec):
    name: Names
    value: Values


class RangeArg(_Spec):
    name: Names
    min: Number | None = None
    max: Number | None = None

    @model_validator(mode="after")
    def _bounded(self) -> RangeArg:
        if self.min is None and self.max is None:
            raise PydanticCustomError("range", "give 'min', 'max' or both")
        return self


class Conditions(_Spec):
    """The ``if`` mapping of a generic rule: one optional field per shape."""

    env_empty: NameArg | None = None
    env_set: NameArg | None = None
    env_unset: NameArg | None = None
    env_equals: EqualsArg | None = None
    env_range: RangeArg | None = None
    flag_present: NameArg | None = None
    flag_absent: NameArg | None = None
    flag_equals: EqualsArg | None = None
    flag_range: RangeArg | None = None
    engine: Names | None = None
    launch_kind: Names | None = None
    #: Shapes in the file's order (message values come from the first that names them).
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _shapes(cls, data: Any, handler: Any) -> Conditions:
        if not isinstance(data, Mapping) or not data:
            raise PydanticCustomError("shapes", "'if' must be a mapping of shapes")
        for shape in data:
            if shape not in SHAPES:
                raise PydanticCustomError(
                    "shape",
                    "unknown shape '{shape}' (known: {known})",
                    {"shape": str(shape), "known": ", ".join(SHAPES)},
                )
        model = handler(data)
        model._order = tuple(s for s in data if getattr(model, s) is not None)
        if all(s in OTHER_SHAPES for s in model._order):
            raise PydanticCustomError("shapes", "'if' needs at least one env_* or flag_* shape")
        return model

    def conditions(self) -> tuple[Condition, ...]:
        out = []
        for shape in self._order:
            arg = getattr(self, shape)
            if isinstance(arg, tuple):  # engine, launch_kind
                out.append(Condition(shape, values=tuple(v.casefold() for v in arg)))
            elif isinstance(arg, EqualsArg):
                out.append(Condition(shape, arg.name, values=arg.value))
            elif isinstance(arg, RangeArg):
                out.append(Condition(shape, arg.name, min=arg.min, max=arg.max))
            else:
                out.append(Condition(shape, arg.name))
        return tuple(out)


class RuleSpec(_Spec):
    """One entry of a rule file's ``rules`` list."""

    id: Annotated[str, AfterValidator(_rule_id)]
    severity: Literal["error", "warning", "info"]
    message: Annotated[str | dict[str, str], BeforeValidator(_message)]
    see: Annotated[tuple[str, ...], BeforeValidator(_one_or_many)] = ()
    topic: Annotated[tuple[str, ...], BeforeValidator(_words)] = ()
    conditions: Conditions | None = Field(default=None, alias="if")
    check: Annotated[str | None, AfterValidator(_check_name)] = None
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _no_null_params(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("params", ...) is None:
            return {**data, "params": {}}
        return data

    @model_validator(mode="after")
    def _generic_or_coded(self) -> RuleSpec:
        if (self.check is None) == (self.conditions is None):
            raise PydanticCustomError(
                "kind", "give exactly one of 'if' (generic) or 'check' (coded)"
            )
        return self

    def rule(self, source: str) -> Rule:
        return Rule(
            id=self.id,
            severity=self.severity,
            message=self.message,
            see=self.see,
            topic=self.topic,
            conditions=self.conditions.conditions() if self.conditions else (),
            check=self.check,
            params=dict(self.params),
            source=source,
        )


# ------------------------------------------------------------ reading files


def _problem(error: Mapping[str, Any]) -> str:
    loc = ".".join(str(part) for part in error.get("loc", ()))
    return f"'{loc}': {error['msg']}" if loc else str(error["msg"])


def _parse_file(name: str, text: str) -> list[Rule]:
    try:
        data = load_yaml(text)  # aliases and sizes capped, as every YAML a user writes
    except yaml.YAMLError as exc:
        raise RuleError(f"{name}: not valid YAML ({exc})") from None
    items = data.get("rules") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise RuleError(f"{name}: expected a top-level 'rules' list")
    rules = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise RuleError(f"{name}: rule #{index + 1}: a rule must be a mapping")
        try:
            spec = RuleSpec.model_validate(item)
        except ValidationError as exc:
            rule_id = item.get("id")
            where = f"rule {rule_id}" if isinstance(rule_id, str) else f"rule #{index + 1}"
            problems = "; ".join(_problem(e) for e in exc.errors(include_url=False)[:5])
            raise RuleError(f"{name}: {where}: {problems}") from None
        rules.append(spec.rule(name))
    return rules


def parse_rules(files: Iterable[tuple[str, str]]) -> tuple[Rule, ...]:
    """Every rule of ``(file name, text)`` pairs, in order; ids are unique across files."""
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for name, text in files:
        for rule in _parse_file(name, text):
            if rule.id in seen:
                raise RuleError(f"{name}: rule id {rule.id!r} already used in {seen[rule.id]}")
            seen[rule.id] = name
            rules.append(rule)
    return tuple(rules)
