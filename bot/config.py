"""The bot's settings: one YAML file read by :func:`load_config`, checked by a schema.

The file's layout is declared once, as pydantic models (one per section); each
field carries its rule as constraints and its wording as ``description``, so a
bad value is reported the same way everywhere, naming the file and the key::

    config.yaml: discord.guild_ids[1]: must be a Discord id (a positive integer), got 'abc'

Secrets never live here: the token comes from the ``DISCORD_TOKEN`` environment
variable only, and a ``token`` key in the file is refused without echoing it.
Relative paths are resolved against the folder of the config file, so the bot
behaves the same whatever directory it is started from.

This module does not import discord, so the console and the tests of the config
stay light.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import PydanticCustomError

from knowledge.files import read_regular_bytes
from knowledge.safe_yaml import YamlDuplicateKey, YamlTooLarge, load_yaml
from knowledge.source import Caps, Source, SourceError, check_api_url, parse_source
from knowledge.source.spec import DEFAULT_API_URL

if TYPE_CHECKING:
    from knowledge.llm import LlmSettings

log = logging.getLogger(__name__)

__all__ = [
    "BotConfig",
    "ConfigError",
    "Cooldown",
    "GapsConfig",
    "LlmConfig",
    "MetricsConfig",
    "SupportConfig",
    "data_dir_of",
    "load_config",
    "parse_config",
]

#: Largest config file read (the example with every key is a few kB).
MAX_CONFIG_BYTES = 1024 * 1024
DEFAULT_COOLDOWN_RATE = 3
DEFAULT_COOLDOWN_PER = 10.0
#: Minutes between two looks at the wiki folder for changed pages (0: never).
DEFAULT_REFRESH_MINUTES = 10.0
MAX_REFRESH_MINUTES = 24 * 60
#: Hours an untouched /support draft is kept.
DEFAULT_DRAFT_HOURS = 24.0
#: Seconds an answer may take before the bot shows "thinking…" (see bot.respond.in_time).
DEFAULT_THINKING_AFTER = 1.0
#: Days an unanswered request is kept for the gaps report (``gaps.keep_days``).
DEFAULT_GAPS_KEEP_DAYS = 90
#: At most this much: the deferral must still reach Discord within its 3 seconds.
MAX_THINKING_AFTER = 2.0
MAX_DRAFT_HOURS = 30 * 24
DEFAULT_METRICS_HOST = "127.0.0.1"
_SECRET_KEYS = frozenset(
    {"token", "discord_token", "bot_token", "secret", "client_secret", "api_key", "key"}
)
_NO_SECRETS = "secrets are never read from the config file; set DISCORD_TOKEN"
_NO_LLM_KEY = (
    "secrets are never read from the config file; put the key in an environment variable"
    " and name that variable in llm.api_key_env"
)


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class Cooldown:
    """``rate`` uses of one command per ``per`` seconds, per user."""

    rate: int = DEFAULT_COOLDOWN_RATE
    per: float = DEFAULT_COOLDOWN_PER


@dataclass(frozen=True, slots=True)
class SupportConfig:
    """/support: where tickets are posted, who may handle them, and the intake's limits."""

    #: The help forum channel posts go to; None: tickets are kept but not posted.
    forum_channel_id: int | None = None
    #: Members with one of these roles (or Manage Threads) handle tickets.
    staff_role_ids: tuple[int, ...] = ()
    draft_hours: float = DEFAULT_DRAFT_HOURS
    #: At most ``rate_count`` tickets per user in ``rate_minutes`` (0: no limit).
    rate_count: int = 3
    rate_minutes: float = 10.0
    #: Answer new forum posts with the missing checklist items (Message Content intent).
    nudge: bool = False
    #: A tag of the help forum (its name or id) put on every ticket's post: a forum with
    #: "Require tags" on refuses a post without one (Discord's error 40067).
    default_tag: str | None = None
    #: A role pinged on a new ticket's post (None: no ping); at most once per ticket and
    #: once per ``ping_quiet_minutes`` over all tickets.
    helper_role_id: int | None = None
    ping_quiet_minutes: float = 10.0
    #: Claim / Release buttons on open tickets for staff, and the forum's "claimed" tag.
    claim: bool = False
    #: A status tag (open, solved, closed) put on a post in Discord's UI moves its ticket.
    follow_tags: bool = True
    #: "Was this helpful?" (one click, the asker's) when a ticket is solved.
    feedback: bool = False
    #: Days after a helper's last message with no answer from the asker before the bot
    #: reminds them (0: never), and days of silence before it closes the ticket (0: never).
    remind_after_days: float = 0.0
    close_after_days: float = 0.0
    #: A channel whose private threads hold the tickets askers file privately (None: off).
    private_channel_id: int | None = None


# --- llm: answers in words from a model server (off unless enabled) -------------------


@dataclass(frozen=True, slots=True)
class LlmConfig:
    """``/ask``: an OpenAI-compatible model server answering from the wiki (``llm.*``)."""

    base_url: str
    model: str
    #: The name of the environment variable holding the API key (never the key itself).
    api_key_env: str | None = None
    connect_timeout: float = 5.0
    first_token_timeout: float = 30.0
    idle_timeout: float = 15.0
    total_timeout: float = 90.0
    max_tokens: int = 400
    max_chars: int = 2400
    max_concurrent: int = 4
    #: Seconds between two questions of one user (0: no limit).
    cooldown_seconds: float = 20.0
    #: Show the answer above the suggested pages of the /support check too.
    in_support: bool = True

    def settings(self, environ: Mapping[str, str]) -> LlmSettings:
        """The client's settings, the key read from ``environ`` now (never stored here)."""
        from knowledge.llm import LlmSettings

        key = environ.get(self.api_key_env, "").strip() if self.api_key_env else ""
        return LlmSettings(
            self.base_url,
            self.model,
            key or None,
            connect_timeout=self.connect_timeout,
            first_token_timeout=self.first_token_timeout,
            idle_timeout=self.idle_timeout,
            total_timeout=self.total_timeout,
            max_tokens=self.max_tokens,
            max_chars=self.max_chars,
        )


@dataclass(frozen=True, slots=True)
class GapsConfig:
    """``gaps:``: what people asked that the wiki did not answer (``/wiki gaps``)."""

    enabled: bool = True
    keep_days: int = DEFAULT_GAPS_KEEP_DAYS


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    """Where Prometheus metrics are served: ``port`` None means nowhere (the default)."""

    port: int | None = None
    #: Loopback by default: a scraper on the same host (or a sidecar) reads them.
    host: str = DEFAULT_METRICS_HOST


@dataclass(frozen=True, slots=True)
class BotConfig:
    #: Guilds the commands are synced to at start-up (empty: no sync at start-up).
    guild_ids: tuple[int, ...]
    #: Members with one of these roles may run admin commands (besides Manage Server).
    admin_role_ids: tuple[int, ...]
    #: The local wiki folder (``wiki.path``); None when the wiki is fetched (``wiki.source``).
    wiki_dir: Path | None
    #: ``https://github.com/<owner>/<repo>/blob/<branch>/``: page links are built on it.
    link_base: str | None
    #: Where the search index lives; None means the per-wiki cache folder.
    data_dir: Path | None
    cooldown: Cooldown
    #: Minutes between two re-reads of the wiki folder (changed pages only); 0: never.
    refresh_minutes: float = DEFAULT_REFRESH_MINUTES
    support: SupportConfig = SupportConfig()
    #: The file this was read from (for messages), or None when built in code.
    source: Path | None = None
    #: Where the bot fetches and follows the wiki from (``wiki.source``), if anywhere.
    wiki_source: Source | None = None
    api_url: str = DEFAULT_API_URL
    #: Channel the "wiki changed" announcements go to (``wiki.announce_channel``).
    announce_channel: int | None = None
    #: Limits on one fetch (``wiki.max_*``).
    caps: Caps = dataclass_field(default_factory=Caps)
    #: Fetch over HTTP/2 when the optional ``h2`` package is installed (``wiki.http2``).
    http2: bool = False
    #: Seconds an answer may take before "thinking…" is shown (``discord.thinking_after``):
    #: answers ready sooner go out in the first response.
    thinking_after: float = DEFAULT_THINKING_AFTER
    #: Record the requests the wiki did not answer (``gaps.enabled``), kept
    #: ``gaps.keep_days`` days.
    gaps: GapsConfig = GapsConfig()
    #: Answers in words (``llm.*``); None: off, and the bot behaves as without it.
    llm: LlmConfig | None = None
    #: The Prometheus endpoint (``metrics.port``, ``metrics.host``): off by default.
    metrics: MetricsConfig = MetricsConfig()


# --- the file's schema ------------------------------------------------------------------
# A field's ``description`` completes "must be ..."; an item's wording sits in
# ``json_schema_extra["item"]``. Validators raise ValueError and let that wording speak,
# or a ``_fail`` error when the value is well-formed but unusable.


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("config", "{message}", {"message": message})


def _digits_to_int(value: Any) -> Any:
    # Ids are often pasted as strings (JavaScript cannot hold them as numbers).
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def _none_to_empty(value: Any) -> Any:
    return () if value is None else value


def _unique(ids: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(ids))


def _folder(value: Any, info: ValidationInfo) -> Any:
    if value is None:
        return None
    path = Path(value).expanduser()
    base = (info.context or {}).get("base") or Path.cwd()
    return path if path.is_absolute() else (Path(base) / path).resolve()


def _existing(path: Path) -> Path:
    if not path.is_dir():
        raise _fail(f"folder not found: {path}")
    return path


def _https(value: str | None) -> str | None:
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.netloc or " " in value:
        raise ValueError("not an https URL")
    return value if value.endswith("/") else value + "/"


def _source(value: str | None) -> Source | None:
    if not value:
        return None
    try:
        return parse_source(value)
    except SourceError as exc:
        raise _fail(str(exc)) from None


def _api_url(value: str) -> str:
    try:
        return check_api_url(value)
    except SourceError as exc:
        raise _fail(str(exc)) from None


def _off_or_range(value: float) -> float:
    if value != 0 and not 1 <= value <= MAX_REFRESH_MINUTES:
        raise ValueError("out of range")
    return value


_DiscordId = Annotated[int, BeforeValidator(_digits_to_int), Field(strict=True, gt=0, lt=2**64)]
_Ids = Annotated[
    tuple[_DiscordId, ...],
    BeforeValidator(_none_to_empty),
    AfterValidator(_unique),
    Field(
        default=(),
        description="a list of Discord ids",
        json_schema_extra={"item": "a Discord id (a positive integer)"},
    ),
]
_Text = Annotated[str, StringConstraints(strict=True, strip_whitespace=True, min_length=1)]
_Seconds = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Discord(_Section):
    guild_ids: _Ids
    admin_role_ids: _Ids
    thinking_after: Annotated[
        float,
        Field(
            default=DEFAULT_THINKING_AFTER,
            strict=True,
            ge=0,
            le=MAX_THINKING_AFTER,
            allow_inf_nan=False,
            description=f"a number of seconds from 0 to {MAX_THINKING_AFTER:g}",
        ),
    ]


_MIB = 1024 * 1024
_DEFAULT_CAPS = Caps()


def _cap(default: int, low: int, high: int, what: str) -> Any:
    return Field(
        default=default, strict=True, ge=low, le=high, description=f"{what} from {low} to {high}"
    )


class _Wiki(_Section):
    path: Annotated[
        _Text | None,
        AfterValidator(_folder),
        AfterValidator(lambda p: None if p is None else _existing(p)),
        Field(default=None, description="the folder holding the wiki's Markdown pages"),
    ]
    source: Annotated[
        _Text | None,
        AfterValidator(_source),
        Field(default=None, description="github:OWNER/REPO[@REF] or an https:// .tar.gz URL"),
    ]
    api_url: Annotated[
        _Text,
        AfterValidator(_api_url),
        Field(default=DEFAULT_API_URL, description="the GitHub API's https:// URL"),
    ]
    announce_channel: Annotated[
        _DiscordId | None,
        Field(default=None, description="a Discord channel id (a positive integer)"),
    ]
    max_download_mb: Annotated[int, _cap(_DEFAULT_CAPS.download_bytes // _MIB, 1, 4096, "MiB")]
    max_files: Annotated[int, _cap(_DEFAULT_CAPS.members, 10, 1_000_000, "a count")]
    max_unpacked_mb: Annotated[int, _cap(_DEFAULT_CAPS.unpacked_bytes // _MIB, 1, 16384, "MiB")]
    max_file_mb: Annotated[int, _cap(_DEFAULT_CAPS.file_bytes // _MIB, 1, 1024, "MiB")]
    max_depth: Annotated[int, _cap(_DEFAULT_CAPS.depth, 1, 64, "a number of folders")]
    http2: Annotated[bool, Field(default=False, strict=True, description="true or false")]
    link_base: Annotated[
        Annotated[str, StringConstraints(strict=True, strip_whitespace=True)] | None,
        AfterValidator(_https),
        Field(default=None, description="an https:// URL"),
    ]
    data_dir: Annotated[
        _Text | None, AfterValidator(_folder), Field(default=None, description="a folder path")
    ]
    refresh_minutes: Annotated[
        float,
        Field(strict=True, allow_inf_nan=False),
        AfterValidator(_off_or_range),
        Field(
            default=DEFAULT_REFRESH_MINUTES,
            description=f"a number of minutes: 0 (off) or 1 to {MAX_REFRESH_MINUTES}",
        ),
    ]


class _Cooldown(_Section):
    rate: Annotated[
        int,
        Field(
            default=DEFAULT_COOLDOWN_RATE,
            strict=True,
            ge=1,
            le=100,
            description="a whole number from 1 to 100",
        ),
    ]
    per: Annotated[
        _Seconds,
        Field(default=DEFAULT_COOLDOWN_PER, description="a number of seconds, more than 0"),
    ]


class _Search(_Section):
    #: No longer used: the /search pager's buttons rebuild from their custom id and work
    #: for as long as the message exists. Still accepted so older files keep loading.
    pager_timeout: Any = None


def _days() -> Any:
    return Field(
        default=0.0,
        strict=True,
        ge=0,
        le=365,
        allow_inf_nan=False,
        description="a number of days from 0 (never) to 365",
    )


class _Support(_Section):
    forum_channel_id: Annotated[
        _DiscordId | None, Field(default=None, description="the id of the help forum channel")
    ]
    staff_role_ids: _Ids
    draft_hours: Annotated[
        float,
        Field(
            default=DEFAULT_DRAFT_HOURS,
            strict=True,
            gt=0,
            le=MAX_DRAFT_HOURS,
            allow_inf_nan=False,
            description=f"a number of hours, more than 0 and at most {MAX_DRAFT_HOURS}",
        ),
    ]
    rate_count: Annotated[
        int,
        Field(default=3, strict=True, ge=0, le=100, description="a whole number from 0 to 100"),
    ]
    rate_minutes: Annotated[
        float,
        Field(
            default=10.0,
            strict=True,
            gt=0,
            le=24 * 60,
            allow_inf_nan=False,
            description="a number of minutes, more than 0 and at most 1440",
        ),
    ]
    nudge: Annotated[bool, Field(default=False, strict=True, description="true or false")]
    default_tag: Annotated[
        Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int) else v)] | None,
        StringConstraints(strict=True, strip_whitespace=True, min_length=1, max_length=100),
        Field(default=None, description="the name (or id) of a tag of the help forum"),
    ]
    helper_role_id: Annotated[
        _DiscordId | None, Field(default=None, description="the id of the helpers' role")
    ]
    claim: Annotated[bool, Field(default=False, strict=True, description="true or false")]
    follow_tags: Annotated[bool, Field(default=True, strict=True, description="true or false")]
    feedback: Annotated[bool, Field(default=False, strict=True, description="true or false")]
    private_channel_id: Annotated[
        _DiscordId | None, Field(default=None, description="the id of a text channel")
    ]
    remind_after_days: Annotated[float, _days()]
    close_after_days: Annotated[float, _days()]
    ping_quiet_minutes: Annotated[
        float,
        Field(
            default=10.0,
            strict=True,
            ge=0,
            le=24 * 60,
            allow_inf_nan=False,
            description="a number of minutes from 0 to 1440",
        ),
    ]


class _Gaps(_Section):
    enabled: Annotated[bool, Field(default=True, strict=True, description="true or false")]
    keep_days: Annotated[
        int,
        Field(
            default=DEFAULT_GAPS_KEEP_DAYS,
            strict=True,
            ge=1,
            le=3650,
            description="a whole number of days from 1 to 3650",
        ),
    ]


def _http_url(value: str | None) -> str | None:
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in value:
        raise ValueError("not an http(s) URL")
    if parts.username or parts.password:
        raise _fail("put no password in the URL: name its variable in llm.api_key_env")
    return value.rstrip("/")


def _env_name(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,99}", value):
        # Never echoed: what was pasted here may well be the key itself.
        raise _fail(
            "must be the NAME of an environment variable (e.g. LLM_API_KEY), not the key;"
            " the value given is not shown"
        )
    return value


def _limit(default: float, low: float, high: float, unit: str) -> Any:
    return Field(
        default=default,
        strict=True,
        ge=low,
        le=high,
        allow_inf_nan=False,
        description=f"a number of {unit} from {low:g} to {high:g}",
    )


class _Llm(_Section):
    enabled: Annotated[bool, Field(default=False, strict=True, description="true or false")]
    base_url: Annotated[
        str | None,
        AfterValidator(_http_url),
        Field(default=None, description="the server's http(s) URL, e.g. http://gpu-box:8000/v1"),
    ]
    model: Annotated[
        str | None,
        Field(
            default=None,
            min_length=1,
            max_length=200,
            description="the model's id as the server's /v1/models lists it",
        ),
    ]
    api_key_env: Annotated[
        str | None,
        AfterValidator(_env_name),
        Field(
            default=None,
            description="the NAME of an environment variable (e.g. LLM_API_KEY), not the key",
        ),
    ]
    connect_timeout: Annotated[float, _limit(5.0, 0.1, 60, "seconds")]
    first_token_timeout: Annotated[float, _limit(30.0, 0.5, 600, "seconds")]
    idle_timeout: Annotated[float, _limit(15.0, 0.5, 600, "seconds")]
    total_timeout: Annotated[float, _limit(90.0, 1, 840, "seconds")]
    max_tokens: Annotated[
        int, Field(default=400, strict=True, ge=16, le=4096, description="a whole number, 16-4096")
    ]
    max_chars: Annotated[
        int,
        Field(default=2400, strict=True, ge=200, le=3500, description="a whole number, 200-3500"),
    ]
    max_concurrent: Annotated[
        int, Field(default=4, strict=True, ge=1, le=64, description="a whole number from 1 to 64")
    ]
    cooldown_seconds: Annotated[float, _limit(20.0, 0, 3600, "seconds")]
    in_support: Annotated[bool, Field(default=True, strict=True, description="true or false")]


def _llm_config(llm: _Llm, name: str) -> LlmConfig | None:
    if not llm.enabled:
        return None
    for key in ("base_url", "model"):
        if getattr(llm, key) is None:
            wording = _Llm.model_fields[key].description
            raise ConfigError(f"{name}: llm.{key}: is required when llm.enabled is true: {wording}")
    assert llm.base_url is not None and llm.model is not None
    return LlmConfig(
        base_url=llm.base_url,
        model=llm.model,
        api_key_env=llm.api_key_env,
        connect_timeout=llm.connect_timeout,
        first_token_timeout=llm.first_token_timeout,
        idle_timeout=llm.idle_timeout,
        total_timeout=llm.total_timeout,
        max_tokens=llm.max_tokens,
        max_chars=llm.max_chars,
        max_concurrent=llm.max_concurrent,
        cooldown_seconds=llm.cooldown_seconds,
        in_support=llm.in_support,
    )


class _Metrics(_Section):
    port: Annotated[
        int | None,
        Field(
            default=None,
            strict=True,
            ge=1,
            le=65535,
            description="a TCP port from 1 to 65535 (leave it out: no metrics endpoint)",
        ),
    ]
    host: Annotated[
        _Text,
        Field(default=DEFAULT_METRICS_HOST, description="an address to listen on, e.g. 127.0.0.1"),
    ]


class _File(_Section):
    discord: _Discord
    wiki: _Wiki
    cooldown: _Cooldown
    search: _Search
    support: _Support
    gaps: _Gaps
    llm: _Llm
    metrics: _Metrics


# --- errors ---------------------------------------------------------------------------


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key(loc: tuple[int | str, ...]) -> str:
    key = ""
    for part in loc:
        key += f"[{part}]" if isinstance(part, int) else f".{part}" if key else str(part)
    return key


def _message(error: Any) -> str:
    """One line for pydantic's first error: the rule of the field it is about."""
    loc = tuple(error["loc"])
    model: type[BaseModel] | None = _File
    field = None
    for part in (p for p in loc if isinstance(p, str)):
        if model is None or part not in model.model_fields:
            field = None
            break
        field = model.model_fields[part]
        nested = field.annotation
        model = nested if isinstance(nested, type) and issubclass(nested, BaseModel) else None
    kind = error["type"]
    if kind == "config":
        return error["msg"]
    if kind == "extra_forbidden":
        parent = _File if len(loc) == 1 else _File.model_fields[str(loc[0])].annotation
        what = "section" if parent is _File else "key"
        return f"unknown {what}; expected one of {', '.join(sorted(parent.model_fields))}"
    if model is not None:
        return f"must be a mapping of keys, got {_show(error['input'])}"
    wording = field.description if field is not None else None
    if kind == "missing" or (error["input"] is None and not isinstance(loc[-1], int)):
        return f"is required: {wording}" if wording else "is required"
    if isinstance(loc[-1], int) and field is not None and field.json_schema_extra:
        wording = field.json_schema_extra.get("item", wording)  # type: ignore[union-attr]
    return f"must be {wording or 'valid'}, got {_show(error['input'])}"


def _sections(data: dict[Any, Any], name: str) -> dict[str, Any]:
    """``data`` with string keys, a missing or empty section as ``{}``; secrets refused."""
    sections: dict[str, Any] = {section: {} for section in _File.model_fields}
    for section, body in data.items():
        if str(section).casefold() in _SECRET_KEYS:
            raise ConfigError(f"{name}: {section}: {_NO_SECRETS}")
        if isinstance(body, dict):
            for key in body:
                if str(key).casefold() in _SECRET_KEYS:
                    why = _NO_LLM_KEY if str(section) == "llm" else _NO_SECRETS
                    raise ConfigError(f"{name}: {section}.{key}: {why}")
            body = {str(key): value for key, value in body.items()}
        if body is not None:
            sections[str(section)] = body
    return sections


def parse_config(data: Any, *, name: str = "<config>", base: Path | None = None) -> BotConfig:
    """Check a mapping as read from YAML and build a :class:`BotConfig`."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: the file must hold a mapping of sections, got {_show(data)}")
    try:
        file = _File.model_validate(_sections(data, name), context={"base": base or Path.cwd()})
    except ValidationError as exc:
        # A misspelt key is the likeliest mistake, and explains a "required" error too.
        errors = exc.errors()
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        raise ConfigError(f"{name}: {_key(tuple(first['loc']))}: {_message(first)}") from None
    if file.search.pager_timeout is not None:
        log.warning(
            "%s: search.pager_timeout is no longer used (the /search pager has no time limit);"
            " it can be removed",
            name,
        )
    wiki = file.wiki
    if wiki.path is None and wiki.source is None:
        raise ConfigError(
            f"{name}: wiki.path: is required: the folder holding the wiki's Markdown pages"
            " (or set wiki.source: github:OWNER/REPO to fetch it)"
        )
    if wiki.path is not None and wiki.source is not None:
        raise ConfigError(f"{name}: wiki.source: set wiki.path or wiki.source, not both")
    caps = Caps(
        download_bytes=wiki.max_download_mb * _MIB,
        members=wiki.max_files,
        unpacked_bytes=wiki.max_unpacked_mb * _MIB,
        file_bytes=wiki.max_file_mb * _MIB,
        depth=wiki.max_depth,
    )
    return BotConfig(
        guild_ids=file.discord.guild_ids,
        admin_role_ids=file.discord.admin_role_ids,
        wiki_dir=file.wiki.path,
        link_base=file.wiki.link_base,
        data_dir=file.wiki.data_dir,
        cooldown=Cooldown(rate=file.cooldown.rate, per=file.cooldown.per),
        refresh_minutes=file.wiki.refresh_minutes,
        support=SupportConfig(
            forum_channel_id=file.support.forum_channel_id,
            staff_role_ids=file.support.staff_role_ids,
            draft_hours=file.support.draft_hours,
            rate_count=file.support.rate_count,
            rate_minutes=file.support.rate_minutes,
            nudge=file.support.nudge,
            default_tag=file.support.default_tag,
            helper_role_id=file.support.helper_role_id,
            ping_quiet_minutes=file.support.ping_quiet_minutes,
            claim=file.support.claim,
            follow_tags=file.support.follow_tags,
            feedback=file.support.feedback,
            remind_after_days=file.support.remind_after_days,
            close_after_days=file.support.close_after_days,
            private_channel_id=file.support.private_channel_id,
        ),
        wiki_source=wiki.source,
        api_url=wiki.api_url,
        announce_channel=wiki.announce_channel,
        caps=caps,
        http2=wiki.http2,
        thinking_after=file.discord.thinking_after,
        gaps=GapsConfig(enabled=file.gaps.enabled, keep_days=file.gaps.keep_days),
        llm=_llm_config(file.llm, name),
        metrics=MetricsConfig(port=file.metrics.port, host=file.metrics.host),
    )


def load_config(path: str | Path) -> BotConfig:
    """Read and check ``path``; raise :class:`ConfigError` naming the file and key."""
    path = Path(path)
    try:
        # A regular file of bounded size only: a FIFO here would block forever.
        text = read_regular_bytes(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: config file not found (copy config.example.yaml and edit it)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}") from None
    try:
        data = load_yaml(text, unique_keys=True)
    except YamlTooLarge as exc:
        raise ConfigError(f"{path}: refused: {exc}") from None
    except YamlDuplicateKey as exc:  # YAML would keep the last one silently
        first, second = exc.lines
        raise ConfigError(
            f"{path}: {exc.key}: given twice (lines {first} and {second}); keep one"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    config = parse_config(data, name=str(path), base=path.resolve().parent)
    return replace(config, source=path)


def data_dir_of(config: BotConfig) -> Path:
    """The data folder: ``wiki.data_dir``, else one per wiki folder or per source."""
    from knowledge.service import default_data_dir
    from knowledge.source.follow import source_data_dir

    if config.data_dir is not None:
        return config.data_dir
    if config.wiki_source is not None:
        return source_data_dir(config.wiki_source)
    assert config.wiki_dir is not None
    return default_data_dir(config.wiki_dir)
