"""What a rule looks at: the redacted launch, the settings as stated and as run, the family.

``parse_stated`` reads settings the way people write them in a request
(``TP8 DCP4 MTP3``, ``8x RTX PRO 6000``, ``GPUs 0-3``); :class:`Settings` merges
them with the launch's and the log's, the launch winning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Final, TypeVar

from knowledge.launch import ImageRef, Launch, Parallelism
from knowledge.triage.family import FamilyInfo
from knowledge.triage.onboarding import Completeness
from knowledge.wiki import Catalogue, Page, Wiki

__all__ = [
    "PageMemo",
    "Settings",
    "Stated",
    "Subject",
    "id_list",
    "launch_settings",
    "parse_stated",
    "stated_settings",
]


T = TypeVar("T")


class PageMemo:
    """What checks read from a wiki page alone (its pinned values, the limits it states),
    worked out once per page version instead of once per request.

    Keyed by the page's path and content hash, so an answer is never given for another
    version of the page. Values must be immutable. Shared by the threads that triage:
    two of them may work out the same value at once, and both get equal values.
    """

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[tuple[str, str, str, Hashable], object] = {}

    def get(self, what: str, page: Page, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``what`` for this version of ``page`` and ``key``."""
        slot = (what, page.path, page.sha, key)
        try:
            return self._values[slot]  # type: ignore[return-value]
        except KeyError:
            value = compute()
            self._values[slot] = value
            return value


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
    #: field -> "launch", "log" or "stated"
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
    #: Facts read from wiki pages, shared by every request on the same wiki.
    memo: PageMemo = field(default_factory=PageMemo, compare=False, repr=False)


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


def id_list(text: str) -> tuple[int, ...] | None:
    """GPU ids of ``0,1,2``, ``0-3`` or ``0-1,4``; None unless it lists 2 to 128 ids."""
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
        ids = id_list(m.group(1))
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
