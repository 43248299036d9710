"""Capabilities exchanged in ``initialize`` (docs/initialization.mdx).

Two conventions meet here. Boolean capabilities default to ``False``. Object-valued
"marker" capabilities (``sessionCapabilities.list``, ``auth.logout``, ``elicitation.form``,
...) mean *supported* when present as an object (``{}`` is enough) and *not supported* when
omitted or ``null``: test them with ``is not None``. Every capability field tolerates a bad
value from the peer by falling back to its default (``x-deserialize-default-on-error``).
"""

from pydantic import Field

from ._base import ACPModel
from ._lenient import OrDefault

__all__ = [
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthCapabilities",
    "BooleanConfigOptionCapabilities",
    "ClientCapabilities",
    "ClientSessionCapabilities",
    "ElicitationCapabilities",
    "ElicitationFormCapabilities",
    "ElicitationUrlCapabilities",
    "FileSystemCapabilities",
    "LogoutCapabilities",
    "McpCapabilities",
    "PromptCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCapabilities",
    "SessionCloseCapabilities",
    "SessionConfigOptionsCapabilities",
    "SessionDeleteCapabilities",
    "SessionListCapabilities",
    "SessionResumeCapabilities",
]

# --- client side ---------------------------------------------------------------------------


class FileSystemCapabilities(ACPModel):
    """File system capabilities that a client may support."""

    read_text_file: OrDefault[bool] = False
    write_text_file: OrDefault[bool] = False


class AuthCapabilities(ACPModel):
    """Authentication capabilities supported by the client."""

    terminal: OrDefault[bool] = False
    """Whether the client supports ``terminal`` authentication methods."""


class BooleanConfigOptionCapabilities(ACPModel):
    """Capabilities for boolean session configuration options (present means supported)."""


class SessionConfigOptionsCapabilities(ACPModel):
    """Session configuration option capabilities supported by the client."""

    boolean: OrDefault[BooleanConfigOptionCapabilities | None] = None


class ClientSessionCapabilities(ACPModel):
    """Session-related capabilities supported by the client."""

    config_options: OrDefault[SessionConfigOptionsCapabilities | None] = None


class ElicitationFormCapabilities(ACPModel):
    """Form-based elicitation capabilities (present means supported)."""


class ElicitationUrlCapabilities(ACPModel):
    """URL-based elicitation capabilities (present means supported)."""


class ElicitationCapabilities(ACPModel):
    """Elicitation capabilities supported by the client; a mode is supported only if present."""

    form: OrDefault[ElicitationFormCapabilities | None] = None
    url: OrDefault[ElicitationUrlCapabilities | None] = None


class ClientCapabilities(ACPModel):
    """Capabilities supported by the client."""

    fs: OrDefault[FileSystemCapabilities] = Field(default_factory=FileSystemCapabilities)
    terminal: OrDefault[bool] = False
    """Whether the client supports all ``terminal/*`` methods."""
    session: OrDefault[ClientSessionCapabilities | None] = None
    auth: OrDefault[AuthCapabilities] = Field(default_factory=AuthCapabilities)
    elicitation: OrDefault[ElicitationCapabilities | None] = None


# --- agent side ----------------------------------------------------------------------------


class PromptCapabilities(ACPModel):
    """Prompt capabilities supported by the agent in ``session/prompt`` requests.

    Text and resource links are always supported; these flags add the other block types.
    """

    image: OrDefault[bool] = False
    audio: OrDefault[bool] = False
    embedded_context: OrDefault[bool] = False


class McpCapabilities(ACPModel):
    """MCP capabilities supported by the agent (stdio servers are always supported)."""

    http: OrDefault[bool] = False
    sse: OrDefault[bool] = False


class SessionListCapabilities(ACPModel):
    """Capabilities for the ``session/list`` method (present means supported)."""


class SessionDeleteCapabilities(ACPModel):
    """Capabilities for the ``session/delete`` method (present means supported)."""


class SessionAdditionalDirectoriesCapabilities(ACPModel):
    """Capabilities for additional session directories support (present means supported)."""


class SessionResumeCapabilities(ACPModel):
    """Capabilities for the ``session/resume`` method (present means supported)."""


class SessionCloseCapabilities(ACPModel):
    """Capabilities for the ``session/close`` method (present means supported)."""


class SessionCapabilities(ACPModel):
    """Session capabilities supported by the agent (``session/load`` is `AgentCapabilities`)."""

    list: OrDefault[SessionListCapabilities | None] = None
    delete: OrDefault[SessionDeleteCapabilities | None] = None
    additional_directories: OrDefault[SessionAdditionalDirectoriesCapabilities | None] = None
    resume: OrDefault[SessionResumeCapabilities | None] = None
    close: OrDefault[SessionCloseCapabilities | None] = None


class LogoutCapabilities(ACPModel):
    """Logout capabilities supported by the agent (present means supported)."""


class AgentAuthCapabilities(ACPModel):
    """Authentication-related capabilities supported by the agent."""

    logout: OrDefault[LogoutCapabilities | None] = None


class AgentCapabilities(ACPModel):
    """Capabilities supported by the agent."""

    load_session: OrDefault[bool] = False
    prompt_capabilities: OrDefault[PromptCapabilities] = Field(default_factory=PromptCapabilities)
    mcp_capabilities: OrDefault[McpCapabilities] = Field(default_factory=McpCapabilities)
    session_capabilities: OrDefault[SessionCapabilities] = Field(
        default_factory=SessionCapabilities
    )
    auth: OrDefault[AgentAuthCapabilities] = Field(default_factory=AgentAuthCapabilities)
