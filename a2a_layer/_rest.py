"""The HTTP+JSON binding (spec 11) as extra routes of the JSON-RPC app.

Each request is matched against the proto's routes (``_methods``), turned into the
same params model the JSON-RPC binding validates (``_http_binding``), served by the
same `A2AService`, and answered with the result JSON, an SSE stream of
`StreamResponse` objects, or a ``google.rpc.Status`` error body with the HTTP status
of the error table (spec 11.6). An error after a stream has started is sent as an
``event: error`` with the same body.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pydantic_core

from jsonrpc_core import (
    BearerAuth,
    HTTPError,
    InternalError,
    JsonRpcError,
    MethodNotFound,
    ParseError,
)
from jsonrpc_core.http import HTTPRequest, HTTPResponse, Route, SSEEvent, SSEResponse, encode_event

from ._errors import http_error_body, http_status_for
from ._http_binding import params_from_http
from ._methods import (
    HTTP_ROUTE_ALIASES_V10,
    HTTP_ROUTES_V10,
    METHODS_V10,
    match_http_route,
)
from ._rpc import EXTENSIONS_HEADER, ServiceParameters
from ._service import A2AService
from ._telemetry import traced_rest_operation
from .types import AgentCard

__all__ = ["A2A_JSON", "rest_routes"]

logger = logging.getLogger("a2a_layer.rest")

A2A_JSON = "application/a2a+json"
"""The media type of HTTP+JSON bodies (spec 11.1, 14.1)."""


def _dump(value: Any) -> bytes:
    return pydantic_core.to_json(value, by_alias=True, exclude_none=True)


def error_response(err: JsonRpcError, headers: dict[str, str] | None = None) -> HTTPResponse:
    """The HTTP+JSON answer for ``err``: its HTTP status and a google.rpc.Status body."""
    return HTTPResponse(http_status_for(err), _dump(http_error_body(err)), A2A_JSON, headers or {})


def rest_routes(
    service: A2AService, card: AgentCard, prefix: str, *, auth: BearerAuth | None = None
) -> list[Route]:
    """The HTTP+JSON routes under ``prefix`` (``""`` for the root), tenant forms included."""
    prefix = prefix.rstrip("/")

    async def handle(request: HTTPRequest) -> HTTPResponse | SSEResponse:
        try:
            if auth is not None:
                request.info.principal = await auth.authenticate(request.headers)
            params = ServiceParameters.read(request.headers, request.query, card)
            path = request.path[len(prefix) :] or "/"
            found = match_http_route(request.method, path)
            if found is None:
                raise MethodNotFound(f"No A2A operation for {request.method} {request.path}")
            route, path_vars = found
            params.check_method(route.method)
            body = None
            if route.body and request.body.strip():
                try:
                    # The JSON-RPC binding's parser: depth-limited, where json.loads
                    # raises RecursionError on deep nesting (a 500, not a 400).
                    body = pydantic_core.from_json(request.body, allow_inf_nan=False)
                except ValueError:
                    raise ParseError("Invalid JSON payload") from None
            raw = params_from_http(route, path_vars, request.query, body)
            method = METHODS_V10[route.method]
            model = method.validate_params(raw)
            info = params.call_info(request.info)
            result = await traced_rest_operation(
                route.method,
                raw,
                request.info,
                lambda: method.operation(service, model, info),
                method.streaming,
            )
        except HTTPError as exc:  # authentication
            status = "UNAUTHENTICATED" if exc.status == 401 else "PERMISSION_DENIED"
            body_obj = {"error": {"code": exc.status, "status": status, "message": exc.message}}
            return HTTPResponse(exc.status, _dump(body_obj), A2A_JSON, dict(exc.headers))
        except JsonRpcError as err:
            return error_response(err)
        headers = {}
        if params.activated_extensions:
            headers[EXTENSIONS_HEADER] = ",".join(sorted(params.activated_extensions))
        if method.streaming:
            return SSEResponse(_sse(result), headers=headers)
        return HTTPResponse(200, _dump(result), A2A_JSON, headers)

    # One catcher per path shape; `match_http_route` picks the operation (and knows the
    # order in which overlapping templates must be tried).
    shapes: dict[str, set[str]] = {}
    for route in (*HTTP_ROUTES_V10, *HTTP_ROUTE_ALIASES_V10):
        shapes.setdefault(route.path, set()).add(route.http_method)
    return [Route(prefix + path, ("DELETE", "GET", "POST"), handle) for path, _ in _ordered(shapes)]


def _ordered(shapes: dict[str, set[str]]) -> Sequence[tuple[str, set[str]]]:
    # Custom-verb templates ("/tasks/{id}:cancel") before the plain ones they also fit.
    return sorted(shapes.items(), key=lambda item: ":" not in item[0])


async def _sse(events: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    try:
        async for event in events:
            yield encode_event(SSEEvent(_dump(event).decode()))
    except JsonRpcError as err:
        yield encode_event(SSEEvent(_dump(http_error_body(err)).decode(), "error"))
    except Exception:
        logger.exception("HTTP+JSON stream failed")
        internal = InternalError("Internal error while streaming")
        yield encode_event(SSEEvent(_dump(http_error_body(internal)).decode(), "error"))
