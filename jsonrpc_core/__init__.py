"""jsonrpc_core: everything JSON-RPC 2.0, once, for every protocol layer.

Messages and their wire form (`parse`, `encode`), the error tree (`JsonRpcError` and
friends), methods declared as data (`RequestType`, `NotificationType`,
`MethodRegistry`), the bidirectional `Peer`, and transports behind one
`MessageStream` interface (in-memory, stdio, NDJSON over any byte stream).
"""

from ._bytestream import NdjsonStream
from ._context import RequestContext
from ._errors import (
    ConnectionClosed,
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
from ._framing import DEFAULT_MAX_MESSAGE_SIZE, LineFramer, Oversized
from ._methods import (
    MethodRegistry,
    NotificationType,
    RequestType,
    format_validation_error,
)
from ._peer import CancelHook, Peer, RequestFilter
from ._stdio import FdReceiveStream, FdSendStream, StdioProcess, spawn_stdio, stdio_server
from ._tap import JsonLinesSink, TappedStream, TapRecord, WireTap
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
    encode,
    encode_batch,
    parse,
    parse_object,
    recover_id,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "Batch",
    "CancelHook",
    "ConnectionClosed",
    "ErrorResponse",
    "FdReceiveStream",
    "FdSendStream",
    "Incoming",
    "InternalError",
    "InvalidMessage",
    "InvalidParams",
    "InvalidRequest",
    "JsonLinesSink",
    "JsonRpcError",
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
    "Oversized",
    "ParseError",
    "Peer",
    "Received",
    "Request",
    "RequestCancelled",
    "RequestContext",
    "RequestFilter",
    "RequestId",
    "RequestTimeout",
    "RequestType",
    "Response",
    "ResultValidationError",
    "RpcError",
    "ServerError",
    "StdioProcess",
    "TapRecord",
    "TappedStream",
    "TransportError",
    "WireTap",
    "encode",
    "encode_batch",
    "encode_payload",
    "error_class_for_code",
    "error_from_object",
    "format_validation_error",
    "memory_pair",
    "parse",
    "parse_object",
    "recover_id",
    "register_error",
    "spawn_stdio",
    "stdio_server",
]
