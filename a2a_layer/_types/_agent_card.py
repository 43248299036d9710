"""The Agent Card: an agent's self-describing manifest, and its parts."""

from __future__ import annotations

from pydantic import Field

from ._base import A2AModel, Struct
from ._security import SecurityRequirement, SecurityScheme

__all__ = [
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "ProtocolBinding",
]


class ProtocolBinding:
    """The core ``AgentInterface.protocol_binding`` values (the field is an open string)."""

    JSONRPC = "JSONRPC"
    GRPC = "GRPC"
    HTTP_JSON = "HTTP+JSON"


class AgentInterface(A2AModel):
    """A URL, protocol binding and protocol version at which the agent can be reached.

    When ``tenant`` is set, clients MUST send it in the ``tenant`` field of every request.
    """

    url: str
    protocol_binding: str
    tenant: str | None = None
    protocol_version: str


class AgentProvider(A2AModel):
    """Represents the service provider of an agent."""

    url: str
    organization: str


class AgentExtension(A2AModel):
    """A declaration of a protocol extension supported by an Agent."""

    uri: str | None = None
    description: str | None = None
    required: bool = False
    params: Struct | None = None


class AgentCapabilities(A2AModel):
    """Defines optional capabilities supported by an agent."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: list[AgentExtension] | None = None
    extended_agent_card: bool | None = None


class AgentSkill(A2AModel):
    """Represents a distinct capability or function that an agent can perform."""

    id: str
    name: str
    description: str
    tags: list[str] = Field(default_factory=list)
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security_requirements: list[SecurityRequirement] | None = None


class AgentCardSignature(A2AModel):
    """A JWS signature of an AgentCard (RFC 7515 JSON serialization)."""

    protected: str
    signature: str
    header: Struct | None = None


class AgentCard(A2AModel):
    """A self-describing manifest for an agent: identity, capabilities, skills, interfaces.

    ``supported_interfaces`` is ordered; the first entry is preferred.
    """

    name: str
    description: str
    supported_interfaces: list[AgentInterface] = Field(default_factory=list)
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme] | None = None
    security_requirements: list[SecurityRequirement] | None = None
    default_input_modes: list[str] = Field(default_factory=list)
    default_output_modes: list[str] = Field(default_factory=list)
    skills: list[AgentSkill] = Field(default_factory=list)
    signatures: list[AgentCardSignature] | None = None
    icon_url: str | None = None
