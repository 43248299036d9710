"""Protocol-level objects: the JSON-RPC error object, error codes and ``$/cancel_request``.

Error codes map to exception classes in ``acp_layer._errors``; the `Error` model is the wire
object for code that needs to hold one as data.
"""

from enum import IntEnum
from typing import Any

from ._base import ACPModel, RequestId

__all__ = [
    "CancelRequestNotification",
    "Error",
    "ErrorCode",
]


class ErrorCode(IntEnum):
    """Predefined error codes for common JSON-RPC and ACP-specific errors.

    Any other integer is allowed on the wire ("other undefined error code").
    """

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800
    """Execution was aborted by ``$/cancel_request`` or internal cancellation."""
    AUTH_REQUIRED = -32000
    """Authentication is required before this operation can be performed."""
    RESOURCE_NOT_FOUND = -32002
    """A given resource, such as a file, was not found."""


class Error(ACPModel):
    """JSON-RPC error object."""

    code: int
    message: str
    data: Any = None


class CancelRequestNotification(ACPModel):
    """Params of ``$/cancel_request``: cancel an ongoing request by its id.

    The receiver may stop the work, but must still answer the original request, with a
    result or with error -32800 (request cancelled).
    """

    request_id: RequestId
