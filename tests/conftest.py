"""Shared pytest fixtures. The Discord stand-in's fixture lives in its package."""

import os
import sys

import pytest
from hypothesis import settings

# The suite's property tests draw the same examples on every run ("repeatable": seeded
# from each test), so what passes on a developer's machine passes in CI, and a failure
# there is one anybody can replay. New examples are looked for on purpose, with random
# seeds: HYPOTHESIS_PROFILE=explore make test (or pytest tests/...), as often as wanted;
# Hypothesis prints a failing example with the line that replays it.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# Helpers with asserts outside test modules: rewrite them too, for readable failures.
pytest.register_assert_rewrite("tests.bot.helpers")

from tests.discord_standin.fixtures import discord_standin, threaded_standin  # noqa: E402
from tests.llm_standin.fixtures import llm_standin  # noqa: E402

__all__ = [
    "discord_standin",
    "llm_standin",
    "pytest_terminal_summary",
    "redaction_memo_emptied",
    "threaded_standin",
]


@pytest.fixture(autouse=True)
def redaction_memo_emptied():
    """Each test starts with redaction's memo of clean texts empty (when redaction is
    loaded at all: importing it here would load it for tests that check what loads):
    no test passes because an earlier one left a text remembered."""
    redact = sys.modules.get("knowledge.triage.redact")
    if redact is not None:
        redact._clean_memo.clear()


def pytest_terminal_summary(terminalreporter):
    """How many bodies crossed the model stand-in, each checked against OpenAI's spec."""
    from tests.llm_standin import counts

    if any(counts.values()):
        terminalreporter.write_line(
            "model stand-in: validated against OpenAI's OpenAPI description: "
            f"{counts['requests']} request bodies, {counts['chunks']} streamed chunks, "
            f"{counts['models']} model lists"
        )
