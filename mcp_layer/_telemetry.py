"""MCP's OpenTelemetry conventions: the GenAI semantic conventions for MCP.

Spans are named ``{mcp.method.name} {target}`` (the tool's or the prompt's name; a
resource URI is an attribute, never part of the name, to keep names low-cardinality);
the trace context travels in ``params._meta`` (``traceparent``, ``tracestate``), because
one pipe or one HTTP stream carries many MCP messages. Progress notifications are
events on the span of the request they report on.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from jsonrpc_core.telemetry import Attributes, TelemetryConventions, field, text_field

__all__ = ["MCP_CLIENT_TELEMETRY", "MCP_SERVER_TELEMETRY", "McpConventions"]

_NAMED = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
_WITH_URI = frozenset(
    {
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/resources/updated",
    }
)


class McpConventions(TelemetryConventions):
    """Span names and attributes of MCP messages (client or server end)."""

    protocol = "mcp"
    carrier = "meta"
    method_attribute = "mcp.method.name"
    session_attribute = "mcp.session.id"
    result_methods = frozenset({"initialize", "tools/call"})

    def span_name(self, method: str, params: Any) -> str:
        target = text_field(params, "name") if method in _NAMED else None
        return f"{method} {target}" if target else method

    def attributes(self, method: str, params: Any) -> Attributes:
        attributes: Attributes = {}
        named = _NAMED.get(method)
        if named is not None:
            name = text_field(params, "name")
            if name is not None:
                attributes[named] = name
            if method == "tools/call":
                attributes["gen_ai.operation.name"] = "execute_tool"
        elif method in _WITH_URI:
            uri = text_field(params, "uri")
            if uri is not None:
                attributes["mcp.resource.uri"] = uri
        elif method == "initialize":
            version = text_field(params, "protocolVersion")
            if version is not None:
                attributes["mcp.protocol.version"] = version
        elif method == "notifications/progress":
            progress = field(params, "progress")
            if isinstance(progress, (int, float)) and not isinstance(progress, bool):
                attributes["mcp.progress"] = progress
        return attributes

    def result_attributes(self, method: str, result: Any) -> Attributes:
        if method == "tools/call" and field(result, "isError") is True:
            return {"error.type": "tool_error"}
        return {}

    def session_attributes(self, method: str, result: Any) -> Attributes:
        version = text_field(result, "protocolVersion") if method == "initialize" else None
        return {} if version is None else {"mcp.protocol.version": version}

    def info_attributes(self, info: Any) -> Attributes:
        attributes: Attributes = {}
        session_id = getattr(info, "session_id", None)
        if isinstance(session_id, str):
            attributes["mcp.session.id"] = session_id
        headers = getattr(info, "headers", None)
        version = headers.get("mcp-protocol-version") if isinstance(headers, dict) else None
        if isinstance(version, str):
            attributes["mcp.protocol.version"] = version
        return attributes

    def stream_key(self, method: str, params: Any) -> Hashable | None:
        token = field(field(params, "_meta"), "progressToken")
        return ("progress", token) if isinstance(token, (str, int)) else None

    def stream_chunk(self, method: str, params: Any) -> Hashable | None:
        if method != "notifications/progress":
            return None
        token = field(params, "progressToken")
        return ("progress", token) if isinstance(token, (str, int)) else ("progress", None)


MCP_CLIENT_TELEMETRY = McpConventions("client")
"""The conventions of an MCP client's peer."""
MCP_SERVER_TELEMETRY = McpConventions("server")
"""The conventions of an MCP server session's peer."""
