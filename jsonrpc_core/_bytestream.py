"""A message stream over any anyio byte stream, framed as newline-delimited JSON.

Rules: one line is written at a time, whole, in the order the sends started (a FIFO
turn, anyio's ``Lock(fast_acquire=True)``); a send to a pipe that takes the line at once
never yields to the event loop, and a full pipe makes its sender (and those queued behind
it) wait.

Received lines are handed out in arrival order. On asyncio, over a pipe (`FdReceiveStream`),
a Peer's dispatcher may take a message straight from the event loop's read callback (a
request for the workers, a response for its caller) while its read loop is idle and
nothing is queued ahead of it; everything else, and everything after it, goes through
``receive`` in order.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Callable

import anyio
import anyio.abc

from ._errors import InvalidRequest, TransportError
from ._framing import DEFAULT_MAX_MESSAGE_SIZE, LineFramer, Oversized
from ._transport import Received
from ._wire import (
    Incoming,
    InvalidMessage,
    Message,
    Notification,
    RequestId,
    StreamEnd,
    encode,
    encode_batch,
    parse,
    recover_id,
)

__all__ = ["NdjsonStream"]

logger = logging.getLogger("jsonrpc_core.stdio")

_READ_CHUNK = 65536
# Messages parsed ahead in the read callback before it leaves bytes to the reader.
_READY_LIMIT = 1024
# The first member naming the kind of message: requests and notifications put "method"
# before their params in every known encoder; responses have "result" or "error".
_KIND_MEMBER = re.compile(rb'"(method|result|error)"\s*:')


def _is_response(prefix: bytes) -> bool:
    match = _KIND_MEMBER.search(prefix)
    return match is not None and match.group(1) != b"method"


def _oversized(frame: Oversized) -> Incoming:
    message_id = recover_id(frame.prefix)
    if message_id is not None and _is_response(frame.prefix):
        # An oversized *response* fails the caller's pending request; answering it
        # would send an error for a request id of ours to the other side.
        error: Exception = TransportError(
            f"the response to request {message_id!r} exceeds the {frame.limit}-byte size limit"
        )
        return StreamEnd(message_id, error)
    error = InvalidRequest(f"Invalid Request: message exceeds the {frame.limit}-byte size limit")
    return InvalidMessage(message_id, error)


def _payload(frame: bytes | Oversized) -> Incoming:
    return _oversized(frame) if isinstance(frame, Oversized) else parse(frame)


class NdjsonStream:
    """NDJSON over a pair of byte streams (pipes, sockets, a subprocess's stdio).

    An incoming line over ``max_message_size`` is answered with an `InvalidRequest`
    error addressed to its id when the id can be recovered; an oversized *response*
    instead fails our pending request with that id (a `StreamEnd` carrying a
    `TransportError`). Either way the line is skipped and the stream keeps working. Sends
    are serialised so that lines never interleave.
    """

    def __init__(
        self,
        receive_stream: anyio.abc.ByteReceiveStream,
        send_stream: anyio.abc.ByteSendStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._receive_stream = receive_stream
        self._send_stream = send_stream
        self._framer = LineFramer(max_message_size)
        self._ready: deque[Incoming] = deque()
        # fast_acquire: no scheduling point when the lock is free (the usual case).
        self._turns = anyio.Lock(fast_acquire=True)
        self._eof = False
        self._dispatcher: Callable[[Received], bool] | None = None
        self._write_nowait: Callable[[bytes], int] | None = getattr(
            send_stream, "write_nowait", None
        )
        self._plain_receive = type(self).receive in _PLAIN_RECEIVE

    @property
    def max_message_size(self) -> int:
        """The largest line accepted, in bytes."""
        return self._framer.max_message_size

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        data = (encode_batch(payload) if isinstance(payload, list) else encode(payload)) + b"\n"
        write_nowait = self._write_nowait
        if write_nowait is not None:
            # Fast path: take the lock without a checkpoint and write at once; only a
            # full pipe makes us wait (still holding the lock, so lines never interleave).
            turns = self._turns
            if not turns.locked():
                turns.acquire_nowait()
                try:
                    written = write_nowait(data)
                    if written < len(data):
                        await self._send_stream.send(data[written:])
                finally:
                    self._turns.release()
                return
        await self._turns.acquire()
        try:
            await self._send_stream.send(data)
        finally:
            self._turns.release()

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (for tests that speak broken JSON-RPC)."""
        await self._turns.acquire()
        try:
            await self._send_stream.send(data)
        finally:
            self._turns.release()

    async def receive(self) -> Received:
        ready = self._ready
        while not ready:
            if self._eof:
                raise anyio.EndOfStream
            try:
                chunk = await self._receive_stream.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._eof = True
                ready.extend(map(_payload, self._framer.close()))
                continue
            if chunk:
                ready.extend(map(_payload, self._framer.feed(chunk)))
        return Received(ready.popleft())

    def _receive_payload_nowait(self) -> Incoming | None:
        """The next payload if one has been read already (for the Peer's read loop; its
        ``info`` is ``None``, as ever on this stream). Always ``None`` for a subclass whose
        ``receive`` does more than report the end of the stream differently."""
        ready = self._ready
        return ready.popleft() if ready and self._plain_receive else None

    def _attach_dispatcher(self, dispatcher: Callable[[Received], bool] | None) -> None:
        """Called by the Peer serving this stream: ``dispatcher`` may take messages from
        the read callback (see the module rules). Only where the bytes come from a pipe
        on asyncio, and not for a subclass whose ``receive`` does more than report the
        end of the stream differently."""
        if not self._plain_receive:
            return
        set_listener = getattr(self._receive_stream, "_set_listener", None)
        if set_listener is None:
            return
        if dispatcher is None:
            set_listener(None)
            self._dispatcher = None
        elif set_listener(self._on_bytes):
            self._dispatcher = dispatcher

    def _on_bytes(self, buffer: bytearray) -> bool:
        """The read callback's listener: frame and parse what arrived, offer each message
        to the dispatcher while nothing waits ahead of it; whether ``receive`` has
        something new. Past ``_READY_LIMIT`` queued messages the bytes are left in
        ``buffer`` (the reader then stops reading once its own limit is reached)."""
        ready = self._ready
        dispatcher = self._dispatcher
        if dispatcher is None or len(ready) >= _READY_LIMIT or self._eof:
            return True
        frames = self._framer.feed(bytes(buffer))
        buffer.clear()
        for frame in frames:
            payload = parse(frame) if type(frame) is bytes else _payload(frame)
            # A notification is never taken (it is handled on the read loop, in order).
            if ready or type(payload) is Notification:
                ready.append(payload)
                continue
            try:
                taken = dispatcher(Received(payload))
            except Exception:  # not in a task: nobody above would see it
                logger.exception("message dropped: its dispatch failed")
                continue
            if not taken:
                ready.append(payload)
        return bool(ready)

    async def aclose(self) -> None:
        try:
            await self._send_stream.aclose()
        finally:
            await self._receive_stream.aclose()


_PLAIN_RECEIVE: set[Callable[..., object]] = {NdjsonStream.receive}
"""``receive`` methods that do nothing but hand out queued messages (and report the end)."""
