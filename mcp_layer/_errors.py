"""The JSON-RPC error codes MCP defines beyond JSON-RPC's own, as `jsonrpc_core` errors::

    JsonRpcError
    └── ServerError                  -32000..-32099
        ├── ResourceNotFound         -32002  resources/read of an unknown URI (data: {"uri"})
        │                                    (2025-11-25 and earlier; -32602 since 2026-07-28)
        ├── URLElicitationRequired   -32042  complete these URL elicitations, then retry
        ├── HeaderMismatch           -32020  HTTP headers disagree with the body (2026-07-28)
        ├── MissingRequiredClientCapability
        │                            -32021  data: {"requiredCapabilities": {...}}
        └── UnsupportedProtocolVersion
                                     -32022  data: {"supported": [...], "requested": ...}

Over Streamable HTTP a 2026-07-28 error answer has the status of `HTTP_STATUS_BY_CODE`
(400 for the client's mistakes, 404 for an unknown method).

Rules:

1. The classes live in `MCP_ERRORS`, MCP's own `jsonrpc_core.ErrorTable` (parent:
   `jsonrpc_core.STANDARD_ERRORS`), not in the process-wide standard table: -32002 means
   "task not cancelable" in A2A, so a global registration would decide for every layer.
   MCP peers are built with ``errors=MCP_ERRORS``; elsewhere use
   ``MCP_ERRORS.from_object(obj)`` or ``MCP_ERRORS.refine(exc)``.
2. ``-1`` ("user rejected sampling request" on the sampling page) gets no class: the spec
   only says a client SHOULD use it, and a class would not tell callers anything more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pydantic

from jsonrpc_core import STANDARD_ERRORS, ErrorTable, ServerError

if TYPE_CHECKING:
    # Loaded where used: a server that never elicits never loads the elicitation models.
    from ._types._elicitation import ElicitRequestURLParams

__all__ = [
    "HEADER_MISMATCH",
    "HTTP_STATUS_BY_CODE",
    "MCP_ERRORS",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "MODERN_ERROR_CODES",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "HeaderMismatch",
    "MissingRequiredClientCapability",
    "ResourceNotFound",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
]

RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

MODERN_ERROR_CODES = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
"""Codes only a 2026-07-28 server sends: hearing one tells a client the server's era."""

HTTP_STATUS_BY_CODE: dict[int, int] = {
    -32700: 400,
    -32600: 400,
    -32602: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    -32601: 404,
}
"""The HTTP status of a 2026-07-28 JSON error answer, by error code (others: 200)."""

MCP_ERRORS = ErrorTable("mcp", parent=STANDARD_ERRORS)
"""MCP's error codes (and, through its parent, JSON-RPC's) and their classes."""


@MCP_ERRORS.register
class ResourceNotFound(ServerError):
    """-32002: the requested resource does not exist; ``data`` names its ``uri``."""

    code = RESOURCE_NOT_FOUND
    default_message = "Resource not found"

    @classmethod
    def for_uri(cls, uri: str, message: str | None = None) -> ResourceNotFound:
        """The error for ``uri``, with ``{"uri": uri}`` as its data."""
        return cls(message, {"uri": uri})

    @property
    def uri(self) -> str | None:
        """The missing resource's URI, if the error carries one."""
        data = self.data if self.has_data else None
        uri = data.get("uri") if isinstance(data, dict) else None
        return uri if isinstance(uri, str) else None


@MCP_ERRORS.register
class URLElicitationRequired(ServerError):
    """-32042: the request needs URL-mode elicitations completed before it is retried."""

    code = URL_ELICITATION_REQUIRED
    default_message = "URL elicitation required"

    @classmethod
    def for_elicitations(
        cls, elicitations: Sequence[ElicitRequestURLParams], message: str | None = None
    ) -> URLElicitationRequired:
        """The error listing ``elicitations`` in its data, as the schema requires."""
        from ._types._elicitation import URLElicitationRequiredErrorData

        data = URLElicitationRequiredErrorData(elicitations=list(elicitations))
        return cls(message, data.model_dump(by_alias=True, exclude_none=True, mode="json"))

    @property
    def elicitations(self) -> list[ElicitRequestURLParams]:
        """The elicitations in ``data``; empty if the peer sent none or a malformed list."""
        from ._types._elicitation import URLElicitationRequiredErrorData

        data: Any = self.data if self.has_data else None
        try:
            return URLElicitationRequiredErrorData.model_validate(data).elicitations
        except pydantic.ValidationError:
            return []


@MCP_ERRORS.register
class HeaderMismatch(ServerError):
    """-32020: an ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` or ``Mcp-Param-*``
    header is missing, malformed, or disagrees with the request body."""

    code = HEADER_MISMATCH
    default_message = "Header mismatch"


@MCP_ERRORS.register
class MissingRequiredClientCapability(ServerError):
    """-32021: serving the request needs a capability the client did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    default_message = "Missing required client capability"

    @classmethod
    def for_capabilities(
        cls, required: dict[str, Any], message: str | None = None
    ) -> MissingRequiredClientCapability:
        """The error naming ``required`` (a ``ClientCapabilities`` object, e.g.
        ``{"sampling": {}}``) in its data."""
        names = ", ".join(sorted(required))
        return cls(
            message or f"Missing required client capability: {names}",
            {"requiredCapabilities": required},
        )

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """The capabilities the server asked for (empty if the data lacks them)."""
        data = self.data if self.has_data else None
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        return required if isinstance(required, dict) else {}


@MCP_ERRORS.register
class UnsupportedProtocolVersion(ServerError):
    """-32022: the server does not speak the requested protocol version."""

    code = UNSUPPORTED_PROTOCOL_VERSION
    default_message = "Unsupported protocol version"

    @classmethod
    def for_version(cls, requested: str, supported: Sequence[str]) -> UnsupportedProtocolVersion:
        """The error for ``requested``, listing the ``supported`` versions."""
        return cls(
            f"Unsupported protocol version: {requested!r}",
            {"supported": list(supported), "requested": requested},
        )

    @property
    def supported(self) -> list[str]:
        """The versions the server named (empty if the data lacks them)."""
        data = self.data if self.has_data else None
        versions = data.get("supported") if isinstance(data, dict) else None
        if not isinstance(versions, list):
            return []
        return [v for v in versions if isinstance(v, str)]
