"""ACP's OpenTelemetry conventions, shaped like the MCP semantic conventions.

Spans are named by the method (ACP has no low-cardinality target beyond it); a prompt
turn (``session/prompt``) is a GenAI ``invoke_agent`` operation; ``acp.session.id``
names the session. The trace context travels in ``params._meta``, as for MCP; each
``session/update`` is an event on the span of the prompt turn it reports on.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from jsonrpc_core.telemetry import Attributes, TelemetryConventions, field, text_field

__all__ = ["ACP_AGENT_TELEMETRY", "ACP_CLIENT_TELEMETRY", "AcpConventions"]


class AcpConventions(TelemetryConventions):
    """Span names and attributes of ACP messages (client or agent end)."""

    protocol = "acp"
    carrier = "meta"
    method_attribute = "acp.method.name"
    result_methods = frozenset({"initialize", "session/new", "session/prompt"})

    def attributes(self, method: str, params: Any) -> Attributes:
        attributes: Attributes = {}
        session_id = text_field(params, "sessionId")
        if session_id is not None:
            attributes["acp.session.id"] = session_id
        if method == "session/prompt":
            attributes["gen_ai.operation.name"] = "invoke_agent"
        elif method == "session/update":
            kind = text_field(field(params, "update"), "sessionUpdate")
            if kind is not None:
                attributes["acp.session.update"] = kind
        elif method == "initialize":
            version = field(params, "protocolVersion")
            if isinstance(version, int) and not isinstance(version, bool):
                attributes["acp.protocol.version"] = version
        return attributes

    def result_attributes(self, method: str, result: Any) -> Attributes:
        if method == "session/new":
            session_id = text_field(result, "sessionId")
            return {} if session_id is None else {"acp.session.id": session_id}
        if method == "session/prompt":
            reason = text_field(result, "stopReason")
            return {} if reason is None else {"acp.stop_reason": reason}
        return {}

    def session_attributes(self, method: str, result: Any) -> Attributes:
        version = field(result, "protocolVersion") if method == "initialize" else None
        if isinstance(version, int) and not isinstance(version, bool):
            return {"acp.protocol.version": version}
        return {}

    def stream_key(self, method: str, params: Any) -> Hashable | None:
        session_id = text_field(params, "sessionId") if method == "session/prompt" else None
        return None if session_id is None else ("session", session_id)

    def stream_chunk(self, method: str, params: Any) -> Hashable | None:
        if method != "session/update":
            return None
        return ("session", text_field(params, "sessionId"))


ACP_CLIENT_TELEMETRY = AcpConventions("client")
"""The conventions of an ACP client's (editor's) peer."""
ACP_AGENT_TELEMETRY = AcpConventions("server")
"""The conventions of an ACP agent's peer."""
