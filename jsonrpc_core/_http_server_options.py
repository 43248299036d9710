"""What the HTTP server is told (`HTTPServerOptions` and its hooks), and the request
intake every endpoint of it shares: the JSON-RPC body, read with the size and time
limits of the options, and the layer's validate hook.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._errors import InvalidRequest, JsonRpcError
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._http_common import (
    ASGIReceive,
    BodyTooLarge,
    BodyTooSlow,
    HTTPError,
    HTTPRequestInfo,
    Route,
    read_body,
)
from ._http_deadlines import BODY_TIMEOUT
from ._http_security import BearerAuth, OriginPolicy
from ._http_sessions import HTTPSession, SessionPolicy
from ._transport import MessageStream
from ._wire import Incoming, InvalidMessage, Request, parse

if TYPE_CHECKING:
    from ._event_store import EventStore

__all__ = [
    "ErrorStatusHook",
    "HTTPServerOptions",
    "ResponseHeadersHook",
    "ResponseMode",
    "ResponseModeHook",
    "ServeConnection",
    "ValidateHook",
    "body_too_slow",
    "read_payload",
    "run_validate",
]

ServeConnection = Callable[[MessageStream], Awaitable[None]]
"""Serve one connection until its stream ends (typically ``Peer(stream, ...).run()``)."""

ValidateHook = Callable[[HTTPRequestInfo, "Incoming | None", "HTTPSession | None"], Any]
ResponseMode = Literal["json", "sse", "auto"]
ResponseModeHook = Callable[[Request, HTTPRequestInfo], "ResponseMode | None"]
ErrorStatusHook = Callable[[JsonRpcError, HTTPRequestInfo], "int | None"]
ResponseHeadersHook = Callable[[HTTPRequestInfo], Mapping[str, str]]


@dataclass
class HTTPServerOptions:
    """Everything a protocol layer or user can set on the HTTP server.

    ``sessions`` ``None`` means stateless: no per-client state at all, each POST is
    self-contained and GET/DELETE get 405. ``validate`` runs on every parsed POST (and
    on GET and DELETE, with payload ``None``) and may raise `HTTPError` (an HTTP
    status) or `JsonRpcError` (a JSON-RPC error in a 200 response). ``response_mode``
    picks JSON or SSE per request, or ``"auto"``: JSON if the answer is the first
    message the handler sends, SSE as soon as anything else comes first (or after
    ``sse_defer_timeout`` seconds of silence); requests named in ``streaming_methods``
    may be answered with several results (A2A streaming). A streamed request in
    ``"auto"`` mode is answered as JSON only when it fails before its first result (a
    plain error response), and as SSE once its first result is there. ``error_status`` gives the
    HTTP status of a JSON answer that is a JSON-RPC error (``None``: 200), for
    protocols that map error codes to statuses.
    ``response_headers`` adds headers to the answer of each POST that carries a
    request, computed after ``validate`` (A2A echoes its activated extensions).
    A request body must arrive within ``body_timeout`` seconds, or it is answered 408
    and the connection closed (checked per chunk; ``serve`` and ``running_server`` also
    cut off a client that stops sending, with the same default).
    """

    path: str = "/rpc"
    sessions: SessionPolicy | None = None
    json_response: bool = False
    standalone_stream: bool = True
    legacy_sse_path: str | None = None
    legacy_messages_path: str = "/messages"
    max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE
    event_store: EventStore | None = None
    retry_interval_ms: int | None = None
    idle_timeout: float = 1800.0
    max_sessions: int = 10_000
    origin_policy: OriginPolicy | None = field(default_factory=OriginPolicy.loopback)
    auth: BearerAuth | None = None
    routes: Sequence[Route] = ()
    allow_batch: bool = True
    require_accept: bool = True
    event_name: str | None = "message"
    validate: ValidateHook | None = None
    response_mode: ResponseModeHook | None = None
    streaming_methods: frozenset[str] = frozenset()
    response_headers: ResponseHeadersHook | None = None
    session_header_on: Literal["start", "all"] = "start"
    error_status: ErrorStatusHook | None = None
    sse_defer_timeout: float = 10.0
    body_timeout: float | None = BODY_TIMEOUT


async def read_payload(
    options: HTTPServerOptions, receive: ASGIReceive, info: HTTPRequestInfo
) -> Incoming:
    """The parsed JSON-RPC body of a POST (HTTPError for a body the options refuse)."""
    content_type = info.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != "application/json":
        raise HTTPError(415, "Unsupported Media Type: Content-Type must be application/json")
    length = info.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > options.max_body_size:
        raise HTTPError(413, f"Payload Too Large: limit is {options.max_body_size} bytes")
    try:
        body = await read_body(receive, options.max_body_size, options.body_timeout)
    except BodyTooLarge:
        raise HTTPError(413, f"Payload Too Large: limit is {options.max_body_size} bytes") from None
    except BodyTooSlow:
        raise body_too_slow(options) from None
    payload = parse(body)
    if isinstance(payload, InvalidMessage):
        raise HTTPError(400, payload.error.message, error=payload.error)
    if isinstance(payload, list):
        if not options.allow_batch:
            raise HTTPError(
                400,
                "Batches are not supported",
                error=InvalidRequest("Invalid Request: batches are not supported"),
            )
        invalid = [m for m in payload if isinstance(m, InvalidMessage)]
        if invalid and len(invalid) == len(payload):
            raise HTTPError(400, invalid[0].error.message, error=invalid[0].error)
    return payload


def body_too_slow(options: HTTPServerOptions) -> HTTPError:
    """The answer to a body that missed ``options.body_timeout``."""
    return HTTPError(
        408,
        f"Request Timeout: the body took longer than {options.body_timeout:g} s",
        headers={"connection": "close"},
    )


async def run_validate(
    options: HTTPServerOptions,
    info: HTTPRequestInfo,
    payload: Incoming | None,
    session: HTTPSession | None,
) -> None:
    """Run the layer's validate hook (``payload`` is ``None`` for GET and DELETE)."""
    if options.validate is not None:
        outcome = options.validate(info, payload, session)
        if inspect.isawaitable(outcome):
            await outcome
