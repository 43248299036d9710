"""Plumbing shared by both ends of an ACP connection.

Rules:

1. Both sides serve ``$/cancel_request``: it cancels the handler serving that request id, and
   the peer then answers the request with -32800 (`jsonrpc_core.RequestCancelled`).
2. A request we abandon (the calling task was cancelled, or it timed out) is announced to the
   other side with ``$/cancel_request``; its late answer is dropped by the peer.
3. Work registered with `after_response` runs right after the response to the request being
   served has been written, so e.g. ``available_commands_update`` for a new session never
   reaches the client before the ``session/new`` answer that names the session.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from jsonrpc_core import (
    ErrorResponse,
    Incoming,
    LocalError,
    Message,
    MessageStream,
    MethodRegistry,
    Notification,
    Received,
    RequestContext,
    RequestId,
    Response,
    TransportError,
)

from ._methods import CANCEL_REQUEST
from .schema import CancelRequestNotification

if TYPE_CHECKING:
    from jsonrpc_core import WireTap  # the wire tap loads only where one is given

__all__ = [
    "CapabilityError",
    "HookedStream",
    "ProtocolVersionError",
    "after_response",
    "cancel_request_message",
    "or_empty",
    "serve_cancel_request",
    "serving",
    "stop_serving",
    "tapped",
]

logger = logging.getLogger("acp_layer")

T = TypeVar("T")
AfterResponse = Callable[[], Awaitable[None]]

# (stream, request id) of the request the current task is serving.
_serving: ContextVar[tuple[HookedStream, RequestId | None] | None] = ContextVar(
    "acp_layer_serving", default=None
)


class CapabilityError(LocalError):
    """The other side did not advertise the capability this call needs (never sent)."""


class ProtocolVersionError(LocalError):
    """The agent answered ``initialize`` with a protocol version we do not speak."""


def cancel_request_message(request_id: RequestId, reason: str) -> Notification:
    """The ``$/cancel_request`` notification for a request we abandoned (rule 2)."""
    return Notification(CANCEL_REQUEST.method, {"requestId": request_id})


def serve_cancel_request(
    registry: MethodRegistry, intercept: Callable[[RequestId], bool] | None = None
) -> None:
    """Serve ``$/cancel_request`` on ``registry`` (rule 1).

    ``intercept`` may take over the cancellation of a request (and answer it with a result
    that marks the cancellation); it returns ``False`` to leave the request to rule 1.
    """

    def cancel(params: CancelRequestNotification, ctx: RequestContext) -> None:
        request_id = params.request_id
        if request_id is None or (intercept is not None and intercept(request_id)):
            return
        if not ctx.peer.cancel_incoming(request_id):
            logger.debug("$/cancel_request for %r: no such request running", request_id)

    registry.on(CANCEL_REQUEST, cancel)


def or_empty(result: T | None, result_type: Callable[[], T]) -> T:
    """``result``, or an empty ``result_type()`` when a handler returned ``None``."""
    return result_type() if result is None else result


class HookedStream:
    """A `MessageStream` that runs `after_response` work once a response has been sent,
    and ``on_end`` once the other side is gone (the end of the stream, or its failure)."""

    def __init__(self, inner: MessageStream, on_end: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self.on_end = on_end
        self._hooks: dict[RequestId, list[AfterResponse]] = {}

    def add_hook(self, request_id: RequestId, hook: AfterResponse) -> None:
        """Run ``hook`` after the response to ``request_id`` has been sent."""
        self._hooks.setdefault(request_id, []).append(hook)

    def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> Coroutine[Any, Any, None]:
        """The inner stream's ``send`` (no wrapper frame), or one that runs hooks after it."""
        if self._hooks and isinstance(payload, (Response, ErrorResponse)):
            return self._send_response(payload, related_request_id)
        return self.inner.send(payload, related_request_id=related_request_id)

    async def _send_response(
        self, payload: Response | ErrorResponse, related_request_id: RequestId | None
    ) -> None:
        await self.inner.send(payload, related_request_id=related_request_id)
        hooks = self._hooks.pop(payload.id, ()) if payload.id is not None else ()
        for hook in hooks:
            if isinstance(payload, Response):
                try:
                    await hook()
                except Exception:
                    logger.exception("after-response work for request %r failed", payload.id)

    async def receive(self) -> Received:
        try:
            return await self.inner.receive()
        except (
            anyio.EndOfStream,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            TransportError,
        ):
            self._ended()
            raise

    def _receive_payload_nowait(self) -> Incoming | None:
        """The inner stream's payload already read, if it offers that (the Peer's read loop)."""
        payload_nowait = self._inner_hook("_receive_payload_nowait")
        return payload_nowait() if payload_nowait is not None else None

    def _attach_dispatcher(self, dispatcher: Callable[[Received], bool] | None) -> None:
        """Let the inner stream hand messages to the Peer directly, if it can (never the
        end of the stream, which still comes through `receive`)."""
        attach = self._inner_hook("_attach_dispatcher")
        if attach is not None:
            attach(dispatcher)

    def _inner_hook(self, name: str) -> Any:
        inner = self.inner
        return getattr(inner, name) if hasattr(type(inner), name) else None

    def _ended(self) -> None:
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            on_end()

    async def aclose(self) -> None:
        self._hooks.clear()
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def serving(stream: HookedStream, request_id: RequestId | None) -> Any:
    """Mark the current task as serving ``request_id`` on ``stream`` (returns a reset token)."""
    return _serving.set((stream, request_id))


def stop_serving(token: Any) -> None:
    """Undo `serving` with the token it returned."""
    _serving.reset(token)


def after_response(hook: AfterResponse) -> None:
    """Run ``hook`` right after the response to the request being served has been sent.

    Call it from inside an ACP request handler; the work is dropped if the request ends with
    an error. Raises `RuntimeError` outside a request handler.
    """
    current = _serving.get()
    if current is None or current[1] is None:
        raise RuntimeError("after_response() needs to be called while serving a request")
    current[0].add_hook(current[1], hook)


def tapped(stream: MessageStream, tap: WireTap | None, *, local: str, remote: str) -> Any:
    """``stream`` recorded by ``tap`` (or ``stream`` itself when there is no tap)."""
    if tap is None:
        return stream
    return tap.wrap(stream, local=local, remote=remote, transport="acp")
