"""to_jsonable: typed results become data json.dumps takes, whatever they hold."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path

from knowledge.jsonable import to_jsonable


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True, slots=True)
class Inner:
    number: int
    text: str

    @property
    def label(self) -> str:
        return f"{self.number}:{self.text}"


@dataclass(frozen=True, slots=True)
class Outer:
    inner: Inner
    lines: tuple[Inner, ...]
    tags: frozenset[str]
    score: float
    where: Path
    colour: Colour
    extra: dict[int, object]


def sample() -> Outer:
    return Outer(
        inner=Inner(1, "a"),
        lines=(Inner(2, "b"),),
        tags=frozenset({"x"}),
        score=float("nan"),
        where=Path("/srv/wiki"),
        colour=Colour.RED,
        extra={3: (1, 2)},
    )


def test_fields_become_plain_json_values():
    data = to_jsonable(sample())
    assert data == {
        "inner": {"number": 1, "text": "a"},
        "lines": [{"number": 2, "text": "b"}],
        "tags": ["x"],
        "score": "nan",
        "where": "/srv/wiki",
        "colour": "red",
        "extra": {"3": [1, 2]},
    }
    json.dumps(data, allow_nan=False)


def test_named_properties_are_added_for_their_class_only():
    data = to_jsonable(sample(), properties={Inner: ("label",)})
    assert data["inner"]["label"] == "1:a" and data["lines"][0]["label"] == "2:b"
    assert "label" not in to_jsonable(sample())["inner"]


def test_deep_and_long_input_is_cut():
    nested: list[object] = []
    for _ in range(50):
        nested = [nested]
    json.dumps(to_jsonable(nested))
    assert len(to_jsonable(list(range(10_000)))) < 10_000
