"""HTTP/2 for the wiki fetch: used when asked for and ``h2`` is installed, else one warning
and HTTP/1.1 (the loopback GitHub stand-in speaks HTTP/1.1 only)."""

from __future__ import annotations

import importlib.util
import logging

import httpx
import pytest

from bot.client import WikiBot
from bot.config import parse_config
from knowledge.service import demo_wiki_dir
from knowledge.source import Caps, Follower, HttpSettings, SourceSettings, parse_source
from knowledge.source import http as http_module
from tests.github_standin import github_standin, tarball, tree_files


@pytest.fixture
def clients(monkeypatch) -> list[bool]:
    """The ``http2`` argument of every httpx.Client built (each built without HTTP/2:
    ``h2`` need not be installed for the tests)."""
    made: list[bool] = []
    real = httpx.Client

    def spy(*args, **kwargs):
        made.append(kwargs.get("http2", False))
        return real(*args, **{**kwargs, "http2": False})

    monkeypatch.setattr(http_module.httpx, "Client", spy)
    return made


def test_http2_is_used_when_asked_for_and_h2_is_installed(monkeypatch, clients, caplog):
    monkeypatch.setattr(http_module, "h2_installed", lambda: True)
    with (
        caplog.at_level(logging.WARNING),
        http_module.WikiHttp(HttpSettings(api_url="https://api.github.com", http2=True)) as http,
    ):
        assert http.http2 is True
    assert clients == [True]
    assert caplog.records == []


def test_without_h2_it_warns_once_and_fetches_over_http_1_1(tmp_path, monkeypatch, clients, caplog):
    monkeypatch.setattr(http_module, "h2_installed", lambda: False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    files = tree_files(demo_wiki_dir())
    with github_standin() as gh, caplog.at_level(logging.WARNING):
        sha = gh.publish("owner", "wiki", "main", tarball(files))
        settings = SourceSettings(
            parse_source("github:owner/wiki"),
            api_url=gh.url,
            caps=Caps(),
            http=HttpSettings(api_url=gh.url, http2=True),
        )
        with Follower(settings, tmp_path / "data", token="") as follower:
            assert follower.http.http2 is False
            assert follower.ensure().commit == sha
    assert clients == [False]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "h2" in warnings[0] and "HTTP/1.1" in warnings[0] and "[http2]" in warnings[0]
    assert "\n" not in warnings[0]


def test_http_1_1_is_the_default_and_says_nothing(monkeypatch, clients, caplog):
    monkeypatch.setattr(http_module, "h2_installed", lambda: True)
    with (
        caplog.at_level(logging.WARNING),
        http_module.WikiHttp(HttpSettings(api_url="https://api.github.com")) as http,
    ):
        assert http.http2 is False
    assert clients == [False]
    assert caplog.records == []


def test_h2_installed_says_whether_h2_can_be_imported():
    assert http_module.h2_installed() is (importlib.util.find_spec("h2") is not None)


@pytest.mark.parametrize("value", [True, False])
def test_the_bots_follower_fetches_as_wiki_http2_says(tmp_path, monkeypatch, clients, value):
    monkeypatch.setattr(http_module, "h2_installed", lambda: True)
    config = parse_config(
        {
            "discord": {"guild_ids": []},
            "wiki": {
                "source": "github:owner/wiki",
                "data_dir": str(tmp_path / "data"),
                "http2": value,
            },
        },
        name="test-config",
    )
    assert config.http2 is value
    bot = WikiBot(config)
    try:
        assert bot.follower is not None and bot.follower.http.http2 is value
    finally:
        bot.follower.close()
    assert clients == [value]
