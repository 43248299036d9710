"""Sessionless JSON-RPC over HTTP: one POST per call, its answer read in the caller's task.

`HTTPCaller` is the lean client for servers that keep no session (A2A's JSON-RPC
binding, a sessionless MCP server): each call POSTs one request and reads the answer,
``application/json`` or a ``text/event-stream``, in the task that awaits it, with no
background reader, queue or request table. A streamed answer is decoded a received
chunk at a time (`SSEDecoder.feed_messages`), and a streaming call yields each result
as its chunk arrives. Nothing is resumed: an SSE answer that ends or breaks with the
call unanswered raises `TransportError`. With a `WireTap`, each request sent and each
JSON-RPC message received is recorded as `TappedStream` would record it. Use
`StreamableHTTPTransport` for sessions, server-initiated messages or resumption.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import pydantic
import pydantic_core

from ._deadline import Deadline
from ._errors import (
    STANDARD_ERRORS,
    ConnectionClosed,
    ErrorTable,
    JsonRpcError,
    ResultValidationError,
    TransportError,
)
from ._http1 import send_post
from ._http_body import DEFAULT_MAX_BODY_SIZE, read_response_body
from ._http_client_base import error_from_response
from ._sse import DEFAULT_MAX_EVENT_SIZE, SSEDecoder
from ._telemetry import TelemetryConventions, instrument
from ._wire import ErrorResponse, InvalidMessage, Request, RequestId, Response, encode, parse

if TYPE_CHECKING:
    from ._tap import WireTap

__all__ = ["HTTPCaller"]

logger = logging.getLogger("jsonrpc_core.http.caller")

_ACCEPT_BOTH = "application/json, text/event-stream"
_NOT_PLAIN: Any = object()


class HTTPCaller:
    """JSON-RPC calls to ``url``, each one POST answered with JSON or SSE.

    ``headers`` go on every POST (with the JSON-RPC ``accept`` and ``content-type``);
    received errors are built with ``errors`` (a layer's `ErrorTable`). Calls may run
    concurrently; ids are unique per caller. The caller does not own ``client``.

    ``timeout`` is each call's total deadline, however slowly the server sends (the
    client's own httpx timeouts still bound each phase and each wait for bytes):
    `call` from sending the request to reading its answer's last byte, `stream` until
    its first result (the rest of a stream runs as long as the server sends it; close
    the generator to leave). When it passes, `RequestTimeout` is raised and the
    response is closed (its connection is not reused). ``None``: no total deadline.

    Errors raised: the server's `JsonRpcError` (``received`` set when it answered a
    call), `HTTPStatusError` for an HTTP error status whose body is not the call's
    JSON-RPC error, `TransportError` when the server cannot be reached or answers
    without the response, `ResponseTooLarge` (a `TransportError`) for a JSON answer or
    error body over ``max_body_size`` decoded bytes, `RequestTimeout` at the deadline,
    `ConnectionClosed` after `close`, and `SSEError` for an event stream over the limits
    of `SSEDecoder`.

    With ``tap``, each request is recorded as sent and each JSON-RPC message read from
    an answer (every event of a stream; not an invalid one, nor an HTTP error status's
    body) as received, between ``local`` and ``remote`` over ``transport``: the
    records a `TappedStream` makes of the same exchange. A call reads its answer only
    up to its response, so what a server sends after it is not recorded.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        errors: ErrorTable = STANDARD_ERRORS,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        tap: WireTap | None = None,
        local: str = "client",
        remote: str = "server",
        transport: str = "http",
        timeout: float | None = None,
        telemetry: TelemetryConventions | None = None,
    ) -> None:
        self.url = url
        # The OpenTelemetry hook (``None`` without conventions or without the API).
        self._telemetry = instrument(telemetry, network_transport="tcp")
        self.timeout = timeout
        self.errors = errors
        self.max_event_size = max_event_size
        self.max_body_size = max_body_size
        self.closed = False
        self._client = client
        # Parsed once: httpx re-parses a str URL and re-normalises a dict of headers
        # on every request.
        self._url = httpx.URL(url)
        self._headers = httpx.Headers(
            {**dict(headers or {}), "accept": _ACCEPT_BOTH, "content-type": "application/json"}
        )
        self._next_id = 1
        self._tap = tap
        self._local = local
        self._remote = remote
        self._transport = transport

    def close(self) -> None:
        """Refuse further calls (with `ConnectionClosed`); calls under way go on."""
        self.closed = True

    async def call(
        self, method: str, params: Any = None, validate: Callable[[Any], Any] | None = None
    ) -> Any:
        """Call ``method``; its result, through ``validate`` when given.

        ``validate`` takes the result as parsed JSON and raises
        `pydantic.ValidationError` when it does not fit (then `ResultValidationError`
        is raised), e.g. a result model's ``validate_python``. The whole call is bounded
        by ``timeout``.
        """
        telemetry = self._telemetry
        if telemetry is not None and telemetry.live():
            request_id = self._new_id()
            return await telemetry.call(
                method,
                params,
                request_id,
                lambda traced, headers: self._bounded_call(
                    method, traced, validate, request_id, headers
                ),
            )
        return await self._bounded_call(method, params, validate)

    async def _bounded_call(
        self,
        method: str,
        params: Any,
        validate: Callable[[Any], Any] | None,
        request_id: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        if self.timeout is None:
            return await self._call(method, params, validate, request_id, headers)
        with Deadline(self.timeout, self.url, method):
            return await self._call(method, params, validate, request_id, headers)

    async def _call(
        self,
        method: str,
        params: Any,
        validate: Callable[[Any], Any] | None,
        given_id: int | None,
        headers: dict[str, str] | None,
    ) -> Any:
        request_id, response = await self._post(method, params, given_id, headers)
        answer: Response | ErrorResponse | None = None
        try:
            tapped = self._tap is not None
            if not self._is_sse(response):
                body = await self._body(response)
                result = _NOT_PLAIN if tapped else _plain_result(body, request_id)
                if result is not _NOT_PLAIN:
                    answer = Response(request_id, result)
                else:
                    answer = _answer_in(self._parsed(body), request_id)
                if answer is None:
                    raise TransportError(f"{self.url} answered {method} without its response")
            else:
                decoder = SSEDecoder(max_event_size=self.max_event_size)
                seen: set[str] = set()
                try:
                    async for chunk in response.aiter_bytes():
                        for data in decoder.feed_messages(chunk, seen):
                            result = _NOT_PLAIN if tapped else _plain_result(data, request_id)
                            if result is not _NOT_PLAIN:
                                answer = Response(request_id, result)
                                break
                            answer = _answer_in(self._parsed(data), request_id)
                            if answer is not None:
                                break
                        if answer is not None:
                            break
                except (httpx.HTTPError, anyio.BrokenResourceError) as exc:
                    raise TransportError(f"response stream broke: {exc!r}") from exc
                if answer is None:
                    failure = _stream_error(decoder, answered=False)
                    assert failure is not None
                    raise failure
        finally:
            await response.aclose()
        if type(answer) is Response:
            if validate is None:
                return answer.result
            try:
                return validate(answer.result)
            except pydantic.ValidationError as exc:
                raise ResultValidationError(
                    f"{method}: the result does not match its declared type: {exc}"
                ) from None
        assert isinstance(answer, ErrorResponse)
        raise self._received_error(answer.error)

    def stream(
        self, method: str, params: Any = None, validate: Callable[[Any], Any] | None = None
    ) -> AsyncGenerator[Any, None]:
        """Call a method answered with a stream of results; each one, through
        ``validate`` when given (its errors propagate as raised).

        Every response to the call in an SSE answer is a result (a JSON answer is
        one); an error response raises. Closing the generator closes the response.
        An answer that ends without any response, or with a bare ``retry`` after an
        event id (a reconnection this caller does not make), raises `TransportError`.
        ``timeout`` bounds the call until its first result.
        """
        telemetry = self._telemetry
        if telemetry is not None and telemetry.live():
            request_id = self._new_id()
            return telemetry.stream(  # type: ignore[no-any-return]
                method,
                params,
                request_id,
                lambda traced, headers: self._stream(method, traced, validate, request_id, headers),
            )
        return self._stream(method, params, validate)

    async def _stream(
        self,
        method: str,
        params: Any,
        validate: Callable[[Any], Any] | None,
        given_id: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> AsyncGenerator[Any, None]:
        deadline = Deadline(self.timeout, self.url, method)
        with deadline:
            request_id, response = await self._post(method, params, given_id, headers)
        try:
            if not self._is_sse(response):
                with deadline:
                    body = await self._body(response)
                answer = _answer_in(self._parsed(body), request_id)
                if answer is None:
                    raise TransportError(f"{self.url} answered {method} without its response")
                if isinstance(answer, ErrorResponse):
                    raise self._received_error(answer.error)
                yield answer.result if validate is None else validate(answer.result)
                return
            decoder = SSEDecoder(max_event_size=self.max_event_size)
            seen: set[str] = set()
            answered = False
            tapped = self._tap is not None
            chunks = response.aiter_bytes()
            while True:
                try:
                    with deadline:  # lifted at the first result
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except (httpx.HTTPError, anyio.BrokenResourceError) as exc:
                    raise TransportError(f"response stream broke: {exc!r}") from exc
                for data in decoder.feed_messages(chunk, seen):
                    result = _NOT_PLAIN if tapped else _plain_result(data, request_id)
                    if result is not _NOT_PLAIN:
                        answered = True
                        deadline.lift()
                        yield result if validate is None else validate(result)
                        continue
                    answer = _answer_in(self._parsed(data), request_id)
                    if answer is None:
                        continue
                    answered = True
                    deadline.lift()
                    if isinstance(answer, ErrorResponse):
                        raise self._received_error(answer.error)
                    yield answer.result if validate is None else validate(answer.result)
            if not answered or decoder.ended_with_retry:
                error = _stream_error(decoder, answered=answered)
                if error is not None:
                    raise error
        finally:
            await response.aclose()

    def _new_id(self) -> int:
        request_id = self._next_id
        self._next_id += 1
        return request_id

    async def _post(
        self,
        method: str,
        params: Any,
        request_id: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, httpx.Response]:
        """POST one request (as ``request_id``, else a new id; with the caller's headers
        and ``headers``); its id and the response, 2xx with a JSON or SSE body (any
        other answer raises, as the server's error when the body carries it)."""
        if self.closed:
            raise ConnectionClosed("Connection closed: connection closed")
        if request_id is None:
            request_id = self._next_id
            self._next_id += 1
        message = Request(request_id, method, params)
        if self._tap is not None:
            self._tap.record_message(
                "send", message, local=self._local, remote=self._remote, transport=self._transport
            )
        client = self._client
        all_headers = self._headers
        if headers:
            all_headers = all_headers.copy()
            all_headers.update(headers)
        try:
            response = await send_post(client, self._url, all_headers, encode(message))
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url} failed: {exc!r}") from exc
        status = response.status_code
        if status == 200:
            return request_id, response
        try:
            if status >= 400:
                error = error_from_response(status, await self._body(response), request_id)
                raise self._received_error(error) if isinstance(error, JsonRpcError) else error
            if status == 202:
                raise TransportError(f"{self.url} accepted {method} without answering it")
        except BaseException:
            await response.aclose()
            raise
        return request_id, response

    def _received_error(self, error: JsonRpcError) -> JsonRpcError:
        """The server's ``error`` as its refined class, marked received (the server
        answered with it: the call reached it)."""
        refined = self.errors.refine(error)
        refined.received = True
        return refined

    def _parsed(self, data: str | bytes) -> Any:
        """``parse(data)``, recorded as received when tapped (unless invalid)."""
        payload = parse(data)
        if self._tap is not None and not isinstance(payload, InvalidMessage):
            self._tap.record_message(
                "receive",
                payload,
                local=self._local,
                remote=self._remote,
                transport=self._transport,
            )
        return payload

    async def _body(self, response: httpx.Response) -> bytes:
        try:
            return await read_response_body(response, self.max_body_size)
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url} failed: {exc!r}") from exc

    def _is_sse(self, response: httpx.Response) -> bool:
        """Whether the answer is an event stream (else JSON; anything else raises)."""
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("application/json"):
            return False
        if content_type.startswith("text/event-stream"):
            return True
        raise TransportError(f"unexpected content type {content_type!r} from {self.url}")


def _plain_result(data: str | bytes, request_id: int) -> Any:
    """The result of ``data`` when it is the usual answer, a success response to
    ``request_id`` (as `parse` would read it), else `_NOT_PLAIN` (read it with `parse`)."""
    try:
        obj = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError:
        return _NOT_PLAIN
    if (
        type(obj) is dict
        and obj.get("id") == request_id
        and type(obj["id"]) is int
        and "result" in obj
        and "error" not in obj
        and obj.get("jsonrpc") == "2.0"
    ):
        return obj["result"]
    return _NOT_PLAIN


def _answer_in(payload: Any, request_id: RequestId) -> Response | ErrorResponse | None:
    """The response to ``request_id`` in a received payload (an error with a null id
    counts: it answers the only request of the POST), else ``None``."""
    if isinstance(payload, list):
        for item in payload:
            answer = _answer_in(item, request_id)
            if answer is not None:
                return answer
        return None
    kind = type(payload)
    if kind is Response or kind is ErrorResponse:
        if payload.id == request_id or (kind is ErrorResponse and payload.id is None):
            return payload  # type: ignore[no-any-return]
        logger.warning("response for unknown request id %r dropped", payload.id)
    elif kind is InvalidMessage:
        logger.warning("invalid message from the server: %s", payload.error.message)
    return None


def _stream_error(decoder: SSEDecoder, *, answered: bool) -> TransportError | None:
    """Why an SSE answer that ended (not broken) is incomplete, or ``None``: unanswered,
    or closed with a bare ``retry`` (a reconnection left to the caller's caller)."""
    if decoder.last_event_id is not None and (not answered or decoder.ended_with_retry):
        return TransportError("the response stream could not be resumed")
    if not answered:
        return TransportError("the server closed the response stream without answering")
    return None
