"""Routing between a server-side Peer and the HTTP requests that carry its messages.

A `ServerChannel` is the `MessageStream` an HTTP server gives to a Peer (one per
session, or one shared by all stateless requests). Messages the Peer sends are routed
to an `Outbox`: the POST whose request they answer or relate to, or the session's
standalone stream.

Rules:

1. A response goes to the outbox that registered its request id, and nowhere else.
   A related request or notification goes to that outbox if it streams (SSE), else
   to the standalone stream.
2. An SSE event is stored (when an event store is configured) before it is queued,
   so a consumer that drops can resume from the store without loss or duplicates.
3. A connected consumer exerts backpressure (bounded queue); with no consumer, events
   go to the store, and the standalone stream keeps a bounded backlog.
4. A streamed request (several results, A2A) whose reader has gone, with no event store
   to resume from, fails its next ``send`` with `anyio.BrokenResourceError`, so that the
   Peer stops the handler; an error response always ends a streamed request.
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._errors import TransportError
from ._sse import SSEEvent, encode_event
from ._transport import Received
from ._wire import ErrorResponse, Message, Notification, Request, RequestId, Response, encode

if TYPE_CHECKING:
    from ._event_store import EventStore, SharedEventStore

__all__ = ["LazyEvent", "Outbox", "ServerChannel", "new_stream_id"]

logger = logging.getLogger("jsonrpc_core.http")

_QUEUE_SIZE = 32
_BACKLOG_SIZE = 256


def new_stream_id(owner: str = "") -> str:
    """A random, URL-safe stream id; ``owner`` (a session id) prefixes it so that a
    ``Last-Event-ID`` can be checked against the session resuming it."""
    token = secrets.token_hex(12)
    return f"{owner}.{token}" if owner else token


class LazyEvent:
    """An `anyio.Event` made only when somebody waits for it before it is set.

    An outbox has three milestones (done, first message, progressed) and a quick answer
    passes all three before anybody waits: making three `anyio.Event`s per request for
    that cost about a tenth of the server's Python calls per 2026-07-28 ``tools/call``
    (each asks sniffio for the running library). ``set``, ``is_set`` and ``wait`` mean
    what they mean on `anyio.Event`; ``wait`` on a set one is still a checkpoint.
    """

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if self._set:
            await anyio.lowlevel.checkpoint()
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


class Outbox:
    """Where the messages for one HTTP response (or the standalone stream) go."""

    def __init__(
        self,
        stream_id: str,
        *,
        json_mode: bool,
        event_store: EventStore | None = None,
        event_name: str | None = "message",
        standalone: bool = False,
    ) -> None:
        self.stream_id = stream_id
        self.json_mode = json_mode
        self.event_store = event_store
        self.event_name = event_name
        self.standalone = standalone
        self.pending: set[RequestId] = set()
        self.streamed: set[RequestId] = set()
        self.carries_stream = False  # a streamed request was routed here (kept once it ends)
        self.id_map: dict[RequestId, RequestId | None] = {}
        self.responses: list[bytes] = []
        self.done = LazyEvent()
        self.first_message = LazyEvent()
        self.first_payload: Message | None = None
        self.first_data: bytes | None = None
        self.delivered = 0
        self.progressed = LazyEvent()
        self.failed = False
        self.on_failure: Callable[[], None] | None = None
        self._queue_send: MemoryObjectSendStream[tuple[str | None, bytes]] | None = None
        self._generation = 0
        self._finished_generation = -1
        self._backlog: deque[tuple[str | None, bytes]] = deque(maxlen=_BACKLOG_SIZE)
        self._event_prefix: bytes | None = None

    @property
    def attached(self) -> bool:
        """Whether an HTTP response is currently reading this outbox."""
        return self._queue_send is not None

    def attach(self, *, with_backlog: bool) -> MemoryObjectReceiveStream[tuple[str | None, bytes]]:
        """Connect a consumer; the previous one, if any, is cut off."""
        self.detach()
        self._generation += 1
        send, receive = anyio.create_memory_object_stream[tuple[str | None, bytes]](
            _QUEUE_SIZE + _BACKLOG_SIZE
        )
        if with_backlog:
            while self._backlog:
                send.send_nowait(self._backlog.popleft())
        else:
            self._backlog.clear()
        if self.done.is_set() and not self.standalone:
            send.close()
            self._finished_generation = self._generation
        else:
            self._queue_send = send
        return receive

    def detach(self) -> None:
        """Forget the consumer (it disconnected)."""
        if self._queue_send is not None:
            self._queue_send.close()
            self._queue_send = None

    @property
    def generation(self) -> int:
        """How many consumers have attached so far (identifies the current one)."""
        return self._generation

    def detach_if_current(self, generation: int) -> None:
        """Forget the consumer that attached as ``generation``, unless another took over."""
        if self._generation == generation:
            self.detach()

    async def deliver(self, message: Message, *, completes: RequestId | None = None) -> None:
        """Send ``message`` to this outbox's consumer; ``completes`` marks a final response."""
        if self.first_payload is None:
            self.first_payload = message
            self.first_message.set()
        if isinstance(message, ErrorResponse) and not self.failed:
            self.failed = True
            if self.on_failure is not None:
                # Before the error can reach the client: what it does next sees the effect.
                self.on_failure()
        if self.id_map and isinstance(message, (Response, ErrorResponse)):
            message = self._restore_id(message)
        data = encode(message)
        if self.first_data is None:
            self.first_data = data
        self.delivered += 1
        if self.json_mode:
            self.responses.append(data)
        else:
            await self._emit(data)
        if completes is not None:
            self.pending.discard(completes)
            if not self.pending and not self.streamed:
                self.finish()
                store = self.event_store
                # A runtime Protocol check is slow: only made when there is a store (and
                # its module loaded only then).
                if store is not None:
                    from ._event_store import SharedEventStore

                    if isinstance(store, SharedEventStore):
                        await self._mark_end(store)
        # Set once the first message is fully handled: a response that ended the
        # outbox has finished it by now (see the deferred SSE answer in _http_server).
        self.progressed.set()

    def _restore_id(self, message: Response | ErrorResponse) -> Response | ErrorResponse:
        original = self.id_map.get(message.id) if message.id is not None else None
        if isinstance(message, Response):
            return Response(original, message.result)
        return ErrorResponse(original, message.error)

    async def _emit(self, data: bytes) -> None:
        event_id = None
        if self.event_store is not None:
            event_id = await self.event_store.append(self.stream_id, data)
        item = (event_id, self.render(event_id, data))
        queue = self._queue_send
        if queue is not None:
            try:
                try:
                    queue.send_nowait(item)  # room: no scheduling point
                except anyio.WouldBlock:
                    await queue.send(item)
                return
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                if self._queue_send is queue:
                    self._queue_send = None
        if self.standalone:
            self._backlog.append(item)
        elif event_id is None:
            logger.debug("stream %s: consumer gone, message dropped", self.stream_id)

    async def _mark_end(self, store: SharedEventStore) -> None:
        """Tell a shared store that this stream ended (a follower elsewhere stops)."""
        try:
            await store.end(self.stream_id)
        except Exception:  # the answer is out already; only resuming elsewhere suffers
            logger.exception("stream %s: cannot mark its end in the event store", self.stream_id)

    def render(self, event_id: str | None, data: bytes) -> bytes:
        """One SSE event carrying ``data``."""
        if event_id is None and b"\n" not in data and b"\r" not in data:
            # Compact JSON has no line breaks: one data line, the bytes encode_event makes.
            prefix = self._event_prefix
            if prefix is None:
                prefix = self._event_prefix = encode_event(SSEEvent("", self.event_name))[:-8]
            return b"".join((prefix, b"data: ", data, b"\n\n"))
        return encode_event(SSEEvent(data.decode("utf-8"), self.event_name, event_id))

    def finish(self) -> None:
        """No more messages will come: end the consumer's response."""
        self.done.set()
        if self._queue_send is not None and not self.standalone:
            self._finished_generation = self._generation
            self._queue_send.close()
            self._queue_send = None

    def ended_normally(self, generation: int) -> bool:
        """Whether consumer ``generation`` saw the end of the stream (not cut off early)."""
        return self._finished_generation == generation


class ServerChannel:
    """The Peer's side of an HTTP server connection (see module rules)."""

    def __init__(
        self,
        *,
        standalone: Outbox | None,
        legacy: bool = False,
        remap_ids: bool = False,
        max_buffered: int = 64,
    ) -> None:
        self.standalone = standalone
        self.legacy = legacy
        self.remap_ids = remap_ids
        self.routes: dict[RequestId, Outbox] = {}
        self._next_internal_id = 0
        self._inbound_send, self._inbound = anyio.create_memory_object_stream[Received](
            max_buffered
        )
        self._dispatcher: Callable[[Received], bool] | None = None
        self.closed = False

    # -- the HTTP side ---------------------------------------------------------

    def route(self, request: Request, outbox: Outbox, *, streamed: bool = False) -> None:
        """Register ``outbox`` as the destination of ``request``'s response(s)."""
        if self.remap_ids:
            self._next_internal_id += 1
            internal = self._next_internal_id
            outbox.id_map[internal] = request.id
            request.id = internal
        key = request.id if request.id is not None else _NULL_ID
        if key in self.routes:
            raise ValueError(f"request id {request.id!r} is already in flight")
        self.routes[key] = outbox
        if streamed:
            outbox.streamed.add(key)
            outbox.carries_stream = True
        else:
            outbox.pending.add(key)

    def unroute(self, outbox: Outbox) -> None:
        """Forget every route to ``outbox`` (its request will never be answered there)."""
        for key in [k for k, v in self.routes.items() if v is outbox]:
            del self.routes[key]

    async def deliver_inbound(self, received: Received) -> None:
        """Hand a parsed payload from an HTTP request to the Peer."""
        dispatcher = self._dispatcher
        if (
            dispatcher is not None
            and not self.closed
            and not self._inbound.statistics().current_buffer_used
        ):
            if dispatcher(received):
                return
        try:
            self._inbound_send.send_nowait(received)  # room: no scheduling point
        except anyio.WouldBlock:
            await self._inbound_send.send(received)

    def _attach_dispatcher(self, dispatcher: Callable[[Received], bool] | None) -> None:
        """Called by the Peer serving this channel: ``dispatcher`` takes a request
        directly when it can (``True``), skipping the inbound queue (and so ``receive``:
        not done for a subclass that overrides it)."""
        if type(self).receive is ServerChannel.receive:
            self._dispatcher = dispatcher

    def close_inbound(self) -> None:
        """End the Peer's input; it finishes what it is doing and stops."""
        self.closed = True
        self._inbound_send.close()

    # -- the Peer side (MessageStream) ---------------------------------------

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        if isinstance(payload, list):
            for message in payload:
                await self.send(message, related_request_id=related_request_id)
            return
        if isinstance(payload, (Response, ErrorResponse)):
            key = payload.id if payload.id is not None else _NULL_ID
            outbox = self.routes.get(key)
            if outbox is None:
                if self.legacy and self.standalone is not None:
                    await self.standalone.deliver(payload)
                else:
                    logger.debug("response to %r has no open request; dropped", payload.id)
                return
            if key in outbox.streamed:
                if isinstance(payload, ErrorResponse):
                    # An error is the last word on a streamed request, whether its handler
                    # failed before its first result or while streaming.
                    del self.routes[key]
                    outbox.streamed.discard(key)
                    await outbox.deliver(payload)
                    if not outbox.pending and not outbox.streamed:
                        outbox.finish()
                    return
                await outbox.deliver(payload)
                if not outbox.json_mode and not outbox.attached and outbox.event_store is None:
                    # Its reader disconnected and nothing is stored for a resumption:
                    # tell the producer (the Peer stops streaming these results).
                    raise anyio.BrokenResourceError
                return
            del self.routes[key]
            await outbox.deliver(payload, completes=key)
            return
        outbox = self.routes.get(related_request_id) if related_request_id is not None else None
        if outbox is None or outbox.json_mode:
            outbox = self.standalone
        if outbox is None:
            if isinstance(payload, Request):
                raise TransportError(
                    f"cannot send request {payload.method!r}: this HTTP connection has no "
                    "stream to the client (stateless mode or JSON responses)"
                )
            assert isinstance(payload, Notification)
            logger.debug("notification %r has no stream to the client; dropped", payload.method)
            return
        await outbox.deliver(payload)

    async def end_results(self, request_id: RequestId) -> None:
        """The handler of ``request_id`` streamed its last result."""
        outbox = self.routes.pop(request_id, None)
        if outbox is not None:
            outbox.streamed.discard(request_id)
            if not outbox.pending and not outbox.streamed:
                outbox.finish()

    async def receive(self) -> Received:
        try:
            return self._inbound.receive_nowait()  # queued: no scheduling point
        except anyio.WouldBlock:
            return await self._inbound.receive()

    async def aclose(self) -> None:
        self.closed = True
        self._inbound_send.close()
        self._inbound.close()
        for outbox in set(self.routes.values()):
            outbox.finish()
        self.routes.clear()


class _NullId:
    """Route key for requests whose id is JSON null."""

    def __repr__(self) -> str:
        return "null"


_NULL_ID: Any = _NullId()
