"""The bidirectional peer: both ends serve handlers and both send requests.

Rules the peer keeps:

1. Exactly one response per request received with an id, unless the request was
   cancelled and the protocol says cancelled requests get no answer
   (``answer_cancelled=False``, as in MCP).
2. Requests are served concurrently by up to ``max_concurrency`` reusable worker
   tasks; beyond ``max_queued`` waiting requests the peer answers "overloaded" at
   once. Notifications are handled in arrival order on the read loop, so a
   notification handler must not wait for a response from the other side; spawn a
   task for long work.
3. The read loop never blocks on a handler, so responses to our own requests are always
   read, even while every handler slot waits for a call back to the other side.
4. When the connection ends, every pending outgoing request fails at once with
   `ConnectionClosed`; handlers already running are allowed to finish.
5. With a layer's telemetry conventions (and ``opentelemetry`` configured), every
   request and notification sent is a CLIENT span and every one handled a SERVER span
   (`_telemetry`); each traced path sits behind ``telemetry is not None and
   telemetry.live()``, so a peer without it pays one ``None`` test per message.

The parts, one module each, stacked as bases of `Peer` (so a message costs no extra call
or lookup): `_peer_calls` (outgoing requests and notifications, the pending table),
`_peer_streams` (streamed results, both ways), `_peer_serving` (the worker pool, handlers,
notifications and batches). This module holds the constructor, the lifecycle and the read
loop that drives the parts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ._backend import is_asyncio
from ._errors import STANDARD_ERRORS, ConnectionClosed, ErrorTable, TransportError
from ._handoff import HandoffQueue
from ._methods import MethodRegistry
from ._peer_calls import _CLOSED_ERRORS, CancelHook, _own_hook, logger
from ._peer_serving import RequestFilter, _PeerServing
from ._telemetry import TelemetryConventions, instrument
from ._transport import MessageStream, Received
from ._wire import (
    ErrorResponse,
    Incoming,
    InvalidMessage,
    Notification,
    Request,
    Response,
    StreamEnd,
)

__all__ = ["CancelHook", "Peer", "RequestFilter"]


class Peer(_PeerServing):
    """One end of a JSON-RPC connection.

    Use it as an async context manager to run it in the background while you make
    calls, or ``await peer.run()`` to serve until the other side closes::

        async with Peer(stream, registry) as peer:
            total = await peer.request(ADD, {"a": 1, "b": 2}, timeout=5)
    """

    def __init__(
        self,
        stream: MessageStream,
        registry: MethodRegistry | None = None,
        *,
        name: str = "peer",
        max_concurrency: int = 64,
        max_queued: int = 1024,
        request_timeout: float | None = None,
        answer_cancelled: bool = True,
        on_outgoing_cancel: CancelHook | None = None,
        request_filter: RequestFilter | None = None,
        errors: ErrorTable = STANDARD_ERRORS,
        telemetry: TelemetryConventions | None = None,
    ) -> None:
        self.stream = stream
        # The OpenTelemetry hook (``None`` without conventions or without the API):
        # every traced path is behind one ``None`` test and `live()`.
        self._telemetry = instrument(telemetry, stream)
        self.errors = errors
        self.registry = registry if registry is not None else MethodRegistry()
        self.name = name
        self.request_timeout = request_timeout
        self.answer_cancelled = answer_cancelled
        self.on_outgoing_cancel = on_outgoing_cancel
        self.request_filter = request_filter
        self._max_workers = max_concurrency
        self._workers = 0
        # Kept by measurement instead of a memory object stream: see `_handoff`.
        self._work = HandoffQueue(max_queued)
        # Whether this peer runs on asyncio (looked up once, in `run`): only there can a
        # message arrive in a bare event-loop callback, outside any task.
        self._on_asyncio = False
        self._next_id = 1
        self._pending = {}
        self._running = {}
        self._result_streams = {}
        self._ended_streams = {}
        self._abandoned = {}
        self._closed = False
        # True while the read loop waits for the next message with nothing in hand.
        self._read_idle = False
        self._close_reason = "connection closed"
        self._finished = anyio.Event()
        self._task_group = None
        self._outer_task_group: TaskGroup | None = None
        self._scope_type = None

    # -- lifecycle -----------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether the connection has ended (no new requests can be sent)."""
        return self._closed

    async def __aenter__(self) -> Peer:
        self._outer_task_group = anyio.create_task_group()
        await self._outer_task_group.__aenter__()
        self._outer_task_group.start_soon(self.run)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._outer_task_group is not None
        self._outer_task_group.cancel_scope.cancel()
        return await self._outer_task_group.__aexit__(exc_type, exc, tb)

    async def run(self) -> None:
        """Serve until the other side closes the connection (or ``aclose``)."""
        started = time.perf_counter()
        try:
            self._on_asyncio = is_asyncio()
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                self._scope_type = type(task_group.cancel_scope)
                # A transport that can hand requests over directly (the HTTP server's
                # channel) skips the hop through the read loop when it is idle.
                attach = _own_hook(self.stream, "_attach_dispatcher")
                if attach is not None:
                    attach(self._take_message)
                try:
                    await self._read_loop()
                finally:
                    if attach is not None:
                        attach(None)
                    self._mark_closed()
                    # Workers finish the queued requests, then stop.
                    self._work.close()
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await self.stream.aclose()
                except (*_CLOSED_ERRORS, OSError, TransportError):
                    pass
            self._finished.set()
            telemetry = self._telemetry
            if telemetry is not None and telemetry.live():
                telemetry.session_ended(started)

    async def wait_closed(self) -> None:
        """Wait until the peer has stopped serving."""
        await self._finished.wait()

    async def aclose(self) -> None:
        """Close the connection; pending requests fail with `ConnectionClosed`."""
        self._mark_closed("closed locally")
        with anyio.CancelScope(shield=True):
            try:
                await self.stream.aclose()
            except (*_CLOSED_ERRORS, OSError, TransportError):
                pass

    def _mark_closed(self, reason: str | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        if reason is not None:
            self._close_reason = reason
        streams, self._result_streams = self._result_streams, {}
        for result_stream in streams.values():
            result_stream.close()
        pending, self._pending = self._pending, {}
        for slot in pending.values():
            if not slot.done:
                slot.done = True
                slot.error = ConnectionClosed(f"Connection closed: {self._close_reason}")
                slot.event.set()

    # -- the read side -------------------------------------------------------------

    async def _read_loop(self) -> None:
        receive = self.stream.receive
        # A stream may hand out what it has already read without a coroutine (or a
        # `Received`) per message.
        payload_nowait: Callable[[], Incoming | None] | None = _own_hook(
            self.stream, "_receive_payload_nowait"
        )
        start_notification = self._start_notification
        dispatch = self._dispatch
        while True:
            payload = payload_nowait() if payload_nowait is not None else None
            info: Any = None
            if payload is None:
                self._read_idle = True
                try:
                    received = await receive()
                except _CLOSED_ERRORS:
                    return
                except TransportError as exc:
                    self._mark_closed(str(exc))
                    return
                finally:
                    self._read_idle = False
                payload, info = received.payload, received.info
            if type(payload) is Notification:
                outcome = start_notification(payload, info)
                if outcome is not None:
                    try:
                        await outcome
                    except Exception:
                        logger.exception(
                            "%s: notification handler for %r failed", self.name, payload.method
                        )
            else:
                await dispatch(payload, info)

    def _take_message(self, received: Received) -> bool:
        """Handle a request or a response at once, as the read loop would, in the
        transport's task or read callback; ``False`` (the transport then queues it for
        the read loop) unless the read loop is idle, so that nothing received earlier is
        overtaken, and for a request that would need a new worker outside a task.

        A request is queued for the workers (when the queue is full, the read loop
        answers "overloaded"); a response resolves its pending call; the end of a
        response stream is recorded."""
        if not self._read_idle or self._closed:
            return False
        payload = received.payload
        kind = type(payload)
        if kind is Request:
            assert isinstance(payload, Request)
            if (
                self._on_asyncio
                and self._work.waiting_receivers <= len(self._work)
                and asyncio.current_task() is None
            ):
                return False  # a worker would have to be started, which needs a task
            return self._queue_request(payload, received.info)
        if (kind is Response or kind is ErrorResponse) and not self._result_streams:
            assert isinstance(payload, (Response, ErrorResponse))
            self._resolve(payload)
            return True
        if kind is StreamEnd:
            assert isinstance(payload, StreamEnd)
            self._end_stream(payload)
            return True
        return False

    async def _dispatch(self, payload: Incoming, info: Any) -> None:
        if isinstance(payload, Request):
            await self._start_request(payload, info)
        elif isinstance(payload, (Response, ErrorResponse)):
            if not self._result_streams or not await self._resolve_stream(payload):
                self._resolve(payload)
        elif isinstance(payload, Notification):
            await self._handle_notification(payload, info)
        elif isinstance(payload, InvalidMessage):
            await self._answer_invalid(payload)
        elif isinstance(payload, StreamEnd):
            self._end_stream(payload)
        else:
            await self._start_batch(payload, info)
