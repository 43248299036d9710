"""The one interface every transport implements, and the in-memory pair.

A transport moves whole JSON-RPC messages. It encodes what it sends and parses what it
receives with the core's `encode`/`parse`, so a peer never sees bytes. Failures are
raised, never delivered as messages: ``receive`` raises ``anyio.EndOfStream`` when the
other side finished, `TransportError` when the transport broke.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._wire import Incoming, Message, RequestId, encode, encode_batch, parse

__all__ = ["MemoryMessageStream", "MessageStream", "Received", "encode_payload", "memory_pair"]


@dataclass(slots=True)
class Received:
    """A parsed payload and what the transport knows about where it came from.

    ``info`` is transport-specific (an HTTP transport puts the request headers,
    session and authenticated principal there); it reaches handlers as ``ctx.info``.
    """

    payload: Incoming
    info: Any = None


@runtime_checkable
class MessageStream(Protocol):
    """A bidirectional stream of JSON-RPC messages."""

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        """Send one message or a batch.

        ``related_request_id`` names the incoming request this message belongs to
        (a progress notification, a callback request, the response itself); transports
        that multiplex per request, like Streamable HTTP, route by it.
        """
        ...

    async def receive(self) -> Received:
        """The next payload; raises ``anyio.EndOfStream`` once the other side closed."""
        ...

    async def aclose(self) -> None:
        """Close the stream; pending and later ``receive`` calls end."""
        ...


def encode_payload(payload: Message | list[Message]) -> bytes:
    """Serialise a message or a batch."""
    return encode_batch(payload) if isinstance(payload, list) else encode(payload)


class MemoryMessageStream:
    """One end of an in-memory connection; messages cross it as bytes, like on a wire."""

    def __init__(
        self,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        await self._send_stream.send(encode_payload(payload))

    async def send_raw(self, data: bytes) -> None:
        """Send bytes as they are (for tests that speak broken JSON-RPC)."""
        await self._send_stream.send(data)

    async def receive(self) -> Received:
        return Received(parse(await self._receive_stream.receive()))

    async def receive_raw(self) -> bytes:
        """The next frame as bytes, unparsed."""
        return await self._receive_stream.receive()

    async def aclose(self) -> None:
        await self._send_stream.aclose()
        await self._receive_stream.aclose()


def memory_pair(max_buffer_size: int = 32) -> tuple[MemoryMessageStream, MemoryMessageStream]:
    """Two connected in-memory message streams (client end, server end)."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](max_buffer_size)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](max_buffer_size)
    return MemoryMessageStream(a_send, a_receive), MemoryMessageStream(b_send, b_receive)
