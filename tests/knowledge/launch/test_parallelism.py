"""One Parallelism type: launches, log summaries and stated settings share its fields."""

from __future__ import annotations

from dataclasses import fields

import pytest

from knowledge.launch import PARALLEL_FIELDS, Launch, Parallelism, parse_launch
from knowledge.triage.logs import LogSummary
from knowledge.triage.rules import Settings, Stated


@pytest.mark.parametrize("cls", [Launch, LogSummary, Stated, Settings])
def test_every_settings_type_is_a_parallelism(cls):
    assert issubclass(cls, Parallelism)
    names = [f.name for f in fields(cls)]
    assert names[: len(PARALLEL_FIELDS)] == list(PARALLEL_FIELDS)
    assert len(set(names)) == len(names)  # no second copy of a parallel field


def test_parallel_settings_of_a_parsed_launch():
    launch = parse_launch(
        "vllm serve org/Model --tensor-parallel-size 4 --decode-context-parallel-size 2 "
        '--speculative-config \'{"method": "mtp", "num_speculative_tokens": 3}\''
    )
    assert launch.parallel_settings() == {
        "tp": 4,
        "dcp": 2,
        "dp": None,
        "pp": None,
        "spec_method": "mtp",
        "spec_tokens": 3,
    }
