"""The support form: which fields to ask, in which order and step, from the checklist.

The fields are derived at run time from the onboarding checklist
(:func:`knowledge.triage.onboarding.load_checklist`: the wiki's table, or the
built-in list in ``templates/triage.yaml`` when the page is missing). Three
"story" fields come first for everyone (what you are trying to do, what happened,
what you expected); then one field per checklist item, mapped by the item's kind to
the request field triage reads (``runbook`` -> ``model_page``, ``launch`` ->
``command`` ...; the one ``layout`` answer is read as the GPU layout and settings).
Items of no known kind become free-text fields of their own (``other_1`` ...),
folded into the request's text.

Fields are grouped into steps of at most :data:`MAX_STEP_FIELDS` (a Discord modal
holds five components), keeping their order. Labels and placeholders come from
``templates/intake.yaml``; the wiki's wording of each item is the description.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from knowledge.templates import Templates
from knowledge.text import truncate
from knowledge.triage.onboarding import Checklist

__all__ = [
    "KIND_FIELDS",
    "MAX_FIELD_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_STEP_FIELDS",
    "STORY_FIELDS",
    "Form",
    "FormField",
    "build_form",
]

#: Longest answer to one field (Discord's text-input limit).
MAX_FIELD_CHARS: Final = 4000
#: Fields in one step (components in a Discord modal).
MAX_STEP_FIELDS: Final = 5
MAX_LABEL_CHARS: Final = 45
MAX_DESCRIPTION_CHARS: Final = 100
MAX_PLACEHOLDER_CHARS: Final = 100
#: Asked first, whatever the checklist says: (key, required, paragraph).
STORY_FIELDS: Final = (("text", True, True), ("actual", False, True), ("expected", False, True))
#: Checklist item kind -> request fields it asks for: (key, paragraph).
KIND_FIELDS: Final[dict[str, tuple[tuple[str, bool], ...]]] = {
    "runbook": (("model_page", False),),
    "image": (("image", False),),
    "launch": (("command", True),),
    "layout": (("layout", False),),
    "logs": (("log", True),),
    "client": (("client", True),),
}
#: Shorter caps for one-line fields.
_SHORT_CHARS: Final = 400


@dataclass(frozen=True, slots=True)
class FormField:
    #: The request field (``text``, ``model_page``, ``log`` ...) or ``other_N``.
    key: str
    label: str
    #: The checklist's own wording (and why), shown under the label.
    description: str
    placeholder: str
    paragraph: bool
    max_chars: int
    required: bool
    #: 1-based step of the form this field is asked in.
    step: int
    #: The checklist item kind it answers (``runbook`` ...), or None for story fields.
    item: str | None = None

    @property
    def is_log(self) -> bool:
        return self.key == "log"

    @property
    def is_model(self) -> bool:
        return self.key == "model_page"


@dataclass(frozen=True, slots=True)
class Form:
    fields: tuple[FormField, ...]
    #: Where the checklist came from: ``path#anchor`` of the wiki table, or None (built in).
    source: str | None

    @property
    def steps(self) -> int:
        return max((f.step for f in self.fields), default=0)

    def step(self, number: int) -> tuple[FormField, ...]:
        return tuple(f for f in self.fields if f.step == number)

    def field(self, key: str) -> FormField | None:
        return next((f for f in self.fields if f.key == key), None)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.fields)


def _description(label: str, why: str) -> str:
    text = f"{label}: {why}" if why else label
    return truncate(" ".join(text.split()), MAX_DESCRIPTION_CHARS)


def build_form(checklist: Checklist, templates: Templates) -> Form:
    """The form for ``checklist``, worded by ``templates`` (``templates/intake.yaml``)."""
    t = templates
    specs: list[tuple[str, str, str, bool, bool, str | None]] = []
    for key, required, paragraph in STORY_FIELDS:
        specs.append((key, t(f"fields.{key}.label"), "", required, paragraph, None))
    seen: set[str] = set()
    others = 0
    for item in checklist.items:
        description = _description(item.label, item.why)
        mapped = KIND_FIELDS.get(item.key)
        if mapped is None:
            others += 1
            label = truncate(" ".join(item.label.split()), MAX_LABEL_CHARS) or f"#{others}"
            specs.append((f"other_{others}", label, description, False, True, item.key))
            continue
        for key, paragraph in mapped:
            if key in seen:
                continue
            seen.add(key)
            specs.append((key, t(f"fields.{key}.label"), description, False, paragraph, item.key))
    fields = []
    for index, (key, label, description, required, paragraph, item) in enumerate(specs):
        base = key if not key.startswith("other_") else "other"
        fields.append(
            FormField(
                key=key,
                label=truncate(label, MAX_LABEL_CHARS),
                description=description,
                placeholder=truncate(t(f"fields.{base}.placeholder"), MAX_PLACEHOLDER_CHARS),
                paragraph=paragraph,
                max_chars=MAX_FIELD_CHARS if paragraph else _SHORT_CHARS,
                required=required,
                step=index // MAX_STEP_FIELDS + 1,
                item=item,
            )
        )
    return Form(tuple(fields), checklist.source)
