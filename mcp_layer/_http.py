"""MCP's rules for the shared Streamable HTTP server, both eras on one endpoint.

`jsonrpc_core.JsonRpcHTTPApp` knows nothing of MCP; `http_options` plugs in:

- sessions for the handshake era (``initialize`` opens one), and no session at all for
  a 2026-07-28 request (its POST is served by the app's one shared connection, and a
  ``Mcp-Session-Id`` header on it is ignored);
- `validate`: the ``MCP-Protocol-Version`` header of a handshake-era request must name
  a version we speak; a 2026-era request's ``MCP-Protocol-Version``, ``Mcp-Method``,
  ``Mcp-Name`` and ``Mcp-Param-*`` headers must match its body (400 with -32020), once
  its ``_meta`` has the required members (else the dispatch answers -32602); GET and
  DELETE (the handshake era's stream and session end) are 405 to a 2026-era client;
- the response mode of a 2026-era request: JSON when its answer comes first, SSE as
  soon as a notification does (for ``subscriptions/listen``, its acknowledgement); and
  the HTTP status of a 2026-era error answer (`HTTP_STATUS_BY_CODE`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from jsonrpc_core import HTTPError, Incoming, JsonRpcError, Notification, Request, SessionPolicy
from jsonrpc_core.http import HTTPRequestInfo, HTTPSession

from ._era import envelope_of, is_modern
from ._errors import HTTP_STATUS_BY_CODE, HeaderMismatch
from ._headers import SESSION_HEADER, header_mismatch
from .types import (
    CLIENT_CAPABILITIES_META_KEY,
    MODERN_PROTOCOL_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
    SUPPORTED_PROTOCOL_VERSIONS,
)

if TYPE_CHECKING:
    from ._server import MCPServer

ResponseMode = Literal["json", "sse", "auto"]

__all__ = ["MODERN_STATE_KEY", "McpHTTPPolicy"]

MODERN_STATE_KEY = "mcp.modern"
"""``HTTPRequestInfo.state`` key set on the POSTs of 2026-era requests."""


def _is_initialize(payload: Incoming) -> bool:
    return isinstance(payload, Request) and payload.method == "initialize"


def _is_modern_message(payload: Incoming | None, info: HTTPRequestInfo) -> bool:
    if isinstance(payload, (Request, Notification)):
        return is_modern(payload.method, payload.params, info)
    return False


def _never(payload: Incoming | None, info: HTTPRequestInfo) -> bool:
    return False


class McpHTTPPolicy:
    """The HTTP hooks of one `MCPServer` (see the module docstring)."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._modern = _is_modern_message if server.modern else _never

    def session_policy(self) -> SessionPolicy:
        """Handshake-era sessions, none for the 2026 era."""
        return SessionPolicy(
            header=SESSION_HEADER, is_start=_is_initialize, is_sessionless=self.is_sessionless
        )

    def is_sessionless(self, info: HTTPRequestInfo, payload: Incoming | None) -> bool:
        """Whether a POST is a 2026-era message (served without a session); for GET and
        DELETE (``payload`` ``None``), whether they come from a 2026-era client."""
        if payload is None:
            version = info.headers.get("mcp-protocol-version")
            return (
                self.server.modern
                and version is not None
                and version.strip() in MODERN_PROTOCOL_VERSIONS
            )
        modern = self._modern(payload, info)
        if modern:
            info.state[MODERN_STATE_KEY] = True
        return modern

    def validate(
        self, info: HTTPRequestInfo, payload: Incoming | None, session: HTTPSession | None
    ) -> None:
        """Check the MCP headers of a request (see the module docstring)."""
        version = info.headers.get("mcp-protocol-version")
        modern_header = version is not None and version.strip() in MODERN_PROTOCOL_VERSIONS
        if payload is None:
            if modern_header and self.server.modern:
                raise HTTPError(
                    405,
                    "Method not allowed: 2026-07-28 has no standalone stream or session",
                    headers={"allow": "POST"},
                )
            self._check_legacy_version(version)
            return
        if not self._modern(payload, info):
            self._check_legacy_version(version)
            return
        info.state[MODERN_STATE_KEY] = True
        if not isinstance(payload, Request):
            return  # a notification: nothing to compare (2026-07-28 defines none over HTTP)
        meta = envelope_of(payload.params)
        if meta is None or not isinstance(meta.get(PROTOCOL_VERSION_META_KEY), str):
            return  # malformed _meta: the dispatch answers -32602
        if CLIENT_CAPABILITIES_META_KEY not in meta:
            return
        schema = None
        if payload.method == "tools/call" and isinstance(payload.params, dict):
            entry = self.server.tools.get(payload.params.get("name", ""))
            schema = entry.tool.input_schema if entry is not None else None
        problem = header_mismatch(
            payload.method,
            payload.params,
            info.headers,
            version=meta[PROTOCOL_VERSION_META_KEY],
            tool_schema=schema,
        )
        if problem is not None:
            error = HeaderMismatch(f"Header mismatch: {problem}")
            raise HTTPError(400, error.message, error=error)

    @staticmethod
    def _check_legacy_version(version: str | None) -> None:
        if version is not None and version.strip() not in SUPPORTED_PROTOCOL_VERSIONS:
            raise HTTPError(
                400,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r}; supported: "
                + ", ".join((*MODERN_PROTOCOL_VERSIONS, *SUPPORTED_PROTOCOL_VERSIONS)),
            )

    def response_mode(self, request: Request, info: HTTPRequestInfo) -> ResponseMode | None:
        """2026 era: ``auto`` (``subscriptions/listen`` too: its acknowledgement comes
        first, so a refusal is still a plain JSON error with its HTTP status)."""
        if not info.state.get(MODERN_STATE_KEY):
            return None
        return "auto"

    def error_status(self, error: JsonRpcError, info: HTTPRequestInfo) -> int | None:
        """The HTTP status of a 2026-era error answer."""
        if not info.state.get(MODERN_STATE_KEY):
            return None
        return HTTP_STATUS_BY_CODE.get(error.code)


def http_policy_kwargs(server: MCPServer, *, stateless: bool) -> dict[str, Any]:
    """`jsonrpc_core.HTTPServerOptions` members for ``server``."""
    policy = McpHTTPPolicy(server)
    return {
        "sessions": None if stateless else policy.session_policy(),
        "validate": policy.validate,
        "response_mode": policy.response_mode,
        "error_status": policy.error_status,
    }
