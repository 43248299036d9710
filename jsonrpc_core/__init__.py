"""jsonrpc_core: everything JSON-RPC 2.0, once, for every protocol layer.

Messages and their wire form (`parse`, `encode`), the error tree (`JsonRpcError` and
friends), methods declared as data (`RequestType`, `NotificationType`,
`MethodRegistry`), the bidirectional `Peer`, and transports behind one
`MessageStream` interface (in-memory, stdio, NDJSON over any byte stream).
"""

# Every name is loaded on first use (PEP 562), so a process pays only for the parts it
# touches: a stdio peer never imports the HTTP server, httpx, the trace renderers or the
# event stores. `TYPE_CHECKING` keeps the names visible to type checkers.

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._bytestream import NdjsonStream
    from ._context import RequestContext
    from ._deadline import Deadline
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
    from ._http1 import HTTP1Transport, new_async_client
    from ._http_caller import HTTPCaller
    from ._http_client import (
        HTTPSSETransport,
        HTTPStatusError,
        SessionExpired,
        StreamableHTTPTransport,
    )
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
    from ._pg_event_store import PostgresEventStore
    from ._sse import SSEDecoder, SSEError, SSEEvent, encode_comment, encode_event
    from ._stdio import FdReceiveStream, FdSendStream, StdioProcess, spawn_stdio, stdio_server
    from ._tap import JsonLinesSink, TappedStream, TapRecord, WireTap
    from ._trace_html import trace_to_html, write_trace_views
    from ._trace_render import TraceEvent, read_trace, trace_events, trace_to_mermaid
    from ._transport import (
        MemoryMessageStream,
        MessageStream,
        Received,
        encode_payload,
        memory_pair,
    )
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

_LAZY: dict[str, str] = {
    "NdjsonStream": "_bytestream",
    "RequestContext": "_context",
    "ConnectionClosed": "_errors",
    "Deadline": "_deadline",
    "ErrorTable": "_errors",
    "InternalError": "_errors",
    "InvalidParams": "_errors",
    "InvalidRequest": "_errors",
    "JsonRpcError": "_errors",
    "LocalError": "_errors",
    "MethodNotFound": "_errors",
    "ParseError": "_errors",
    "RequestCancelled": "_errors",
    "RequestTimeout": "_errors",
    "ResultValidationError": "_errors",
    "RpcError": "_errors",
    "STANDARD_ERRORS": "_errors",
    "ServerError": "_errors",
    "TransportError": "_errors",
    "error_class_for_code": "_errors",
    "error_from_object": "_errors",
    "register_error": "_errors",
    "EventStore": "_event_store",
    "InMemoryEventStore": "_event_store",
    "Replay": "_event_store",
    "SharedEventStore": "_event_store",
    "DEFAULT_MAX_MESSAGE_SIZE": "_framing",
    "LineFramer": "_framing",
    "Oversized": "_framing",
    "HTTPSSETransport": "_http_client",
    "HTTPStatusError": "_http_client",
    "SessionExpired": "_http_client",
    "StreamableHTTPTransport": "_http_client",
    "HTTPError": "_http_common",
    "HTTPRequest": "_http_common",
    "HTTPRequestInfo": "_http_common",
    "HTTPResponse": "_http_common",
    "Route": "_http_common",
    "SSEResponse": "_http_common",
    "BearerAuth": "_http_security",
    "OriginPolicy": "_http_security",
    "ScopeRequirement": "_http_security",
    "TokenVerifier": "_http_security",
    "principal_scopes": "_http_security",
    "without_credentials": "_http_security",
    "HTTP1Transport": "_http1",
    "HTTPCaller": "_http_caller",
    "new_async_client": "_http1",
    "running_server": "_http_serve",
    "serve": "_http_serve",
    "HTTPServerOptions": "_http_server",
    "JsonRpcHTTPApp": "_http_server",
    "ServeConnection": "_http_server",
    "HTTPSession": "_http_sessions",
    "SessionPolicy": "_http_sessions",
    "MethodRegistry": "_methods",
    "NotificationType": "_methods",
    "RequestType": "_methods",
    "format_validation_error": "_methods",
    "CancelHook": "_peer",
    "Peer": "_peer",
    "RequestFilter": "_peer",
    "PostgresEventStore": "_pg_event_store",
    "SSEDecoder": "_sse",
    "SSEError": "_sse",
    "SSEEvent": "_sse",
    "encode_comment": "_sse",
    "encode_event": "_sse",
    "FdReceiveStream": "_stdio",
    "FdSendStream": "_stdio",
    "StdioProcess": "_stdio",
    "spawn_stdio": "_stdio",
    "stdio_server": "_stdio",
    "JsonLinesSink": "_tap",
    "TapRecord": "_tap",
    "TappedStream": "_tap",
    "WireTap": "_tap",
    "trace_to_html": "_trace_html",
    "write_trace_views": "_trace_html",
    "TraceEvent": "_trace_render",
    "read_trace": "_trace_render",
    "trace_events": "_trace_render",
    "trace_to_mermaid": "_trace_render",
    "MemoryMessageStream": "_transport",
    "MessageStream": "_transport",
    "Received": "_transport",
    "encode_payload": "_transport",
    "memory_pair": "_transport",
    "Batch": "_wire",
    "ErrorResponse": "_wire",
    "Incoming": "_wire",
    "InvalidMessage": "_wire",
    "Message": "_wire",
    "Notification": "_wire",
    "Request": "_wire",
    "RequestId": "_wire",
    "Response": "_wire",
    "StreamEnd": "_wire",
    "encode": "_wire",
    "encode_batch": "_wire",
    "parse": "_wire",
    "parse_object": "_wire",
    "recover_id": "_wire",
}
"""Exported name -> the submodule (relative to this package) that defines it."""


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module("." + module_name, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "STANDARD_ERRORS",
    "Batch",
    "BearerAuth",
    "CancelHook",
    "ConnectionClosed",
    "Deadline",
    "ErrorResponse",
    "ErrorTable",
    "EventStore",
    "FdReceiveStream",
    "FdSendStream",
    "HTTP1Transport",
    "HTTPCaller",
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
    "new_async_client",
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
