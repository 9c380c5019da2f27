"""The bot's heartbeat file, and the check ``wikibot health`` makes of it.

While it runs, the bot (``bot.exts.upkeep``) rewrites ``<data_dir>/heartbeat.json``
every :data:`HEARTBEAT_EVERY` seconds::

    {"time": "2025-01-31T12:00:00.000+00:00", "pid": 7, "revision": "3f2a9c1b0d4e",
     "guilds": 1, "connected": true}

``wikibot health`` (Docker's ``HEALTHCHECK``) runs in another process and only
reads it: healthy means written less than ``max_age`` seconds ago by a bot that
says it is connected to Discord. The file is replaced atomically, so a reader
never sees half of it. This module does not import discord: the health check
starts fast.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from knowledge.files import read_regular_bytes, write_atomic

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

__all__ = [
    "DEFAULT_MAX_AGE",
    "HEARTBEAT_EVERY",
    "HEARTBEAT_FILE",
    "Health",
    "Heartbeat",
    "check_heartbeat",
    "heartbeat_path",
    "read_heartbeat",
    "write_heartbeat",
]

log = logging.getLogger(__name__)

HEARTBEAT_FILE = "heartbeat.json"
#: Seconds between two heartbeats.
HEARTBEAT_EVERY = 30.0
#: A heartbeat older than this (seconds) means the bot is stuck or gone: four missed beats.
DEFAULT_MAX_AGE = 120.0
#: Largest heartbeat file read (one is about 200 bytes).
MAX_HEARTBEAT_BYTES = 64 * 1024

Status = Literal["healthy", "missing", "unreadable", "stale", "future", "disconnected"]

#: How far ahead of this clock a heartbeat may be dated (clock steps, skew between
#: the bot and the checker) and still count as just written.
FUTURE_TOLERANCE = 5.0


@dataclass(frozen=True, slots=True)
class Heartbeat:
    #: Wall-clock time of writing (Unix seconds): it is read by another process.
    time: float
    pid: int
    #: The wiki revision the bot answers from (``Wiki.revision``).
    revision: str
    guilds: int
    #: Whether the bot's gateway connection to Discord is up.
    connected: bool


def _file_model() -> type[BaseModel]:
    """The file's schema: like :class:`Heartbeat`, with the time as ISO 8601 text.

    Built on use, so pydantic is imported only where heartbeats are read or
    written (the bot, ``wikibot health``), not by every ``wikibot`` command.
    """
    from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_serializer

    class _HeartbeatFile(BaseModel):
        model_config = ConfigDict(strict=True, frozen=True)

        time: AwareDatetime = Field(description="an ISO 8601 time with a time zone")
        pid: int = Field(description="a whole number")
        revision: str = Field(description="a string")
        guilds: int = Field(description="a whole number")
        connected: bool = Field(description="true or false")

        @field_serializer("time")
        def _utc_text(self, value: datetime) -> str:
            return value.astimezone(UTC).isoformat(timespec="milliseconds")

    return _HeartbeatFile


def _dump(beat: Heartbeat) -> str:
    fields = asdict(beat) | {"time": datetime.fromtimestamp(beat.time, UTC)}
    return _file_model()(**fields).model_dump_json()


def _problem(exc: ValidationError, model: type[BaseModel]) -> str:
    """One line for the first thing wrong with a heartbeat file."""
    error = exc.errors()[0]
    if error["type"] == "json_invalid":
        return f"not JSON ({error['msg']})"
    if not error["loc"]:
        return f"expected a JSON object, got {type(error['input']).__name__}"
    key = str(error["loc"][0])
    if error["type"] == "missing":
        return f"field {key!r} is missing"
    wording = model.model_fields[key].description
    return f"field {key!r} must be {wording}, got {error['input']!r}"


def heartbeat_path(data_dir: Path) -> Path:
    return Path(data_dir) / HEARTBEAT_FILE


def write_heartbeat(path: Path, beat: Heartbeat) -> None:
    """Replace ``path`` with ``beat`` atomically (see ``knowledge.files.write_atomic``)."""
    # write_atomic uses a temp name of its own per write: a last beat at shutdown may
    # overlap a loop's beat.
    write_atomic(path, _dump(beat) + "\n")


def read_heartbeat(path: Path) -> Heartbeat:
    """The heartbeat in ``path``: ``FileNotFoundError`` if none, ``ValueError`` if unusable."""
    # A regular file of bounded size only: a FIFO planted in the data folder would
    # otherwise hang the health check.
    text = read_regular_bytes(path, MAX_HEARTBEAT_BYTES).decode("utf-8")
    from pydantic import ValidationError

    model = _file_model()
    try:
        data: Any = model.model_validate_json(text)
    except ValidationError as exc:
        raise ValueError(_problem(exc, model)) from None
    return Heartbeat(
        time=data.time.timestamp(),
        pid=data.pid,
        revision=data.revision,
        guilds=data.guilds,
        connected=data.connected,
    )


@dataclass(frozen=True, slots=True)
class Health:
    """The verdict on one heartbeat file."""

    status: Status
    path: Path
    max_age: float
    beat: Heartbeat | None = None
    #: Seconds since the heartbeat was written (None when there is none).
    age: float | None = None
    #: Why the file could not be used (``unreadable`` only).
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "healthy"

    def values(self) -> dict[str, Any]:
        """Everything a message about this verdict may name."""
        beat = self.beat
        age = self.age or 0.0
        return {
            "path": self.path,
            "max_age": self.max_age,
            "age": age,
            "over": max(age - self.max_age, 0.0),
            "ahead": max(-age, 0.0),
            "error": self.error,
            "pid": beat.pid if beat else None,
            "revision": beat.revision if beat else None,
            "guilds": beat.guilds if beat else None,
        }


def check_heartbeat(
    path: Path, *, max_age: float = DEFAULT_MAX_AGE, now: float | None = None
) -> Health:
    """Healthy when ``path`` was written at most ``max_age`` seconds ago, connected."""
    try:
        beat = read_heartbeat(path)
    except FileNotFoundError:
        return Health("missing", path, max_age)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return Health("unreadable", path, max_age, error=str(exc))
    age = (time.time() if now is None else now) - beat.time
    if age < -FUTURE_TOLERANCE:
        # Dated ahead of this clock: a forged or stale file from a skewed clock
        # would otherwise count as fresh until that moment arrives.
        return Health("future", path, max_age, beat, age)
    # A heartbeat from a few seconds in the future (clocks adjusted) counts as just written.
    age = max(age, 0.0)
    if age > max_age:
        return Health("stale", path, max_age, beat, age)
    if not beat.connected:
        return Health("disconnected", path, max_age, beat, age)
    return Health("healthy", path, max_age, beat, age)
