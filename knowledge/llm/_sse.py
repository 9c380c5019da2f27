"""Server-sent events, as OpenAI-compatible servers stream chat completions.

The event-stream format (WHATWG HTML, "Server-sent events"): lines of ``field: value``;
a line starting with ``:`` is a comment (servers send them as keep-alives); ``data``
lines accumulate, joined by line breaks, until an empty line dispatches the event;
``event``, ``id`` and ``retry`` are read and otherwise ignored here. The same reading
as openai-python's ``SSEDecoder``: a ``data: [DONE]`` event ends the stream, and a
stream that closes with an event half-read dispatches nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DONE", "ServerSentEvent", "SseDecoder"]

#: The data of the event that closes an OpenAI-style stream.
DONE = "[DONE]"


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    data: str
    event: str = "message"


class SseDecoder:
    """Feed it the stream's lines (without their line ends); it returns each event
    complete at an empty line."""

    __slots__ = ("_data", "_event")

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""

    def feed(self, line: str) -> ServerSentEvent | None:
        if not line:
            if not self._data:
                self._event = ""
                return None
            event = ServerSentEvent("\n".join(self._data), self._event or "message")
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None  # a comment: keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        # id, retry and unknown fields: nothing to do for one request's stream
        return None

    @property
    def pending(self) -> bool:
        """True when data was read that no empty line has dispatched yet."""
        return bool(self._data)
