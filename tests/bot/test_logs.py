"""One log format for every command: timestamp, level and logger on each line, text or
JSON, chosen by flag or environment, never coloured, discord.py's lines included."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest

from bot.cli import main
from bot.logs import log_settings, setup_logging

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) +[\w.]+: ")


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    for name in ("discord.http", "discord.gateway", "discord.webhook.async_"):
        logging.getLogger(name).setLevel(logging.NOTSET)


def _emit() -> None:
    logging.getLogger("discord.client").info("logging in using static token")
    logging.getLogger("bot.client").warning("could not sync the commands to guild %s", 7)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("bot.errors").exception("/search failed")


def test_text_lines_carry_time_level_and_logger_and_no_colour(restore_logging):
    out = io.StringIO()
    setup_logging("text", logging.INFO, stream=out)
    _emit()
    lines = out.getvalue().splitlines()
    starts = [line for line in lines if LINE.match(line)]
    assert [line.split(": ", 1)[0].split()[-1] for line in starts] == [
        "discord.client",
        "bot.client",
        "bot.errors",
    ]
    assert "\x1b[" not in out.getvalue()
    assert lines[-1] == "ValueError: boom", "the traceback follows its line"


def test_json_is_one_object_per_line_with_the_traceback_as_a_field(restore_logging):
    out = io.StringIO()
    setup_logging("json", logging.INFO, stream=out)
    _emit()
    entries = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["level"], e["logger"]) for e in entries] == [
        ("INFO", "discord.client"),
        ("WARNING", "bot.client"),
        ("ERROR", "bot.errors"),
    ]
    assert entries[1]["message"] == "could not sync the commands to guild 7"
    assert entries[2]["exception"].endswith("ValueError: boom")
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", e["time"]) for e in entries)


def test_debug_never_opens_discord_payload_loggers(restore_logging):
    setup_logging("text", logging.DEBUG, stream=io.StringIO())
    assert logging.getLogger("bot.client").isEnabledFor(logging.DEBUG)
    assert not logging.getLogger("discord.http").isEnabledFor(logging.DEBUG)
    assert not logging.getLogger("discord.gateway").isEnabledFor(logging.DEBUG)


def test_environment_chooses_format_and_level_and_the_flag_wins(monkeypatch):
    monkeypatch.setenv("WIKIBOT_LOG_FORMAT", "JSON")
    monkeypatch.setenv("WIKIBOT_LOG_LEVEL", "warning")
    assert log_settings(None, verbose=True, default_level="INFO") == ("json", logging.WARNING)
    assert log_settings("text", verbose=False, default_level="INFO")[0] == "text"
    monkeypatch.delenv("WIKIBOT_LOG_LEVEL")
    assert log_settings(None, verbose=True, default_level="INFO")[1] == logging.DEBUG
    assert log_settings(None, verbose=False, default_level="INFO")[1] == logging.INFO


@pytest.mark.parametrize(
    ("variable", "value"), [("WIKIBOT_LOG_FORMAT", "xml"), ("WIKIBOT_LOG_LEVEL", "loud")]
)
def test_a_bad_setting_is_one_line_naming_the_variable(
    variable, value, monkeypatch, capsys, restore_logging
):
    monkeypatch.setenv(variable, value)
    assert main(["ask", "/acronym DCP"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"wikibot: {variable}: must be one of") and repr(value.upper()) in (
        err.upper()
    )


def test_the_log_format_flag_applies_to_every_command(capsys, restore_logging, tmp_path):
    """``wikibot --log-format json ask`` with a warning to give: it comes as JSON."""
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # the data folder cannot be made under a file: a warning
    argv = ["--log-format", "json", "ask", "--data", str(blocked / "data"), "/acronym DCP"]
    assert main(argv) == 0
    (line,) = capsys.readouterr().err.splitlines()
    entry = json.loads(line)
    assert (entry["level"], entry["logger"]) == ("WARNING", "knowledge.service")
