"""A wire tap: record every message a stream carries, with direction, time and transport.

Wrap any `MessageStream` with `WireTap.wrap`; the tapped stream behaves exactly like the
original and hands a `TapRecord` to each sink. `JsonLinesSink` writes recordings that
later tools turn into sequence diagrams.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from ._transport import MessageStream, Received, encode_payload
from ._wire import InvalidMessage, Message, RequestId, StreamEnd

__all__ = ["JsonLinesSink", "TapRecord", "TappedStream", "WireTap"]

Direction = Literal["send", "receive"]


@dataclass(slots=True, frozen=True)
class TapRecord:
    """One message seen on the wire, from the point of view of ``local``."""

    time: float
    direction: Direction
    transport: str
    local: str
    remote: str
    message: Any

    def to_json(self) -> str:
        """One JSON Lines record."""
        return json.dumps(
            {
                "time": self.time,
                "direction": self.direction,
                "transport": self.transport,
                "from": self.local if self.direction == "send" else self.remote,
                "to": self.remote if self.direction == "send" else self.local,
                "message": self.message,
            },
            ensure_ascii=False,
        )


Sink = Callable[[TapRecord], Any]


def _as_json(payload: Message | list[Message] | InvalidMessage | list[Any]) -> Any:
    if isinstance(payload, InvalidMessage):
        return {"invalid": payload.error.to_object(), "id": payload.id}
    if isinstance(payload, list):
        return [_as_json(item) for item in payload]
    return json.loads(encode_payload(payload))


class WireTap:
    """Fans each record out to its sinks; one tap may watch several streams."""

    def __init__(self, *sinks: Sink) -> None:
        self.sinks = list(sinks)

    def record(self, record: TapRecord) -> None:
        """Hand ``record`` to every sink."""
        for sink in self.sinks:
            sink(record)

    def record_message(
        self,
        direction: Direction,
        payload: Any,
        *,
        local: str,
        remote: str,
        transport: str,
    ) -> None:
        """Record one message or batch (a `Message`, `InvalidMessage` or a list of them)
        sent or received by ``local``, timed now.

        The one way a record is built, for `TappedStream` and for callers that read
        the wire themselves (`HTTPCaller`).
        """
        self.record(TapRecord(time.time(), direction, transport, local, remote, _as_json(payload)))

    def wrap(
        self, stream: MessageStream, *, local: str, remote: str, transport: str
    ) -> TappedStream:
        """``stream``, with every message it carries recorded."""
        return TappedStream(stream, self, local=local, remote=remote, transport=transport)


class TappedStream:
    """A `MessageStream` that records what passes through it."""

    def __init__(
        self, inner: MessageStream, tap: WireTap, *, local: str, remote: str, transport: str
    ) -> None:
        self.inner = inner
        self._tap = tap
        self._local = local
        self._remote = remote
        self._transport = transport

    def _record(self, direction: Direction, payload: Any) -> None:
        self._tap.record_message(
            direction, payload, local=self._local, remote=self._remote, transport=self._transport
        )

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        self._record("send", payload)
        await self.inner.send(payload, related_request_id=related_request_id)

    async def receive(self) -> Received:
        received = await self.inner.receive()
        if not isinstance(received.payload, StreamEnd):  # a transport's word, not a message
            self._record("receive", received.payload)
        return received

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # A transport's knobs set by its user (Streamable HTTP's ``message_headers``,
        # which the MCP client sets for the 2026 era) must reach the transport itself.
        if name in _OWN_ATTRIBUTES:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)


_OWN_ATTRIBUTES = frozenset({"inner", "_tap", "_local", "_remote", "_transport"})


class JsonLinesSink:
    """Appends each record to a JSON Lines file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[str] = self.path.open("a", encoding="utf-8")

    def __call__(self, record: TapRecord) -> None:
        self._file.write(record.to_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()
