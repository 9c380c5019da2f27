"""Checks of a help request's launch settings against rules kept as data and the wiki.

Rules live in ``knowledge/rules/*.yaml``. Each has an ``id``, a ``severity``
(``error``, ``warning`` or ``info``), a ``message`` (a ``str.format`` string, or a
mapping of variants to strings for coded checks) and what justifies it in the wiki:
``see`` (candidate ``path#anchor`` references, the first one present wins) and/or
``topic`` (words a section must contain; the best such section of the loaded wiki
is linked). A rule is one of:

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
  may use ``{name}``, ``{value}``, ``{min}`` and ``{max}`` of the first shape that
  names them.

- **coded**: ``check: <name>`` runs one of the functions in ``CHECKS`` with the
  rule's ``params``. These compare the request with the wiki itself (the family's
  current runbook, the onboarding checklist) and may link the exact runbook section
  that justifies the finding instead of the rule's ``see``/``topic``. With
  ``params: {justify: checklist}`` a rule links the wiki's onboarding checklist.

Rules never see raw secrets: the request is redacted before it is parsed.
"""

from __future__ import annotations

import logging
import math
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, Final

import yaml

from knowledge.launch import ImageRef, Launch, Parallelism, hf_cache_repo, parse_image
from knowledge.triage.onboarding import Completeness
from knowledge.wiki import Catalogue, Family, Page, Runbook, Section, Wiki, status_weight

__all__ = [
    "CHECKS",
    "SEVERITIES",
    "BoundRules",
    "Condition",
    "FamilyInfo",
    "Finding",
    "Rule",
    "RuleError",
    "RuleHit",
    "RuleSet",
    "Settings",
    "SpecLimit",
    "Stated",
    "Subject",
    "compare_image_tags",
    "find_pinned_values",
    "launch_settings",
    "parse_stated",
    "stated_settings",
    "unstable_limits",
]

log = logging.getLogger(__name__)

SEVERITIES: Final = ("error", "warning", "info")
#: Longest user value quoted in a message or as evidence.
MAX_VALUE_CHARS: Final = 120
#: Most findings one rule may produce for one request.
MAX_HITS_PER_RULE: Final = 8

ENV_SHAPES: Final = ("env_empty", "env_set", "env_unset", "env_equals", "env_range")
FLAG_SHAPES: Final = ("flag_present", "flag_absent", "flag_equals", "flag_range")
OTHER_SHAPES: Final = ("engine", "launch_kind")
SHAPES: Final = ENV_SHAPES + FLAG_SHAPES + OTHER_SHAPES


class RuleError(ValueError):
    """A rule file that cannot be used; the message names the file and the rule."""


# --------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a helper would point out about the request."""

    id: str
    severity: str
    message: str
    #: ``path#anchor`` of the wiki section that justifies it, or None.
    page: str | None = None
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleHit:
    """What a check found: values for the message, evidence, optional variant and page."""

    values: Mapping[str, object] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    #: Key into a rule's message mapping; None uses the plain message / "default".
    variant: str | None = None
    #: A ``path#anchor`` that justifies this hit better than the rule's own link.
    page: str | None = None
    #: Appended to the rule id (``checklist.missing`` + ``.logs``).
    suffix: str | None = None


# --------------------------------------------------------------------- subject


@dataclass(frozen=True, slots=True, kw_only=True)
class Stated(Parallelism):
    """Settings and GPU layout as the user wrote them in the request's fields."""

    gpu_count: int | None = None
    gpu_ids: tuple[int, ...] | None = None

    @property
    def empty(self) -> bool:
        return all(getattr(self, name) is None for name in _STATED_FIELDS)


#: Parallel settings, then the GPU layout.
_STATED_FIELDS: Final = tuple(f.name for f in fields(Stated))


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings(Parallelism):
    """Effective settings: from the launch where it says, else as stated."""

    gpu_count: int | None = None
    gpu_ids: tuple[int, ...] | None = None
    #: field -> "launch" or "stated"
    sources: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def merge(cls, layers: Sequence[tuple[str, Mapping[str, object]]]) -> Settings:
        """First value of each field over ``(source, values)`` layers, best source first."""
        values: dict[str, object] = {}
        sources: dict[str, str] = {}
        for source, layer in layers:
            for name in _STATED_FIELDS:
                value = layer.get(name)
                if name not in values and value is not None:
                    values[name], sources[name] = value, source
        return cls(**values, sources=sources)  # type: ignore[arg-type]


def launch_settings(launch: Launch) -> dict[str, object]:
    """The settings layer of a parsed launch."""
    return {
        **launch.parallel_settings(),
        "gpu_count": launch.gpu_count,
        "gpu_ids": launch.gpus if isinstance(launch.gpus, tuple) else None,
    }


def stated_settings(stated: Stated) -> dict[str, object]:
    return {name: getattr(stated, name) for name in _STATED_FIELDS}


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    """The model family a request is about, and how we know."""

    family: Family
    runbook: Runbook
    #: "page", "model", "image" or "name".
    how: str
    #: The wiki page the user named, when it belongs to this family.
    named_page: str | None = None


@dataclass(frozen=True, slots=True)
class Subject:
    """Everything a rule may look at. All text in it is already redacted."""

    wiki: Wiki
    launch: Launch | None = None
    #: The redacted launch command as pasted (for evidence and fallbacks).
    command: str = ""
    stated: Stated = field(default_factory=Stated)
    settings: Settings = field(default_factory=Settings)
    image: ImageRef | None = None
    #: The image the request names in its own field, when it gives one.
    stated_image: ImageRef | None = None
    family: FamilyInfo | None = None
    catalogue: Catalogue | None = None
    completeness: Completeness | None = None
    #: Settings the log reports (``tp``, ``dcp``, ``spec_tokens`` ...), and its model.
    log_settings: Mapping[str, object] = field(default_factory=dict)
    log_model: str | None = None


# --------------------------------------------------------------------- rules


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
        return _format(template, values)


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _format(template: str, values: Mapping[str, object]) -> str:
    shown = _Missing({k: _show(v) for k, v in values.items()})
    try:
        return string.Formatter().vformat(template, (), shown)
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


def _show(value: object) -> str:
    if isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    else:
        text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _names(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(v.strip() for v in value)
    raise RuleError(f"{where}: expected a name or a list of names, got {value!r}")


def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuleError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _condition(shape: str, arg: object, where: str) -> Condition:
    if shape not in SHAPES:
        raise RuleError(f"{where}: unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    if shape in ("env_empty", "env_set", "env_unset", "flag_present", "flag_absent"):
        if isinstance(arg, Mapping):
            arg = arg.get("name")
        return Condition(shape, _names(arg, f"{where}.{shape}"))
    if shape in ("engine", "launch_kind"):
        return Condition(shape, values=tuple(v.casefold() for v in _names(arg, where)))
    if not isinstance(arg, Mapping) or "name" not in arg:
        raise RuleError(f"{where}.{shape}: expected a mapping with a 'name'")
    names = _names(arg["name"], f"{where}.{shape}.name")
    if shape.endswith("_equals"):
        raw = arg.get("value")
        items = raw if isinstance(raw, list) else [raw]
        if raw is None or not items:
            raise RuleError(f"{where}.{shape}: 'value' is required")
        return Condition(shape, names, values=tuple(str(v).casefold() for v in items))
    low = _number(arg.get("min"), f"{where}.{shape}.min")
    high = _number(arg.get("max"), f"{where}.{shape}.max")
    if low is None and high is None:
        raise RuleError(f"{where}.{shape}: give 'min', 'max' or both")
    return Condition(shape, names, min=low, max=high)


def _rule(data: object, source: str, index: int) -> Rule:
    where = f"{source}: rule #{index + 1}"
    if not isinstance(data, Mapping):
        raise RuleError(f"{where}: a rule must be a mapping")
    rule_id = data.get("id")
    if not isinstance(rule_id, str) or not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,80}", rule_id):
        raise RuleError(f"{where}: 'id' must be lower-case letters, digits, '.', '_' or '-'")
    where = f"{source}: rule {rule_id}"
    severity = data.get("severity")
    if severity not in SEVERITIES:
        raise RuleError(f"{where}: 'severity' must be one of {', '.join(SEVERITIES)}")
    message = data.get("message")
    if isinstance(message, Mapping):
        if not message or not all(isinstance(v, str) and v for v in message.values()):
            raise RuleError(f"{where}: every 'message' variant must be text")
        message = {str(k): str(v) for k, v in message.items()}
    elif not isinstance(message, str) or not message.strip():
        raise RuleError(f"{where}: 'message' is required")
    see = data.get("see", [])
    see_refs = (see,) if isinstance(see, str) else tuple(see or ())
    if not all(isinstance(s, str) for s in see_refs):
        raise RuleError(f"{where}: 'see' must be a reference or a list of them")
    topic = data.get("topic", [])
    topic_words = (topic,) if isinstance(topic, str) else tuple(str(t) for t in topic or ())
    check = data.get("check")
    condition_data = data.get("if")
    if (check is None) == (condition_data is None):
        raise RuleError(f"{where}: give exactly one of 'if' (generic) or 'check' (coded)")
    conditions: tuple[Condition, ...] = ()
    if condition_data is not None:
        if not isinstance(condition_data, Mapping) or not condition_data:
            raise RuleError(f"{where}: 'if' must be a mapping of shapes")
        conditions = tuple(
            _condition(str(shape), arg, where) for shape, arg in condition_data.items()
        )
        if all(c.shape in OTHER_SHAPES for c in conditions):
            raise RuleError(f"{where}: 'if' needs at least one env_* or flag_* shape")
    elif check not in CHECKS:
        raise RuleError(f"{where}: unknown check {check!r} (known: {', '.join(sorted(CHECKS))})")
    params = data.get("params") or {}
    if not isinstance(params, Mapping):
        raise RuleError(f"{where}: 'params' must be a mapping")
    return Rule(
        id=rule_id,
        severity=severity,
        message=message,
        see=see_refs,
        topic=topic_words,
        conditions=conditions,
        check=check,
        params=dict(params),
        source=source,
    )


@dataclass(frozen=True, slots=True)
class RuleSet:
    rules: tuple[Rule, ...]

    @classmethod
    def load(cls, directory: Path | None = None) -> RuleSet:
        """Every ``*.yaml`` in ``directory`` (default: the bundled ``knowledge/rules``)."""
        files: list[tuple[str, str]] = []
        if directory is None:
            folder = resources.files("knowledge.triage").joinpath("rules")
            for item in sorted(folder.iterdir(), key=lambda p: p.name):
                if item.name.endswith(".yaml"):
                    files.append((item.name, item.read_text(encoding="utf-8")))
        else:
            for path in sorted(Path(directory).glob("*.yaml")):
                files.append((path.name, path.read_text(encoding="utf-8")))
        return cls.from_texts(files)

    @classmethod
    def from_texts(cls, files: Iterable[tuple[str, str]]) -> RuleSet:
        rules: list[Rule] = []
        seen: dict[str, str] = {}
        for name, text in files:
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise RuleError(f"{name}: not valid YAML ({exc})") from None
            items = data.get("rules") if isinstance(data, Mapping) else None
            if not isinstance(items, list):
                raise RuleError(f"{name}: expected a top-level 'rules' list")
            for i, item in enumerate(items):
                rule = _rule(item, name, i)
                if rule.id in seen:
                    raise RuleError(f"{name}: rule id {rule.id!r} already used in {seen[rule.id]}")
                seen[rule.id] = name
                rules.append(rule)
        return cls(tuple(rules))

    def bind(self, wiki: Wiki, statuses: Mapping[str, str] | None = None) -> BoundRules:
        """Resolve every rule's justification against ``wiki`` once."""
        finder = _TopicFinder(wiki, statuses or {})
        pages = {rule.id: finder.resolve(rule.see, rule.topic) for rule in self.rules}
        return BoundRules(self.rules, pages)


@dataclass(frozen=True, slots=True)
class BoundRules:
    rules: tuple[Rule, ...]
    #: rule id -> ``path#anchor`` justifying it in the bound wiki, or None.
    pages: Mapping[str, str | None]

    def evaluate(self, subject: Subject) -> list[Finding]:
        """Every finding for ``subject``, errors first. A failing rule is logged, not raised."""
        findings: list[Finding] = []
        for rule in self.rules:
            try:
                hits = _run(rule, subject)
            except Exception:  # one broken check must not take the triage down
                log.exception("rule %s failed", rule.id)
                continue
            for hit in hits[:MAX_HITS_PER_RULE]:
                findings.append(
                    Finding(
                        id=f"{rule.id}.{hit.suffix}" if hit.suffix else rule.id,
                        severity=rule.severity,
                        message=rule.text(hit.variant, hit.values),
                        page=hit.page or self._page(rule, subject),
                        evidence=tuple(_show(e) for e in hit.evidence),
                    )
                )
        order = {s: i for i, s in enumerate(SEVERITIES)}
        findings.sort(key=lambda f: order.get(f.severity, len(order)))
        return findings

    def _page(self, rule: Rule, subject: Subject) -> str | None:
        if rule.params.get("justify") == "checklist" and subject.completeness is not None:
            return subject.completeness.source or self.pages.get(rule.id)
        return self.pages.get(rule.id)


def _run(rule: Rule, subject: Subject) -> list[RuleHit]:
    if rule.check is not None:
        return list(CHECKS[rule.check](subject, rule.params))
    values: dict[str, object] = {}
    evidence: list[str] = []
    for condition in rule.conditions:
        result = _holds(condition, subject)
        if result is None:
            return []
        for key, value in result[0].items():
            values.setdefault(key, value)
        evidence.extend(result[1])
    return [RuleHit(values=values, evidence=tuple(evidence))]


# ------------------------------------------------------------ generic shapes


def _env_hit(env: Mapping[str, str], names: Sequence[str]) -> tuple[str, str] | None:
    for name in names:
        if name in env:
            return name, env[name]
    folded = {k.casefold(): k for k in env}
    for name in names:
        key = folded.get(name.casefold())
        if key is not None:
            return key, env[key]
    return None


def _flag_hit(
    flags: Mapping[str, str | bool], names: Sequence[str]
) -> tuple[str, str | bool] | None:
    for name in names:
        key = name.lstrip("-")
        head, dot, tail = key.partition(".")
        key = head.replace("_", "-") + dot + tail
        if key in flags:
            return key, flags[key]
    return None


def _as_number(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(str(value).strip().strip("\"'"))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _out_of_range(number: float, condition: Condition) -> bool:
    return (condition.min is not None and number < condition.min) or (
        condition.max is not None and number > condition.max
    )


def _holds(c: Condition, s: Subject) -> tuple[dict[str, object], list[str]] | None:
    """(values, evidence) when the condition holds for the subject, else None."""
    launch = s.launch
    if c.shape == "engine":
        engine = (launch.engine or "") if launch else ""
        return ({"engine": engine}, []) if engine.casefold() in c.values else None
    if c.shape == "launch_kind":
        kind = launch.kind if launch else ""
        return ({"kind": kind}, []) if kind.casefold() in c.values else None
    if launch is None:
        return None
    if c.shape in ENV_SHAPES:
        hit = _env_hit(launch.env, c.names)
        if c.shape == "env_unset":
            return ({"name": c.names[0]}, []) if hit is None else None
        if hit is None:
            return None
        name, value = hit
        evidence = [f"{name}={value!r}" if value == "" else f"{name}={value}"]
        base: dict[str, object] = {"name": name, "value": value}
        if c.shape == "env_empty":
            return (base, evidence) if value.strip().strip("\"'") == "" else None
        if c.shape == "env_set":
            return base, evidence
        if c.shape == "env_equals":
            return (base, evidence) if value.strip().casefold() in c.values else None
        number = _as_number(value)
        if number is None or not _out_of_range(number, c):
            return None
        return {**base, "min": c.min, "max": c.max}, evidence
    flag = _flag_hit(launch.flags, c.names)
    if c.shape == "flag_absent":
        return ({"name": c.names[0]}, []) if flag is None and launch.command else None
    if flag is None:
        return None
    name, value = flag
    evidence = [f"--{name}" if value is True else f"--{name} {value}"]
    base = {"name": name, "value": "" if value is True else value}
    if c.shape == "flag_present":
        return base, evidence
    if c.shape == "flag_equals":
        text = "true" if value is True else str(value).strip().strip("\"'").casefold()
        return (base, evidence) if text in c.values else None
    number = _as_number(value)
    if number is None or not _out_of_range(number, c):
        return None
    return {**base, "min": c.min, "max": c.max}, evidence


# ------------------------------------------------------------ justification


#: Labelled paragraphs that make a section a statement about a problem and its fix.
_JUSTIFYING_LABELS: Final = ("error", "symptom", "symptoms", "cause", "fix", "workaround")
#: Justification points per unit of page-status weight above or below a neutral page.
_STATUS_POINTS: Final = 5.0


class _TopicFinder:
    """Finds the wiki section that best justifies a rule: by reference or by topic.

    A topic matches sections whose title or prose (not code: a justification is a
    statement, not a command) holds every topic word, case-insensitively, and that
    are about it: a topic word in the title, an Error/Cause/Fix paragraph, or a
    top-level page (the front page, the glossary). Otherwise the rule links nothing.
    """

    def __init__(self, wiki: Wiki, statuses: Mapping[str, str]) -> None:
        self.wiki = wiki
        self.statuses = statuses
        self._folded: list[tuple[Page, Section, str, str]] | None = None

    def resolve(self, see: Sequence[str], topic: Sequence[str]) -> str | None:
        for ref in see:
            path, _, anchor = ref.partition("#")
            page = self.wiki.pages.get(path)
            if page is not None and (not anchor or page.section(anchor) is not None):
                return f"{path}#{anchor}" if anchor else path
        if topic:
            return self.best(topic)
        return None

    def _sections(self) -> list[tuple[Page, Section, str, str]]:
        if self._folded is None:
            self._folded = [
                (page, section, section.title.casefold(), section.text.casefold())
                for page in self.wiki.pages.values()
                for section in page.sections
            ]
        return self._folded

    def best(self, topic: Sequence[str]) -> str | None:
        words = [w.casefold() for w in topic if w.strip()]
        if not words:
            return None
        best: tuple[float, str] | None = None
        for page, section, title, text in self._sections():
            if not all(w in title or w in text for w in words):
                continue
            in_title = sum(w in title for w in words)
            labelled = section.label(*_JUSTIFYING_LABELS) is not None
            top_level = "/" not in page.path
            if not (in_title or labelled or top_level):
                continue  # a passing mention deep in some page justifies nothing
            score = 3.0 * in_title
            if labelled:
                score += 2.0
            # +1 for a current page down to -1.5 for an archived one
            score += _STATUS_POINTS * (status_weight(self.statuses.get(page.path)) - 1.0)
            if top_level:
                score += 1.0  # the front page and the wiki's own guides
            score -= min(len(text), 20_000) / 20_000  # a focused section beats a long one
            if best is None or score > best[0]:
                best = (score, f"{page.path}#{section.anchor}" if section.anchor else page.path)
        return best[1] if best else None


# ------------------------------------------------------------ stated settings

_STATED_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])(TP|DCP|DP|PP|MTP|DSpark|EAGLE3?)(?:[ \t]*(?:=|:|is|of)?[ \t]*)"
    r"(\d{1,3}|off|none|on)(?![0-9])",
    re.IGNORECASE,
)
_LONG_NAMES: Final = re.compile(
    r"(tensor|decode[- ]context|data|pipeline)[- _]parallel(?:[- _]size)?"
    r"[ \t]*[=: ]?[ \t]*(\d{1,3})",
    re.IGNORECASE,
)
_SPEC_TOKENS_RE: Final = re.compile(
    r"num[_-]speculative[_-]tokens\W{0,4}(\d{1,3})"
    r"|(\d{1,3})[ \t]+(?:draft|speculative)[ \t]+tokens",
    re.IGNORECASE,
)
_GPU_COUNT_RE: Final = re.compile(
    r"(?<![0-9.])(\d{1,3})[ \t]*(?:x|×|\*)(?![0-9])|(?<![0-9.])(\d{1,3})[ \t]*(?:GPUs?|cards?)\b",
    re.IGNORECASE,
)
_GPU_LIST_RE: Final = re.compile(r"(?<![0-9.])(\d{1,3}(?:[ \t]*[,-][ \t]*\d{1,3})+)(?![0-9.])")
_MAX_STATED_CHARS: Final = 4000


def _id_list(text: str) -> tuple[int, ...] | None:
    ids: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            low, _, high = part.partition("-")
            if not (low.strip().isdigit() and high.strip().isdigit()):
                return None
            a, b = int(low), int(high)
            if b < a or b - a > 64:
                return None
            ids.extend(range(a, b + 1))
        elif part.isdigit():
            ids.append(int(part))
        else:
            return None
    return tuple(ids) if 1 < len(ids) <= 128 else None


def parse_stated(settings: str, gpus: str) -> Stated:
    """Read ``TP8 DCP4 MTP3`` style settings and ``8x``/``0-7``/``0,1`` GPU layouts."""
    settings = settings[:_MAX_STATED_CHARS]
    gpus = gpus[:_MAX_STATED_CHARS]
    found: dict[str, object] = {}
    for text in (settings, gpus):
        for m in _LONG_NAMES.finditer(text):
            key = {"tensor": "tp", "data": "dp", "pipeline": "pp"}.get(m.group(1).lower(), "dcp")
            found.setdefault(key, int(m.group(2)))
        for m in _STATED_RE.finditer(text):
            name, raw = m.group(1).lower(), m.group(2).lower()
            number = int(raw) if raw.isdigit() else (0 if raw in ("off", "none") else None)
            if name in ("tp", "dcp", "dp", "pp"):
                if number is not None:
                    found.setdefault(name, number)
            elif number is not None:
                found.setdefault("spec_method", "mtp" if name == "mtp" else name)
                found.setdefault("spec_tokens", number)
        m = _SPEC_TOKENS_RE.search(text)
        if m:
            found.setdefault("spec_tokens", int(m.group(1) or m.group(2)))
    for m in _GPU_LIST_RE.finditer(gpus):
        ids = _id_list(m.group(1))
        if ids is not None:
            found["gpu_ids"] = ids
            found["gpu_count"] = len(ids)
            break
    if "gpu_count" not in found:
        m = _GPU_COUNT_RE.search(gpus) or _GPU_COUNT_RE.search(settings)
        if m:
            count = int(m.group(1) or m.group(2))
            if 0 < count <= 128:
                found["gpu_count"] = count
    return Stated(**found)  # type: ignore[arg-type]


# ------------------------------------------------------------ image tags

_DATE_RE: Final = re.compile(
    r"(?<![0-9])(20[0-9]{2})(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])(?![0-9])"
)
_V_RE: Final = re.compile(r"(?:^|[-_.])v(\d{1,4}(?:\.\d{1,4}){0,3})(?=$|[-_.+])", re.IGNORECASE)
_SEMVER_RE: Final = re.compile(r"^v?(\d{1,4}(?:\.\d{1,4}){1,3})(?=$|[-_.+])", re.IGNORECASE)


def _tag_stamp(tag: str) -> tuple[int | None, tuple[int, ...] | None]:
    dates = _DATE_RE.findall(tag)
    date = int("".join(dates[-1])) if dates else None
    m = _SEMVER_RE.match(tag) or _V_RE.search(tag)
    version = tuple(int(p) for p in m.group(1).split(".")) if m else None
    return date, version


def compare_image_tags(mine: str, theirs: str) -> int | None:
    """-1 if tag ``mine`` is older than ``theirs``, 1 if newer, 0 if equal in age, None if
    they cannot be compared. Date stamps (``20260722``) decide first, then version
    numbers (``v3`` < ``v4``, ``0.11.2`` < ``0.12.0``)."""
    if mine == theirs:
        return 0
    my_date, my_version = _tag_stamp(mine)
    their_date, their_version = _tag_stamp(theirs)
    if my_date is not None and their_date is not None:
        return (my_date > their_date) - (my_date < their_date)
    if my_version is not None and their_version is not None:
        return (my_version > their_version) - (my_version < their_version)
    return None


def _same_repository(a: ImageRef, b: ImageRef) -> bool:
    def registry(ref: ImageRef) -> str:
        return (ref.registry or "docker.io").casefold()

    return a.repository.casefold() == b.repository.casefold() and registry(a) == registry(b)


# ------------------------------------------------------------ runbook text


@dataclass(frozen=True, slots=True)
class SpecLimit:
    """A speculative setting a runbook calls unstable: ``MTP > 3`` and where it says so."""

    method: str | None
    op: str
    tokens: int
    anchor: str
    statement: str

    def hit(self, method: str | None, tokens: int) -> bool:
        if self.method is not None:
            current = (method or "mtp").casefold()
            if self.method == "mtp":
                if "mtp" not in current and "nextn" not in current:
                    return False
            elif self.method not in current:
                return False
        if self.op == ">":
            return tokens > self.tokens
        if self.op == ">=":
            return tokens >= self.tokens
        return tokens == self.tokens


_UNSTABLE_RE: Final = re.compile(
    r"\b(unstable|instability|not stable|crash(?:es|ed|ing)?|illegal memory|segfaults?|"
    r"breaks|fails? under|hangs under|corrupt(?:s|ed)?)\b",
    re.IGNORECASE,
)
_NOT_UNSTABLE_RE: Final = re.compile(r"\b(mostly stable|no crash|without crash|never crash)", re.I)
_SPEC_NAME: Final = (
    r"(MTP|num_speculative_tokens|speculative[ _]tokens|draft[ _]tokens|DSpark|EAGLE3?)"
)
_LIMIT_RES: Final = (
    re.compile(_SPEC_NAME + r"[ \t]*(>=|≥|>|==|=)[ \t]*(\d{1,3})(?![0-9])", re.IGNORECASE),
    re.compile(r"(?<![A-Za-z])(MTP|DSpark)(\d{1,3})(?![0-9])", re.IGNORECASE),
)
_METHOD_RE: Final = re.compile(r"(?<![A-Za-z])(MTP|DSpark|EAGLE3?)(?![A-Za-z])", re.IGNORECASE)
_OR_MORE_RE: Final = re.compile(
    r"(\d{1,3})[ \t]+or[ \t]+more[ \t]+(draft|speculative|spec|MTP)[ \t]+tokens"
    r"|more[ \t]+than[ \t]+(\d{1,3})[ \t]+(draft|speculative|spec|MTP)[ \t]+tokens",
    re.IGNORECASE,
)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(])|\n")


def _spec_method_of(name: str) -> str | None:
    key = name.casefold()
    if key == "mtp":
        return "mtp"
    if key == "dspark":
        return "dspark"
    if key.startswith("eagle"):
        return "eagle"
    return None


def unstable_limits(page: Page) -> list[SpecLimit]:
    """Speculative settings the page itself calls unstable, from its own sentences and
    table rows (``MTP>3 ... unstable``, ``MTP5 crashes``, ``4 or more draft tokens``)."""
    limits: list[SpecLimit] = []
    seen: set[tuple[str | None, str, int]] = set()
    for section in page.sections:
        for statement in _SENTENCE_END.split(section.text):
            if not _UNSTABLE_RE.search(statement) or _NOT_UNSTABLE_RE.search(statement):
                continue
            named = _METHOD_RE.search(statement)  # "draft tokens" in an MTP row mean MTP's
            default = _spec_method_of(named.group(1)) if named else None
            for m in _LIMIT_RES[0].finditer(statement):
                op = {"≥": ">=", "==": "="}.get(m.group(2), m.group(2))
                _add_limit(
                    limits,
                    seen,
                    _spec_method_of(m.group(1)) or default,
                    op,
                    int(m.group(3)),
                    section,
                    statement,
                )
            for m in _LIMIT_RES[1].finditer(statement):
                _add_limit(
                    limits,
                    seen,
                    _spec_method_of(m.group(1)),
                    "=",
                    int(m.group(2)),
                    section,
                    statement,
                )
            for m in _OR_MORE_RE.finditer(statement):
                if m.group(1):
                    method = _spec_method_of(m.group(2)) or default
                    _add_limit(limits, seen, method, ">=", int(m.group(1)), section, statement)
                else:
                    method = _spec_method_of(m.group(4)) or default
                    _add_limit(limits, seen, method, ">", int(m.group(3)), section, statement)
    return limits


def _add_limit(
    limits: list[SpecLimit],
    seen: set[tuple[str | None, str, int]],
    method: str | None,
    op: str,
    tokens: int,
    section: Section,
    statement: str,
) -> None:
    if op == "=" and tokens == 0:
        return
    key = (method, op, tokens)
    if key in seen:
        return
    seen.add(key)
    text = " ".join(statement.split())
    limits.append(SpecLimit(method, op, tokens, section.anchor, text))


def find_pinned_values(text: str, setting: str) -> list[str]:
    """Values assigned to ``setting`` in ``text``: JSON keys (``"index_topk_pattern": "X"``),
    env names ending in it (``GLM52_INDEX_TOPK_PATTERN: ${GLM52_INDEX_TOPK_PATTERN:-X}``)."""
    if not setting or setting.casefold() not in text.casefold():
        return []
    pattern = re.compile(
        r"[A-Za-z0-9_]*" + re.escape(setting) + r"[\"'\\]*[ \t]*[:=][ \t]*[\"'\\]*"
        r"(?:\$\{[A-Za-z0-9_]{1,80}:?-)?([A-Za-z0-9_.+/-]{1,4096})",
        re.IGNORECASE,
    )
    values: list[str] = []
    for m in pattern.finditer(text):
        value = m.group(1)
        if not value.startswith("$") and value not in values:
            values.append(value)
    return values


# ------------------------------------------------------------ coded checks

Check = Callable[[Subject, Mapping[str, Any]], list[RuleHit]]


def _check_dcp_divides_tp(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    tp, dcp = s.settings.tp, s.settings.dcp
    if dcp is None or dcp <= 1 or tp is None:
        return []
    if tp > 0 and tp % dcp == 0:
        return []
    return [RuleHit({"tp": tp, "dcp": dcp}, (f"TP={tp}", f"DCP={dcp}"))]


def _needed_gpus(settings: Settings) -> int | None:
    if settings.tp is None:
        return None
    return settings.tp * (settings.pp or 1) * (settings.dp or 1)


def _check_gpu_count(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    """TP x PP x DP against the GPUs the launch (or the statement) makes visible."""
    needed = _needed_gpus(s.settings)
    available = s.settings.gpu_count
    if needed is None or available is None or needed <= 0:
        return []
    mode = params.get("when", "fewer")
    if (mode == "fewer" and available >= needed) or (mode == "more" and available <= needed):
        return []
    parts = [f"TP={s.settings.tp}"]
    if s.settings.pp:
        parts.append(f"PP={s.settings.pp}")
    if s.settings.dp:
        parts.append(f"DP={s.settings.dp}")
    if s.settings.dcp:
        parts.append(f"DCP={s.settings.dcp}")
    where = s.settings.sources.get("gpu_count", "")
    ids = s.settings.gpu_ids
    gpus = f"GPUs {','.join(map(str, ids))}" if ids else f"{available} GPUs"
    return [
        RuleHit(
            {"needed": needed, "available": available, "parallel": " ".join(parts)},
            (" ".join(parts), f"{gpus} ({where})" if where else gpus),
        )
    ]


def _docker_device_ids(launch: Launch) -> tuple[int, ...] | None:
    value = launch.runtime_flags.get("gpus")
    if not isinstance(value, str):
        return None
    text = value.strip().strip("\"'")
    if not text.startswith("device="):
        return None
    parts = [p.strip().strip("\"'") for p in text.removeprefix("device=").split(",")]
    if not parts or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _check_gpu_lists(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    """GPU lists that contradict each other or themselves."""
    hits: list[RuleHit] = []
    launch = s.launch
    if launch is not None:
        cvd = launch.env.get("CUDA_VISIBLE_DEVICES")
        cvd_ids = _id_list(cvd) if cvd else None
        if cvd and cvd.strip().isdigit():
            cvd_ids = (int(cvd.strip()),)
        if cvd_ids and len(set(cvd_ids)) != len(cvd_ids):
            hits.append(
                RuleHit({"list": cvd}, (f"CUDA_VISIBLE_DEVICES={cvd}",), variant="duplicate")
            )
        docker_ids = _docker_device_ids(launch)
        if cvd_ids and docker_ids and max(cvd_ids) >= len(docker_ids):
            hits.append(
                RuleHit(
                    {"list": cvd, "docker": ",".join(map(str, docker_ids))},
                    (
                        f"CUDA_VISIBLE_DEVICES={cvd}",
                        f"--gpus device={','.join(map(str, docker_ids))}",
                    ),
                    variant="container",
                )
            )
    stated = s.stated
    launched = launch.gpu_count if launch is not None else None
    if stated.gpu_count is not None and launched is not None and stated.gpu_count != launched:
        shown = launch.gpus if launch is not None and isinstance(launch.gpus, tuple) else None
        hits.append(
            RuleHit(
                {"stated": stated.gpu_count, "launched": launched},
                (
                    f"stated: {stated.gpu_count} GPUs",
                    f"launch: {','.join(map(str, shown))}" if shown else f"launch: {launched} GPUs",
                ),
                variant="stated",
            )
        )
    return hits


def _engine_seen(launch: Launch) -> bool:
    """True when the server command itself was read, so unset sizes are the defaults."""
    return any(
        word == "serve" or "launch_server" in word or "vllm.entrypoints" in word
        for word in launch.command[:4]
    )


def _check_stated_differs(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    launch = s.launch
    if launch is None:
        return []
    hits = []
    for name, label in (
        ("tp", "TP"),
        ("dcp", "DCP"),
        ("dp", "DP"),
        ("pp", "PP"),
        ("spec_tokens", "MTP/draft tokens"),
    ):
        said, ran = getattr(s.stated, name), getattr(launch, name)
        if ran is None and _engine_seen(launch):
            ran = 0 if name == "spec_tokens" else 1  # the engine's default
        if said is not None and ran is not None and said != ran:
            hits.append(
                RuleHit(
                    {"setting": label, "stated": said, "launched": ran},
                    (f"stated {label}={said}", f"launch {label}={ran}"),
                    suffix=name.replace("_", "-"),
                )
            )
    return hits


def _model_name(model: str | None) -> str | None:
    if not model:
        return None
    text = hf_cache_repo(model) or model.rstrip("/")
    return text.rsplit("/", 1)[-1].casefold() or None


def _check_log_differs(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    """The log was written by a different launch than the one pasted."""
    launch = s.launch
    if launch is None or not (s.log_settings or s.log_model):
        return []
    diffs = []
    for name, label in (("tp", "TP"), ("dcp", "DCP"), ("pp", "PP"), ("spec_tokens", "MTP")):
        ran, logged = getattr(launch, name), s.log_settings.get(name)
        if name == "dcp" and logged == 1 and ran is None:
            continue
        if ran is not None and logged is not None and ran != logged:
            diffs.append(f"{label}: launch {ran}, log {logged}")
    mine, logged_model = _model_name(launch.model), _model_name(s.log_model)
    if mine and logged_model and mine != logged_model:
        diffs.append(f"model: launch {mine}, log {logged_model}")
    if not diffs:
        return []
    return [RuleHit({"differences": "; ".join(diffs)}, tuple(diffs))]


def _runbook_page(s: Subject) -> Page | None:
    if s.family is None:
        return None
    return s.wiki.pages.get(s.family.runbook.page)


def _ref(page: str, anchor: str | None) -> str:
    return f"{page}#{anchor}" if anchor else page


def _version_pages(s: Subject) -> list[tuple[str, str, str]]:
    """(path, title, status) of the family's other runbook versions."""
    if s.family is None:
        return []
    current = s.family.runbook.page
    return [(v.path, v.title, v.status) for v in s.family.family.versions if v.path != current]


def _evidence(params: Mapping[str, Any], key: str, **values: Any) -> str:
    """One evidence line, worded by the rule's ``params.evidence`` (rule files hold wording)."""
    wording = (params.get("evidence") or {}).get(key)
    if not isinstance(wording, str):
        raise RuleError(f"rule params.evidence.{key} is missing")
    return wording.format_map(values)


def _check_image_older(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    image = s.image
    if image is None or image.tag is None or s.family is None:
        return []
    runbook = s.family.runbook
    refs = [r for r in (parse_image(i) for i in runbook.images) if r is not None]
    same = [r for r in refs if _same_repository(r, image) and r.tag]
    if not same or any(r.tag == image.tag for r in same):
        return []
    newest = same[0]
    for ref in same[1:]:
        if compare_image_tags(ref.tag or "", newest.tag or "") == 1:
            newest = ref
    order = compare_image_tags(image.tag, newest.tag or "")
    if order != -1:
        return []
    evidence = [
        _evidence(params, "yours", image=image.raw),
        _evidence(params, "runbook", image=newest.raw),
    ]
    for path, title, status in _version_pages(s):
        page = s.wiki.pages.get(path)
        if page is not None and any(image.tag in b.text for sec in page.sections for b in sec.code):
            evidence.append(
                _evidence(
                    params, "older", title=title, status=status or _evidence(params, "no_status")
                )
            )
            break
    return [
        RuleHit(
            {"image": image.raw, "current": newest.raw, "runbook": runbook.page_title},
            tuple(evidence),
            page=_ref(runbook.page, runbook.image_anchor),
        )
    ]


def _user_pinned(s: Subject, setting: str) -> list[str]:
    found: list[str] = []
    launch = s.launch
    if launch is not None:
        if launch.hf_overrides is not None:
            value = launch.hf_overrides.get(setting)
            if isinstance(value, str) and value:
                found.append(value)
        folded = setting.casefold()
        for name, value in launch.env.items():
            if name.casefold().endswith(folded) and value and not value.startswith("$"):
                found.append(value)
    if not found:
        found.extend(find_pinned_values(s.command, setting))
    return list(dict.fromkeys(found))


def _runbook_pinned(page: Page, setting: str) -> tuple[list[str], str | None]:
    values: list[str] = []
    anchor = None
    for section in page.sections:
        for block in section.code:
            for value in find_pinned_values(block.text, setting):
                if value not in values:
                    values.append(value)
                    anchor = anchor or section.anchor
    return values, anchor


def _check_pinned(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    """A setting the runbook pins exactly (``index_topk_pattern``) that differs or is cut."""
    setting = str(params.get("setting", ""))
    page = _runbook_page(s)
    if not setting or page is None:
        return []
    expected, anchor = _runbook_pinned(page, setting)
    if not expected:
        return []
    hits = []
    for value in _user_pinned(s, setting):
        if value in expected:
            continue
        closest = max(expected, key=len)
        truncated = next((e for e in expected if len(value) < len(e) and e.startswith(value)), None)
        variant = "truncated" if truncated else "differs"
        reference = truncated or closest
        evidence = [
            _evidence(params, "yours", value=value, length=len(value)),
            _evidence(params, "runbook", value=reference, length=len(reference)),
        ]
        for path, title, status in _version_pages(s):
            other = s.wiki.pages.get(path)
            if other is not None and value in _runbook_pinned(other, setting)[0]:
                evidence.append(
                    _evidence(
                        params,
                        "older",
                        title=title,
                        status=status or _evidence(params, "no_status"),
                    )
                )
                break
        hits.append(
            RuleHit(
                {
                    "setting": setting,
                    "length": len(value),
                    "expected_length": len(reference),
                    "runbook": s.family.runbook.page_title if s.family else "",
                },
                tuple(evidence),
                variant=variant,
                page=_ref(page.path, anchor),
            )
        )
    return hits


def _check_spec_unstable(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    tokens = s.settings.spec_tokens
    page = _runbook_page(s)
    if page is None or not tokens:
        return []
    for limit in unstable_limits(page):
        if limit.hit(s.settings.spec_method, tokens):
            method = s.settings.spec_method or "mtp"
            return [
                RuleHit(
                    {
                        "method": method,
                        "tokens": tokens,
                        "limit": f"{limit.op}{limit.tokens}",
                        "runbook": s.family.runbook.page_title if s.family else "",
                    },
                    (
                        _evidence(params, "yours", method=method, tokens=tokens),
                        _evidence(params, "runbook", statement=limit.statement),
                    ),
                    page=_ref(page.path, limit.anchor),
                )
            ]
    return []


def _check_checklist(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    if s.completeness is None:
        return []
    wanted = params.get("status", "missing")
    hits = []
    for item in s.completeness.items:
        if item.status == wanted and item.key != "other":
            hits.append(
                RuleHit(
                    {"item": item.label, "detail": item.detail},
                    (item.detail,) if item.detail else (),
                    suffix=item.key,
                    page=s.completeness.source,
                )
            )
    return hits


def _check_launch_problems(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    if s.launch is None or not s.launch.problems:
        return []
    return [RuleHit({"problem": p}, (p,)) for p in s.launch.problems[:3]]


def _check_image_differs(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    launched = s.launch.image if s.launch is not None else None
    stated = s.stated_image
    if launched is None or stated is None:
        return []
    if launched.repository == stated.repository and (
        launched.tag == stated.tag or stated.tag is None or launched.tag is None
    ):
        return []
    return [
        RuleHit(
            {"stated": stated.raw, "launched": launched.raw},
            (f"image field: {stated.raw}", f"launch: {launched.raw}"),
        )
    ]


CHECKS: Final[Mapping[str, Check]] = {
    "dcp_divides_tp": _check_dcp_divides_tp,
    "gpu_count": _check_gpu_count,
    "gpu_lists": _check_gpu_lists,
    "stated_differs": _check_stated_differs,
    "image_older": _check_image_older,
    "image_differs": _check_image_differs,
    "log_differs": _check_log_differs,
    "pinned_setting": _check_pinned,
    "spec_unstable": _check_spec_unstable,
    "checklist": _check_checklist,
    "launch_problems": _check_launch_problems,
}
