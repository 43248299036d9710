"""Lifecycle: protocol versions, implementation info, ``initialize`` and its result."""

from __future__ import annotations

from ._base import RequestParams, Result
from ._capabilities import ClientCapabilities, ServerCapabilities
from ._common import BaseMetadata, Icon

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "Implementation",
    "InitializeRequestParams",
    "InitializeResult",
]

LATEST_PROTOCOL_VERSION = "2025-11-25"
"""The revision this layer speaks natively and offers first."""

SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = (
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
)
"""Revisions this layer negotiates, newest first."""


class Implementation(BaseMetadata):
    """Describes an MCP implementation (``clientInfo`` / ``serverInfo``)."""

    version: str
    description: str | None = None
    """What this implementation does (since 2025-11-25)."""
    website_url: str | None = None
    icons: list[Icon] | None = None


class InitializeRequestParams(RequestParams):
    """Parameters for an ``initialize`` request."""

    protocol_version: str
    """The latest protocol version the client supports."""
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeResult(Result):
    """The server's answer to ``initialize``."""

    protocol_version: str
    """The version the server wants to use; the client disconnects if it cannot."""
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
    """How to use the server and its features; a hint for the model's system prompt."""
