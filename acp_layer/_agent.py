"""`Agent`: the class an agent author fills in.

Each ACP method the client may call is a method here taking the typed request and returning
the typed response (``None`` is read as the empty response where the schema allows one).
Only ``prompt`` must be written; the base class gives a standard ``initialize``, a
``new_session`` that invents an id, and "method not found" for optional methods. Capabilities
sent in ``initialize`` follow from which optional methods a subclass overrides, plus the
class attributes ``prompt_capabilities`` and ``mcp_capabilities``.

The connection to the client (`AgentConnection`) is ``self.client`` while served.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from jsonrpc_core import InvalidParams, MethodNotFound

from . import schema as s
from ._agent_connection import AgentConnection

__all__ = ["Agent"]

# Optional methods -> the capability their override advertises.
_SESSION_CAPABILITY_OF = {
    "list_sessions": "list",
    "delete_session": "delete",
    "resume_session": "resume",
    "close_session": "close",
}


class Agent:
    """Base class of ACP agents: override ``prompt`` and whatever else the agent supports.

    Handlers may raise `jsonrpc_core.JsonRpcError` subclasses (e.g. `AuthRequired`,
    `ResourceNotFound`) to answer with that error; any other exception is answered as
    -32603 without its details. A ``prompt`` interrupted by ``session/cancel`` is answered
    with stop reason ``cancelled`` for you.
    """

    agent_info: ClassVar[s.Implementation | None] = None
    """Sent as ``agentInfo`` by the default ``initialize``."""
    prompt_capabilities: ClassVar[s.PromptCapabilities] = s.PromptCapabilities()
    """Content types accepted in prompts beyond text and resource links."""
    mcp_capabilities: ClassVar[s.McpCapabilities] = s.McpCapabilities()
    """MCP transports besides stdio the agent can connect to (see `connect_mcp_servers`)."""
    auth_methods: ClassVar[tuple[s.AuthMethod, ...]] = ()
    """Authentication methods offered in ``initialize``."""

    client: AgentConnection
    """The connection to the client, set by `on_connect` when a connection starts."""

    def on_connect(self, connection: AgentConnection) -> None:
        """Called when a connection starts serving this agent; keeps it as ``self.client``."""
        self.client = connection

    def _overrides(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(Agent, name)

    def agent_capabilities(self) -> s.AgentCapabilities:
        """The capabilities the default ``initialize`` advertises."""
        sessions = s.SessionCapabilities(
            **{
                field: {}
                for method, field in _SESSION_CAPABILITY_OF.items()
                if self._overrides(method)
            }
        )
        auth = s.AgentAuthCapabilities(logout={} if self._overrides("logout") else None)
        return s.AgentCapabilities(
            load_session=self._overrides("load_session"),
            prompt_capabilities=self.prompt_capabilities,
            mcp_capabilities=self.mcp_capabilities,
            session_capabilities=sessions,
            auth=auth,
        )

    # -- connection ------------------------------------------------------------------------

    async def initialize(self, params: s.InitializeRequest) -> s.InitializeResponse:
        """Negotiate the protocol version and exchange capabilities."""
        return s.InitializeResponse(
            protocol_version=s.PROTOCOL_VERSION,
            agent_capabilities=self.agent_capabilities(),
            auth_methods=list(self.auth_methods),
            agent_info=self.agent_info,
        )

    async def authenticate(self, params: s.AuthenticateRequest) -> s.AuthenticateResponse | None:
        """Authenticate with one of ``auth_methods``."""
        raise InvalidParams(f"Unknown authentication method: {params.method_id!r}")

    async def logout(self, params: s.LogoutRequest) -> s.LogoutResponse | None:
        """End the authenticated state (override to advertise ``auth.logout``)."""
        raise MethodNotFound("Method not found: logout")

    # -- sessions --------------------------------------------------------------------------

    async def new_session(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        """Create a session; the default invents a unique id and keeps nothing else."""
        return s.NewSessionResponse(session_id=f"sess_{uuid.uuid4().hex}")

    async def load_session(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse | None:
        """Replay a stored session with ``session/update`` notifications, then return."""
        raise MethodNotFound("Method not found: session/load")

    async def list_sessions(self, params: s.ListSessionsRequest) -> s.ListSessionsResponse:
        """List stored sessions (override to advertise ``sessionCapabilities.list``)."""
        raise MethodNotFound("Method not found: session/list")

    async def delete_session(
        self, params: s.DeleteSessionRequest
    ) -> s.DeleteSessionResponse | None:
        """Delete a stored session (override to advertise ``sessionCapabilities.delete``)."""
        raise MethodNotFound("Method not found: session/delete")

    async def resume_session(
        self, params: s.ResumeSessionRequest
    ) -> s.ResumeSessionResponse | None:
        """Reconnect to a session without replay (advertises ``sessionCapabilities.resume``)."""
        raise MethodNotFound("Method not found: session/resume")

    async def close_session(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse | None:
        """Free a session's resources (its running turn is already cancelled)."""
        raise MethodNotFound("Method not found: session/close")

    async def set_session_mode(
        self, params: s.SetSessionModeRequest
    ) -> s.SetSessionModeResponse | None:
        """Switch the session's mode."""
        raise MethodNotFound("Method not found: session/set_mode")

    async def set_config_option(
        self, params: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        """Change a session configuration option; return the full set of options."""
        raise MethodNotFound("Method not found: session/set_config_option")

    # -- prompt turns ----------------------------------------------------------------------

    async def prompt(self, params: s.PromptRequest) -> s.PromptResponse | s.StopReason:
        """Run one prompt turn; return the stop reason (or a `PromptResponse`)."""
        raise MethodNotFound("Method not found: session/prompt")

    async def cancel(self, params: s.CancelNotification) -> None:
        """Called on ``session/cancel`` after the session's running turns were cancelled.

        It runs on the connection's read loop: do not wait for the client here.
        """

    # -- extensions ------------------------------------------------------------------------

    async def ext_method(self, method: str, params: Any) -> Any:
        """Answer a ``_``-prefixed extension request (default: method not found)."""
        raise MethodNotFound(f"Method not found: {method}")

    async def ext_notification(self, method: str, params: Any) -> None:
        """Handle a ``_``-prefixed extension notification (default: ignored)."""
