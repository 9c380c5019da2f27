"""The ``llm_standin`` fixture: a model stand-in per test, failing on spec mismatches."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import LlmStandin

__all__ = ["llm_standin"]


@pytest.fixture
def llm_standin() -> Iterator[LlmStandin]:
    with LlmStandin() as standin:
        yield standin
    if standin.mismatches:
        pytest.fail(
            "bodies that do not match OpenAI's description:\n"
            + "\n".join(f"- {m}" for m in standin.mismatches)
        )
