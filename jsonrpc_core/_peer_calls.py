"""The `Peer`'s outgoing side: requests and notifications it sends, and the pending table.

A request sent gets a `_Pending` slot under its id; the read side resolves the slot
(`_PeerCalls._resolve`) when the answer arrives, and closing the connection fails every
slot still open (rule 4 in `_peer`). A request given up on (timeout, cancellation) is
remembered for a while, so that its late answer is dropped quietly instead of warned
about. The helpers shared by every part of the `Peer` live here too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar, overload

import anyio
import pydantic

from ._errors import (
    ConnectionClosed,
    ErrorTable,
    JsonRpcError,
    RequestTimeout,
    ResultValidationError,
    TransportError,
)
from ._methods import NotificationType, RequestType
from ._telemetry import TelemetryHook
from ._transport import MessageStream
from ._wire import ErrorResponse, Message, Notification, Request, RequestId, Response

__all__ = ["CancelHook"]

logger = logging.getLogger("jsonrpc_core.peer")

P = TypeVar("P")
R = TypeVar("R")

CancelHook = Callable[[RequestId, str], "Message | None"]
"""Builds the message that tells the other side we abandoned a request (or ``None``)."""

# The peer and request id of the handler running in this context, if any: the request a
# message sent from inside a handler relates to (``related_request_id``).
_current_request: ContextVar[tuple[_PeerCalls, RequestId | None] | None] = ContextVar(
    "jsonrpc_core_current_request", default=None
)

_UNSET: Any = object()
_ABANDONED_REMEMBERED = 1024
_CLOSED_ERRORS = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


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


class _PeerCalls:
    """Sending requests and notifications, and matching answers to pending requests.

    The state is set by `Peer.__init__`; the annotations below are what this part reads.
    """

    stream: MessageStream
    errors: ErrorTable
    name: str
    request_timeout: float | None
    on_outgoing_cancel: CancelHook | None
    _telemetry: TelemetryHook | None
    _next_id: int
    _pending: dict[RequestId, _Pending]
    # Requests we gave up on; their late answers are expected and dropped quietly.
    _abandoned: dict[RequestId, None]
    _closed: bool
    _close_reason: str

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

    async def _send_quietly(
        self, message: Message | list[Message], related: RequestId | None
    ) -> None:
        try:
            await self.stream.send(message, related_request_id=related)
        except (*_CLOSED_ERRORS, TransportError):
            logger.debug("%s: message dropped: connection closed", self.name)
