"""The `Peer`'s incoming side: requests served by a pool of workers, notifications and
batches handled, answers sent back (rules 1 to 3 in `_peer`).

A request is queued for up to ``max_concurrency`` reusable worker tasks (a new one starts
only when more requests wait than idle workers); its cancel scope is registered under its
id before any worker takes it, so that ``cancel_incoming`` finds it at once. A batch is
served by a task of its own and answered in one message.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from inspect import isawaitable
from types import CoroutineType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ._context import NO_ANSWER, RequestContext
from ._errors import InternalError, MethodNotFound, RequestCancelled, ServerError, TransportError
from ._handoff import HandoffQueue
from ._methods import MethodRegistry
from ._peer_calls import _CLOSED_ERRORS, _current_request, logger
from ._peer_streams import _json_rpc_error_in, _PeerStreams
from ._wire import (
    ErrorResponse,
    InvalidMessage,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    encode,
)

__all__ = ["RequestFilter"]

RequestFilter = Callable[[Request, RequestContext], None]
"""Runs before dispatch; raise a `JsonRpcError` to refuse the request."""

_Work = tuple[Request, Any, anyio.CancelScope]


class _PeerServing(_PeerStreams):
    """Serving the other side's requests and notifications.

    Only ever a base of `Peer`: ``self`` is the `Peer` a `RequestContext` names (hence
    the ``type: ignore[arg-type]`` where one is made).
    """

    registry: MethodRegistry
    answer_cancelled: bool
    request_filter: RequestFilter | None
    _max_workers: int
    _workers: int
    _work: HandoffQueue[_Work]
    _running: dict[RequestId, anyio.CancelScope]
    _task_group: TaskGroup | None
    _scope_type: type[anyio.CancelScope] | None

    def cancel_incoming(self, request_id: RequestId) -> bool:
        """Cancel the handler serving ``request_id``; ``False`` if none is running."""
        scope = self._running.get(request_id)
        if scope is None:
            return False
        scope.cancel()
        return True

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
        ctx = RequestContext(
            self,  # type: ignore[arg-type]
            request.method,
            request_id,
            request.params,
            info,
            scope,
        )
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

    # -- notifications -------------------------------------------------------------

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
                ctx = RequestContext(self, method, None, raw, info)  # type: ignore[arg-type]
                outcome = fallback(raw, ctx)
            else:
                descriptor = entry.descriptor
                params = raw if descriptor.params_type is None else descriptor.validate_params(raw)
                ctx = RequestContext(self, method, None, raw, info)  # type: ignore[arg-type]
                outcome = entry.handler(params, ctx)
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

    # -- batches -------------------------------------------------------------------

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
