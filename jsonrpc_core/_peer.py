"""The bidirectional peer: both ends serve handlers and both send requests.

Rules this module keeps:

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
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from inspect import isawaitable
from types import CoroutineType, TracebackType
from typing import Any, TypeVar, overload

import anyio
import pydantic
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from ._backend import is_asyncio
from ._context import NO_ANSWER, RequestContext
from ._errors import (
    STANDARD_ERRORS,
    ConnectionClosed,
    ErrorTable,
    InternalError,
    JsonRpcError,
    MethodNotFound,
    RequestCancelled,
    RequestTimeout,
    ResultValidationError,
    ServerError,
    TransportError,
)
from ._handoff import HandoffQueue
from ._methods import MethodRegistry, NotificationType, RequestType
from ._telemetry import TelemetryConventions, instrument
from ._transport import MessageStream, Received
from ._wire import (
    ErrorResponse,
    Incoming,
    InvalidMessage,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    StreamEnd,
    encode,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

__all__ = ["CancelHook", "Peer", "RequestFilter"]

logger = logging.getLogger("jsonrpc_core.peer")

P = TypeVar("P")
R = TypeVar("R")

CancelHook = Callable[[RequestId, str], "Message | None"]
"""Builds the message that tells the other side we abandoned a request (or ``None``)."""

RequestFilter = Callable[[Request, RequestContext], None]
"""Runs before dispatch; raise a `JsonRpcError` to refuse the request."""

_current_request: ContextVar[tuple[Peer, RequestId | None] | None] = ContextVar(
    "jsonrpc_core_current_request", default=None
)

_UNSET: Any = object()
_ABANDONED_REMEMBERED = 1024
_CLOSED_ERRORS = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


_Work = tuple[Request, Any, anyio.CancelScope]


class _Pending:
    __slots__ = ("done", "error", "event", "result")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None


def _own_hook(stream: MessageStream, name: str) -> Any:
    """A private fast-path method that the stream's own class defines, else ``None``;
    never one that a wrapper forwards (through ``__getattr__``) from the stream it wraps,
    which would bypass the wrapper."""
    return getattr(stream, name) if hasattr(type(stream), name) else None


def _check_params(params: Any) -> None:
    if params is not None and not isinstance(params, (dict, list, pydantic.BaseModel)):
        raise TypeError(
            f"JSON-RPC params must be an object or an array, not {type(params).__name__}"
        )


def _json_rpc_error_in(exc: BaseException) -> JsonRpcError | None:
    """The `JsonRpcError` a handler meant to raise, looking inside single-leaf groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, JsonRpcError) else None


class Peer:
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
        # every traced path below is behind one ``None`` test and `live()`.
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
        self._work: HandoffQueue[_Work] = HandoffQueue(max_queued)
        # Whether this peer runs on asyncio (looked up once, in `run`): only there can a
        # message arrive in a bare event-loop callback, outside any task.
        self._on_asyncio = False
        self._next_id = 1
        self._pending: dict[RequestId, _Pending] = {}
        self._running: dict[RequestId, anyio.CancelScope] = {}
        self._result_streams: dict[RequestId, MemoryObjectSendStream[Response | ErrorResponse]] = {}
        self._ended_streams: dict[RequestId, BaseException | None] = {}
        # Requests we gave up on; their late answers are expected and dropped quietly.
        self._abandoned: dict[RequestId, None] = {}
        self._closed = False
        # True while the read loop waits for the next message with nothing in hand.
        self._read_idle = False
        self._close_reason = "connection closed"
        self._finished = anyio.Event()
        self._task_group: TaskGroup | None = None
        self._outer_task_group: TaskGroup | None = None
        self._scope_type: type[anyio.CancelScope] | None = None

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

    # -- outgoing ------------------------------------------------------------------

    def new_request_id(self) -> int:
        """Reserve the id of a request to send later with ``request(..., request_id=)``
        (for protocols whose notifications name the request they belong to)."""
        request_id = self._next_id
        self._next_id += 1
        return request_id

    @overload
    async def request(
        self,
        method: RequestType[P, R],
        params: Any = None,
        *,
        timeout: float | None = ...,
        request_id: int | None = ...,
    ) -> R: ...

    @overload
    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = ...,
        request_id: int | None = ...,
    ) -> Any: ...

    async def request(
        self,
        method: RequestType[Any, Any] | str,
        params: Any = None,
        *,
        timeout: Any = _UNSET,
        request_id: int | None = None,
    ) -> Any:
        """Send a request and wait for its result.

        Raises the peer's `JsonRpcError` (as its registered subclass), `RequestTimeout`
        after ``timeout`` seconds (default: the peer's ``request_timeout``),
        `ConnectionClosed` if the connection ends first, or `ResultValidationError`.
        Cancelling the calling task abandons the request and tells the other side
        through ``on_outgoing_cancel``. ``request_id`` is one `new_request_id` gave.
        """
        if isinstance(method, RequestType):
            descriptor: RequestType[Any, Any] | None = method
            name = method.method
        else:
            descriptor, name = None, method
        _check_params(params)
        if self._closed:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}")
        if timeout is _UNSET:
            timeout = self.request_timeout
        if request_id is None:
            request_id = self._next_id
            self._next_id += 1
        telemetry = self._telemetry
        if telemetry is not None and telemetry.live():
            return await telemetry.call(
                name,
                params,
                request_id,
                lambda traced, _: self._request(descriptor, name, traced, timeout, request_id),
            )
        return await self._request(descriptor, name, params, timeout, request_id)

    async def _request(
        self,
        descriptor: RequestType[Any, Any] | None,
        name: str,
        params: Any,
        timeout: float | None,
        request_id: RequestId,
    ) -> Any:
        slot = _Pending()
        self._pending[request_id] = slot
        message = Request(request_id, name, params)
        try:
            if timeout is None:
                await self._send_and_wait(message, slot)
            else:
                # The send is inside the deadline too: over HTTP with JSON responses it
                # only returns once the answer is in.
                with anyio.move_on_after(timeout):
                    await self._send_and_wait(message, slot)
            if not slot.done:
                await self._abandon(request_id, "timeout")
                raise RequestTimeout(f"{name}: no response within {timeout:g} s")
        except anyio.get_cancelled_exc_class():
            if not slot.done:
                with anyio.CancelScope(shield=True):
                    await self._abandon(request_id, "cancelled")
            raise
        finally:
            self._pending.pop(request_id, None)
        if slot.error is not None:
            raise slot.error
        if descriptor is None:
            return slot.result
        try:
            return descriptor.validate_result(slot.result)
        except pydantic.ValidationError as exc:
            raise ResultValidationError(
                f"{name}: the result does not match its declared type: {exc}"
            ) from None

    async def notify(self, method: NotificationType[Any] | str, params: Any = None) -> None:
        """Send a notification (no response)."""
        if type(params) is not dict:
            _check_params(params)
        if self._closed:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}")
        name = method.method if isinstance(method, NotificationType) else method
        telemetry = self._telemetry
        if telemetry is not None and telemetry.live():
            await telemetry.notify(name, params, lambda traced: self._notify(name, traced))
            return
        current = _current_request.get()
        related = current[1] if current is not None and current[0] is self else None
        try:
            await self.stream.send(Notification(name, params), related_request_id=related)
        except _CLOSED_ERRORS as exc:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}") from exc

    async def _notify(self, name: str, params: Any) -> None:
        try:
            await self.stream.send(
                Notification(name, params), related_request_id=self._related_id()
            )
        except _CLOSED_ERRORS as exc:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}") from exc

    @overload
    def request_stream(
        self, method: RequestType[Any, R], params: Any = None, *, max_buffered: int = 64
    ) -> AsyncGenerator[R, None]: ...

    @overload
    def request_stream(
        self, method: str, params: Any = None, *, max_buffered: int = 64
    ) -> AsyncGenerator[Any, None]: ...

    async def request_stream(
        self, method: RequestType[Any, R] | str, params: Any = None, *, max_buffered: int = 64
    ) -> AsyncGenerator[R, None]:
        """Send a request whose answer is a stream of results (A2A streaming methods).

        Yields each result as it arrives; ends when the transport reports the end of the
        stream; raises the peer's `JsonRpcError` if one arrives. Leaving the loop early
        abandons the request. Needs a transport that streams results (HTTP with SSE).
        """
        descriptor = method if isinstance(method, RequestType) else None
        name = method.method if isinstance(method, RequestType) else method
        _check_params(params)
        if self._closed:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}")
        request_id = self._next_id
        self._next_id += 1

        def results(traced: Any, _headers: Any = None) -> AsyncGenerator[Any, None]:
            return self._results_of(descriptor, name, traced, request_id, max_buffered)

        telemetry = self._telemetry
        streamed: AsyncGenerator[Any, None]
        if telemetry is not None and telemetry.live():
            streamed = telemetry.stream(name, params, request_id, results)
        else:
            streamed = results(params)
        try:
            async for item in streamed:
                yield item
        finally:
            # Leaving the loop early closes the request's stream (abandoning it) now.
            await streamed.aclose()

    async def _results_of(
        self,
        descriptor: RequestType[Any, Any] | None,
        name: str,
        params: Any,
        request_id: RequestId,
        max_buffered: int,
    ) -> AsyncGenerator[Any, None]:
        send, receive = anyio.create_memory_object_stream[Response | ErrorResponse](max_buffered)
        self._result_streams[request_id] = send
        finished = False
        try:
            try:
                await self.stream.send(
                    Request(request_id, name, params), related_request_id=self._related_id()
                )
            except _CLOSED_ERRORS as exc:
                raise ConnectionClosed(f"Connection closed: {self._close_reason}") from exc
            async with receive:
                async for item in receive:
                    if isinstance(item, ErrorResponse):
                        finished = True
                        answered = self.errors.refine(item.error)
                        answered.received = True  # the other side's answer, as for `request`
                        raise answered
                    result = item.result
                    yield descriptor.validate_result(result) if descriptor else result
            finished = True
            if self._closed and request_id not in self._ended_streams:
                raise ConnectionClosed(f"Connection closed: {self._close_reason}")
        finally:
            self._result_streams.pop(request_id, None)
            error = self._ended_streams.pop(request_id, None)
            if not finished:
                with anyio.CancelScope(shield=True):
                    await self._abandon(request_id, "cancelled")
        if error is not None:
            raise error

    async def _send_and_wait(self, message: Request, slot: _Pending) -> None:
        # A transport may offer a cheaper send for a request whose caller then waits
        # for the answer (the HTTP client reads such an SSE answer in that caller).
        stream = self.stream
        send: Callable[..., Awaitable[None]] = _own_hook(stream, "_send_request") or stream.send
        try:
            await send(message, related_request_id=self._related_id())
        except _CLOSED_ERRORS as exc:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}") from exc
        except JsonRpcError as exc:
            # The transport delivered the other side's refusal with the send (an HTTP
            # error status whose body is this request's JSON-RPC error).
            error = self.errors.refine(exc)
            error.received = True
            raise error from None
        if not slot.event.is_set():  # answered during the send: no scheduling point
            await slot.event.wait()

    def _related_id(self) -> RequestId | None:
        current = _current_request.get()
        return current[1] if current is not None and current[0] is self else None

    async def _abandon(self, request_id: RequestId, reason: str) -> None:
        self._pending.pop(request_id, None)
        self._abandoned[request_id] = None
        if len(self._abandoned) > _ABANDONED_REMEMBERED:
            del self._abandoned[next(iter(self._abandoned))]
        if self.on_outgoing_cancel is None or self._closed:
            return
        message = self.on_outgoing_cancel(request_id, reason)
        if message is None:
            return
        try:
            await self.stream.send(message, related_request_id=self._related_id())
        except (*_CLOSED_ERRORS, TransportError):
            pass

    # -- incoming ------------------------------------------------------------------

    def cancel_incoming(self, request_id: RequestId) -> bool:
        """Cancel the handler serving ``request_id``; ``False`` if none is running."""
        scope = self._running.get(request_id)
        if scope is None:
            return False
        scope.cancel()
        return True

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

    def _end_stream(self, end: StreamEnd) -> None:
        result_stream = self._result_streams.pop(end.id, None)
        if result_stream is not None:
            self._ended_streams[end.id] = end.error
            result_stream.close()
            return
        slot = self._pending.get(end.id)
        if slot is not None and not slot.done:
            slot.done = True
            slot.error = end.error or ConnectionClosed(
                "the response stream ended without an answer"
            )
            slot.event.set()

    async def _resolve_stream(self, response: Response | ErrorResponse) -> bool:
        result_stream = self._result_streams.get(response.id) if response.id is not None else None
        if result_stream is None:
            return False
        try:
            await result_stream.send(response)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        return True

    def _resolve(self, response: Response | ErrorResponse) -> None:
        slot = self._pending.get(response.id) if response.id is not None else None
        if slot is None and response.id in self._abandoned:
            del self._abandoned[response.id]
            logger.debug("%s: late answer to abandoned request %r dropped", self.name, response.id)
            return
        if slot is None or slot.done:
            if isinstance(response, ErrorResponse):
                logger.warning(
                    "%s: error for unknown request id %r dropped: %r",
                    self.name,
                    response.id,
                    response.error,
                )
            else:
                logger.warning(
                    "%s: response for unknown request id %r dropped", self.name, response.id
                )
            return
        slot.done = True
        if isinstance(response, Response):
            slot.result = response.result
        else:
            error = self.errors.refine(response.error)
            error.received = True
            slot.error = error
        slot.event.set()

    async def _answer_invalid(self, invalid: InvalidMessage) -> None:
        logger.warning("%s: invalid message: %s", self.name, invalid.error.message)
        if invalid.respond:
            await self._send_quietly(ErrorResponse(invalid.id, invalid.error), invalid.id)

    async def _start_request(self, request: Request, info: Any) -> None:
        if not self._queue_request(request, info):
            error = ServerError("Server overloaded: too many requests in flight")
            await self._send_quietly(ErrorResponse(request.id, error), request.id)

    def _queue_request(self, request: Request, info: Any) -> bool:
        """Hand ``request`` to a worker; ``False`` if the queue is full."""
        # The scope is registered before a worker takes the request, so a cancel
        # notification read right after the request still finds it.
        scope = self._register(request.id)
        idle = self._work.waiting_receivers
        try:
            self._work.send_nowait((request, info, scope))
        except anyio.WouldBlock:
            self._unregister(request.id, scope)
            return False
        # More items queued than workers waiting for them: add a worker.
        if self._workers < self._max_workers and len(self._work) > idle:
            assert self._task_group is not None
            self._workers += 1
            self._task_group.start_soon(self._worker)
        return True

    def _register(self, request_id: RequestId | None) -> anyio.CancelScope:
        scope_type = self._scope_type
        if scope_type is None:
            # The backend's own class, looked up once: ``anyio.CancelScope()`` finds the
            # backend on every call, and cannot outside a task (the stdio read callback).
            scope_type = self._scope_type = type(anyio.CancelScope())
        scope = scope_type()
        if request_id is not None:
            self._running[request_id] = scope
        return scope

    def _unregister(self, request_id: RequestId | None, scope: anyio.CancelScope) -> None:
        if request_id is not None and self._running.get(request_id) is scope:
            del self._running[request_id]

    async def _worker(self) -> None:
        """Serve queued requests one after another (workers are reused, not respawned)."""
        receive = self._work.receive
        try:
            while True:
                try:
                    # Queued work is taken at once, without a checkpoint.
                    request, info, scope = await receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                telemetry = self._telemetry
                if telemetry is not None and telemetry.live():
                    response = await self._traced_handler(telemetry, request, info, scope)
                else:
                    response = await self._call_handler(request, info, scope)
                if response is not None:
                    await self._send_response(response)
        finally:
            self._workers -= 1

    def _traced_handler(
        self, telemetry: Any, request: Request, info: Any, scope: anyio.CancelScope
    ) -> Awaitable[Message | None]:
        return telemetry.serve(  # type: ignore[no-any-return]
            request.method,
            request.params,
            request.id,
            info,
            lambda: self._call_handler(request, info, scope),
        )

    async def _call_handler(
        self, request: Request, info: Any, scope: anyio.CancelScope
    ) -> Message | None:
        request_id = request.id
        ctx = RequestContext(self, request.method, request_id, request.params, info, scope)
        token = _current_request.set((self, request_id))
        try:
            with scope:
                result = await self._invoke(request, ctx)
                if isinstance(result, AsyncIterator):
                    await self._stream_results(request_id, result, request.method)
                    return None
                return Response(request_id, result)
        except Exception as exc:
            error = _json_rpc_error_in(exc)
            if error is None:
                logger.exception("%s: handler for %r failed", self.name, request.method)
                error = InternalError(f"Internal error while handling {request.method!r}")
            return ErrorResponse(request_id, error)
        finally:
            _current_request.reset(token)
            self._unregister(request_id, scope)
        # Only reached when the request's own scope absorbed a cancellation.
        if ctx._cancel_answer is not NO_ANSWER:
            return Response(request_id, ctx._cancel_answer)
        return ErrorResponse(request_id, RequestCancelled()) if self.answer_cancelled else None

    async def _stream_results(
        self, request_id: RequestId | None, results: AsyncIterator[Any], method: str
    ) -> None:
        """Send each result of a streaming handler as a response to the same request."""
        end_results = getattr(self.stream, "end_results", None)
        if end_results is None or request_id is None:
            aclose = getattr(results, "aclose", None)
            if aclose is not None:
                await aclose()
            raise InternalError("Internal error: this transport cannot stream results")
        telemetry = self._telemetry
        try:
            async for item in results:
                if telemetry is not None and telemetry.live():
                    telemetry.stream_item_sent(method, item)
                await self.stream.send(Response(request_id, item), related_request_id=request_id)
        except _CLOSED_ERRORS:
            # The transport has nobody left to deliver this stream to: stop producing.
            logger.debug("%s: stream of request %r abandoned by its reader", self.name, request_id)
        except Exception as exc:
            error = _json_rpc_error_in(exc)
            if error is None:
                logger.exception("%s: streaming handler failed", self.name)
                error = InternalError("Internal error while streaming results")
            if telemetry is not None and telemetry.live():
                telemetry.record_error(error)
            await self._send_quietly(ErrorResponse(request_id, error), request_id)
        finally:
            with anyio.CancelScope(shield=True):
                aclose = getattr(results, "aclose", None)
                if aclose is not None:
                    await aclose()
                await end_results(request_id)

    async def _invoke(self, request: Request, ctx: RequestContext) -> Any:
        if self.request_filter is not None:
            self.request_filter(request, ctx)
        entry = self.registry.requests.get(request.method)
        if entry is None:
            fallback = self.registry.fallback
            if fallback is None:
                raise MethodNotFound(f"Method not found: {request.method}")
            result = fallback(request.params, ctx)
            return await result if inspect.isawaitable(result) else result
        params = entry.descriptor.validate_params(request.params)
        if entry.is_async:
            return await entry.handler(params, ctx)
        result = entry.handler(params, ctx)
        # A plain function may still hand back an awaitable (a partial, a lambda).
        return await result if inspect.isawaitable(result) else result

    async def _send_response(self, response: Message) -> None:
        request_id = response.id if isinstance(response, (Response, ErrorResponse)) else None
        try:
            await self.stream.send(response, related_request_id=request_id)
        except ValueError:  # includes pydantic's serialisation errors: the result is not JSON
            logger.exception("%s: result of request %r is not serialisable", self.name, request_id)
            error = InternalError("Internal error: the result could not be serialised")
            await self._send_quietly(ErrorResponse(request_id, error), request_id)
        except (*_CLOSED_ERRORS, TransportError):
            logger.debug("%s: response to %r dropped: connection closed", self.name, request_id)

    async def _send_quietly(
        self, message: Message | list[Message], related: RequestId | None
    ) -> None:
        try:
            await self.stream.send(message, related_request_id=related)
        except (*_CLOSED_ERRORS, TransportError):
            logger.debug("%s: message dropped: connection closed", self.name)

    async def _handle_notification(self, note: Notification, info: Any) -> None:
        outcome = self._start_notification(note, info)
        if outcome is not None:
            await self._finish_notification(note, outcome)

    def _start_notification(
        self, note: Notification, info: Any, traced: bool = False
    ) -> Awaitable[Any] | None:
        """Call the notification's handler; what is left to await of it, if anything
        (a failure is logged here, or by `_finish_notification` when awaited).
        ``traced``: its telemetry is already under way."""
        if not traced:
            telemetry = self._telemetry
            if telemetry is not None and telemetry.live():
                return self._traced_notification(telemetry, note, info)
        method = note.method
        raw = note.params
        try:
            entry = self.registry.notifications.get(method)
            if entry is None:
                fallback = self.registry.notification_fallback
                if fallback is None:
                    logger.debug("%s: unhandled notification %r", self.name, method)
                    return None
                outcome = fallback(raw, RequestContext(self, method, None, raw, info))
            else:
                descriptor = entry.descriptor
                params = raw if descriptor.params_type is None else descriptor.validate_params(raw)
                outcome = entry.handler(params, RequestContext(self, method, None, raw, info))
            if outcome is not None and (type(outcome) is CoroutineType or isawaitable(outcome)):
                return outcome
        except Exception:
            logger.exception("%s: notification handler for %r failed", self.name, method)
        return None

    async def _traced_notification(self, telemetry: Any, note: Notification, info: Any) -> None:
        async def handle() -> None:
            outcome = self._start_notification(note, info, traced=True)
            if outcome is not None:
                await self._finish_notification(note, outcome)

        if telemetry.chunk_received(note.method, note.params):
            await handle()  # an event on its request's span, not a span of its own
        else:
            await telemetry.serve(note.method, note.params, None, info, handle)

    async def _finish_notification(self, note: Notification, outcome: Awaitable[Any]) -> None:
        try:
            await outcome
        except Exception:
            logger.exception("%s: notification handler for %r failed", self.name, note.method)

    async def _start_batch(self, batch: list[Message | InvalidMessage], info: Any) -> None:
        requests: list[Request] = []
        errors: list[Message] = []
        for item in batch:
            if isinstance(item, Request):
                requests.append(item)
            elif isinstance(item, Notification):
                await self._handle_notification(item, info)
            elif isinstance(item, (Response, ErrorResponse)):
                self._resolve(item)
            elif item.respond:
                errors.append(ErrorResponse(item.id, item.error))
        if not requests:
            if errors:
                await self._send_quietly(errors, None)
            return
        assert self._task_group is not None
        scopes = [self._register(request.id) for request in requests]
        self._task_group.start_soon(self._serve_batch, requests, scopes, errors, info)

    async def _serve_batch(
        self,
        requests: list[Request],
        scopes: list[anyio.CancelScope],
        errors: list[Message],
        info: Any,
    ) -> None:
        answers: list[Message | None] = [None] * len(requests)

        async def serve(index: int, request: Request, scope: anyio.CancelScope) -> None:
            telemetry = self._telemetry
            if telemetry is not None and telemetry.live():
                answers[index] = await self._traced_handler(telemetry, request, info, scope)
            else:
                answers[index] = await self._call_handler(request, info, scope)

        async with anyio.create_task_group() as task_group:
            for index, request in enumerate(requests):
                task_group.start_soon(serve, index, request, scopes[index])
        replies = [a for a in answers if a is not None] + errors
        if replies:
            await self._send_response_batch(replies)

    async def _send_response_batch(self, replies: list[Message]) -> None:
        try:
            await self.stream.send(replies)
        except ValueError:
            logger.exception("%s: a batch result is not serialisable", self.name)
            await self._send_quietly([_serialisable(reply) for reply in replies], None)
        except (*_CLOSED_ERRORS, TransportError):
            logger.debug("%s: batch response dropped: connection closed", self.name)


def _serialisable(reply: Message) -> Message:
    """``reply`` if it encodes, else an `InternalError` response with the same id."""
    try:
        encode(reply)
    except ValueError:
        request_id = reply.id if isinstance(reply, (Response, ErrorResponse)) else None
        return ErrorResponse(
            request_id, InternalError("Internal error: the result could not be serialised")
        )
    return reply
