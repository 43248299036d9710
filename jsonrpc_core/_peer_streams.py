"""The `Peer`'s streamed results, both ways (A2A's streaming methods).

Sending: `request_stream` registers a bounded result stream under the request's id; each
answer with that id goes into it (`_resolve_stream`) until the transport reports the end
of the stream (`_end_stream`). Serving: a handler that returns an async iterator has each
item sent as an answer to the same request (`_stream_results`), on a transport that can
end such a stream (``end_results``).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeVar, overload

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from ._errors import ConnectionClosed, InternalError, JsonRpcError
from ._methods import RequestType
from ._peer_calls import _CLOSED_ERRORS, _check_params, _PeerCalls, logger
from ._wire import ErrorResponse, Request, RequestId, Response, StreamEnd

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

__all__: list[str] = []

R = TypeVar("R")


def _json_rpc_error_in(exc: BaseException) -> JsonRpcError | None:
    """The `JsonRpcError` a handler meant to raise, looking inside single-leaf groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, JsonRpcError) else None


class _PeerStreams(_PeerCalls):
    """Requests answered by a stream of results, sent and served."""

    _result_streams: dict[RequestId, MemoryObjectSendStream[Response | ErrorResponse]]
    # How each result stream ended (the transport's `StreamEnd`), until its reader sees it.
    _ended_streams: dict[RequestId, BaseException | None]

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
