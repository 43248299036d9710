"""A2A errors as gRPC statuses and back (spec 5.4, 10.6).

A server ends a failed call with the status code of the error's `ERROR_TABLE` row, the
error's message, and a ``google.rpc.Status`` in the ``grpc-status-details-bin``
trailer whose details are a ``google.rpc.ErrorInfo`` (reason, domain
``a2a-protocol.org``, metadata) followed by any typed details the error carries
(``google.rpc.BadRequest`` for invalid params). A client reads the ErrorInfo reason
back into the `A2A_ERRORS` class; without one, the status code decides. Authentication
failures are ``UNAUTHENTICATED`` (401) and ``PERMISSION_DENIED`` (403), raised on the
client as `jsonrpc_core.HTTPStatusError` with that status, as the HTTP bindings do.

The 0.3 service (``a2a.v1``) had no ErrorInfo: its status message is
``"<spec error name>: <message>"`` (``TaskNotFoundError: ...``), as 0.3 peers write and
read it; our 0.3 answers carry the ErrorInfo as well, and a client reads either.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.rpc import error_details_pb2, status_pb2

from jsonrpc_core import (
    HTTPStatusError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    RequestTimeout,
    TransportError,
)

from .._errors import ERROR_TABLE, error_from_reason, error_info, error_row, http_error_body

__all__ = ["STATUS_DETAILS_KEY", "error_from_status", "status_of"]

STATUS_DETAILS_KEY = "grpc-status-details-bin"

# The detail types a server packs; imported for the default pool's Any resolution.
_DETAIL_TYPES = (error_details_pb2.ErrorInfo, error_details_pb2.BadRequest)

_AUTH_CODES = {401: grpc.StatusCode.UNAUTHENTICATED, 403: grpc.StatusCode.PERMISSION_DENIED}
_AUTH_STATUS = {code: status for status, code in _AUTH_CODES.items()}


def _packed(detail: dict[str, Any]) -> any_pb2.Any | None:
    packed = any_pb2.Any()
    try:
        json_format.ParseDict(detail, packed, ignore_unknown_fields=True)
    except json_format.ParseError:
        return None  # a detail type this process does not know: left out
    return packed


_BY_SPEC_NAME = {row.spec_name: row for row in ERROR_TABLE}


def status_of(
    err: JsonRpcError, version: str = "1.0"
) -> tuple[grpc.StatusCode, str, tuple[tuple[str, bytes], ...]]:
    """The gRPC status code, message and trailing metadata that answer ``err``."""
    row = error_row(err)
    code = grpc.StatusCode[row.grpc_status]
    message = f"{row.spec_name}: {err.message}" if version == "0.3" else err.message
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in http_error_body(err)["error"]["details"]:
        packed = _packed(detail)
        if packed is not None:
            status.details.append(packed)
    return code, message, ((STATUS_DETAILS_KEY, status.SerializeToString()),)


def auth_status(http_status: int) -> grpc.StatusCode:
    """The status code of an authentication failure (HTTP 401 or 403)."""
    return _AUTH_CODES.get(http_status, grpc.StatusCode.UNAUTHENTICATED)


def _details(call: grpc.aio.AioRpcError) -> list[dict[str, Any]] | None:
    for key, value in call.trailing_metadata() or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            found = []
            for detail in status.details:
                try:
                    found.append(json_format.MessageToDict(detail))
                except (TypeError, json_format.Error):
                    continue  # an unknown detail type
            return found
    return None


_BY_CODE: dict[grpc.StatusCode, type[JsonRpcError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidParams,
    grpc.StatusCode.UNIMPLEMENTED: MethodNotFound,
    grpc.StatusCode.INTERNAL: InternalError,
    grpc.StatusCode.UNKNOWN: InternalError,
}


def error_from_status(call: grpc.aio.AioRpcError, what: str) -> Exception:
    """The exception a failed call stands for (``what`` names the call in messages)."""
    code = call.code()
    message = call.details() or code.name
    if code in _AUTH_STATUS:
        return HTTPStatusError(_AUTH_STATUS[code], message)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return RequestTimeout(f"{what}: no answer before the deadline")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return TransportError(f"{what} failed: {code.name}: {message}")
    details = _details(call)
    info = error_info(details)
    name, _, rest = message.partition(": ")
    named = _BY_SPEC_NAME.get(name)
    if named is not None:  # the 0.3 form of the message
        message = rest
    if info is not None and isinstance(info.get("reason"), str):
        err = error_from_reason(info["reason"], message, details)
        if err is not None:
            return err
    if named is not None:
        return named.cls(message) if details is None else named.cls(message, details)
    cls = _BY_CODE.get(code, InvalidRequest)
    return cls(message) if details is None else cls(message, details)
