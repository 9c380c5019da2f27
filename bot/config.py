"""The bot's settings: one YAML file read by :func:`load_config`, checked key by key.

Secrets never live here: the token comes from the ``DISCORD_TOKEN`` environment
variable only, and a ``token`` key in the file is refused. Relative paths are
resolved against the folder of the config file, so the bot behaves the same
whatever directory it is started from. Every error names the file and the key::

    config.yaml: discord.guild_ids[1]: must be a Discord id (a positive integer), got 'abc'

This module does not import discord, so the console and the tests of the config
stay light.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

__all__ = ["BotConfig", "ConfigError", "Cooldown", "load_config", "parse_config"]

log = logging.getLogger(__name__)

#: Discord lets a follow-up token live 15 minutes; a pager must time out before that
#: so its last edit (disabling the buttons) still works.
MAX_PAGER_TIMEOUT = 14 * 60
DEFAULT_COOLDOWN_RATE = 3
DEFAULT_COOLDOWN_PER = 10.0
DEFAULT_PAGER_TIMEOUT = 300.0
#: Minutes between two looks at the wiki folder for changed pages (0: never).
DEFAULT_REFRESH_MINUTES = 10.0
MAX_REFRESH_MINUTES = 24 * 60
_SECRET_KEYS = frozenset({"token", "discord_token", "bot_token", "secret", "client_secret"})


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class Cooldown:
    """``rate`` uses of one command per ``per`` seconds, per user."""

    rate: int = DEFAULT_COOLDOWN_RATE
    per: float = DEFAULT_COOLDOWN_PER


@dataclass(frozen=True, slots=True)
class BotConfig:
    #: Guilds the commands are synced to at start-up (empty: no sync at start-up).
    guild_ids: tuple[int, ...]
    #: Members with one of these roles may run admin commands (besides Manage Server).
    admin_role_ids: tuple[int, ...]
    wiki_dir: Path
    #: ``https://github.com/<owner>/<repo>/blob/<branch>/``: page links are built on it.
    link_base: str | None
    #: Where the search index lives; None means the per-wiki cache folder.
    data_dir: Path | None
    cooldown: Cooldown
    #: Seconds a /search pager stays usable before its buttons are disabled.
    pager_timeout: float
    #: Minutes between two re-reads of the wiki folder (changed pages only); 0: never.
    refresh_minutes: float = DEFAULT_REFRESH_MINUTES
    #: The file this was read from (for messages), or None when built in code.
    source: Path | None = None


_SCHEMA: dict[str, dict[str, str]] = {
    "discord": {"guild_ids": "ids", "admin_role_ids": "ids"},
    "wiki": {"path": "dir", "link_base": "url", "data_dir": "path", "refresh_minutes": "minutes"},
    "cooldown": {"rate": "int", "per": "seconds"},
    "search": {"pager_timeout": "seconds"},
}
_REQUIRED = {("wiki", "path")}


class _Reader:
    def __init__(self, name: str, base: Path) -> None:
        self.name = name
        self.base = base

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.name}: {key}: {message}")

    def ids(self, key: str, value: Any) -> tuple[int, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list of Discord ids, got {_show(value)}")
        out = []
        for i, item in enumerate(value):
            out.append(self.discord_id(f"{key}[{i}]", item))
        return tuple(dict.fromkeys(out))

    def discord_id(self, key: str, value: Any) -> int:
        # Ids are often pasted as strings (JavaScript cannot hold them as numbers).
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**64:
            raise self.fail(key, f"must be a Discord id (a positive integer), got {_show(value)}")
        return value

    def path(self, key: str, value: Any) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a folder path, got {_show(value)}")
        path = Path(value.strip()).expanduser()
        return path if path.is_absolute() else (self.base / path).resolve()

    def dir(self, key: str, value: Any) -> Path:
        path = self.path(key, value)
        if path is None:
            raise self.fail(key, "is required: the folder holding the wiki's Markdown pages")
        if not path.is_dir():
            raise self.fail(key, f"folder not found: {path}")
        return path

    def url(self, key: str, value: Any) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be an https:// URL, got {_show(value)}")
        parts = urlsplit(value.strip())
        if parts.scheme != "https" or not parts.netloc or " " in value.strip():
            raise self.fail(key, f"must be an https:// URL, got {_show(value)}")
        text = value.strip()
        return text if text.endswith("/") else text + "/"

    def int(self, key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
            raise self.fail(key, f"must be a whole number from 1 to 100, got {_show(value)}")
        return value

    def seconds(self, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number of seconds, got {_show(value)}")
        if not math.isfinite(value) or value <= 0:
            raise self.fail(key, f"must be more than 0 seconds, got {_show(value)}")
        return float(value)

    def minutes(self, key: str, value: Any) -> float:
        number = not isinstance(value, bool) and isinstance(value, int | float)
        if not number or not math.isfinite(value):
            raise self.fail(
                key, f"must be a number of minutes (0 turns it off), got {_show(value)}"
            )
        if value != 0 and not 1 <= value <= MAX_REFRESH_MINUTES:
            raise self.fail(
                key, f"must be 0 (off) or 1 to {MAX_REFRESH_MINUTES} minutes, got {_show(value)}"
            )
        return float(value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_config(data: Any, *, name: str = "<config>", base: Path | None = None) -> BotConfig:
    """Check a mapping as read from YAML and build a :class:`BotConfig`."""
    reader = _Reader(name, base or Path.cwd())
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: the file must hold a mapping of sections, got {_show(data)}")
    values: dict[tuple[str, str], Any] = {}
    for section, body in data.items():
        if str(section).casefold() in _SECRET_KEYS:
            raise reader.fail(
                str(section), "secrets are never read from the config file; set DISCORD_TOKEN"
            )
        if section not in _SCHEMA:
            raise reader.fail(
                str(section), f"unknown section; expected one of {', '.join(sorted(_SCHEMA))}"
            )
        if body is None:
            continue
        if not isinstance(body, dict):
            raise reader.fail(str(section), f"must be a mapping of keys, got {_show(body)}")
        for key, value in body.items():
            full = f"{section}.{key}"
            if str(key).casefold() in _SECRET_KEYS:
                raise reader.fail(
                    full, "secrets are never read from the config file; set DISCORD_TOKEN"
                )
            if key not in _SCHEMA[section]:
                raise reader.fail(
                    full, f"unknown key; expected one of {', '.join(sorted(_SCHEMA[section]))}"
                )
            values[(section, key)] = value
    for section, key in _REQUIRED:
        if values.get((section, key)) is None:
            raise reader.fail(f"{section}.{key}", "is required")

    def get(section: str, key: str) -> Any:
        kind = _SCHEMA[section][key]
        return getattr(reader, kind)(f"{section}.{key}", values.get((section, key)))

    rate = values.get(("cooldown", "rate"))
    per = values.get(("cooldown", "per"))
    cooldown = Cooldown(
        rate=DEFAULT_COOLDOWN_RATE if rate is None else get("cooldown", "rate"),
        per=DEFAULT_COOLDOWN_PER if per is None else get("cooldown", "per"),
    )
    timeout = values.get(("search", "pager_timeout"))
    pager_timeout = DEFAULT_PAGER_TIMEOUT if timeout is None else get("search", "pager_timeout")
    if pager_timeout > MAX_PAGER_TIMEOUT:
        raise reader.fail(
            "search.pager_timeout",
            f"must be at most {MAX_PAGER_TIMEOUT} seconds (Discord's reply token lasts 15"
            f" minutes), got {_show(timeout)}",
        )
    refresh = values.get(("wiki", "refresh_minutes"))
    refresh_minutes = DEFAULT_REFRESH_MINUTES if refresh is None else get("wiki", "refresh_minutes")
    return BotConfig(
        guild_ids=get("discord", "guild_ids"),
        admin_role_ids=get("discord", "admin_role_ids"),
        wiki_dir=get("wiki", "path"),
        link_base=get("wiki", "link_base"),
        data_dir=get("wiki", "data_dir"),
        cooldown=cooldown,
        pager_timeout=pager_timeout,
        refresh_minutes=refresh_minutes,
    )


def load_config(path: str | Path) -> BotConfig:
    """Read and check ``path``; raise :class:`ConfigError` naming the file and key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: config file not found (copy config.example.yaml and edit it)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    config = parse_config(data, name=str(path), base=path.resolve().parent)
    return replace(config, source=path)
