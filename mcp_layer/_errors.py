"""The JSON-RPC error codes MCP defines beyond JSON-RPC's own, as `jsonrpc_core` errors::

    JsonRpcError
    └── ServerError                  -32000..-32099
        ├── ResourceNotFound         -32002  resources/read of an unknown URI (data: {"uri"})
        └── URLElicitationRequired   -32042  complete these URL elicitations, then retry

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
from typing import Any

import pydantic

from jsonrpc_core import STANDARD_ERRORS, ErrorTable, ServerError

from ._types._elicitation import ElicitRequestURLParams, URLElicitationRequiredErrorData

__all__ = [
    "MCP_ERRORS",
    "RESOURCE_NOT_FOUND",
    "URL_ELICITATION_REQUIRED",
    "ResourceNotFound",
    "URLElicitationRequired",
]

RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042

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
        data = URLElicitationRequiredErrorData(elicitations=list(elicitations))
        return cls(message, data.model_dump(by_alias=True, exclude_none=True, mode="json"))

    @property
    def elicitations(self) -> list[ElicitRequestURLParams]:
        """The elicitations in ``data``; empty if the peer sent none or a malformed list."""
        data: Any = self.data if self.has_data else None
        try:
            return URLElicitationRequiredErrorData.model_validate(data).elicitations
        except pydantic.ValidationError:
            return []
