"""jsonrpc_core: everything JSON-RPC 2.0, once, for every protocol layer.

Messages and their wire form (`parse`, `encode`), the error tree (`JsonRpcError` and
friends), methods declared as data (`RequestType`, `NotificationType`,
`MethodRegistry`), the bidirectional `Peer`, and transports behind one
`MessageStream` interface (in-memory, stdio, NDJSON over any byte stream).
"""

from typing import TYPE_CHECKING, Any

from ._bytestream import NdjsonStream
from ._context import RequestContext
from ._errors import (
    STANDARD_ERRORS,
    ConnectionClosed,
    ErrorTable,
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    LocalError,
    MethodNotFound,
    ParseError,
    RequestCancelled,
    RequestTimeout,
    ResultValidationError,
    RpcError,
    ServerError,
    TransportError,
    error_class_for_code,
    error_from_object,
    register_error,
)
from ._event_store import EventStore, InMemoryEventStore, Replay, SharedEventStore
from ._framing import DEFAULT_MAX_MESSAGE_SIZE, LineFramer, Oversized
from ._http_common import (
    HTTPError,
    HTTPRequest,
    HTTPRequestInfo,
    HTTPResponse,
    Route,
    SSEResponse,
)
from ._http_security import (
    BearerAuth,
    OriginPolicy,
    ScopeRequirement,
    TokenVerifier,
    principal_scopes,
    without_credentials,
)
from ._http_serve import running_server, serve
from ._http_server import HTTPServerOptions, JsonRpcHTTPApp, ServeConnection
from ._http_sessions import HTTPSession, SessionPolicy
from ._methods import (
    MethodRegistry,
    NotificationType,
    RequestType,
    format_validation_error,
)
from ._peer import CancelHook, Peer, RequestFilter
from ._sse import SSEDecoder, SSEError, SSEEvent, encode_comment, encode_event
from ._stdio import FdReceiveStream, FdSendStream, StdioProcess, spawn_stdio, stdio_server
from ._tap import JsonLinesSink, TappedStream, TapRecord, WireTap
from ._trace_html import trace_to_html, write_trace_views
from ._trace_render import TraceEvent, read_trace, trace_events, trace_to_mermaid
from ._transport import MemoryMessageStream, MessageStream, Received, encode_payload, memory_pair
from ._wire import (
    Batch,
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
    encode_batch,
    parse,
    parse_object,
    recover_id,
)

if TYPE_CHECKING:
    from ._http_client import (
        HTTPSSETransport,
        HTTPStatusError,
        SessionExpired,
        StreamableHTTPTransport,
    )
    from ._pg_event_store import PostgresEventStore

# The HTTP clients pull in httpx; processes that never make an HTTP call skip it.
_LAZY = {
    "HTTPSSETransport": "._http_client",
    "HTTPStatusError": "._http_client",
    "SessionExpired": "._http_client",
    "StreamableHTTPTransport": "._http_client",
    # Needs the postgres extra (psycopg): loaded on first use only.
    "PostgresEventStore": "._pg_event_store",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'jsonrpc_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "STANDARD_ERRORS",
    "Batch",
    "BearerAuth",
    "CancelHook",
    "ConnectionClosed",
    "ErrorResponse",
    "ErrorTable",
    "EventStore",
    "FdReceiveStream",
    "FdSendStream",
    "HTTPError",
    "HTTPRequest",
    "HTTPRequestInfo",
    "HTTPResponse",
    "HTTPSSETransport",
    "HTTPServerOptions",
    "HTTPSession",
    "HTTPStatusError",
    "InMemoryEventStore",
    "Incoming",
    "InternalError",
    "InvalidMessage",
    "InvalidParams",
    "InvalidRequest",
    "JsonLinesSink",
    "JsonRpcError",
    "JsonRpcHTTPApp",
    "LineFramer",
    "LocalError",
    "MemoryMessageStream",
    "Message",
    "MessageStream",
    "MethodNotFound",
    "MethodRegistry",
    "NdjsonStream",
    "Notification",
    "NotificationType",
    "OriginPolicy",
    "Oversized",
    "ParseError",
    "Peer",
    "PostgresEventStore",
    "Received",
    "Replay",
    "Request",
    "RequestCancelled",
    "RequestContext",
    "RequestFilter",
    "RequestId",
    "RequestTimeout",
    "RequestType",
    "Response",
    "ResultValidationError",
    "Route",
    "RpcError",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "SSEResponse",
    "ScopeRequirement",
    "ServeConnection",
    "ServerError",
    "SessionExpired",
    "SessionPolicy",
    "SharedEventStore",
    "StdioProcess",
    "StreamEnd",
    "StreamableHTTPTransport",
    "TapRecord",
    "TappedStream",
    "TokenVerifier",
    "TraceEvent",
    "TransportError",
    "WireTap",
    "encode",
    "encode_batch",
    "encode_comment",
    "encode_event",
    "encode_payload",
    "error_class_for_code",
    "error_from_object",
    "format_validation_error",
    "memory_pair",
    "parse",
    "parse_object",
    "principal_scopes",
    "read_trace",
    "recover_id",
    "register_error",
    "running_server",
    "serve",
    "spawn_stdio",
    "stdio_server",
    "trace_events",
    "trace_to_html",
    "trace_to_mermaid",
    "without_credentials",
    "write_trace_views",
]
