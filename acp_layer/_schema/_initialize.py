"""``initialize``, ``authenticate`` and ``logout`` (docs/initialization.mdx, authentication.mdx).

The client opens every connection with ``initialize``: it sends the latest protocol version
it supports and its capabilities; the agent answers with the version to use, its own
capabilities and the authentication methods it offers.
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import Field

from ._base import ACPModel, AuthMethodId, EmptyResult, ProtocolVersion
from ._capabilities import AgentCapabilities, ClientCapabilities
from ._lenient import ItemsOrDefault, OrDefault, tagged_union

__all__ = [
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "AuthenticateRequest",
    "AuthenticateResponse",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "LogoutRequest",
    "LogoutResponse",
    "UnknownAuthMethod",
]


class Implementation(ACPModel):
    """Metadata about the implementation of the client or agent."""

    name: str
    """Programmatic name; the display name when ``title`` is absent."""
    version: str
    title: OrDefault[str | None] = None
    """Human-readable name for UI."""


class AuthMethodAgent(ACPModel):
    """Agent handles authentication itself through ``authenticate`` (the default type).

    Sent without ``type``; a received ``"type": "agent"`` is kept as an extra field.
    """

    id: AuthMethodId
    name: str
    description: OrDefault[str | None] = None


class AuthMethodTerminal(ACPModel):
    """Client runs the configured agent program as a separate interactive terminal login."""

    type: Literal["terminal"] = "terminal"
    id: AuthMethodId
    name: str
    description: OrDefault[str | None] = None
    args: ItemsOrDefault[str] = Field(default_factory=list)
    """Extra arguments appended to the configured agent invocation."""
    env: OrDefault[dict[str, str]] = Field(default_factory=dict)
    """Extra environment variables for the configured agent invocation."""


class UnknownAuthMethod(ACPModel):
    """An authentication method of a type this package does not know; the raw data is kept.

    Clients should not offer it: its flow is undefined here.
    """

    type: str


if TYPE_CHECKING:
    AuthMethod: TypeAlias = AuthMethodAgent | AuthMethodTerminal | UnknownAuthMethod
else:
    AuthMethod = tagged_union(
        "type",
        AuthMethodTerminal,
        untagged=AuthMethodAgent,
        aliases={"agent": AuthMethodAgent},
        unknown=UnknownAuthMethod,
    )
"""Describes an available authentication method, told apart by ``type`` (default ``agent``)."""


class InitializeRequest(ACPModel):
    """Request parameters for the ``initialize`` method (client to agent)."""

    protocol_version: ProtocolVersion
    """The latest protocol version supported by the client."""
    client_capabilities: OrDefault[ClientCapabilities] = Field(default_factory=ClientCapabilities)
    client_info: OrDefault[Implementation | None] = None


class InitializeResponse(ACPModel):
    """Response to the ``initialize`` method."""

    protocol_version: ProtocolVersion
    """The client's version if the agent supports it, else the latest the agent supports."""
    agent_capabilities: OrDefault[AgentCapabilities] = Field(default_factory=AgentCapabilities)
    auth_methods: ItemsOrDefault[AuthMethod] = Field(default_factory=list)
    agent_info: OrDefault[Implementation | None] = None


class AuthenticateRequest(ACPModel):
    """Request parameters for the ``authenticate`` method."""

    method_id: AuthMethodId
    """The id of an advertised authentication method."""


class AuthenticateResponse(EmptyResult):
    """Response to the ``authenticate`` method."""


class LogoutRequest(ACPModel):
    """Request parameters for the ``logout`` method (needs ``agentCapabilities.auth.logout``)."""


class LogoutResponse(EmptyResult):
    """Response to the ``logout`` method."""
