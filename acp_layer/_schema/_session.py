"""Session lifecycle: new, load, list, delete, resume, close, and modes.

docs/session-setup.mdx, session-list.mdx, session-delete.mdx, session-modes.mdx. ``load``,
``list``, ``delete``, ``resume``, ``close`` and ``additionalDirectories`` are each gated by an
agent capability (`AgentCapabilities`). All paths (``cwd``, additional directories) are absolute.
"""

from pydantic import Field

from ._base import ACPModel, EmptyResult, SessionId, SessionModeId
from ._config import SessionConfigOption
from ._lenient import ItemsOrDefault, ItemsOrEmpty, OrDefault
from ._mcp import McpServer

__all__ = [
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
    "SessionMode",
    "SessionModeState",
    "SetSessionModeRequest",
    "SetSessionModeResponse",
]


class SessionMode(ACPModel):
    """A mode the agent can operate in."""

    id: SessionModeId
    name: str
    description: OrDefault[str | None] = None


class SessionModeState(ACPModel):
    """The set of modes and the one currently active."""

    current_mode_id: SessionModeId
    available_modes: ItemsOrEmpty[SessionMode]


class NewSessionRequest(ACPModel):
    """Request parameters for creating a new session."""

    cwd: str
    mcp_servers: ItemsOrEmpty[McpServer]
    additional_directories: ItemsOrDefault[str] = Field(default_factory=list)


class NewSessionResponse(ACPModel):
    """Response from creating a new session."""

    session_id: SessionId
    modes: OrDefault[SessionModeState | None] = None
    config_options: ItemsOrDefault[SessionConfigOption] | None = None


class LoadSessionRequest(ACPModel):
    """Request parameters for loading an existing session (needs ``loadSession``).

    The agent replays the conversation as ``session/update`` notifications before answering.
    """

    session_id: SessionId
    cwd: str
    mcp_servers: ItemsOrEmpty[McpServer]
    additional_directories: ItemsOrDefault[str] = Field(default_factory=list)


class LoadSessionResponse(EmptyResult):
    """Response from loading an existing session."""

    modes: OrDefault[SessionModeState | None] = None
    config_options: ItemsOrDefault[SessionConfigOption] | None = None


class ListSessionsRequest(ACPModel):
    """Request parameters for listing existing sessions (needs ``sessionCapabilities.list``)."""

    cwd: str | None = None
    """Only sessions with this working directory."""
    cursor: str | None = None
    """``nextCursor`` of a previous response."""


class SessionInfo(ACPModel):
    """Information about a session returned by ``session/list``."""

    session_id: SessionId
    cwd: str
    additional_directories: ItemsOrDefault[str] = Field(default_factory=list)
    title: OrDefault[str | None] = None
    updated_at: OrDefault[str | None] = None
    """ISO 8601 timestamp of last activity."""


class ListSessionsResponse(ACPModel):
    """Response from listing sessions."""

    sessions: ItemsOrEmpty[SessionInfo]
    next_cursor: OrDefault[str | None] = None
    """Pass as ``cursor`` to get the next page; absent on the last page."""


class DeleteSessionRequest(ACPModel):
    """Request parameters for deleting a session listed by ``session/list``."""

    session_id: SessionId


class DeleteSessionResponse(EmptyResult):
    """Response from deleting a session."""


class ResumeSessionRequest(ACPModel):
    """Request parameters for resuming an existing session without replaying its history."""

    session_id: SessionId
    cwd: str
    mcp_servers: ItemsOrDefault[McpServer] = Field(default_factory=list)
    additional_directories: ItemsOrDefault[str] = Field(default_factory=list)


class ResumeSessionResponse(EmptyResult):
    """Response from resuming an existing session."""

    modes: OrDefault[SessionModeState | None] = None
    config_options: ItemsOrDefault[SessionConfigOption] | None = None


class CloseSessionRequest(ACPModel):
    """Request parameters for closing an active session and freeing its resources."""

    session_id: SessionId


class CloseSessionResponse(EmptyResult):
    """Response from closing a session."""


class SetSessionModeRequest(ACPModel):
    """Request parameters for setting a session mode."""

    session_id: SessionId
    mode_id: SessionModeId


class SetSessionModeResponse(EmptyResult):
    """Response to ``session/set_mode``."""
