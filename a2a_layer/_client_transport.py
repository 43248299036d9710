"""How an `A2AClient` reaches one agent interface: JSON-RPC (1.0 or 0.3), HTTP+JSON or
gRPC (``_grpc``, the ``grpc`` extra).

Each transport turns a 1.0 method name and its params model into a call and gives back
the validated 1.0 result model (or a stream of `StreamResponse`), raising the agent's
error as its `A2A_ERRORS` class. ``timeout`` is each call's total deadline, however
slowly the agent sends: a call's whole exchange, a stream's until its first event;
`jsonrpc_core.RequestTimeout` when it passes (the response is closed, its connection
not reused). The JSON-RPC one makes each call with
`jsonrpc_core.http.HTTPCaller` (one POST, its JSON or SSE answer read in the caller's task,
recorded by the caller when there is a `WireTap`; 0.3 calls go through the ``_compat03``
bridge). The HTTP+JSON one maps calls to routes with ``_http_binding``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any, TypeVar

import httpx
import pydantic_core

from jsonrpc_core import Deadline, HTTPStatusError, JsonRpcError, TransportError, WireTap
from jsonrpc_core.http import (
    DEFAULT_MAX_BODY_SIZE,
    HTTPCaller,
    SSEDecoder,
    fetch_body,
    read_response_body,
)

from ._compat03 import params_to_v03, result_from_v03
from ._errors import A2A_ERRORS, error_from_http
from ._http_binding import http_request_for
from ._methods import A2AMethod
from ._telemetry import A2A_CLIENT_TELEMETRY, rest_client_telemetry
from .types import A2AModel, StreamResponse

__all__ = [
    "ClientTransport",
    "JsonRpcClientTransport",
    "RestClientTransport",
    "TracedClientTransport",
    "grpc_transport",
]

P = TypeVar("P", bound=A2AModel)
R = TypeVar("R")


def _refined(exc: JsonRpcError) -> JsonRpcError:
    return A2A_ERRORS.refine(exc)


class ClientTransport:
    """One agent interface: `call` and `stream` 1.0 methods."""

    protocol_version = "1.0"

    async def __aenter__(self) -> ClientTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Release the transport."""

    async def call(self, method: A2AMethod[P, R], params: P) -> R:
        """Call ``method``; the validated 1.0 result model."""
        raise NotImplementedError

    def stream(
        self, method: A2AMethod[P, StreamResponse], params: P
    ) -> AsyncGenerator[StreamResponse, None]:
        """Call a streaming method; its events (close the generator to leave early)."""
        raise NotImplementedError


class TracedClientTransport(ClientTransport):
    """A transport that opens its own CLIENT spans (HTTP+JSON, gRPC; the JSON-RPC one's
    `HTTPCaller` opens them): `call` and `stream` run ``_call`` and ``_stream`` inside
    the span when telemetry records, with ``headers`` the trace context to send."""

    async def call(self, method: A2AMethod[P, R], params: P) -> R:
        telemetry = rest_client_telemetry()
        if telemetry is not None and telemetry.live():
            result: R = await telemetry.call(
                method.method, params, None, lambda _, headers: self._call(method, params, headers)
            )
            return result
        return await self._call(method, params)

    def stream(
        self, method: A2AMethod[P, StreamResponse], params: P
    ) -> AsyncGenerator[StreamResponse, None]:
        telemetry = rest_client_telemetry()
        if telemetry is not None and telemetry.live():
            return telemetry.stream(  # type: ignore[no-any-return]
                method.method,
                params,
                None,
                lambda _, headers: self._stream(method, params, headers),
            )
        return self._stream(method, params)

    async def _call(
        self, method: A2AMethod[P, R], params: P, headers: Mapping[str, str] | None = None
    ) -> R:
        """One call, within the transport's ``timeout``, sending ``headers`` too."""
        raise NotImplementedError

    def _stream(
        self,
        method: A2AMethod[P, StreamResponse],
        params: P,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[StreamResponse, None]:
        """One streaming call (its first event within ``timeout``), sending ``headers``."""
        raise NotImplementedError


class JsonRpcClientTransport(ClientTransport):
    """JSON-RPC over HTTP, as A2A 1.0 (``A2A-Version: 1.0``) or 0.3 (``message/send``).

    Each call is one POST, answered with JSON or an SSE stream, read in the caller's
    task; a streaming method yields each event as its chunk arrives. An SSE stream that
    ends with a call still unanswered, or breaks, raises `TransportError` (after the
    events it did carry): `A2AClient` fills the gap itself, so nothing is resumed here.

    With ``tap``, every JSON-RPC message sent and received is recorded (as "client"
    and "agent", transport "http"); streamed results one event per message.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        *,
        protocol_version: str = "1.0",
        headers: Mapping[str, str] | None = None,
        tap: WireTap | None = None,
        timeout: float | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    ) -> None:
        self.protocol_version = protocol_version
        self.url = url
        all_headers = dict(headers or {})
        if protocol_version != "0.3":
            all_headers["A2A-Version"] = protocol_version
        self._caller = HTTPCaller(
            client,
            url,
            headers=all_headers,
            errors=A2A_ERRORS,
            max_body_size=max_body_size,
            tap=tap,
            local="client",
            remote="agent",
            transport="http",
            timeout=timeout,
            telemetry=A2A_CLIENT_TELEMETRY,
        )

    async def aclose(self) -> None:
        self._caller.close()

    async def call(self, method: A2AMethod[P, R], params: P) -> R:
        try:
            if self.protocol_version == "0.3":
                name, wire = params_to_v03(method.method, params)
                result: R = result_from_v03(method.method, await self._caller.call(name, wire))
                return result
            answer: R = await self._caller.call(method.method, params, method.validate_result)
            return answer
        except HTTPStatusError:
            raise  # an HTTP error status (401, 413, ...): a TransportError with .status
        except JsonRpcError as exc:
            raise _refined(exc) from None

    def stream(
        self, method: A2AMethod[P, StreamResponse], params: P
    ) -> AsyncGenerator[StreamResponse, None]:
        if self.protocol_version == "0.3":
            name, wire = params_to_v03(method.method, params)
            return self._caller.stream(name, wire, lambda raw: result_from_v03(method.method, raw))
        return self._caller.stream(method.method, params, method.validate_result)


class RestClientTransport(TracedClientTransport):
    """The HTTP+JSON binding (spec 11), A2A 1.0; a JSON answer or error body larger than
    ``max_body_size`` decoded bytes raises `ResponseTooLarge`."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    ) -> None:
        self._client = client
        self.timeout = timeout
        self.max_body_size = max_body_size
        self.url = url.rstrip("/")
        self.headers = {**dict(headers or {}), "A2A-Version": "1.0"}

    def _request(
        self,
        method: A2AMethod[Any, Any],
        params: A2AModel,
        accept: str,
        extra_headers: Mapping[str, str] | None = None,
    ) -> httpx.Request:
        spec = http_request_for(method.method, params)
        headers = {**self.headers, **(extra_headers or {}), "accept": accept}
        content = None
        if spec.body is not None:
            headers["content-type"] = "application/a2a+json"
            content = json.dumps(spec.body).encode()
        return self._client.build_request(
            spec.http_method,
            self.url + spec.path,
            params=spec.query,
            content=content,
            headers=headers,
        )

    async def _call(
        self, method: A2AMethod[P, R], params: P, headers: Mapping[str, str] | None = None
    ) -> R:
        if self.timeout is None:
            return await self._exchange(method, params, headers)
        with Deadline(self.timeout, self.url, method.method):
            result = await self._exchange(method, params, headers)
        return result

    async def _exchange(
        self, method: A2AMethod[P, R], params: P, headers: Mapping[str, str] | None
    ) -> R:
        request = self._request(method, params, "application/a2a+json, application/json", headers)
        try:
            response, content = await fetch_body(self._client, request, self.max_body_size)
        except httpx.HTTPError as exc:
            raise TransportError(f"{request.method} {request.url} failed: {exc!r}") from exc
        body = _json_or_none(content)
        if response.status_code >= 400:
            raise _http_error(response.status_code, body)
        result: R = method.validate_result(body)
        return result

    async def _stream(
        self,
        method: A2AMethod[P, StreamResponse],
        params: P,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[StreamResponse, None]:
        request = self._request(method, params, "text/event-stream", headers)
        deadline = Deadline(self.timeout, self.url, method.method)  # lifted at the first event
        try:
            with deadline:
                response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise TransportError(f"{request.method} {request.url} failed: {exc!r}") from exc
        try:
            if response.status_code >= 400:
                with deadline:
                    body = await read_response_body(response, self.max_body_size)
                raise _http_error(response.status_code, _json_or_none(body))
            decoder = SSEDecoder()
            chunks = response.aiter_bytes()
            try:
                while True:
                    with deadline:
                        chunk = await anext(chunks, None)
                    if chunk is None:
                        break
                    for event in decoder.feed(chunk):
                        if not event.data:
                            continue
                        if event.event == "error":
                            raise error_from_http(500, _json_or_none(event.data.encode()))
                        deadline.lift()
                        yield StreamResponse.model_validate_json(event.data)
            except httpx.HTTPError:
                return  # the connection dropped: the stream just ends
        finally:
            await response.aclose()


def grpc_transport(
    url: str,
    *,
    token: str | None,
    headers: Mapping[str, str],
    timeout: float | None,
    protocol_version: str = "1.0",
) -> ClientTransport:
    """The gRPC transport (``a2a_layer._grpc``); `ImportError` naming the extra without it."""
    try:
        from ._grpc import GrpcClientTransport
    except ImportError as exc:
        raise ImportError(
            f"the agent's interface {url} is gRPC, which needs the grpc extra "
            f"(pip install 'rpcweave[grpc]'): {exc}"
        ) from exc
    return GrpcClientTransport(
        url, headers=headers, token=token, timeout=timeout, protocol_version=protocol_version
    )


def _http_error(status: int, body: Any) -> Exception:
    """An A2A error for an HTTP+JSON error answer; 401 and 403 are transport errors."""
    error = error_from_http(status, body)
    error.received = True  # the server's answer (as `HTTPCaller` marks the errors it reads)
    if status in (401, 403):
        return HTTPStatusError(status, error.message, error)
    return error


def _json_or_none(body: bytes) -> Any:
    try:
        # Depth-limited, where json.loads raises RecursionError on deep nesting.
        return pydantic_core.from_json(body) if body else None
    except ValueError:
        return None
