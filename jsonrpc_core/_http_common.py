"""Shared pieces of the HTTP transports: request info, errors, small ASGI helpers.

Kept free of any protocol: MCP and A2A policies plug in through the hooks of
`HTTPServerOptions` in ``_http_server``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import anyio

from ._errors import JsonRpcError

__all__ = [
    "SESSION_HEADER",
    "ASGIApp",
    "ASGIReceive",
    "ASGIScope",
    "ASGISend",
    "HTTPError",
    "HTTPRequest",
    "HTTPRequestInfo",
    "HTTPResponse",
    "Route",
    "SSEResponse",
    "accepts",
    "json_rpc_error_body",
    "read_body",
    "send_response",
]

SESSION_HEADER = "session-id"
"""The session id header of `SessionPolicy` and `StreamableHTTPTransport` unless told
otherwise: each protocol names its own (MCP's is ``Mcp-Session-Id``)."""

ASGIScope = MutableMapping[str, Any]
ASGIReceive = Callable[[], Awaitable[MutableMapping[str, Any]]]
ASGISend = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[ASGIScope, ASGIReceive, ASGISend], Awaitable[None]]


class HTTPError(Exception):
    """Answer the HTTP request with ``status``; ``error`` becomes a JSON-RPC error body.

    Raised by transport checks and by layer hooks (a wrong protocol-version header,
    a missing session). ``headers`` are added to the response (``WWW-Authenticate``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error: JsonRpcError | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error = error
        self.headers = dict(headers or {})
        self.body = body


@dataclass(slots=True)
class HTTPRequestInfo:
    """What a handler can learn about the HTTP request that carried its message.

    Reaches handlers as ``ctx.info``. ``principal`` is what the token verifier
    returned; ``session_id`` is ``None`` without sessions. ``close_sse_stream``, set
    when the request is answered on an SSE stream backed by an event store, ends that
    stream early: the handler keeps running and the client resumes with
    ``Last-Event-ID`` (``None`` where closing would lose messages).
    ``request_id`` is the id the client gave the single request this POST carried
    (before a stateless server remaps ids; ``None`` for a batch or a notification).
    ``disconnected`` is set if the client goes away before its answer is complete;
    the server does not cancel anything itself (a layer whose protocol says that a
    closed stream cancels the request watches it).
    """

    method: str
    path: str
    headers: Mapping[str, str]
    query: Mapping[str, str]
    client: tuple[str, int] | None = None
    session_id: str | None = None
    principal: Any = None
    state: dict[str, Any] = field(default_factory=dict)
    close_sse_stream: Callable[[], None] | None = None
    request_id: Any = None
    disconnected: anyio.Event | None = None

    def header(self, name: str, default: str | None = None) -> str | None:
        """A request header by case-insensitive name."""
        return self.headers.get(name.lower(), default)


def scope_headers(scope: ASGIScope) -> dict[str, str]:
    """The request headers as a dict with lowercase names (repeated names joined by ', ')."""
    raw = scope.get("headers", ())
    if not isinstance(raw, (list, tuple)):
        raw = list(raw)  # ASGI allows any iterable
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in raw}
    if len(headers) == len(raw):
        return headers  # no name repeated (the usual case)
    headers = {}
    for raw_name, raw_value in raw:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def scope_query(scope: ASGIScope) -> dict[str, str]:
    """The query parameters (last value wins)."""
    query = scope.get("query_string", b"")
    if not query:
        return {}
    return dict(parse_qsl(query.decode("latin-1")))


def accepts(accept: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` header admits ``media_type`` (``*/*`` and ``type/*`` count)."""
    if not accept:
        return False
    major = media_type.split("/", 1)[0]
    for item in accept.split(","):
        value = item.split(";", 1)[0].strip().lower()
        if value in (media_type, "*/*", f"{major}/*"):
            return True
    return False


def json_rpc_error_body(error: JsonRpcError, request_id: Any = None) -> bytes:
    """A JSON-RPC error response as bytes (id ``null`` unless given)."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error.to_object()}).encode()


class BodyTooLarge(Exception):
    """The request body exceeded the configured limit."""


class ClientDisconnected(ConnectionError):
    """The client went away (or was cut off) before its request body was complete."""


class BodyTooSlow(Exception):
    """The request body took longer than its deadline to arrive."""


_now = time.monotonic


async def read_body(receive: ASGIReceive, limit: int, timeout: float | None = None) -> bytes:
    """Read the whole request body; raises `BodyTooLarge` past ``limit`` bytes and
    `BodyTooSlow` if a chunk arrives more than ``timeout`` seconds after the read began.

    The deadline is checked per chunk, so it catches a trickling client under any ASGI
    server; one that stops sending altogether is the server's to cut off (``serve`` and
    ``running_server`` do, see ``_http_deadlines``)."""
    chunks: list[bytes] = []
    size = 0
    deadline = None if timeout is None else _now() + timeout
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected("client disconnected while sending the body")
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks) if len(chunks) != 1 else chunks[0]
        if deadline is not None and _now() > deadline:
            raise BodyTooSlow


async def send_response(
    send: ASGISend,
    status: int,
    body: bytes = b"",
    *,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    head: bool = False,
) -> None:
    """Send a complete HTTP response; ``head`` (the answer to a HEAD request) sends its
    headers, ``Content-Length`` included, without the body."""
    raw_headers = [(b"content-length", str(len(body)).encode())]
    if content_type is not None:
        raw_headers.append((b"content-type", content_type.encode()))
    for name, value in (headers or {}).items():
        raw_headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


@dataclass(slots=True)
class HTTPRequest:
    """A request to an extra route, body already read."""

    method: str
    path: str
    headers: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes
    path_params: dict[str, str]
    info: HTTPRequestInfo

    def json(self) -> Any:
        """The body parsed as JSON (raises ``ValueError`` if it is not)."""
        return json.loads(self.body)


@dataclass(slots=True)
class HTTPResponse:
    """A complete response from an extra route."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(
        cls, value: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> HTTPResponse:
        """A JSON response from any JSON-serialisable value (pydantic models included)."""
        import pydantic_core

        body = pydantic_core.to_json(value, by_alias=True, exclude_none=True)
        return cls(status, body, "application/json", dict(headers or {}))


@dataclass(slots=True)
class SSEResponse:
    """A streamed ``text/event-stream`` response from an extra route.

    ``events`` yields already-encoded SSE events (see `encode_event`).
    """

    events: AsyncIterator[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


RouteHandler = Callable[[HTTPRequest], Awaitable["HTTPResponse | SSEResponse"]]


@dataclass(slots=True)
class Route:
    """An extra HTTP route served beside the JSON-RPC endpoint.

    ``path`` may hold ``{name}`` segments (``/tasks/{id}``); a segment may also carry a
    literal suffix (``/tasks/{id}:cancel``).
    """

    path: str
    methods: tuple[str, ...]
    handler: RouteHandler
    _parts: list[tuple[str, str, str]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._parts = []
        for segment in self.path.strip("/").split("/"):
            if segment.startswith("{") and "}" in segment:
                name, _, suffix = segment[1:].partition("}")
                self._parts.append(("param", name, suffix))
            else:
                self._parts.append(("literal", segment, ""))

    def match(self, path: str) -> dict[str, str] | None:
        """The path parameters if ``path`` matches, else ``None``."""
        segments = path.strip("/").split("/")
        if len(segments) != len(self._parts):
            return None
        params: dict[str, str] = {}
        for segment, (kind, name, suffix) in zip(segments, self._parts, strict=True):
            if kind == "literal":
                if segment != name:
                    return None
            else:
                if suffix:
                    if not segment.endswith(suffix) or len(segment) == len(suffix):
                        return None
                    segment = segment[: -len(suffix)]
                if not segment:
                    return None
                params[name] = segment
        return params
