"""The stand-in itself: Discord's REST API and gateway on 127.0.0.1.

:class:`Standin` is an aiohttp application serving ``/api/v10/...`` and a gateway
websocket on a random loopback port. It answers discord.py's start-up sequence,
stores synced command schemas, injects INTERACTION_CREATE events, accepts the
bot's replies while enforcing Discord's limits, and records every request.
See the package docstring for the API tour.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime as dt
import hashlib
import ipaddress
import json
import logging
import math
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import aiohttp
from aiohttp import web

from . import limits, openapi
from .builders import (
    CONTEXT_NAMES,
    build_chat_input_options,
    find_command,
    find_component,
    mirror_modal,
    select_resolved,
    snowflake_of,
)
from .mentions import CHANNEL_DEFAULT_PARSE, INTERACTION_DEFAULT_PARSE, compute_pings
from .payloads import (
    DEFAULT_IDS,
    EVERYONE_PERMISSIONS,
    ChannelSpec,
    GuildSpec,
    MemberSpec,
    Snowflakes,
    channel_json,
    channel_permissions,
    default_guild,
    guild_create_json,
    iso_now,
    member_json,
    member_permissions,
    role_json,
    user_json,
)
from .records import (
    InteractionRecord,
    MentionRecord,
    NonLoopbackRequest,
    Problem,
    RecordedRequest,
    SentFile,
    StandinFailure,
    StandinTimeout,
)

__all__ = [
    "DM_CHANNEL_ID",
    "FOREIGN_GUILD_ID",
    "PRIVATE_CHANNEL_ID",
    "PRIVILEGED_INTENTS",
    "LoopbackConnector",
    "Standin",
    "StandinConfig",
    "is_loopback",
]

log = logging.getLogger(__name__)

API_PREFIX = "/api/v10"
GATEWAY_PATH = "/gateway-ws"
CDN_PREFIX = "/cdn/attachments"
EPHEMERAL = 1 << 6
LOADING = 1 << 7
SUPPRESS_EMBEDS = 1 << 2
INTENT_GUILD_MESSAGES = 1 << 9
INTENT_MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = (1 << 1) | (1 << 8) | (1 << 15)  # members, presences, message content
INTENT_PRESENCES = 1 << 8
#: A guild the bot is not in, for user-installed commands used there.
FOREIGN_GUILD_ID = 910000000000000900
#: The DM channel between a user and the bot (and a DM between two users).
DM_CHANNEL_ID = 910000000000000601
PRIVATE_CHANNEL_ID = 910000000000000602
#: What Discord grants a user-installed app in a server it is not in, or in a DM.
USER_APP_PERMISSIONS = (1 << 14) | (1 << 15) | (1 << 17) | (1 << 18)
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
READ_MESSAGE_HISTORY = 1 << 16
PRIVATE_THREAD = 12
MANAGE_THREADS = 1 << 34
#: A forum's flag: a post must have a tag (else 400, 40067).
REQUIRE_TAG = 1 << 4
#: What a thread's owner may change in it without Manage Threads.
OWNER_EDITABLE = frozenset({"name", "archived", "auto_archive_duration", "applied_tags"})
SEND_MESSAGES_IN_THREADS = 1 << 38
CREATE_PUBLIC_THREADS = 1 << 35
CREATE_PRIVATE_THREADS = 1 << 36
TEXT_LIKE_CHANNELS = {0, 5, 10, 11, 12}
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}

T = TypeVar("T")
RECORD = web.RequestKey("record", RecordedRequest)
SENT_JSON = web.ResponseKey("json", object)


#: Discord's per-route limits as its answers' headers show them: (requests, seconds) by
#: "METHOD route", each bucket per major parameter (the channel, guild or interaction
#: token). Routes not named use ``StandinConfig.rate_limit``.
ROUTE_LIMITS: Final = {
    "POST channel_message": (5, 5.0),  # messages sent in one channel
    "PATCH channel": (5, 5.0),  # edits of one channel or thread (archive, lock, tags)
}
#: Routes outside the global limit: interaction responses and their webhooks.
GLOBAL_EXEMPT: Final = frozenset({"interaction_callback", "followup", "webhook_message"})


@dataclass
class StandinConfig:
    """Knobs of one stand-in run. Defaults suit tests; change them before ``run``."""

    token: str = "standin.bot-token.not-a-secret"
    guild: GuildSpec = field(default_factory=default_guild)
    bot_id: int = DEFAULT_IDS.bot
    default_user_id: int = DEFAULT_IDS.alice
    default_channel_id: int = DEFAULT_IDS.general
    response_deadline: float = 3.0  # seconds from INTERACTION_CREATE to the first callback
    token_lifetime: float = 900.0  # follow-up token lifetime (15 minutes)
    wait_timeout: float = 5.0  # default for helpers waiting on a follow-up or request
    startup_timeout: float = 10.0
    guild_ready_timeout: float = 0.05  # forced onto the client (discord.py waits 2 s)
    chunk_guilds_at_startup: bool | None = False  # forced onto the client; None: leave it
    error_loggers: tuple[str, ...] = ("discord", "bot")  # ERROR records here fail the test
    allowed_privileged_intents: int = PRIVILEGED_INTENTS  # as toggled in the dev portal
    heartbeat_interval_ms: int = 41250
    settle_time: float = 0.02  # quiet time after the scenario before shutting down
    attachment_size_limit: int = 10 * 1024 * 1024
    #: Validate request bodies and the stand-in's success responses against the OpenAPI spec.
    check_spec: bool = True
    #: Requests per bucket (route and channel, guild or interaction) and window, in seconds.
    #: Every answer carries the X-RateLimit-* headers; going over is answered 429.
    rate_limit: tuple[int, float] = (50, 1.0)
    #: Per-route limits that differ from ``rate_limit`` (see :data:`ROUTE_LIMITS`).
    route_limits: dict[str, tuple[int, float]] = field(default_factory=lambda: dict(ROUTE_LIMITS))
    #: The bot's global limit over every route but interaction responses (Discord: 50/s);
    #: going over is a 429 with ``global: true``.
    global_limit: tuple[int, float] = (50, 1.0)
    #: False: the bot is not in the guild yet (READY lists no guild) until ``join_guild()``.
    joined: bool = True
    #: Seconds of network delay each way, as between a bot's host and Discord (0: loopback
    #: speed): every REST request waits this long before it is served and its answer this
    #: long before it leaves; every gateway message reaches the bot this long after it
    #: was sent (in order). The 3 s deadline of an interaction runs from its creation, so
    #: the bot has two delays less than 3 s to answer. ``STANDIN_DELAY`` (seconds) in the
    #: environment sets it for the ``discord_standin`` fixture.
    round_trip_delay: float = 0.0


class Standin:
    """Discord on loopback, for one test. Create, ``await start()``, ``await close()``.

    Usually started for you by :func:`~tests.discord_standin.runner.run_bot` or the
    ``discord_standin`` fixture, which also point discord.py at it.
    """

    def __init__(self, config: StandinConfig | None = None) -> None:
        self.config = config or StandinConfig()
        self.guild: GuildSpec = self.config.guild
        self.app_id: int = self.config.bot_id
        self.bot_member: MemberSpec = self.guild.member(self.app_id) or MemberSpec(
            self.app_id, "WikiBot", bot=True
        )
        self.ids = Snowflakes()
        self.port = 0
        self.client: Any = None  # the discord.Client under test, set by the runner
        # Everything recorded, for assertions:
        self.requests: list[RecordedRequest] = []
        self.interactions: dict[int, InteractionRecord] = {}
        self.commands: dict[int | None, list[dict[str, Any]]] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.threads: dict[int, dict[str, Any]] = {}
        #: thread id -> ids of the users added to it (PUT .../thread-members/{user}).
        self.thread_members: dict[int, list[int]] = {}
        self.mentions: list[MentionRecord] = []
        self.problems: list[Problem] = []
        self.log_records: list[logging.LogRecord] = []
        self.gateway_received: list[dict[str, Any]] = []
        self.gateway_sent: list[dict[str, Any]] = []
        self.identify: dict[str, Any] | None = None
        self.files: dict[str, tuple[bytes, str]] = {}
        #: Called with each request before it is served; a response returned is sent
        #: instead (see ``faults.fail``).
        self.fault_hooks: list[Callable[[RecordedRequest], web.Response | None]] = []
        #: Called with each request after it was served; a response returned is sent
        #: instead of the real answer, which is lost (see ``faults.lose_answer``).
        self.answer_hooks: list[Callable[[RecordedRequest], web.Response | None]] = []
        self.trace = self._loopback_trace()
        # Internals:
        self._by_token: dict[str, InteractionRecord] = {}
        self._created: dict[int, float] = {}  # interaction id -> when Discord created it
        self._buckets: dict[tuple[str, str], tuple[float, int]] = {}  # -> (window end, used)
        self._forced_429: list[tuple[str, float, bool]] = []
        self._global: tuple[float, int] = (0.0, 0)  # (window end, used)
        self.session_id: str | None = None
        self.resumes = 0
        self._event_log: list[dict[str, Any]] = []
        self.joined = self.config.joined
        self._command_ids: dict[tuple[int | None, int, str], int] = {}
        self._expected_errors: list[list[Any]] = []
        self._ws: web.WebSocketResponse | None = None
        #: Gateway messages on their way to the bot (with ``round_trip_delay``): (due, ws,
        #: payload), sent in order by ``_deliver``.
        self._outbox: asyncio.Queue[tuple[float, web.WebSocketResponse, str]] | None = None
        self._delivery: asyncio.Task[None] | None = None
        self._seq = 0
        self._identified = asyncio.Event()
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._in_flight = 0
        self._last_activity = 0.0

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        """What ``discord.http.Route.BASE`` points at while the stand-in runs."""
        return f"http://127.0.0.1:{self.port}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{GATEWAY_PATH}"

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        self._add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def close(self) -> None:
        if self._delivery is not None:
            self._delivery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._delivery
            self._delivery = None
        if self._ws is not None and not self._ws.closed:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def settle(self) -> None:
        """Wait until no request is in flight and nothing happened for ``settle_time``."""
        loop = asyncio.get_running_loop()
        # With a network delay the bot's next request may still be on its way (or its
        # cause, a gateway event, still on the way to it): quiet for a round trip more.
        needed = self.config.settle_time + 2 * self.config.round_trip_delay
        give_up = loop.time() + 2.0 + 4 * self.config.round_trip_delay
        while loop.time() < give_up:
            quiet = loop.time() - self._last_activity
            if self._in_flight == 0 and quiet >= needed:
                return
            await asyncio.sleep(self.config.settle_time / 2)

    # ------------------------------------------------------------------ problems & waiting
    def _notify(self) -> None:
        if self._loop is not None:
            self._last_activity = self._loop.time()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def add_problem(self, kind: str, text: str) -> None:
        self.problems.append(Problem(kind, text))
        self._notify()

    def unreported(self) -> list[Problem]:
        return [p for p in self.problems if not p.reported]

    def expect_error_log(self, pattern: str) -> None:
        """Allow ERROR log records matching regex ``pattern`` (searched in the message and
        traceback); the run fails if none ever comes. Matches stay in ``log_records``."""
        self._expected_errors.append([re.compile(pattern), 0])

    def on_log_record(self, record: logging.LogRecord, text: str) -> None:
        """Called by the log watcher (from any thread) for WARNING+ records."""
        self.log_records.append(record)
        if record.levelno >= logging.ERROR:
            for entry in self._expected_errors:
                if entry[0].search(text):
                    entry[1] += 1
                    break
            else:
                self.problems.append(Problem("error-log", text))
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._notify)

    def finish_expectations(self) -> None:
        for pattern, count in self._expected_errors:
            if not count:
                self.problems.append(
                    Problem("missing-error", f"expected an ERROR log matching {pattern.pattern!r}")
                )

    def report(
        self,
        headline: str,
        problems: Sequence[Problem] = (),
        interaction: InteractionRecord | None = None,
    ) -> str:
        """A readable failure text; marks the given problems as reported."""
        lines = [headline]
        for problem in problems:
            problem.reported = True
            lines.append(f"- [{problem.kind}] {problem.text}")
        if interaction is not None:
            lines.append(f"Requests made for {interaction.describe_target()}:")
            if interaction.requests:
                lines += [f"  {r.describe()}" for r in interaction.requests]
            else:
                lines.append(
                    "  none: the bot never answered (a user would see 'This interaction"
                    " failed'). Is the command or view registered, did its callback raise?"
                )
        failed = [r for r in self.requests if r.status >= 400 and r.interaction is not interaction]
        if failed:
            other = "Other requests" if interaction is not None else "Requests"
            lines.append(f"{other} answered with an error:")
            lines += [f"  {r.describe()}" for r in failed[-10:]]
        return "\n".join(lines)

    async def wait_until(
        self,
        check: Callable[[], T | None],
        *,
        timeout: float | None = None,
        what: str = "something",
        interaction: InteractionRecord | None = None,
        poll: float | None = None,
    ) -> T:
        """Poll ``check`` on every change until it returns non-None.

        Fails fast with :class:`StandinFailure` if a problem (ERROR log, unknown
        route, ...) turns up meanwhile, and with :class:`StandinTimeout` after
        ``timeout`` seconds (default ``config.wait_timeout``). ``poll`` re-checks at
        least that often, for conditions no request or log record signals.
        """
        timeout = self.config.wait_timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = check()
            if found is not None:
                return found
            fresh = self.unreported()
            if fresh:
                raise StandinFailure(
                    self.report(f"While waiting for {what}, the test hit:", fresh, interaction)
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise StandinTimeout(
                    self.report(
                        f"Timed out after {timeout:.2f} s waiting for {what}.",
                        interaction=interaction,
                    )
                )
            changed = self._changed
            if poll is not None:
                remaining = min(remaining, poll)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    async def wait_for_request(
        self,
        predicate: Callable[[RecordedRequest], bool],
        *,
        since: int = 0,
        timeout: float | None = None,
        what: str = "a request",
    ) -> RecordedRequest:
        """Wait for a request (index >= ``since`` in ``requests``) matching ``predicate``."""
        return await self.wait_until(
            lambda: next((r for r in self.requests[since:] if predicate(r)), None),
            timeout=timeout,
            what=what,
        )

    # ------------------------------------------------------------------ loopback guard
    def _loopback_trace(self) -> aiohttp.TraceConfig:
        trace = aiohttp.TraceConfig()

        async def on_request_start(
            session: aiohttp.ClientSession,
            context: Any,
            params: aiohttp.TraceRequestStartParams,
        ) -> None:
            host = params.url.host or ""
            if not is_loopback(host):
                text = f"refused {params.method} {params.url}: only loopback is allowed in tests"
                self.add_problem("non-loopback", text)
                raise NonLoopbackRequest(text)

        trace.on_request_start.append(on_request_start)
        return trace

    def loopback_connector(self) -> LoopbackConnector:
        """The same guard as :attr:`trace`, as the client's connector instead (``run_bot``'s
        ``guard="connector"``): one host test per request, where a trace config makes
        aiohttp build and send its trace events at every step of every request (a cost
        the bot does not have in production; benchmarks use this). Call it in the
        running loop."""
        return LoopbackConnector(self)

    # ------------------------------------------------------------------ records queries
    def requests_to(self, route: str, method: str | None = None) -> list[RecordedRequest]:
        """Recorded requests handled by ``route`` (optionally only one HTTP method)."""
        return [
            r for r in self.requests if r.route == route and (method is None or r.method == method)
        ]

    @property
    def pings(self) -> list[MentionRecord]:
        """Message-bearing requests that would notify someone."""
        return [m for m in self.mentions if m.pings]

    def assert_no_pings(self) -> None:
        """Fail if any message sent so far would ping a user, a role or @everyone."""
        if self.pings:
            lines = [
                f"{m.method} {m.path}: {m.pings} (allowed_mentions={m.allowed_mentions})"
                for m in self.pings
            ]
            raise AssertionError("messages would ping:\n" + "\n".join(lines))

    def channel_messages(self, channel_id: int) -> list[dict[str, Any]]:
        return [m for m in self.messages.values() if int(m["channel_id"]) == channel_id]

    def synced_command(self, name: str, *, kind: int = 1, guild: bool = True) -> dict[str, Any]:
        """The stored schema of a synced command (guild scope by default)."""
        scope = self.guild.id if guild else None
        for command in self.commands.get(scope, []):
            if command["name"] == name and command.get("type", 1) == kind:
                return command
        raise LookupError(f"command {name!r} (type {kind}) was not synced to {scope or 'global'}")

    # ------------------------------------------------------------------ routes
    def _add_routes(self, app: web.Application) -> None:
        api = [
            ("GET", "/users/@me", "get_me", self._get_me),
            ("GET", "/oauth2/applications/@me", "application_info", self._application_info),
            ("GET", "/gateway", "gateway", self._get_gateway),
            ("GET", "/gateway/bot", "gateway_bot", self._get_gateway),
            ("GET", "/applications/{app}/commands", "global_commands", self._get_commands),
            ("PUT", "/applications/{app}/commands", "global_commands", self._put_commands),
            (
                "GET",
                "/applications/{app}/guilds/{guild}/commands",
                "guild_commands",
                self._get_commands,
            ),
            (
                "PUT",
                "/applications/{app}/guilds/{guild}/commands",
                "guild_commands",
                self._put_commands,
            ),
            (
                "POST",
                "/interactions/{iid}/{token}/callback",
                "interaction_callback",
                self._interaction_callback,
            ),
            ("POST", "/webhooks/{app}/{token}", "followup", self._followup),
            ("GET", "/webhooks/{app}/{token}/messages/{mid}", "webhook_message", self._wh_get),
            ("PATCH", "/webhooks/{app}/{token}/messages/{mid}", "webhook_message", self._wh_edit),
            (
                "DELETE",
                "/webhooks/{app}/{token}/messages/{mid}",
                "webhook_message",
                self._wh_delete,
            ),
            ("GET", "/users/@me/guilds", "my_guilds", self._my_guilds),
            ("GET", "/guilds/{guild}", "guild", self._get_guild),
            ("GET", "/guilds/{guild}/channels", "guild_channels", self._get_guild_channels),
            ("GET", "/guilds/{guild}/members/{uid}", "guild_member", self._get_guild_member),
            ("GET", "/guilds/{guild}/threads/active", "active_threads", self._active_threads),
            (
                "GET",
                "/channels/{cid}/threads/archived/public",
                "archived_threads",
                self._public_archived_threads,
            ),
            (
                "GET",
                "/channels/{cid}/users/@me/threads/archived/private",
                "joined_archived_threads",
                self._joined_private_archived_threads,
            ),
            ("GET", "/channels/{cid}", "channel", self._get_channel),
            ("PATCH", "/channels/{cid}", "channel", self._edit_channel),
            ("POST", "/channels/{cid}/messages", "channel_message", self._post_message),
            ("GET", "/channels/{cid}/messages", "channel_messages", self._list_messages),
            ("GET", "/channels/{cid}/messages/{mid}", "message", self._get_message),
            ("PATCH", "/channels/{cid}/messages/{mid}", "message", self._edit_message),
            ("DELETE", "/channels/{cid}/messages/{mid}", "message", self._delete_message),
            ("POST", "/channels/{cid}/threads", "create_thread", self._create_thread),
            (
                "POST",
                "/channels/{cid}/messages/{mid}/threads",
                "create_thread",
                self._create_thread,
            ),
            ("POST", "/channels/{cid}/typing", "typing", self._no_content),
            (
                "PUT",
                "/channels/{cid}/thread-members/{uid}",
                "thread_member",
                self._add_thread_member,
            ),
            (
                "PUT",
                "/channels/{cid}/messages/{mid}/reactions/{emoji}/@me",
                "reaction",
                self._no_content,
            ),
            (
                "DELETE",
                "/channels/{cid}/messages/{mid}/reactions/{emoji}/@me",
                "reaction",
                self._no_content,
            ),
        ]
        resources: dict[str, web.Resource] = {}
        for method, path, name, handler in api:
            full = API_PREFIX + path
            if full not in resources:
                # aiohttp wants unique identifier-like names: "<route>:<n>".
                unique = f"{name}:r{len(resources)}"
                resources[full] = app.router.add_resource(full, name=unique)
            resources[full].add_route(method, handler)
        app.router.add_get(GATEWAY_PATH, self._gateway, name="gateway_ws")
        app.router.add_get(CDN_PREFIX + "/{cid}/{aid}/{filename}", self._cdn, name="cdn:r0")
        app.router.add_route("*", "/{tail:.*}", self._unknown, name="unknown:r0")

    @web.middleware
    async def _middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.path == GATEWAY_PATH:
            return await handler(request)
        self._in_flight += 1
        delay = self.config.round_trip_delay
        try:
            if delay > 0:  # the request on its way to Discord
                await asyncio.sleep(delay)
            record = await self._parse_request(request)
            request[RECORD] = record
            operation = self._check_request_against_spec(record)
            bucket = self._bucket(request, record)
            limited = self._rate_limited(bucket, record)
            try:
                faulted = (hook(record) for hook in self.fault_hooks)
                response = limited or next((r for r in faulted if r is not None), None)
                if response is None:
                    response = await handler(request)
                    lost = (hook(record) for hook in self.answer_hooks)
                    response = next((r for r in lost if r is not None), response)
            except Exception as exc:  # a bug in the stand-in must fail loudly, not hang
                log.exception("stand-in handler crashed")
                self.add_problem("standin-error", f"{request.method} {request.path}: {exc!r}")
                response = self._error(400, 0, f"stand-in error: {exc!r}")
            if limited is None and bucket is not None:
                self._rate_limit_headers(response, bucket)
            record.status = response.status
            record.response = response.get(SENT_JSON)
            record.response_headers = dict(response.headers)
            if record.spec_mismatch and response.status not in (400, 429):
                # Refused by the stand-in's limits (400) the bot already sees Discord's
                # answer; anything else the stand-in accepted, where Discord might not.
                self.add_problem("spec", record.spec_mismatch)
            if operation is not None and 200 <= response.status < 300 and SENT_JSON in response:
                # The stand-in's own answers must have Discord's shapes too.
                mismatch = operation.check_response(response.status, record.response)
                if mismatch is not None:
                    self.add_problem("spec-response", str(mismatch))
            self.requests.append(record)
            if record.interaction is not None:
                record.interaction.requests.append(record)
            self._notify()
            if delay > 0:  # the answer on its way back
                await asyncio.sleep(delay)
            return response
        finally:
            self._in_flight -= 1

    # ------------------------------------------------------------------ rate limits
    def rate_limit_next(
        self, route: str, *, retry_after: float = 0.05, is_global: bool = False, count: int = 1
    ) -> None:
        """Answer the next ``count`` requests to ``route`` (a route name such as
        ``"channel_message"``, or ``"*"``) with 429, as Discord does when a bucket or
        the global limit is exhausted: ``retry_after`` in the body and the headers,
        ``X-RateLimit-Global`` for a global one, and ``Via`` (a 429 without it is
        Cloudflare's ban, which discord.py does not retry)."""
        for _ in range(count):
            self._forced_429.append((route, retry_after, is_global))

    def _bucket(self, request: web.Request, record: RecordedRequest) -> tuple[str, str] | None:
        if record.route in ("unknown", "cdn"):
            return None
        info = request.match_info
        major = info.get("cid") or info.get("guild") or info.get("iid") or info.get("token") or ""
        return f"{record.method} {record.route}", major

    def _rate_limited(
        self, bucket: tuple[str, str] | None, record: RecordedRequest
    ) -> web.Response | None:
        if bucket is None:
            return None
        for i, (route, retry_after, is_global) in enumerate(self._forced_429):
            if route in ("*", record.route):
                del self._forced_429[i]
                return self._too_many(retry_after, is_global=is_global, bucket=bucket)
        now = asyncio.get_running_loop().time()
        if record.route not in GLOBAL_EXEMPT:
            g_limit, g_window = self.config.global_limit
            g_ends, g_used = self._global
            if now >= g_ends:
                g_ends, g_used = now + g_window, 0
            if g_used >= g_limit:
                return self._too_many(g_ends - now, is_global=True, bucket=bucket)
            self._global = (g_ends, g_used + 1)
        limit, window = self._limit_of(bucket)
        ends, used = self._buckets.get(bucket, (0.0, 0))
        if now >= ends:
            ends, used = now + window, 0
        if used >= limit:
            return self._too_many(ends - now, is_global=False, bucket=bucket)
        self._buckets[bucket] = (ends, used + 1)
        return None

    def _limit_of(self, bucket: tuple[str, str]) -> tuple[int, float]:
        return self.config.route_limits.get(bucket[0], self.config.rate_limit)

    def _too_many(
        self, retry_after: float, *, is_global: bool, bucket: tuple[str, str]
    ) -> web.Response:
        response = self._json(
            {
                "message": "You are being rate limited.",
                "retry_after": math.ceil(retry_after * 1000) / 1000,  # never early
                "global": is_global,
                "code": 0,
            },
            429,
        )
        response.headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
        response.headers["Via"] = "1.1 google"
        response.headers["X-RateLimit-Scope"] = "global" if is_global else "user"
        if is_global:
            response.headers["X-RateLimit-Global"] = "true"
        else:
            self._rate_limit_headers(response, bucket, remaining=0, reset_after=retry_after)
        return response

    def _rate_limit_headers(
        self,
        response: web.StreamResponse,
        bucket: tuple[str, str],
        *,
        remaining: int | None = None,
        reset_after: float | None = None,
    ) -> None:
        limit, window = self._limit_of(bucket)
        now = asyncio.get_running_loop().time()
        ends, used = self._buckets.get(bucket, (now + window, 0))
        left = max(0.0, ends - now) if reset_after is None else reset_after
        response.headers["X-RateLimit-Limit"] = str(limit)
        response.headers["X-RateLimit-Remaining"] = str(
            max(0, limit - used) if remaining is None else remaining
        )
        response.headers["X-RateLimit-Reset"] = f"{time.time() + left:.3f}"
        response.headers["X-RateLimit-Reset-After"] = f"{left:.3f}"
        response.headers["X-RateLimit-Bucket"] = hashlib.sha1(
            bucket[0].encode(), usedforsecurity=False
        ).hexdigest()[:16]

    def _check_request_against_spec(self, record: RecordedRequest) -> openapi.Operation | None:
        """Validate the body against Discord's OpenAPI description; a mismatch is a problem."""
        if not self.config.check_spec or record.route in ("unknown", "cdn"):
            return None
        operation = openapi.find_operation(record.method, record.path)
        if operation is None:
            self.add_problem(
                "spec-route",
                f"{record.method} {record.path} is served by the stand-in but is not an"
                " operation of Discord's OpenAPI description",
            )
            return None
        record.operation = operation.name
        if record.json is not None:
            mismatch = operation.check_request(record.json)
            if mismatch is not None:
                record.spec_mismatch = str(mismatch)
        return operation

    async def _parse_request(self, request: web.Request) -> RecordedRequest:
        body: Any = None
        files: list[SentFile] = []
        if request.content_type == "application/json" and request.can_read_body:
            body = await request.json()
        elif request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                if not isinstance(part, aiohttp.BodyPartReader):
                    continue
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                else:
                    data = await part.read(decode=False)
                    content_type = part.headers.get(aiohttp.hdrs.CONTENT_TYPE)
                    files.append(SentFile(part.name or "", part.filename, content_type, data))
        elif request.can_read_body:
            raw = await request.read()
            body = raw.decode("utf-8", "replace") if raw else None
        match_route = request.match_info.route
        name = (match_route.name or "unknown:").split(":", 1)[0]
        path = request.path
        if path.startswith(API_PREFIX):
            path = path[len(API_PREFIX) :]
        return RecordedRequest(
            method=request.method,
            path=path,
            route=name,
            query=dict(request.query),
            json=body,
            files=files,
            at=asyncio.get_running_loop().time(),
        )

    # ------------------------------------------------------------------ responses
    @staticmethod
    def _json(data: Any, status: int = 200) -> web.Response:
        # Exactly "application/json": discord.py rejects "; charset=utf-8" (facts file).
        response = web.Response(
            body=json.dumps(data).encode(),
            status=status,
            headers={"Content-Type": "application/json"},
        )
        response[SENT_JSON] = data
        return response

    def _error(self, status: int, code: int, message: str, **extra: Any) -> web.Response:
        return self._json({"message": message, "code": code, **extra}, status)

    def _form_error(self, errors: limits.FormErrors) -> web.Response:
        return self._json(errors.body(), 400)

    def _empty_message_error(self) -> web.Response:
        return self._error(400, 50006, "Cannot send an empty message")

    @staticmethod
    def _no_content_response() -> web.Response:
        return web.Response(status=204)

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {self.config.token}"

    def _unauthorized(self) -> web.Response:
        return self._error(401, 0, "401: Unauthorized")

    # ------------------------------------------------------------------ start-up routes
    async def _get_me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        user = user_json(self.bot_member)
        user.update(bot=True, verified=True, mfa_enabled=False, flags=0, email=None, locale="en-US")
        return self._json(user)

    async def _application_info(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        owner = self.guild.member(self.guild.owner_id) or MemberSpec(self.guild.owner_id, "owner")
        return self._json(
            {
                "id": str(self.app_id),
                "name": self.bot_member.name,
                "description": "Stand-in application",
                "icon": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": user_json(owner),
                "verify_key": "0" * 64,
                "team": None,
                "flags": 0,
                "summary": "",
                "rpc_origins": [],
                "redirect_uris": [],
                "tags": [],
                "bot": user_json(self.bot_member),
                "approximate_guild_count": 1,
                "type": None,
                "flags_new": "0",
                "interactions_endpoint_url": None,
                "role_connections_verification_url": None,
                "approximate_user_install_count": 0,
                "approximate_user_authorization_count": 0,
                "explicit_content_filter": 0,
                "eligible_oauth2_scopes": ["applications.commands", "bot"],
                # Both install types enabled, as an app offering User Install has them.
                "integration_types_config": {"0": {}, "1": {}},
            }
        )

    async def _get_gateway(self, request: web.Request) -> web.Response:
        data: dict[str, Any] = {"url": self.gateway_url}
        if request.path.endswith("/bot"):
            data.update(
                shards=1,
                session_start_limit={
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            )
        return self._json(data)

    # ------------------------------------------------------------------ gateway
    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self._ws = ws
        await self._send_ws(
            {"op": 10, "d": {"heartbeat_interval": self.config.heartbeat_interval_ms}}
        )
        async for msg in ws:
            if msg.type is not aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            self.gateway_received.append(data)
            op = data.get("op")
            if op == 1:
                await self._send_ws({"op": 11})
            elif op == 2:
                await self._on_identify(ws, data["d"])
            elif op == 6:
                await self._on_resume(ws, data["d"])
            elif op == 8:
                await self._on_request_members(data["d"])
        if self._ws is ws:
            self._ws = None
            self._identified.clear()
        return ws

    async def _on_resume(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        """RESUME: replay what the bot missed since its last sequence number, then RESUMED.
        An unknown session is answered "invalid session, not resumable" (op 9)."""
        if data.get("token") != self.config.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        if self.session_id is None or data.get("session_id") != self.session_id:
            await self._send_ws({"op": 9, "d": False})
            return
        seen = int(data.get("seq") or 0)
        for event in [e for e in self._event_log if e["s"] > seen]:
            await self._send_ws(event)
        self.resumes += 1
        self._seq += 1
        await self._send_ws({"op": 0, "t": "RESUMED", "s": self._seq, "d": {}})
        self._identified.set()
        self._notify()

    async def request_reconnect(self) -> None:
        """Gateway op 7: Discord asks the bot to reconnect (and RESUME its session)."""
        await self.wait_connected()
        await self._send_ws({"op": 7, "d": None})

    async def drop_connection(
        self, *, code: int = 4000, missed: Sequence[tuple[str, Mapping[str, Any]]] = ()
    ) -> None:
        """Close the gateway connection as Discord does on a hiccup (``code`` 4000:
        "unknown error, reconnect"); the ``missed`` events (name, data) happen while
        the bot is away, and reach it only through its RESUME."""
        await self.wait_connected()
        ws, self._ws = self._ws, None
        self._identified.clear()
        for event, data in missed:
            await self._send_dispatch(event, data)
        if ws is not None:
            await ws.close(code=code, message=b"Stand-in dropped the connection.")

    async def wait_resumed(self, count: int = 1, timeout: float | None = None) -> None:
        """Wait until the bot has resumed its session ``count`` times in all."""
        await self.wait_until(
            lambda: True if self.resumes >= count and self._identified.is_set() else None,
            timeout=timeout,
            what=f"the bot to RESUME its gateway session ({count})",
        )

    async def join_guild(self) -> None:
        """The bot is added to the guild: GUILD_CREATE for a guild it was not in."""
        await self.wait_connected()
        self.joined = True
        guild = self._guild_create()
        del guild["unavailable"]  # a join, not a guild coming back from an outage
        await self._send_dispatch("GUILD_CREATE", guild)

    def _guild_create(self) -> dict[str, Any]:
        intents = int((self.identify or {}).get("intents") or 0)
        # Without the presences intent Discord sends only the bot (and voice members).
        members = None if intents & INTENT_PRESENCES else [self.bot_member.id]
        # GUILD_CREATE lists the active threads only; archived ones are listed on request.
        active = [t for t in self.threads.values() if not t["thread_metadata"].get("archived")]
        return guild_create_json(self.guild, active, member_ids=members)

    async def _send_ws(self, payload: dict[str, Any]) -> None:
        if self._ws is None or self._ws.closed:
            raise StandinFailure(f"the bot is not connected to the gateway; cannot send {payload}")
        self.gateway_sent.append(payload)
        delay = self.config.round_trip_delay
        if delay <= 0:
            await self._ws.send_str(json.dumps(payload))
            return
        if self._outbox is None:
            self._outbox = asyncio.Queue()
            self._delivery = asyncio.create_task(self._deliver(), name="standin-gateway-delay")
        due = asyncio.get_running_loop().time() + delay
        self._outbox.put_nowait((due, self._ws, json.dumps(payload)))

    async def _deliver(self) -> None:
        """Send the gateway messages of ``_outbox`` each at its due time, in order (one
        delay for all, so a later message is never due earlier); a message to a
        connection closed meanwhile is lost, as on the network (RESUME replays events)."""
        assert self._outbox is not None
        loop = asyncio.get_running_loop()
        while True:
            due, ws, text = await self._outbox.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not ws.closed:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await ws.send_str(text)

    async def dispatch(self, event: str, data: Mapping[str, Any]) -> None:
        """Send a gateway DISPATCH (op 0) event, e.g. ``MESSAGE_CREATE``, to the bot."""
        await self.wait_connected()
        await self._send_dispatch(event, data)

    async def _send_dispatch(self, event: str, data: Mapping[str, Any]) -> None:
        """Dispatch from inside a route handler, never waiting; while the bot is away the
        event is kept for its RESUME, as Discord does."""
        if self.session_id is None:
            return
        self._seq += 1
        payload = {"op": 0, "t": event, "s": self._seq, "d": data}
        self._event_log.append(payload)
        if self._ws is None or self._ws.closed:
            return
        await self._send_ws(payload)

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Wait until the bot identified on the gateway (READY sent)."""
        if self._identified.is_set():
            return
        await self.wait_until(
            lambda: True if self._identified.is_set() else None,
            timeout=timeout,
            what="the bot to IDENTIFY on the gateway",
        )

    async def _on_identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        self.identify = data
        if data.get("token") != self.config.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        intents = int(data.get("intents") or 0)
        if intents & PRIVILEGED_INTENTS & ~self.config.allowed_privileged_intents:
            await ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        self.session_id = secrets.token_hex(16)
        self._event_log.clear()
        ready: dict[str, Any] = {
            "v": 10,
            "user": {**user_json(self.bot_member), "bot": True, "verified": True, "flags": 0},
            "guilds": [{"id": str(self.guild.id), "unavailable": True}] if self.joined else [],
            "session_id": self.session_id,
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.app_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
        }
        if data.get("shard") is not None:
            ready["shard"] = data["shard"]
        self._seq += 1
        await self._send_ws({"op": 0, "t": "READY", "s": self._seq, "d": ready})
        if self.joined:
            await self._send_dispatch("GUILD_CREATE", self._guild_create())
        self._identified.set()
        self._notify()

    async def _on_request_members(self, data: dict[str, Any]) -> None:
        query = (data.get("query") or "").lower()
        user_ids = {int(u) for u in data.get("user_ids") or []}
        members = [
            member_json(self.guild, m)
            for m in self.guild.members
            if (not user_ids or m.id in user_ids) and m.name.lower().startswith(query)
        ]
        limit = data.get("limit") or 0
        if limit:
            members = members[:limit]
        chunk: dict[str, Any] = {
            "guild_id": str(self.guild.id),
            "members": members,
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [],
        }
        if data.get("nonce") is not None:
            chunk["nonce"] = data["nonce"]
        await self._send_dispatch("GUILD_MEMBERS_CHUNK", chunk)

    # ------------------------------------------------------------------ commands
    def _scope(self, request: web.Request) -> tuple[int | None, web.Response | None]:
        if int(request.match_info["app"]) != self.app_id:
            return None, self._error(403, 50001, "Missing Access")
        guild = request.match_info.get("guild")
        if guild is None:
            return None, None
        if int(guild) != self.guild.id or not self.joined:
            return None, self._error(403, 50001, "Missing Access")
        return self.guild.id, None

    async def _get_commands(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        scope, error = self._scope(request)
        return error or self._json(self.commands.get(scope, []))

    async def _put_commands(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        scope, error = self._scope(request)
        if error is not None:
            return error
        body = request[RECORD].json
        if not isinstance(body, list):
            return self._error(400, 50109, "The request body contains invalid JSON.")
        errors = limits.FormErrors()
        limits.check_commands(errors, body)
        if errors:
            return self._form_error(errors)
        stored = []
        for command in body:
            kind = command.get("type", 1)
            key = (scope, kind, command["name"])
            command_id = self._command_ids.setdefault(key, self.ids.next())
            item = copy.deepcopy(command)
            item.update(
                id=str(command_id),
                application_id=str(self.app_id),
                version=str(self.ids.next()),
                type=kind,
            )
            item.setdefault("description", "")
            permissions = item.get("default_member_permissions")
            # Sent as a number or a string; Discord answers a string (or null).
            item["default_member_permissions"] = None if permissions is None else str(permissions)
            item.setdefault("nsfw", False)
            # Discord echoes these with its defaults: installed to guilds, contexts unset.
            if not item.get("integration_types"):
                item["integration_types"] = [0]
            item.setdefault("contexts", None)
            if scope is not None:
                item["guild_id"] = str(scope)
            stored.append(item)
        self.commands[scope] = stored
        return self._json(stored)

    # ------------------------------------------------------------------ resolver (builders)
    def resolve_user(self, user_id: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
        member = self.guild.member(user_id)
        if member is None:
            return user_json(MemberSpec(user_id, f"user{user_id % 100000}")), None
        data = member_json(self.guild, member, with_user=False, with_permissions=True)
        return user_json(member), data

    def resolve_channel(self, channel_id: int) -> dict[str, Any]:
        channel = self.channel_json(channel_id)
        if channel is None:
            raise LookupError(f"no channel {channel_id} in the stand-in guild")
        resolved = {
            k: channel[k]
            for k in ("id", "name", "type", "parent_id", "thread_metadata")
            if k in channel
        }
        resolved["permissions"] = str(
            member_permissions(self.guild, self.bot_member.id, self.bot_member.role_ids)
        )
        return resolved

    def resolve_role(self, role_id: int) -> dict[str, Any]:
        role = self.guild.role(role_id)
        if role is None:
            raise LookupError(f"no role {role_id} in the stand-in guild")
        return role_json(role)

    def is_role(self, object_id: int) -> bool:
        return self.guild.role(object_id) is not None

    def channel_json(self, channel_id: int) -> dict[str, Any] | None:
        """The JSON of a guild channel or of a thread the bot created."""
        spec = self.guild.channel(channel_id)
        if spec is not None:
            return channel_json(spec, self.guild.id)
        return self.threads.get(channel_id)

    # ------------------------------------------------------------------ interactions: build
    def interaction_payload(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        channel_id: int | None = None,
        message: dict[str, Any] | None = None,
        locale: str = "en-US",
        context: int = 0,
        install: int = 0,
    ) -> dict[str, Any]:
        """A complete INTERACTION_CREATE ``d`` (all keys discord.py 2.7.1 requires).

        ``context``: 0 in the stand-in's guild (or, with ``install=1``, in a guild the
        bot is not in, :data:`FOREIGN_GUILD_ID`), 1 in the user's DM with the bot, 2
        in a DM between users. ``install``: 0 the app is installed to the guild, 1 to
        the user. Outside a guild there is no ``guild_id`` and no ``member``, only
        ``user``, as on Discord.
        """
        if context not in CONTEXT_NAMES or install not in (0, 1):
            raise ValueError(f"unknown context {context} or install {install}")
        if context == 2 and install != 1:
            raise ValueError("only a user-installed app can be used in a DM between users")
        user_id = self.config.default_user_id if user_id is None else snowflake_of(user_id)
        member = self.guild.member(user_id) or MemberSpec(user_id, f"user{user_id % 100000}")
        interaction_id = self.ids.next()
        self._created[interaction_id] = asyncio.get_running_loop().time()
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(self.app_id),
            "type": kind,
            "token": f"standin-{interaction_id}-{secrets.token_urlsafe(24)}",
            "version": 1,
            "attachment_size_limit": self.config.attachment_size_limit,
            "locale": locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "context": context,
            "data": data,
        }
        owners: dict[str, str] = {}
        if install == 1:
            owners["1"] = str(user_id)
        if context == 0 and install == 0:
            payload.update(self._guild_interaction_part(member, role_ids, channel_id))
            owners["0"] = str(self.guild.id)
        elif context == 0:
            payload.update(self._foreign_guild_part(member, channel_id))
        else:
            if install == 0:
                owners["0"] = "0"  # a guild install used in the bot's DM
            user = user_json(member)
            recipients = [user_json(self.bot_member) if context == 1 else user]
            if context == 2:
                recipients.append(user_json(MemberSpec(user_id + 1, "friend")))
            channel = {
                "id": str(DM_CHANNEL_ID if context == 1 else PRIVATE_CHANNEL_ID),
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": recipients,
            }
            payload.update(
                user=user,
                channel_id=channel["id"],
                channel=channel,
                app_permissions=str(USER_APP_PERMISSIONS),
            )
        payload["authorizing_integration_owners"] = owners
        if message is not None:
            payload["message"] = message
        return payload

    def _guild_interaction_part(
        self, member: MemberSpec, role_ids: Sequence[int] | None, channel_id: int | None
    ) -> dict[str, Any]:
        roles = tuple(member.role_ids if role_ids is None else (snowflake_of(r) for r in role_ids))
        for role_id in roles:
            if self.guild.role(role_id) is None:
                raise LookupError(f"role {role_id} does not exist in the stand-in guild")
        channel_id = self.config.default_channel_id if channel_id is None else channel_id
        channel = self.channel_json(channel_id)
        if channel is None:
            raise LookupError(f"no channel {channel_id} in the stand-in guild")
        member_data = member_json(self.guild, member, role_ids=roles, with_permissions=True)
        return {
            "guild_id": str(self.guild.id),
            "guild": {"id": str(self.guild.id), "locale": self.guild.locale, "features": []},
            "guild_locale": self.guild.locale,
            "channel_id": str(channel_id),
            "channel": {**channel, "permissions": member_data["permissions"]},
            "member": member_data,
            "app_permissions": str(self.bot_channel_permissions(channel_id)),
        }

    def _foreign_guild_part(self, member: MemberSpec, channel_id: int | None) -> dict[str, Any]:
        """A user-installed command used in a guild the bot is not in."""
        channel_id = channel_id or FOREIGN_GUILD_ID + 1
        permissions = str(EVERYONE_PERMISSIONS)
        return {
            "guild_id": str(FOREIGN_GUILD_ID),
            "guild": {"id": str(FOREIGN_GUILD_ID), "locale": "en-US", "features": []},
            "guild_locale": "en-US",
            "channel_id": str(channel_id),
            "channel": {
                "id": str(channel_id),
                "type": 0,
                "name": "elsewhere",
                "position": 0,
                "guild_id": str(FOREIGN_GUILD_ID),
                "flags": 0,
                "permissions": permissions,
            },
            "member": {
                **member_json(self.guild, member, role_ids=(), with_permissions=False),
                "permissions": permissions,
            },
            "app_permissions": str(USER_APP_PERMISSIONS),
        }

    def bot_channel_permissions(self, channel_id: int) -> int:
        """The bot's permissions in a channel of the guild (overwrites applied)."""
        spec = self.guild.channel(channel_id)
        if spec is None:
            thread = self.threads.get(channel_id)
            spec = self.guild.channel(int(thread["parent_id"])) if thread else None
        bot = self.bot_member
        if spec is None:
            return member_permissions(self.guild, bot.id, bot.role_ids)
        return channel_permissions(self.guild, spec, bot.id, bot.role_ids)

    async def inject(self, payload: dict[str, Any], *, wait: bool = True) -> InteractionRecord:
        """Send an INTERACTION_CREATE; with ``wait`` return once the bot's callback came."""
        await self.wait_connected()
        loop = asyncio.get_running_loop()
        # Discord's 3 seconds start when the interaction is created, not when it arrives.
        created = self._created.get(int(payload["id"]), loop.time())
        record = InteractionRecord(self, payload, created)
        self.interactions[record.id] = record
        self._by_token[record.token] = record
        await self.dispatch("INTERACTION_CREATE", payload)
        if wait:
            await record.wait_response()
        return record

    def _command_data(self, command: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": command["id"],
            "name": command["name"],
            "type": command.get("type", 1),
        }
        if command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        return data

    async def slash(
        self,
        command: str,
        /,
        *,
        options: Mapping[str, Any] | None = None,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        channel_id: int | None = None,
        locale: str = "en-US",
        context: int = 0,
        install: int = 0,
        wait: bool = True,
        **kwargs: Any,
    ) -> InteractionRecord:
        """Run ``/command [group] [sub] name=value ...`` as a user; return after the callback.

        ``command`` is the space-separated path (``"ticket close"``); option values
        come from ``options`` and/or keyword arguments, typed by the synced schema.
        ``context`` and ``install`` (see :meth:`interaction_payload`) use it in a DM or
        as a user-installed app; a command Discord would not offer there raises
        ``LookupError``.
        """
        values = {**(options or {}), **kwargs}
        data = self._chat_input_data(command, values, context=context, install=install)
        payload = self.interaction_payload(
            2,
            data,
            user_id=user_id,
            role_ids=role_ids,
            channel_id=channel_id,
            locale=locale,
            context=context,
            install=install,
        )
        return await self.inject(payload, wait=wait)

    def _chat_input_data(
        self,
        command: str,
        values: Mapping[str, Any],
        focused: str | None = None,
        *,
        context: int = 0,
        install: int = 0,
    ) -> dict[str, Any]:
        """The ``data`` of a chat-input interaction, options typed by the synced schema."""
        name, *path = command.split()
        schema = find_command(
            self.commands, name, 1, self.guild.id, context=context, install=install
        )
        built, resolved = build_chat_input_options(schema, path, values, self, focused=focused)
        data = self._command_data(schema)
        data["options"] = built
        if resolved:
            data["resolved"] = resolved
        return data

    async def autocomplete(
        self,
        command: str,
        /,
        focused: str,
        value: str,
        *,
        options: Mapping[str, Any] | None = None,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        channel_id: int | None = None,
        locale: str = "en-US",
        wait: bool = True,
        **kwargs: Any,
    ) -> InteractionRecord:
        """Ask for choices while a user types ``value`` into option ``focused``.

        The returned record's ``choices`` holds what the bot answered (callback type 8).
        """
        values = {**(options or {}), **kwargs, focused: value}
        data = self._chat_input_data(command, values, focused)
        payload = self.interaction_payload(
            4, data, user_id=user_id, role_ids=role_ids, channel_id=channel_id, locale=locale
        )
        return await self.inject(payload, wait=wait)

    async def message_command(
        self,
        name: str,
        message: Mapping[str, Any],
        *,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        wait: bool = True,
    ) -> InteractionRecord:
        """Use the message context menu command ``name`` on ``message`` (see
        :meth:`make_message`); the interaction happens in the message's channel."""
        schema = find_command(self.commands, name, 3, self.guild.id)
        data = self._command_data(schema)
        data["target_id"] = message["id"]
        data["resolved"] = {"messages": {message["id"]: dict(message)}}
        payload = self.interaction_payload(
            2,
            data,
            user_id=user_id,
            role_ids=role_ids,
            channel_id=int(message["channel_id"]),
        )
        return await self.inject(payload, wait=wait)

    async def user_command(
        self,
        name: str,
        target_user_id: int,
        *,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        channel_id: int | None = None,
        wait: bool = True,
    ) -> InteractionRecord:
        """Use the user context menu command ``name`` on a member."""
        schema = find_command(self.commands, name, 2, self.guild.id)
        target = snowflake_of(target_user_id)
        user, member = self.resolve_user(target)
        data = self._command_data(schema)
        data["target_id"] = str(target)
        data["resolved"] = {"users": {str(target): user}}
        if member is not None:
            data["resolved"]["members"] = {str(target): member}
        payload = self.interaction_payload(
            2, data, user_id=user_id, role_ids=role_ids, channel_id=channel_id
        )
        return await self.inject(payload, wait=wait)

    def _current_message(self, message: Mapping[str, Any] | int) -> dict[str, Any]:
        message_id = snowflake_of(message)
        current = self.messages.get(message_id)
        if current is None:
            if isinstance(message, Mapping):
                return dict(message)
            raise LookupError(f"no message {message_id} was sent")
        return current

    async def press(
        self,
        message: Mapping[str, Any] | int,
        custom_id: str,
        *,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        wait: bool = True,
    ) -> InteractionRecord:
        """Press the button ``custom_id`` on a message the bot sent (dict or message id).

        A press on a message in a DM (or a guild the bot is not in) arrives as Discord
        sends it there: from the same context as the interaction that sent the message.
        """
        current = self._current_message(message)
        component = find_component(current, custom_id)
        if component.get("type") != 2:
            raise ValueError(f"component {custom_id!r} is not a button (type {component['type']})")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": 2}
        if component.get("id") is not None:
            data["id"] = component["id"]
        return await self._component_interaction(current, data, user_id, role_ids, wait)

    async def _component_interaction(
        self,
        current: Mapping[str, Any],
        data: dict[str, Any],
        user_id: int | None,
        role_ids: Sequence[int] | None,
        wait: bool,
    ) -> InteractionRecord:
        """A component interaction (type 3) on ``current``, the message as it is now."""
        context, install = self._context_of(current)
        payload = self.interaction_payload(
            3,
            data,
            user_id=user_id,
            role_ids=role_ids,
            channel_id=int(current["channel_id"]) if (context, install) == (0, 0) else None,
            message=copy.deepcopy(current),
            context=context,
            install=install,
        )
        return await self.inject(payload, wait=wait)

    def _context_of(self, message: Mapping[str, Any]) -> tuple[int, int]:
        """(context, install) of the interaction a message answered, else the guild's."""
        metadata = message.get("interaction_metadata") or {}
        origin = self.interactions.get(int(metadata.get("id") or 0))
        if origin is None:
            return 0, 0
        owners = origin.payload.get("authorizing_integration_owners") or {}
        return int(origin.payload.get("context") or 0), 0 if "0" in owners else 1

    async def select(
        self,
        message: Mapping[str, Any] | int,
        custom_id: str,
        values: Sequence[Any],
        *,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        wait: bool = True,
    ) -> InteractionRecord:
        """Choose ``values`` in the select menu ``custom_id`` of a message the bot sent."""
        current = self._current_message(message)
        component = find_component(current, custom_id)
        if component.get("type") not in (3, 5, 6, 7, 8):
            raise ValueError(f"component {custom_id!r} is not a select menu")
        resolved = select_resolved(component, list(values), self)
        data: dict[str, Any] = {
            "custom_id": custom_id,
            "component_type": component["type"],
            "values": [str(v) if component["type"] == 3 else str(snowflake_of(v)) for v in values],
        }
        if resolved:
            data["resolved"] = resolved
        return await self._component_interaction(current, data, user_id, role_ids, wait)

    async def submit_modal(
        self,
        opened_by: InteractionRecord,
        values: Mapping[str, Any],
        *,
        user_id: int | None = None,
        role_ids: Sequence[int] | None = None,
        wait: bool = True,
    ) -> InteractionRecord:
        """Fill in and submit the modal the bot opened in answer to ``opened_by``.

        ``values`` maps each input's ``custom_id`` to the typed text (or a list of
        values for a select); inputs left out keep their pre-filled value. The
        submitting user defaults to the one who opened the modal.
        """
        modal = opened_by.modal
        if modal is None:
            raise LookupError(f"{opened_by!r} was not answered with a modal (callback type 9)")
        components = mirror_modal(modal, values)
        member = opened_by.payload.get("member") or {}
        data = {"custom_id": modal["custom_id"], "components": components}
        context, install = self._context_of({"interaction_metadata": {"id": opened_by.id}})
        in_guild = (context, install) == (0, 0)
        if role_ids is None and in_guild:
            role_ids = [int(r) for r in member["roles"]]
        payload = self.interaction_payload(
            5,
            data,
            user_id=opened_by.user_id if user_id is None else user_id,
            role_ids=role_ids,
            channel_id=int(opened_by.payload["channel_id"]) if in_guild else None,
            message=opened_by.payload.get("message"),
            context=context,
            install=install,
        )
        return await self.inject(payload, wait=wait)

    # ------------------------------------------------------------------ user-side messages
    def attachment(
        self,
        filename: str,
        data: bytes,
        *,
        content_type: str = "text/plain",
        channel_id: int | None = None,
    ) -> dict[str, Any]:
        """A user's uploaded file: attachment JSON whose ``url`` the stand-in serves.

        Pass it as an attachment option value or in :meth:`make_message`.
        """
        channel_id = self.config.default_channel_id if channel_id is None else channel_id
        return self._store_file(channel_id, filename, data, content_type)

    def _store_file(
        self, channel_id: int, filename: str, data: bytes, content_type: str | None
    ) -> dict[str, Any]:
        attachment_id = self.ids.next()
        path = f"{CDN_PREFIX}/{channel_id}/{attachment_id}/{filename}"
        self.files[path] = (data, content_type or "application/octet-stream")
        url = f"http://127.0.0.1:{self.port}{path}"
        return {
            "id": str(attachment_id),
            "filename": filename,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": content_type,
        }

    def make_message(
        self,
        content: str = "",
        *,
        author_id: int | None = None,
        channel_id: int | None = None,
        embeds: Sequence[Mapping[str, Any]] = (),
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """A message a user wrote (stored, so the bot can fetch it), e.g. for
        :meth:`message_command` or :meth:`user_message`."""
        author_id = self.config.default_user_id if author_id is None else author_id
        author = self.guild.member(author_id) or MemberSpec(author_id, f"user{author_id % 100000}")
        channel_id = self.config.default_channel_id if channel_id is None else channel_id
        if self.channel_json(channel_id) is None:
            raise LookupError(f"no channel {channel_id} in the stand-in guild")
        message = self._new_message(
            channel_id, {"content": content, "embeds": list(embeds)}, [], author=author
        )
        message["attachments"] = [dict(a) for a in attachments]
        message["member"] = member_json(self.guild, author, with_user=False)
        mentioned = [int(m) for m in re.findall(r"<@!?(\d+)>", content)]
        message["mentions"] = [
            user_json(member)
            for member in self.guild.members
            if member.id in mentioned and member.id != author.id
        ]
        message["mention_roles"] = re.findall(r"<@&(\d+)>", content)
        return message

    async def user_message(
        self,
        content: str,
        *,
        author_id: int | None = None,
        channel_id: int | None = None,
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """A user posts a message: MESSAGE_CREATE is dispatched to the bot (content is
        blanked, as Discord does, unless the bot asked for the message content intent
        or is mentioned)."""
        message = self.make_message(
            content, author_id=author_id, channel_id=channel_id, attachments=attachments
        )
        event = copy.deepcopy(message)
        event["guild_id"] = str(self.guild.id)
        intents = int((self.identify or {}).get("intents") or 0)
        mentioned = f"<@{self.app_id}>" in content or f"<@!{self.app_id}>" in content
        if not intents & INTENT_MESSAGE_CONTENT and not mentioned:
            event.update(content="", embeds=[], attachments=[], components=[])
        await self.dispatch("MESSAGE_CREATE", event)
        return message

    # ------------------------------------------------------------------ messages (state)
    def _with_component_ids(self, components: Sequence[Mapping[str, Any]]) -> list[Any]:
        out = copy.deepcopy(list(components))
        counter = iter(range(1, 10_000))

        def walk(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            for item in items:
                yield item
                yield from walk(item.get("components") or [])
                for key in ("component", "accessory"):
                    if isinstance(item.get(key), dict):
                        yield from walk([item[key]])

        for item in walk(out):
            if item.get("id") is None:
                item["id"] = next(counter)
        return out

    def _attachments(
        self,
        channel_id: int,
        body: Mapping[str, Any],
        files: Sequence[SentFile],
        previous: Sequence[Mapping[str, Any]],
    ) -> list[dict[str, Any]]:
        kept: list[dict[str, Any]] = []
        listed = body.get("attachments")
        previous_ids = {a["id"]: a for a in previous}
        if listed is None:
            kept = [dict(a) for a in previous]
        else:
            kept = [
                dict(previous_ids[str(a["id"])]) for a in listed if str(a["id"]) in previous_ids
            ]
        by_index = {str(a.get("id")): a for a in listed or []}
        for index, sent in enumerate(files):
            meta = by_index.get(str(index), {})
            filename = meta.get("filename") or sent.filename or f"file{index}"
            stored = self._store_file(channel_id, filename, sent.data, sent.content_type)
            if meta.get("description"):
                stored["description"] = meta["description"]
            kept.append(stored)
        return kept

    def _new_message(
        self,
        channel_id: int,
        body: Mapping[str, Any],
        files: Sequence[SentFile],
        *,
        author: MemberSpec | None = None,
        message_id: int | None = None,
        message_type: int = 0,
        flags: int | None = None,
        interaction: InteractionRecord | None = None,
    ) -> dict[str, Any]:
        message_id = self.ids.next() if message_id is None else message_id
        author = author or self.bot_member
        message: dict[str, Any] = {
            "id": str(message_id),
            "channel_id": str(channel_id),
            "type": message_type,
            "content": body.get("content") or "",
            "embeds": [{"type": "rich", **e} for e in body.get("embeds") or []],
            "attachments": self._attachments(channel_id, body, files, []),
            "components": self._with_component_ids(body.get("components") or []),
            "author": user_json(author),
            "mentions": [],
            "mention_roles": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": bool(body.get("tts")),
            "flags": int(body.get("flags") or 0) if flags is None else flags,
            "timestamp": iso_now(),
            "edited_timestamp": None,
        }
        guild_id = self._guild_of_channel(channel_id, interaction)
        if guild_id is not None:
            message["guild_id"] = str(guild_id)
        reference = body.get("message_reference")
        if isinstance(reference, Mapping) and reference.get("message_id"):
            message["message_reference"] = {
                "type": 0,
                "message_id": str(reference["message_id"]),
                "channel_id": str(reference.get("channel_id") or channel_id),
                "guild_id": str(guild_id or self.guild.id),
            }
        if interaction is not None:
            message["webhook_id"] = str(self.app_id)
            message["application_id"] = str(self.app_id)
            message["interaction_metadata"] = self._interaction_metadata(interaction)
        self.messages[message_id] = message
        thread = self.threads.get(channel_id)
        if thread is not None and not message["flags"] & EPHEMERAL:
            thread["message_count"] += 1
            thread["total_message_sent"] += 1
            thread["last_message_id"] = str(message_id)
        return message

    def _guild_of_channel(
        self, channel_id: int, interaction: InteractionRecord | None
    ) -> int | None:
        if interaction is not None:
            raw = interaction.payload.get("guild_id")
            return int(raw) if raw else None
        return self.guild.id if self.channel_json(channel_id) is not None else None

    def _interaction_metadata(self, interaction: InteractionRecord) -> dict[str, Any]:
        """``interaction_metadata`` of a message answering ``interaction`` (by its type)."""
        payload = interaction.payload
        user = (payload.get("member") or {}).get("user") or payload.get("user")
        metadata: dict[str, Any] = {
            "id": str(interaction.id),
            "type": interaction.type,
            "user": user,
            "authorizing_integration_owners": payload["authorizing_integration_owners"],
        }
        if interaction.type == 3:
            metadata["interacted_message_id"] = payload["message"]["id"]
        elif interaction.type == 5:
            metadata["triggering_interaction_metadata"] = {
                "id": str(interaction.id),
                "type": 2,
                "user": user,
                "authorizing_integration_owners": payload["authorizing_integration_owners"],
            }
        return metadata

    def _apply_edit(
        self, message: dict[str, Any], body: Mapping[str, Any], files: Sequence[SentFile]
    ) -> dict[str, Any]:
        if "content" in body:
            message["content"] = body["content"] or ""
        if "embeds" in body:
            message["embeds"] = [{"type": "rich", **e} for e in body["embeds"] or []]
        if "components" in body:
            message["components"] = self._with_component_ids(body["components"] or [])
        if body.get("flags") is not None:
            keep = message["flags"] & EPHEMERAL
            message["flags"] = keep | (int(body["flags"]) & ~(EPHEMERAL | LOADING))
        message["flags"] &= ~LOADING
        message["attachments"] = self._attachments(
            int(message["channel_id"]), body, files, message["attachments"]
        )
        message["edited_timestamp"] = iso_now()
        return message

    def _validate_message(
        self,
        body: Any,
        files: Sequence[SentFile],
        *,
        creating: bool,
        path: tuple[str, ...] = (),
    ) -> web.Response | None:
        if not isinstance(body, Mapping):
            if creating and not files:
                return self._empty_message_error()
            return None
        errors = limits.FormErrors()
        limits.check_message(errors, body, path)
        if errors:
            return self._form_error(errors)
        if creating and limits.is_empty_message(body, has_files=bool(files)):
            return self._empty_message_error()
        return None

    def _record_mentions(
        self, request: RecordedRequest, body: Any, default_parse: Sequence[str]
    ) -> None:
        if not isinstance(body, Mapping):
            return
        if not any(k in body for k in ("content", "embeds", "allowed_mentions")):
            return
        allowed = body.get("allowed_mentions")
        replied: int | None = None
        reference = body.get("message_reference")
        if isinstance(reference, Mapping) and reference.get("message_id"):
            target = self.messages.get(int(reference["message_id"]))
            if target is not None:
                replied = int(target["author"]["id"])
        content = body.get("content") or ""
        self.mentions.append(
            MentionRecord(
                route=request.route,
                method=request.method,
                path=request.path,
                allowed_mentions=allowed,
                content=content,
                pings=compute_pings(content, allowed, default_parse, replied_user_id=replied),
            )
        )

    async def _dispatch_message_create(self, message: Mapping[str, Any]) -> None:
        intents = int((self.identify or {}).get("intents") or 0)
        if intents & INTENT_GUILD_MESSAGES and not message["flags"] & EPHEMERAL:
            await self._send_dispatch("MESSAGE_CREATE", message)

    # ------------------------------------------------------------------ interaction callback
    async def _interaction_callback(self, request: web.Request) -> web.Response:
        record: RecordedRequest = request[RECORD]
        interaction = self.interactions.get(int(request.match_info["iid"]))
        if interaction is None or interaction.token != request.match_info["token"]:
            return self._error(404, 10062, "Unknown interaction")
        record.interaction = interaction
        elapsed = record.at - interaction.sent_at
        if elapsed > self.config.response_deadline:
            return self._error(
                404,
                10062,
                "Unknown interaction",
                standin_note=f"first response {elapsed:.2f} s after INTERACTION_CREATE;"
                f" Discord allows {self.config.response_deadline:g} s",
            )
        if interaction.acknowledged is not None:
            return self._error(400, 40060, "Interaction has already been acknowledged.")
        body = record.json if isinstance(record.json, Mapping) else {}
        kind = body.get("type")
        data = body.get("data") or {}
        errors = limits.FormErrors()
        component_like = interaction.type in (3, 5) and "message" in interaction.payload
        if kind == 4:
            invalid = self._validate_message(data, record.files, creating=True, path=("data",))
            if invalid is not None:
                return invalid
        elif kind in (6, 7) and not component_like:
            errors.add(
                ("type",),
                "INTERACTION_RESPONSE_TYPE_INVALID",
                f"Response type {kind} only answers a component (or a modal opened by one).",
            )
        elif kind == 7:
            invalid = self._validate_message(data, record.files, creating=False, path=("data",))
            if invalid is not None:
                return invalid
        elif kind == 6:
            pass  # deferred update of the component's message: no body to check
        elif kind == 8:
            if interaction.type != 4:
                errors.add(
                    ("type",),
                    "INTERACTION_RESPONSE_TYPE_INVALID",
                    "Autocomplete results only answer an autocomplete interaction.",
                )
            else:
                limits.check_autocomplete(errors, data, ("data",))
        elif kind == 9:
            if interaction.type in (4, 5):
                errors.add(
                    ("type",),
                    "INTERACTION_RESPONSE_TYPE_INVALID",
                    "A modal cannot answer an autocomplete or a modal submit.",
                )
            else:
                limits.check_modal(errors, data, ("data",))
        elif kind == 5:
            pass
        else:
            errors.add(("type",), "BASE_TYPE_CHOICES", "Value must be one of (4, 5, 6, 7, 8, 9).")
        if kind in (4, 5) and interaction.type == 4:
            errors.add(
                ("type",),
                "INTERACTION_RESPONSE_TYPE_INVALID",
                "An autocomplete interaction takes only autocomplete results (type 8).",
            )
        if errors:
            return self._form_error(errors)

        interaction.acknowledged = kind
        info: dict[str, Any] = {"id": str(interaction.id), "type": interaction.type}
        resource: dict[str, Any] = {"type": kind}
        channel_id = int(interaction.payload["channel_id"])
        message_type = 20 if interaction.type == 2 else 0
        if interaction.type == 2 and (interaction.payload["data"].get("type", 1) != 1):
            message_type = 23
        if kind in (4, 5):
            flags = int(data.get("flags") or 0)
            if kind == 5:
                flags = (flags & EPHEMERAL) | LOADING
            message = self._new_message(
                channel_id,
                data if kind == 4 else {},
                record.files,
                message_type=message_type,
                flags=flags,
                interaction=interaction,
            )
            interaction.original_message_id = int(message["id"])
            interaction.original_loading = kind == 5
            info.update(
                response_message_id=message["id"],
                response_message_loading=kind == 5,
                response_message_ephemeral=bool(flags & EPHEMERAL),
            )
            if kind == 4:  # a deferral's loading message is not sent back (Discord: 4 and 7 only)
                resource["message"] = message
                self._record_mentions(record, data, INTERACTION_DEFAULT_PARSE)
                await self._dispatch_message_create(message)
        elif kind in (6, 7):
            target_id = int(interaction.payload["message"]["id"])
            interaction.original_message_id = target_id
            info.update(response_message_id=str(target_id), response_message_loading=False)
            target = self.messages.get(target_id)
            if kind == 7:
                if target is None:
                    target = self._new_message(
                        channel_id, interaction.payload["message"], [], message_id=target_id
                    )
                self._apply_edit(target, data, record.files)
                self._record_mentions(record, data, INTERACTION_DEFAULT_PARSE)
                resource["message"] = target
        elif kind == 8:
            interaction.choices = list(data.get("choices") or [])
        elif kind == 9:
            interaction.modal = copy.deepcopy(data)
        answer: dict[str, Any] = {"interaction": info}
        if "message" in resource:  # the spec's resource covers types 4 and 7 (and 12) only
            answer["resource"] = resource
        return self._json(answer)

    # ------------------------------------------------------------------ webhooks (follow-ups)
    def _webhook_interaction(
        self, request: web.Request
    ) -> tuple[InteractionRecord | None, web.Response | None]:
        record: RecordedRequest = request[RECORD]
        interaction = self._by_token.get(request.match_info["token"])
        if int(request.match_info["app"]) != self.app_id or interaction is None:
            return None, self._error(404, 10015, "Unknown Webhook")
        record.interaction = interaction
        if record.at - interaction.sent_at > self.config.token_lifetime:
            return None, self._error(401, 50027, "Invalid Webhook Token")
        if interaction.acknowledged is None:
            return None, self._error(
                404,
                10015,
                "Unknown Webhook",
                standin_note="follow-up before the interaction was acknowledged",
            )
        return interaction, None

    def _webhook_target(
        self, interaction: InteractionRecord, request: web.Request
    ) -> dict[str, Any] | None:
        raw = request.match_info["mid"]
        if raw == "@original":
            message_id = interaction.original_message_id
        elif raw.isdigit() and int(raw) in (
            *interaction.followup_message_ids,
            interaction.original_message_id,
        ):
            message_id = int(raw)
        else:
            message_id = None
        return None if message_id is None else self.messages.get(message_id)

    async def _followup(self, request: web.Request) -> web.Response:
        interaction, error = self._webhook_interaction(request)
        if interaction is None:
            return error or self._error(404, 10015, "Unknown Webhook")
        record: RecordedRequest = request[RECORD]
        body = record.json if isinstance(record.json, Mapping) else {}
        invalid = self._validate_message(body, record.files, creating=True)
        if invalid is not None:
            return invalid
        self._record_mentions(record, body, INTERACTION_DEFAULT_PARSE)
        original = self.messages.get(interaction.original_message_id or 0)
        if interaction.original_loading and original is not None:
            # Discord: the first follow-up after a deferred reply edits the loading message.
            message = self._apply_edit(original, body, record.files)
            interaction.original_loading = False
        else:
            message = self._new_message(
                int(interaction.payload["channel_id"]),
                body,
                record.files,
                flags=int(body.get("flags") or 0) & (EPHEMERAL | SUPPRESS_EMBEDS),
                interaction=interaction,
            )
            interaction.followup_message_ids.append(int(message["id"]))
        await self._dispatch_message_create(message)
        if record.query.get("wait", "").lower() not in ("true", "1"):
            return self._no_content_response()
        return self._json(message)

    async def _wh_get(self, request: web.Request) -> web.Response:
        interaction, error = self._webhook_interaction(request)
        if interaction is None:
            return error or self._error(404, 10015, "Unknown Webhook")
        message = self._webhook_target(interaction, request)
        return self._json(message) if message else self._error(404, 10008, "Unknown Message")

    async def _wh_edit(self, request: web.Request) -> web.Response:
        interaction, error = self._webhook_interaction(request)
        if interaction is None:
            return error or self._error(404, 10015, "Unknown Webhook")
        message = self._webhook_target(interaction, request)
        if message is None:
            return self._error(404, 10008, "Unknown Message")
        record: RecordedRequest = request[RECORD]
        body = record.json if isinstance(record.json, Mapping) else {}
        invalid = self._validate_message(body, record.files, creating=False)
        if invalid is not None:
            return invalid
        self._record_mentions(record, body, INTERACTION_DEFAULT_PARSE)
        if int(message["id"]) == interaction.original_message_id:
            interaction.original_loading = False
        return self._json(self._apply_edit(message, body, record.files))

    async def _wh_delete(self, request: web.Request) -> web.Response:
        interaction, error = self._webhook_interaction(request)
        if interaction is None:
            return error or self._error(404, 10015, "Unknown Webhook")
        message = self._webhook_target(interaction, request)
        if message is None:
            return self._error(404, 10008, "Unknown Message")
        del self.messages[int(message["id"])]
        return self._no_content_response()

    # ------------------------------------------------------------------ guilds (REST)
    def _joined_guild(self, request: web.Request) -> web.Response | None:
        """None when the bot is in the guild of the path, else Discord's refusal."""
        if not self._authorized(request):
            return self._unauthorized()
        if int(request.match_info["guild"]) != self.guild.id or not self.joined:
            return self._error(403, 50001, "Missing Access")
        return None

    async def _my_guilds(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        if not self.joined:
            return self._json([])
        bot = self.bot_member
        return self._json(
            [
                {
                    "id": str(self.guild.id),
                    "name": self.guild.name,
                    "icon": None,
                    "owner": False,
                    "permissions": str(member_permissions(self.guild, bot.id, bot.role_ids)),
                    "features": list(self.guild.features),
                    "banner": None,
                }
            ]
        )

    async def _get_guild(self, request: web.Request) -> web.Response:
        refused = self._joined_guild(request)
        if refused is not None:
            return refused
        data = guild_create_json(self.guild, member_ids=())
        for key in ("members", "threads", "voice_states", "presences", "joined_at", "large"):
            data.pop(key, None)  # GUILD_CREATE only: GET /guilds/{id} has none of these
        for key in ("member_count", "unavailable", "stage_instances", "guild_scheduled_events"):
            data.pop(key, None)
        for key in ("soundboard_sounds", "application_id"):
            data.pop(key, None)
        return self._json(data)

    async def _get_guild_channels(self, request: web.Request) -> web.Response:
        refused = self._joined_guild(request)
        if refused is not None:
            return refused
        return self._json([channel_json(c, self.guild.id) for c in self.guild.channels])

    async def _get_guild_member(self, request: web.Request) -> web.Response:
        refused = self._joined_guild(request)
        if refused is not None:
            return refused
        member = self.guild.member(int(request.match_info["uid"]))
        if member is None:
            return self._error(404, 10007, "Unknown Member")
        return self._json(member_json(self.guild, member))

    # ------------------------------------------------------------------ channels & messages
    async def _active_threads(self, request: web.Request) -> web.Response:
        """The guild's threads that are not archived (forum posts included), as Discord
        lists them; the bot's thread memberships are not modelled (``members`` empty)."""
        if not self._authorized(request):
            return self._unauthorized()
        if int(request.match_info["guild"]) != self.guild.id:
            return self._error(404, 10004, "Unknown Guild")
        threads = [t for t in self.threads.values() if not t["thread_metadata"].get("archived")]
        return self._json({"threads": threads, "members": [], "has_more": False})

    def _archive_listing_refused(self, request: web.Request) -> tuple[int, web.Response | None]:
        """The channel an archived-threads listing names and, when the bot may not list
        it, Discord's refusal: 401 without the token, 10003 for an unknown channel, 50001
        without View Channel, 50013 without Read Message History."""
        if not self._authorized(request):
            return 0, self._unauthorized()
        channel_id = int(request.match_info["cid"])
        if self.guild.channel(channel_id) is None:
            return channel_id, self._error(404, 10003, "Unknown Channel")
        permissions = self.bot_channel_permissions(channel_id)
        if not permissions & VIEW_CHANNEL:
            return channel_id, self._error(403, 50001, "Missing Access")
        if not permissions & READ_MESSAGE_HISTORY:
            return channel_id, self._error(403, 50013, "Missing Permissions")
        return channel_id, None

    async def _public_archived_threads(self, request: web.Request) -> web.Response:
        """A channel's archived public threads (forum posts included) as Discord lists
        them: most recently archived first, ``before`` (ISO 8601) keeps those archived
        earlier, ``limit`` 2-100 (50 when absent), ``has_more`` when more remain. Needs
        View Channel (else 50001) and Read Message History (else 50013)."""
        channel_id, refused = self._archive_listing_refused(request)
        if refused is not None:
            return refused
        errors = limits.FormErrors()
        before: dt.datetime | None = None
        try:
            limit = int(request.query.get("limit", "50"))
        except ValueError:
            errors.add(("limit",), "NUMBER_TYPE_COERCE", "Value is not int.")
            limit = 50
        if limit < 2:
            errors.add(
                ("limit",), "NUMBER_TYPE_MIN", "int value should be greater than or equal to 2."
            )
        elif limit > 100:
            errors.add(
                ("limit",), "NUMBER_TYPE_MAX", "int value should be less than or equal to 100."
            )
        if "before" in request.query:
            try:
                before = dt.datetime.fromisoformat(request.query["before"])
            except ValueError:
                errors.add(("before",), "DATE_TIME_TYPE_PARSE", "Could not parse the timestamp.")
        if errors:
            return self._form_error(errors)

        def archived_at(thread: dict[str, Any]) -> dt.datetime:
            return dt.datetime.fromisoformat(thread["thread_metadata"]["archive_timestamp"])

        threads = sorted(
            (
                t
                for t in self.threads.values()
                if int(t["parent_id"]) == channel_id
                and t["type"] != PRIVATE_THREAD
                and t["thread_metadata"].get("archived")
                and (before is None or archived_at(t) < before)
            ),
            key=archived_at,
            reverse=True,
        )
        body = {"threads": threads[:limit], "members": [], "has_more": len(threads) > limit}
        return self._json(body)

    async def _joined_private_archived_threads(self, request: web.Request) -> web.Response:
        """A channel's archived private threads the bot is in (it made them, or was
        added), as Discord lists them: by id, newest first; ``before`` (a thread id)
        keeps older ones, ``limit`` 2-100 (50 when absent). Needs Read Message History."""
        channel_id, refused = self._archive_listing_refused(request)
        if refused is not None:
            return refused
        errors = limits.FormErrors()
        try:
            limit = int(request.query.get("limit", "50"))
            before = int(request.query["before"]) if "before" in request.query else None
        except ValueError:
            errors.add(("limit",), "NUMBER_TYPE_COERCE", "Value is not int.")
            limit, before = 50, None
        if not 2 <= limit <= 100:
            errors.add(("limit",), "NUMBER_TYPE_MAX", "int value should be between 2 and 100.")
        if errors:
            return self._form_error(errors)
        me = self.bot_member.id
        threads = sorted(
            (
                t
                for t in self.threads.values()
                if int(t["parent_id"]) == channel_id
                and t["type"] == PRIVATE_THREAD
                and t["thread_metadata"].get("archived")
                and (int(t["owner_id"]) == me or me in self.thread_members.get(int(t["id"]), []))
                and (before is None or int(t["id"]) < before)
            ),
            key=lambda t: int(t["id"]),
            reverse=True,
        )
        body = {"threads": threads[:limit], "members": [], "has_more": len(threads) > limit}
        return self._json(body)

    async def _get_channel(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        channel = self.channel_json(int(request.match_info["cid"]))
        return self._json(channel) if channel else self._error(404, 10003, "Unknown Channel")

    async def _edit_channel(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        thread = self.threads.get(int(request.match_info["cid"]))
        if thread is None:
            self.add_problem(
                "unsupported",
                f"PATCH {request.path}: the stand-in only edits threads; extend server.py",
            )
            return self._error(404, 10003, "Unknown Channel")
        body = request[RECORD].json or {}
        refused = self._thread_edit_refused(thread, body)
        if refused is not None:
            return refused
        errors = limits.FormErrors()
        if "name" in body:
            errors.length_between(("name",), body["name"], 1, limits.THREAD_NAME_MAX)
        errors.max_items(("applied_tags",), body.get("applied_tags"), 5)
        if errors:
            return self._form_error(errors)
        for key in ("name", "applied_tags", "rate_limit_per_user", "flags"):
            if key in body:
                thread[key] = body[key]
        meta = thread["thread_metadata"]
        for key in ("archived", "locked", "auto_archive_duration", "invitable"):
            if key in body:
                meta[key] = body[key]
        if "archived" in body:
            meta["archive_timestamp"] = iso_now()
        await self._send_dispatch("THREAD_UPDATE", thread)
        return self._json(thread)

    def _thread_edit_refused(
        self, thread: Mapping[str, Any], body: Mapping[str, Any]
    ) -> web.Response | None:
        """Discord's rules for editing a thread: an archived thread takes no edit but
        the one that unarchives it (400, 50083); locking, unlocking and unarchiving a
        locked thread need Manage Threads, and so does any edit by another than the
        thread's owner, except unarchiving an unlocked thread (403, 50013)."""
        meta = thread["thread_metadata"]
        if meta.get("archived") and body.get("archived") is not False:
            return self._error(400, 50083, "Operation cannot be performed on an archived thread.")
        thread_id = int(thread["id"])
        permissions = self.bot_channel_permissions(thread_id)
        if permissions & MANAGE_THREADS:
            return None
        locked = bool(meta.get("locked"))
        changes_lock = "locked" in body and bool(body["locked"]) != locked
        unarchives_locked = meta.get("archived") and locked and body.get("archived") is False
        owner = int(thread.get("owner_id") or 0) == self.bot_member.id
        only_unarchive = set(body) <= {"archived"} and body.get("archived") is False
        by_owner = owner and set(body) - {"locked"} <= OWNER_EDITABLE
        if changes_lock or unarchives_locked or not (by_owner or only_unarchive):
            return self._error(403, 50013, "Missing Permissions")
        return None

    def _writable_channel(self, channel_id: int) -> web.Response | None:
        """None when the bot may post in the channel, else Discord's error answer."""
        channel = self.channel_json(channel_id)
        if channel is None:
            return self._error(404, 10003, "Unknown Channel")
        if channel["type"] not in TEXT_LIKE_CHANNELS:
            return self._error(400, 50008, "Cannot send messages in a non-text channel")
        needed = SEND_MESSAGES_IN_THREADS if channel_id in self.threads else SEND_MESSAGES
        if not self.bot_channel_permissions(channel_id) & needed:
            return self._error(403, 50013, "Missing Permissions")
        meta = channel.get("thread_metadata")
        if meta and meta.get("archived"):
            if meta.get("locked"):
                return self._error(
                    400, 50083, "Operation cannot be performed on an archived thread."
                )
            meta["archived"] = False  # sending to an unlocked archived thread reopens it
        return None

    async def _post_message(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        channel_id = int(request.match_info["cid"])
        error = self._writable_channel(channel_id)
        if error is not None:
            return error
        record: RecordedRequest = request[RECORD]
        body = record.json if isinstance(record.json, Mapping) else {}
        invalid = self._validate_message(body, record.files, creating=True)
        if invalid is not None:
            return invalid
        self._record_mentions(record, body, CHANNEL_DEFAULT_PARSE)
        message = self._new_message(
            channel_id, body, record.files, flags=int(body.get("flags") or 0) & SUPPRESS_EMBEDS
        )
        if "message_reference" in message:
            message["type"] = 19
        await self._dispatch_message_create(message)
        return self._json(message)

    async def _list_messages(self, request: web.Request) -> web.Response:
        """A channel's messages as Discord lists them: newest first, ``before`` / ``after``
        (message ids) and ``limit`` (1-100, 50 when absent). Needs View Channel (else
        50001) and Read Message History (else an empty list, as Discord answers)."""
        if not self._authorized(request):
            return self._unauthorized()
        channel_id = int(request.match_info["cid"])
        if self.channel_json(channel_id) is None:
            return self._error(404, 10003, "Unknown Channel")
        permissions = self.bot_channel_permissions(channel_id)
        if not permissions & VIEW_CHANNEL:
            return self._error(403, 50001, "Missing Access")
        if not permissions & READ_MESSAGE_HISTORY:
            return self._json([])
        errors = limits.FormErrors()
        try:
            limit = int(request.query.get("limit", "50"))
            before = int(request.query.get("before", str(2**63)))
            after = int(request.query.get("after", "0"))
        except ValueError:
            errors.add(("limit",), "NUMBER_TYPE_COERCE", "Value is not int.")
            return self._form_error(errors)
        if not 1 <= limit <= 100:
            errors.add(("limit",), "NUMBER_TYPE_MAX", "int value should be between 1 and 100.")
            return self._form_error(errors)
        found = sorted(
            (
                m
                for m in self.messages.values()
                if m["channel_id"] == str(channel_id) and after < int(m["id"]) < before
            ),
            key=lambda m: int(m["id"]),
            reverse=True,
        )
        return self._json(found[:limit])

    def _channel_message(self, request: web.Request) -> dict[str, Any] | None:
        message = self.messages.get(int(request.match_info["mid"]))
        if message is None or message["channel_id"] != request.match_info["cid"]:
            return None
        return message

    async def _get_message(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        message = self._channel_message(request)
        return self._json(message) if message else self._error(404, 10008, "Unknown Message")

    async def _edit_message(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        message = self._channel_message(request)
        if message is None:
            return self._error(404, 10008, "Unknown Message")
        if int(message["author"]["id"]) != self.bot_member.id:
            return self._error(403, 50005, "Cannot edit a message authored by another user")
        record: RecordedRequest = request[RECORD]
        body = record.json if isinstance(record.json, Mapping) else {}
        invalid = self._validate_message(body, record.files, creating=False)
        if invalid is not None:
            return invalid
        self._record_mentions(record, body, CHANNEL_DEFAULT_PARSE)
        return self._json(self._apply_edit(message, body, record.files))

    async def _delete_message(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        message = self._channel_message(request)
        if message is None:
            return self._error(404, 10008, "Unknown Message")
        del self.messages[int(message["id"])]
        return self._no_content_response()

    async def _create_thread(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        parent = self.guild.channel(int(request.match_info["cid"]))
        if parent is None:
            return self._error(404, 10003, "Unknown Channel")
        record: RecordedRequest = request[RECORD]
        body = record.json if isinstance(record.json, Mapping) else {}
        forum = parent.type in (15, 16)
        from_message = "mid" in request.match_info
        if from_message and int(request.match_info["mid"]) not in self.messages:
            return self._error(404, 10008, "Unknown Message")
        if not forum and parent.type not in (0, 5):
            return self._error(400, 50024, "Cannot execute action on this channel type")
        private = not forum and int(body.get("type") or 11) == PRIVATE_THREAD
        needed = (
            SEND_MESSAGES if forum else CREATE_PRIVATE_THREADS if private else CREATE_PUBLIC_THREADS
        )
        if not self.bot_channel_permissions(parent.id) & needed:
            return self._error(403, 50013, "Missing Permissions")
        errors = limits.FormErrors()
        limits.check_thread(errors, body, forum=forum)
        if forum:
            known = {str(t.id) for t in parent.available_tags}
            for i, tag in enumerate(body.get("applied_tags") or []):
                if str(tag) not in known:
                    errors.add(("applied_tags", i), "BASE_TYPE_CHOICES", f"Unknown tag {tag}.")
        if errors:
            return self._form_error(errors)
        if forum and parent.flags & REQUIRE_TAG and not body.get("applied_tags"):
            return self._error(
                400, 40067, "A tag is required to create a forum post in this channel"
            )
        first = body.get("message") if forum else None
        if forum and limits.is_empty_message(first or {}, has_files=bool(record.files)):
            return self._empty_message_error()
        thread_id = int(request.match_info["mid"]) if from_message else self.ids.next()
        thread = self._new_thread(parent, body, thread_id)
        response = dict(thread)
        if forum and isinstance(first, Mapping):
            self._record_mentions(record, first, CHANNEL_DEFAULT_PARSE)
            message = self._new_message(thread_id, first, record.files, message_id=thread_id)
            response["message"] = message
        await self._send_dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return self._json(response)

    def _new_thread(
        self, parent: ChannelSpec, body: Mapping[str, Any], thread_id: int
    ) -> dict[str, Any]:
        now = iso_now()
        kind = 11 if parent.type in (15, 16) else int(body.get("type") or 11)
        thread = {
            "id": str(thread_id),
            "type": kind,
            "guild_id": str(self.guild.id),
            "parent_id": str(parent.id),
            "owner_id": str(self.bot_member.id),
            "name": body["name"],
            "last_message_id": None,
            "message_count": 0,
            "member_count": 1,
            "total_message_sent": 0,
            "rate_limit_per_user": int(body.get("rate_limit_per_user") or 0),
            "flags": 0,
            "applied_tags": [str(t) for t in body.get("applied_tags") or []],
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": int(body.get("auto_archive_duration") or 4320),
                "archive_timestamp": now,
                "locked": False,
                "create_timestamp": now,
                "invitable": bool(body.get("invitable", True)),
            },
        }
        self.threads[thread_id] = thread
        return thread

    async def _add_thread_member(self, request: web.Request) -> web.Response:
        """Add a member to a thread (``thread_members`` records who is in it): needs the
        thread to be one the bot can send in; a private thread needs the bot to be in
        it (it made it) or Manage Threads, as Discord asks."""
        if not self._authorized(request):
            return self._unauthorized()
        thread = self.threads.get(int(request.match_info["cid"]))
        if thread is None:
            return self._error(404, 10003, "Unknown Channel")
        if not self.bot_channel_permissions(int(thread["id"])) & SEND_MESSAGES_IN_THREADS:
            return self._error(403, 50013, "Missing Permissions")
        members = self.thread_members.setdefault(int(thread["id"]), [])
        user = int(request.match_info["uid"])
        if user not in members:
            members.append(user)
        return self._no_content_response()

    async def _no_content(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        return self._no_content_response()

    # ------------------------------------------------------------------ CDN & unknown
    async def _cdn(self, request: web.Request) -> web.Response:
        stored = self.files.get(request.path)
        if stored is None:
            return self._error(404, 0, "404: Not Found")
        data, content_type = stored
        return web.Response(body=data, headers={"Content-Type": content_type})

    async def _unknown(self, request: web.Request) -> web.Response:
        self.add_problem(
            "unknown-route",
            f"{request.method} {request.path} is not a route the stand-in knows"
            " (add it to tests/discord_standin/server.py if the bot really needs it)",
        )
        return self._error(404, 0, "404: Not Found")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a URL's) is this machine: the only hosts tests may reach."""
    if host in _LOOPBACK_HOSTS:
        return True
    try:  # an address of 127.0.0.0/8 or ::1, never a name that merely starts "127."
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class LoopbackConnector(aiohttp.TCPConnector):
    """discord.py's default connector (``limit=0``) that refuses any host but loopback.

    Every request of a session, websocket and redirects included, asks its connector for
    a connection (``connect``), pooled or new: a request to another host is refused there,
    before any DNS look-up or connection, and recorded as a problem of ``standin``.
    """

    def __init__(self, standin: Standin) -> None:
        super().__init__(limit=0)
        self.standin = standin

    async def connect(self, req: Any, traces: Any, timeout: Any) -> Any:
        host = req.url.host or ""
        if not is_loopback(host):
            text = f"refused {req.method} {req.url}: only loopback is allowed in tests"
            self.standin.add_problem("non-loopback", text)
            raise NonLoopbackRequest(text)
        return await super().connect(req, traces, timeout)
