"""What the stand-in remembers: requests, interactions, mentions and problems."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Standin

__all__ = [
    "InteractionRecord",
    "MentionRecord",
    "NonLoopbackRequest",
    "Problem",
    "RecordedRequest",
    "SentFile",
    "StandinFailure",
    "StandinTimeout",
]

_TOKEN = re.compile(r"standin-\d+-[\w-]+")
# Requests that carry a message the bot wrote for an interaction, after the first response.
FOLLOWUP_ROUTES = frozenset({"followup", "webhook_message"})
# Interaction callbacks that carry a message: 4 sends one, 7 updates the pressed one.
ANSWER_CALLBACKS = frozenset({4, 7})


class StandinFailure(AssertionError):
    """The bot did something Discord (or the test rules) would not accept."""


class StandinTimeout(StandinFailure):
    """The bot never sent what a helper was waiting for."""


class NonLoopbackRequest(RuntimeError):
    """discord.py tried to reach a host other than loopback.

    Deliberately not an ``aiohttp.ClientError``: discord.py retries those forever
    when connecting the gateway, which would hang the test instead of failing it.
    """


@dataclass
class SentFile:
    """One ``files[N]`` part of a multipart request."""

    field: str
    filename: str | None
    content_type: str | None
    data: bytes


@dataclass
class RecordedRequest:
    """One HTTP request the bot made, and what the stand-in answered.

    ``path`` is below ``/api/v10`` (``/channels/1/messages``); ``json`` is the JSON
    body, or the ``payload_json`` part of a multipart body; ``route`` names the
    stand-in route that handled it (``"interaction_callback"``, ``"followup"``,
    ``"webhook_message"``, ``"channel_message"``, ``"create_thread"``, ... or
    ``"unknown"``).
    """

    method: str
    path: str
    route: str
    query: dict[str, str]
    json: Any
    files: list[SentFile]
    at: float
    status: int = 0
    response: Any = None
    interaction: InteractionRecord | None = field(default=None, repr=False)
    #: Headers the stand-in answered with (``X-RateLimit-*``, ``Retry-After``, ``Via``).
    response_headers: dict[str, str] = field(default_factory=dict)
    #: The OpenAPI operation reached (``POST /channels/{channel_id}/messages``), if any.
    operation: str | None = None
    #: Why Discord's OpenAPI description refuses the body, if it does.
    spec_mismatch: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def error_code(self) -> int | None:
        """Discord's JSON error code (50035, 40060, 10062, ...) of a failed request."""
        if self.status >= 400 and isinstance(self.response, dict):
            return self.response.get("code")
        return None

    @property
    def callback_type(self) -> int | None:
        """For an interaction callback: 4 message, 5 defer, 6/7 update, 8 choices, 9 modal."""
        if self.route == "interaction_callback" and isinstance(self.json, dict):
            return self.json.get("type")
        return None

    @property
    def message(self) -> dict[str, Any]:
        """The message body this request carried (``data`` of a callback, the forum
        post's ``message``, else the body itself); ``{}`` when there is none."""
        body = self.json if isinstance(self.json, dict) else {}
        if self.route == "interaction_callback":
            return body.get("data") or {}
        if self.route == "create_thread" and isinstance(body.get("message"), dict):
            return body["message"]
        return body

    @property
    def shown(self) -> dict[str, Any] | None:
        """The message as the stand-in holds it after this request: the one a callback
        sent or updated (types 4 and 7), the follow-up made, the message edited. None
        for a refused request or one that showed no message (a deferral, a modal)."""
        if not self.ok or not isinstance(self.response, dict):
            return None
        if self.route == "interaction_callback":
            return (self.response.get("resource") or {}).get("message")
        if self.route in FOLLOWUP_ROUTES and self.method in ("POST", "PATCH"):
            return self.response if "id" in self.response else None
        return None

    def describe(self) -> str:
        path = _TOKEN.sub("{token}", self.path)
        text = f"{self.method} {path} -> {self.status}"
        if self.status >= 400:
            text += f" {json.dumps(self.response)[:600]}"
        return text


@dataclass
class MentionRecord:
    """``allowed_mentions`` of one message-bearing request, and who it would ping."""

    route: str
    method: str
    path: str
    allowed_mentions: dict[str, Any] | None  # None: the request sent none (Discord's default)
    content: str
    pings: list[str]


@dataclass
class Problem:
    """Something that fails the test: an ERROR log, an unknown route, a non-loopback host."""

    kind: str
    text: str
    reported: bool = False


class InteractionRecord:
    """One injected interaction and every request the bot made with its token.

    Attributes: ``id``, ``token``, ``type`` (2 command, 3 component, 4 autocomplete,
    5 modal submit), ``payload`` (the INTERACTION_CREATE ``d`` sent), ``requests``,
    ``acknowledged`` (callback type once accepted), ``original_message_id``,
    ``followup_message_ids``, ``modal`` (type 9 data) and ``choices`` (type 8).
    """

    def __init__(self, standin: Standin, payload: dict[str, Any], sent_at: float) -> None:
        self._standin = standin
        self.payload = payload
        self.id = int(payload["id"])
        self.token: str = payload["token"]
        self.type: int = payload["type"]
        self.sent_at = sent_at
        self.requests: list[RecordedRequest] = []
        self.acknowledged: int | None = None
        self.original_message_id: int | None = None
        self.original_loading = False
        self.followup_message_ids: list[int] = []
        self.modal: dict[str, Any] | None = None
        self.choices: list[dict[str, Any]] | None = None
        self._followups_seen = 0

    def __repr__(self) -> str:
        return f"<InteractionRecord id={self.id} type={self.type} {self.describe_target()}>"

    def describe_target(self) -> str:
        data = self.payload.get("data") or {}
        if self.type in (2, 4):
            return f"command {data.get('name')!r}"
        if self.type == 3:
            return f"component {data.get('custom_id')!r}"
        if self.type == 5:
            return f"modal {data.get('custom_id')!r}"
        return "interaction"

    @property
    def user_id(self) -> int:
        user = (self.payload.get("member") or {}).get("user") or self.payload["user"]
        return int(user["id"])

    @property
    def response(self) -> RecordedRequest | None:
        """The first interaction callback the bot sent (whatever the stand-in answered)."""
        return next((r for r in self.requests if r.route == "interaction_callback"), None)

    @property
    def callbacks(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.route == "interaction_callback"]

    @property
    def original(self) -> dict[str, Any] | None:
        """Current JSON of the original response message (after any edits)."""
        if self.original_message_id is None:
            return None
        return self._standin.messages.get(self.original_message_id)

    @property
    def followup_messages(self) -> list[dict[str, Any]]:
        return [
            self._standin.messages[i]
            for i in self.followup_message_ids
            if i in self._standin.messages
        ]

    async def wait_response(self, timeout: float | None = None) -> RecordedRequest:
        """Wait for the first interaction callback and return it."""
        if timeout is None:
            timeout = self._standin.config.response_deadline + 1.0
        return await self.wait_for(
            lambda r: r.route == "interaction_callback",
            timeout=timeout,
            what="the bot's response (interaction callback)",
        )

    async def followup(self, timeout: float | None = None) -> RecordedRequest:
        """Wait for the next follow-up or edit of this interaction's messages.

        Each call returns a later request than the previous call: ``POST
        /webhooks/{app}/{token}`` (follow-up; after a defer Discord applies the first
        one to the loading message) or ``PATCH .../messages/@original|{id}``.
        """
        index = self._followups_seen

        def check() -> RecordedRequest | None:
            matching = [
                r
                for r in self.requests
                if r.route in FOLLOWUP_ROUTES and r.method in ("POST", "PATCH")
            ]
            return matching[index] if len(matching) > index else None

        found = await self._standin.wait_until(
            check,
            timeout=timeout,
            what=f"a follow-up or edit for {self.describe_target()}",
            interaction=self,
        )
        self._followups_seen = index + 1
        return found

    def _answer(self) -> RecordedRequest | None:
        for request in self.requests:
            if request.route == "interaction_callback":
                if request.callback_type in ANSWER_CALLBACKS:
                    return request
            elif request.route in FOLLOWUP_ROUTES and request.method in ("POST", "PATCH"):
                return request
        return None

    async def answer(self, timeout: float | None = None) -> RecordedRequest:
        """Wait for the request that carries the bot's answer, wherever it lands.

        The first callback with a message (type 4, or 7 updating the pressed message)
        when the bot answered at once; after a deferral (type 5 or 6) the first
        follow-up ``POST`` or edit ``PATCH``. Its ``shown`` is the message afterwards.
        """
        return await self._standin.wait_until(
            self._answer,
            timeout=timeout,
            what=f"the answer to {self.describe_target()}",
            interaction=self,
        )

    async def wait_for(
        self,
        predicate: Callable[[RecordedRequest], bool],
        *,
        timeout: float | None = None,
        what: str = "a request",
    ) -> RecordedRequest:
        """Wait until one of this interaction's requests matches ``predicate``."""
        return await self._standin.wait_until(
            lambda: next((r for r in self.requests if predicate(r)), None),
            timeout=timeout,
            what=f"{what} for {self.describe_target()}",
            interaction=self,
        )
