"""Shared pytest fixtures. The Discord stand-in's fixture lives in its package."""

from tests.discord_standin.fixtures import discord_standin, threaded_standin

__all__ = ["discord_standin", "threaded_standin"]
