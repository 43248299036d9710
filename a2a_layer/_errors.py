"""A2A errors and the one table that maps each to every binding (spec 3.3.2, 5.4, 9.5).

::

    JsonRpcError (jsonrpc_core)
    └── A2AError                          carries ``reason`` and ErrorInfo ``metadata``
        ├── TaskNotFound                    -32001  404  NOT_FOUND
        ├── TaskNotCancelable               -32002  400  FAILED_PRECONDITION
        ├── PushNotificationNotSupported    -32003  400  FAILED_PRECONDITION
        ├── UnsupportedOperation            -32004  400  FAILED_PRECONDITION
        ├── ContentTypeNotSupported         -32005  400  INVALID_ARGUMENT
        ├── InvalidAgentResponse            -32006  500  INTERNAL
        ├── ExtendedAgentCardNotConfigured  -32007  400  FAILED_PRECONDITION
        ├── ExtensionSupportRequired        -32008  400  FAILED_PRECONDITION
        └── VersionNotSupported             -32009  400  FAILED_PRECONDITION

The classes live in `A2A_ERRORS`, the layer's `jsonrpc_core.ErrorTable` (parent: the
standard table), which A2A peers use to turn received error objects back into these
classes; codes -32001.. mean other things in other protocols, so nothing is registered
globally. The standard JSON-RPC errors keep their `jsonrpc_core` classes and get rows
in the same `ERROR_TABLE`. Rules:

1. An `A2AError` built without ``data`` carries the spec's ``data`` array: one
   ``google.rpc.ErrorInfo`` with its reason, domain ``a2a-protocol.org`` and metadata.
2. A reason is the spec's error name in UPPER_SNAKE_CASE without the ``Error`` suffix
   (spec 10.6, 11.6); the standard errors follow the same rule from their 9.5 names.
3. ErrorInfo metadata is ``map<string, string>``: values are turned into strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from jsonrpc_core import (
    STANDARD_ERRORS,
    ErrorTable,
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    ParseError,
    ServerError,
)

__all__ = [
    "A2A_ERRORS",
    "A2A_ERROR_DOMAIN",
    "BAD_REQUEST_TYPE",
    "ERROR_INFO_TYPE",
    "ERROR_TABLE",
    "A2AError",
    "ContentTypeNotSupported",
    "ErrorRow",
    "ExtendedAgentCardNotConfigured",
    "ExtensionSupportRequired",
    "InvalidAgentResponse",
    "PushNotificationNotSupported",
    "TaskNotCancelable",
    "TaskNotFound",
    "UnsupportedOperation",
    "VersionNotSupported",
    "a2a_error_from_object",
    "bad_request_detail",
    "error_data",
    "error_from_http",
    "error_from_reason",
    "error_info",
    "error_row",
    "grpc_status_for",
    "http_error_body",
    "http_status_for",
    "reason_for",
]

A2A_ERROR_DOMAIN = "a2a-protocol.org"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"

_UNSET: Any = object()

A2A_ERRORS = ErrorTable("a2a", parent=STANDARD_ERRORS)
"""Code -> class for A2A peers: the A2A errors over the standard JSON-RPC ones."""


class A2AError(JsonRpcError):
    """An A2A-specific error: a JSON-RPC error with an ErrorInfo ``reason``.

    ``metadata`` (e.g. ``{"taskId": "t-1"}``) goes into the ErrorInfo detail.
    """

    reason: ClassVar[str] = ""

    def __init__(
        self,
        message: str | None = None,
        data: Any = _UNSET,
        *,
        code: int | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.metadata: dict[str, str] = {k: str(v) for k, v in (metadata or {}).items()}
        if data is _UNSET:
            super().__init__(message, code=code)
            self.data = error_data(self)
        else:
            super().__init__(message, data, code=code)


@A2A_ERRORS.register
class TaskNotFound(A2AError):
    """-32001: the task id does not exist or is not accessible."""

    code = -32001
    default_message = "Task not found"
    reason = "TASK_NOT_FOUND"


@A2A_ERRORS.register
class TaskNotCancelable(A2AError):
    """-32002: the task is not in a cancelable state."""

    code = -32002
    default_message = "Task cannot be canceled"
    reason = "TASK_NOT_CANCELABLE"


@A2A_ERRORS.register
class PushNotificationNotSupported(A2AError):
    """-32003: the agent does not support push notifications."""

    code = -32003
    default_message = "Push Notification is not supported"
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"


@A2A_ERRORS.register
class UnsupportedOperation(A2AError):
    """-32004: the operation, or an aspect of it, is not supported."""

    code = -32004
    default_message = "This operation is not supported"
    reason = "UNSUPPORTED_OPERATION"


@A2A_ERRORS.register
class ContentTypeNotSupported(A2AError):
    """-32005: a media type in the request is not supported."""

    code = -32005
    default_message = "Incompatible content types"
    reason = "CONTENT_TYPE_NOT_SUPPORTED"


@A2A_ERRORS.register
class InvalidAgentResponse(A2AError):
    """-32006: the agent's response does not conform to the specification."""

    code = -32006
    default_message = "Invalid agent response"
    reason = "INVALID_AGENT_RESPONSE"


@A2A_ERRORS.register
class ExtendedAgentCardNotConfigured(A2AError):
    """-32007: the agent has no extended agent card configured."""

    code = -32007
    default_message = "Extended agent card is not configured"
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"


@A2A_ERRORS.register
class ExtensionSupportRequired(A2AError):
    """-32008: a required extension was not declared by the client."""

    code = -32008
    default_message = "Extension support required"
    reason = "EXTENSION_SUPPORT_REQUIRED"


@A2A_ERRORS.register
class VersionNotSupported(A2AError):
    """-32009: the requested ``A2A-Version`` is not supported."""

    code = -32009
    default_message = "Version not supported"
    reason = "VERSION_NOT_SUPPORTED"


@dataclass(frozen=True)
class ErrorRow:
    """One error in every binding: JSON-RPC code, HTTP status, gRPC status, reason."""

    spec_name: str
    cls: type[JsonRpcError]
    code: int
    http_status: int
    grpc_status: str
    reason: str


def _row(name: str, cls: type[JsonRpcError], http: int, grpc: str, reason: str = "") -> ErrorRow:
    return ErrorRow(name, cls, cls.code, http, grpc, reason or getattr(cls, "reason", ""))


_NOT_FOUND, _PRECONDITION, _ARGUMENT, _INTERNAL = (
    "NOT_FOUND",
    "FAILED_PRECONDITION",
    "INVALID_ARGUMENT",
    "INTERNAL",
)

ERROR_TABLE: tuple[ErrorRow, ...] = (
    # Standard JSON-RPC errors (spec 9.5); HTTP/gRPC per the categories of spec 3.3.2.
    _row("JSONParseError", ParseError, 400, _ARGUMENT, "JSON_PARSE"),
    _row("InvalidRequestError", InvalidRequest, 400, _ARGUMENT, "INVALID_REQUEST"),
    _row("MethodNotFoundError", MethodNotFound, 404, _NOT_FOUND, "METHOD_NOT_FOUND"),
    _row("InvalidParamsError", InvalidParams, 400, _ARGUMENT, "INVALID_PARAMS"),
    _row("InternalError", InternalError, 500, _INTERNAL, "INTERNAL"),
    # A2A-specific errors (spec 5.4); the reason is the class's.
    _row("TaskNotFoundError", TaskNotFound, 404, _NOT_FOUND),
    _row("TaskNotCancelableError", TaskNotCancelable, 400, _PRECONDITION),
    _row("PushNotificationNotSupportedError", PushNotificationNotSupported, 400, _PRECONDITION),
    _row("UnsupportedOperationError", UnsupportedOperation, 400, _PRECONDITION),
    _row("ContentTypeNotSupportedError", ContentTypeNotSupported, 400, _ARGUMENT),
    _row("InvalidAgentResponseError", InvalidAgentResponse, 500, _INTERNAL),
    _row("ExtendedAgentCardNotConfiguredError", ExtendedAgentCardNotConfigured, 400, _PRECONDITION),
    _row("ExtensionSupportRequiredError", ExtensionSupportRequired, 400, _PRECONDITION),
    _row("VersionNotSupportedError", VersionNotSupported, 400, _PRECONDITION),
)
"""Every error this layer knows, in every binding: the one place these facts live."""

_BY_CODE = {row.code: row for row in ERROR_TABLE}
_BY_REASON = {row.reason: row for row in ERROR_TABLE}
# Reasons other implementations send for the standard errors (the a2a-sdk says
# INTERNAL_ERROR); accepted when reading, never written.
_BY_REASON.setdefault("INTERNAL_ERROR", _BY_CODE[InternalError.code])
_FALLBACK = ErrorRow("ServerError", ServerError, ServerError.code, 500, "INTERNAL", "INTERNAL")


def error_row(err: JsonRpcError | type[JsonRpcError] | int) -> ErrorRow:
    """The table row for an error, an error class or a JSON-RPC code.

    Unknown codes (implementation-defined server errors) get a 500/INTERNAL row.
    """
    code = err if isinstance(err, int) else err.code
    return _BY_CODE.get(code, _FALLBACK)


def http_status_for(err: JsonRpcError | type[JsonRpcError] | int) -> int:
    """The HTTP status of the HTTP+JSON binding for ``err`` (spec 5.4)."""
    return error_row(err).http_status


def grpc_status_for(err: JsonRpcError | type[JsonRpcError] | int) -> str:
    """The gRPC status name for ``err`` (spec 5.4)."""
    return error_row(err).grpc_status


def reason_for(err: JsonRpcError | type[JsonRpcError] | int) -> str:
    """The ``google.rpc.ErrorInfo`` reason for ``err``."""
    return error_row(err).reason


def error_data(err: JsonRpcError, **metadata: Any) -> list[dict[str, Any]]:
    """The spec's error ``data``: ``[ErrorInfo]`` with the reason, domain and metadata.

    Metadata is the error's own (`A2AError.metadata`) updated with ``metadata``.
    """
    meta: dict[str, str] = dict(getattr(err, "metadata", None) or {})
    meta.update((k, str(v)) for k, v in metadata.items())
    info: dict[str, Any] = {
        "@type": ERROR_INFO_TYPE,
        "reason": reason_for(err),
        "domain": A2A_ERROR_DOMAIN,
    }
    if meta:
        info["metadata"] = meta
    return [info]


def bad_request_detail(violations: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """A ``google.rpc.BadRequest`` detail from ``(field, description)`` pairs (spec 9.5)."""
    return {
        "@type": BAD_REQUEST_TYPE,
        "fieldViolations": [{"field": f, "description": d} for f, d in violations],
    }


def error_info(details: Any) -> dict[str, Any] | None:
    """The first ``google.rpc.ErrorInfo`` in an error's ``data``/``details``, if any."""
    if isinstance(details, JsonRpcError):
        details = details.data if details.has_data else None
    if isinstance(details, dict):
        details = [details]
    if not isinstance(details, list):
        return None
    for item in details:
        if isinstance(item, dict) and item.get("@type") == ERROR_INFO_TYPE:
            return item
    return None


def error_from_reason(
    reason: str, message: str | None = None, data: Any = _UNSET
) -> JsonRpcError | None:
    """The error a ``google.rpc.ErrorInfo`` reason stands for, or ``None`` if unknown."""
    row = _BY_REASON.get(reason)
    if row is None:
        return None
    if data is _UNSET:
        return row.cls(message)
    return row.cls(message, data)


def a2a_error_from_object(obj: Any) -> JsonRpcError:
    """The right error class for a received JSON-RPC error object (via `A2A_ERRORS`).

    The error carries exactly the ``data`` received (none if there was none).
    """
    return A2A_ERRORS.from_object(obj)


def http_error_body(err: JsonRpcError) -> dict[str, Any]:
    """The HTTP+JSON error body: a ``google.rpc.Status`` under ``error`` (spec 11.6).

    ``details`` are the typed items (those with ``@type``) of the error's ``data``, with
    an ErrorInfo built by `error_data` put first when ``data`` has none.
    """
    details: list[dict[str, Any]] = []
    if err.has_data and isinstance(err.data, list):
        details = [d for d in err.data if isinstance(d, dict) and "@type" in d]
    if error_info(details) is None:
        details = error_data(err) + details
    row = error_row(err)
    return {
        "error": {
            "code": row.http_status,
            "status": row.grpc_status,
            "message": err.message,
            "details": details,
        }
    }


def error_from_http(status: int, body: Any) -> JsonRpcError:
    """The error an HTTP+JSON error response stands for.

    The ErrorInfo reason decides; without a known one, 5xx is `InternalError` and any
    other status `InvalidRequest`, with the body's message.
    """
    status_obj = body.get("error") if isinstance(body, dict) else None
    if not isinstance(status_obj, dict):
        status_obj = body if isinstance(body, dict) else {}
    message = status_obj.get("message")
    message = message if isinstance(message, str) else f"HTTP {status}"
    details = status_obj.get("details")
    info = error_info(details)
    data = details if isinstance(details, list) else _UNSET
    if info is not None and isinstance(info.get("reason"), str):
        err = error_from_reason(info["reason"], message, data)
        if err is not None:
            return err
    cls: type[JsonRpcError] = InternalError if status >= 500 else InvalidRequest
    return cls(message) if data is _UNSET else cls(message, data)
