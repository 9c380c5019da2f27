"""Shared pytest fixtures. The Discord stand-in's fixture lives in its package."""

import pytest

# Helpers with asserts outside test modules: rewrite them too, for readable failures.
pytest.register_assert_rewrite("tests.bot.helpers")

from tests.discord_standin.fixtures import discord_standin, threaded_standin  # noqa: E402

__all__ = ["discord_standin", "threaded_standin"]
