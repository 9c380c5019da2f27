"""One log format for every ``wikibot`` command, discord.py's loggers included.

Every record goes to stderr through one handler on the root logger, as one line:

- ``text`` (default): ``2026-12-01T20:06:36.123Z INFO    bot.client: logged in as ...``;
- ``json``: ``{"time": "...", "level": "INFO", "logger": "bot.client", "message": "..."}``
  (plus ``"exception"`` with the traceback), one object per line, for log shippers.

Chosen with ``--log-format`` or ``WIKIBOT_LOG_FORMAT``; the level with
``WIKIBOT_LOG_LEVEL`` (``-v`` means DEBUG). Times are UTC. No colour codes are
written, terminal or not (discord.py's own set-up would add them inside Docker).
discord.py's ``http`` and ``gateway`` loggers stay at INFO or above whatever the level:
at DEBUG they print every payload, which holds what users typed.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any, TextIO

__all__ = [
    "FORMATS",
    "JsonFormatter",
    "LogSettingError",
    "TextFormatter",
    "log_settings",
    "setup_logging",
]

FORMATS = ("text", "json")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
#: Loggers whose DEBUG lines carry message payloads (user content): never below INFO.
PAYLOAD_LOGGERS = ("discord.http", "discord.gateway", "discord.webhook.async_")


class LogSettingError(ValueError):
    """A log format or level that does not exist; the message names where it came from."""


def _utc(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    """``time level logger: message``, then the traceback's lines if there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_utc(record)} {record.levelname:<7} {record.name}: {record.getMessage()}"
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line += "\n" + record.exc_text
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (a traceback is a field, not lines)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _utc(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False)


def log_settings(fmt: str | None, *, verbose: bool, default_level: str) -> tuple[str, int]:
    """The format and level: ``fmt`` (``--log-format``) over ``WIKIBOT_LOG_FORMAT``,
    ``WIKIBOT_LOG_LEVEL`` over ``-v`` over ``default_level``."""
    fmt = (fmt or os.environ.get("WIKIBOT_LOG_FORMAT") or "text").strip().casefold()
    if fmt not in FORMATS:
        raise LogSettingError(
            f"WIKIBOT_LOG_FORMAT: must be one of {', '.join(FORMATS)}, got {fmt!r}"
        )
    level_name = (os.environ.get("WIKIBOT_LOG_LEVEL") or "").strip().upper()
    if level_name and level_name not in LEVELS:
        raise LogSettingError(
            f"WIKIBOT_LOG_LEVEL: must be one of {', '.join(LEVELS)}, got {level_name!r}"
        )
    if not level_name:
        level_name = "DEBUG" if verbose else default_level
    return fmt, logging.getLevelName(level_name)


def setup_logging(fmt: str, level: int, *, stream: TextIO | None = None) -> None:
    """Replace the root logger's handlers with one writing ``fmt`` lines to stderr."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in PAYLOAD_LOGGERS:
        logging.getLogger(name).setLevel(max(level, logging.INFO))
