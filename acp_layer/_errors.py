"""ACP's error codes as `jsonrpc_core` error classes (schema.json ``ErrorCode``)::

    JsonRpcError
    ├── ParseError        -32700  ┐
    ├── InvalidRequest    -32600  │
    ├── MethodNotFound    -32601  │ jsonrpc_core's classes, through the parent table
    ├── InvalidParams     -32602  │ `jsonrpc_core.STANDARD_ERRORS`
    ├── InternalError     -32603  │
    ├── RequestCancelled  -32800  ┘ ($/cancel_request, internal cancellation)
    └── ServerError       -32000..-32099
        ├── AuthRequired      -32000  authentication is required first
        └── ResourceNotFound  -32002  a resource, such as a file, was not found

Rule: the classes live in `ACP_ERRORS`, ACP's own `jsonrpc_core.ErrorTable`, never in the
process-wide standard table: -32000 is jsonrpc_core's generic `ServerError` and -32002 means
"task not cancelable" in A2A, so a global registration would decide for every layer. ACP peers
are built with ``errors=ACP_ERRORS``; elsewhere use ``ACP_ERRORS.from_object(obj)`` or
``ACP_ERRORS.refine(exc)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from jsonrpc_core import STANDARD_ERRORS, ErrorTable, ServerError

from ._schema._protocol import ErrorCode

__all__ = [
    "ACP_ERRORS",
    "AuthRequired",
    "ResourceNotFound",
]

ACP_ERRORS: Final = ErrorTable("acp", parent=STANDARD_ERRORS)
"""ACP's error codes (and, through its parent, JSON-RPC's) and their classes."""


@ACP_ERRORS.register
class AuthRequired(ServerError):
    """-32000: authentication is required before this operation can be performed."""

    code = ErrorCode.AUTH_REQUIRED.value
    default_message = "Authentication required"

    auth_methods: Sequence[Any] = ()
    """The login methods the agent advertised (`acp_layer.TypedAuthMethod` items): set by
    `ClientConnection` when a session setup or a prompt is refused with this error."""


@ACP_ERRORS.register
class ResourceNotFound(ServerError):
    """-32002: a given resource, such as a file, was not found."""

    code = ErrorCode.RESOURCE_NOT_FOUND.value
    default_message = "Resource not found"
