"""Coded checks: compare a request with the wiki itself (the family's runbook, its
older versions, the onboarding checklist) where a rule file's shapes cannot.

A rule names one with ``check: <name>`` (a key of :data:`CHECKS`) and may pass it
``params``. A check returns :class:`RuleHit` values; its evidence lines are either
literal quotes of the request (``TP=8``) or :class:`Evidence` worded from
``templates/triage.yaml`` under ``evidence.<check>.<key>``. Checks never raise on
odd input: every number and list is read defensively.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from knowledge.launch import ImageRef, Launch, hf_cache_repo, parse_image
from knowledge.triage.rules.subject import Settings, Subject, id_list
from knowledge.wiki import Page, Section

__all__ = [
    "CHECKS",
    "Check",
    "Evidence",
    "RuleHit",
    "SpecLimit",
    "compare_image_tags",
    "find_pinned_values",
    "unstable_limits",
]


@dataclass(frozen=True, slots=True)
class Evidence:
    """An evidence line worded by the templates: ``evidence.<check>.<key>`` with ``values``."""

    key: str
    values: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RuleHit:
    """What a check found: values for the message, evidence, optional variant and page."""

    #: Message placeholders; an :class:`Evidence` (or a tuple of them) is worded first.
    values: Mapping[str, object] = field(default_factory=dict)
    evidence: tuple[str | Evidence, ...] = ()
    #: Key into a rule's message mapping; None uses the plain message / "default".
    variant: str | None = None
    #: A ``path#anchor`` that justifies this hit better than the rule's own link.
    page: str | None = None
    #: Appended to the rule id (``checklist.missing`` + ``.logs``).
    suffix: str | None = None


Check = Callable[[Subject, Mapping[str, Any]], list[RuleHit]]


# ------------------------------------------------------------ parallel settings


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
    source = s.settings.sources.get("gpu_count", "")
    ids = s.settings.gpu_ids
    shown = ",".join(map(str, ids)) if ids else available
    key = ("ids" if ids else "count") + ("_from" if source else "")
    return [
        RuleHit(
            {"needed": needed, "available": available, "parallel": " ".join(parts)},
            (" ".join(parts), Evidence(key, {"gpus": shown, "source": source})),
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
        cvd_ids = id_list(cvd) if cvd else None
        if cvd and cvd.strip().isdigit():
            cvd_ids = (int(cvd.strip()),)
        if cvd_ids and len(set(cvd_ids)) != len(cvd_ids):
            hits.append(
                RuleHit({"list": cvd}, (f"CUDA_VISIBLE_DEVICES={cvd}",), variant="duplicate")
            )
        docker_ids = _docker_device_ids(launch)
        if cvd_ids and docker_ids and max(cvd_ids) >= len(docker_ids):
            devices = ",".join(map(str, docker_ids))
            hits.append(
                RuleHit(
                    {"list": cvd, "docker": devices},
                    (f"CUDA_VISIBLE_DEVICES={cvd}", f"--gpus device={devices}"),
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
                    Evidence("stated", {"count": stated.gpu_count}),
                    Evidence("launch_ids", {"gpus": ",".join(map(str, shown))})
                    if shown
                    else Evidence("launch_count", {"count": launched}),
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
                    (
                        Evidence("stated", {"setting": label, "value": said}),
                        Evidence("launch", {"setting": label, "value": ran}),
                    ),
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
            diffs.append(Evidence("setting", {"setting": label, "launch": ran, "log": logged}))
    mine, logged_model = _model_name(launch.model), _model_name(s.log_model)
    if mine and logged_model and mine != logged_model:
        diffs.append(Evidence("model", {"launch": mine, "log": logged_model}))
    if not diffs:
        return []
    return [RuleHit({"differences": tuple(diffs)}, tuple(diffs))]


# ------------------------------------------------------------ the family's runbook


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


def _older(title: str, status: str | None) -> Evidence:
    if status:
        return Evidence("older", {"title": title, "status": status})
    return Evidence("older_no_status", {"title": title})


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
    evidence: list[str | Evidence] = [
        Evidence("yours", {"image": image.raw}),
        Evidence("runbook", {"image": newest.raw}),
    ]
    for path, title, status in _version_pages(s):
        page = s.wiki.pages.get(path)
        if page is not None and any(image.tag in b.text for sec in page.sections for b in sec.code):
            evidence.append(_older(title, status))
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


def _runbook_pinned(s: Subject, page: Page, setting: str) -> tuple[tuple[str, ...], str | None]:
    """The values ``page``'s code blocks pin ``setting`` to, and the first one's anchor."""
    return s.memo.get("pinned", page, setting, lambda: _page_pinned(page, setting))


def _page_pinned(page: Page, setting: str) -> tuple[tuple[str, ...], str | None]:
    values: list[str] = []
    anchor = None
    for section in page.sections:
        for block in section.code:
            for value in find_pinned_values(block.text, setting):
                if value not in values:
                    values.append(value)
                    anchor = anchor or section.anchor
    return tuple(values), anchor


def _check_pinned(s: Subject, params: Mapping[str, Any]) -> list[RuleHit]:
    """A setting the runbook pins exactly (``index_topk_pattern``) that differs or is cut."""
    setting = str(params.get("setting", ""))
    page = _runbook_page(s)
    if not setting or page is None:
        return []
    expected, anchor = _runbook_pinned(s, page, setting)
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
        evidence: list[str | Evidence] = [
            Evidence("yours", {"value": value, "length": len(value)}),
            Evidence("runbook", {"value": reference, "length": len(reference)}),
        ]
        for path, title, status in _version_pages(s):
            other = s.wiki.pages.get(path)
            if other is not None and value in _runbook_pinned(s, other, setting)[0]:
                evidence.append(_older(title, status))
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
    for limit in s.memo.get("unstable", page, None, lambda: tuple(unstable_limits(page))):
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
                        Evidence("yours", {"method": method, "tokens": tokens}),
                        Evidence("runbook", {"statement": limit.statement}),
                    ),
                    page=_ref(page.path, limit.anchor),
                )
            ]
    return []


# ------------------------------------------------------------ the request itself


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
            (
                Evidence("stated", {"image": stated.raw}),
                Evidence("launch", {"image": launched.raw}),
            ),
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
