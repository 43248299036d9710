"""``session/update``: everything an agent streams to the client during a session.

`SessionNotification` wraps one `SessionUpdate`, told apart by ``sessionUpdate``. The union is
open: a variant this package does not know (newer agents, unstable features) parses as
`UnknownSessionUpdate` with its raw fields kept, so a client can ignore it or forward it,
instead of rejecting the whole notification.
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from ._base import ACPModel, MessageId, SessionId, SessionModeId, UInt64
from ._config import SessionConfigOption
from ._content import ContentBlock
from ._lenient import Clearable, ItemsOrEmpty, OrDefault, tagged_union
from ._tool_calls import ToolCall, ToolCallProgress

__all__ = [
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "ConfigOptionUpdate",
    "ContentChunk",
    "Cost",
    "CurrentModeUpdate",
    "Plan",
    "PlanEntry",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "SessionInfoUpdate",
    "SessionNotification",
    "SessionUpdate",
    "UnknownSessionUpdate",
    "UnstructuredCommandInput",
    "UsageUpdate",
    "UserMessageChunk",
]


class ContentChunk(ACPModel):
    """A streamed item of content (the shape shared by the three ``*_chunk`` updates)."""

    content: ContentBlock
    message_id: OrDefault[MessageId | None] = None
    """Chunks with the same id belong to the same message; a new id starts a new message."""


class UserMessageChunk(ContentChunk):
    """A chunk of the user's message being streamed (e.g. while loading a session)."""

    session_update: Literal["user_message_chunk"] = "user_message_chunk"


class AgentMessageChunk(ContentChunk):
    """A chunk of the agent's response being streamed."""

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"


class AgentThoughtChunk(ContentChunk):
    """A chunk of the agent's internal reasoning being streamed."""

    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"


PlanEntryPriority = Literal["high", "medium", "low"]
"""Priority levels for plan entries."""

PlanEntryStatus = Literal["pending", "in_progress", "completed"]
"""Status of a plan entry in the execution flow."""


class PlanEntry(ACPModel):
    """A single entry in the execution plan."""

    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus


class Plan(ACPModel):
    """An execution plan for accomplishing complex tasks; each update replaces the whole plan."""

    session_update: Literal["plan"] = "plan"
    entries: ItemsOrEmpty[PlanEntry]


class UnstructuredCommandInput(ACPModel):
    """All text typed after the command name is provided as input."""

    hint: str
    """Shown while the input has not been provided yet."""


AvailableCommandInput: TypeAlias = UnstructuredCommandInput
"""The input specification for a command (only unstructured input so far)."""


class AvailableCommand(ACPModel):
    """Information about a command (a slash command the user can invoke)."""

    name: str
    description: str
    input: OrDefault[AvailableCommandInput | None] = None


class AvailableCommandsUpdate(ACPModel):
    """Available commands are ready or have changed."""

    session_update: Literal["available_commands_update"] = "available_commands_update"
    available_commands: ItemsOrEmpty[AvailableCommand]


class CurrentModeUpdate(ACPModel):
    """The current mode of the session has changed."""

    session_update: Literal["current_mode_update"] = "current_mode_update"
    current_mode_id: SessionModeId


class ConfigOptionUpdate(ACPModel):
    """Session configuration options have been updated (the full set, with current values)."""

    session_update: Literal["config_option_update"] = "config_option_update"
    config_options: ItemsOrEmpty[SessionConfigOption]


class SessionInfoUpdate(ACPModel):
    """Session metadata has been updated; absent fields are unchanged, `CLEAR` clears one.

    A received ``null`` reads as `CLEAR`, and so does an explicit ``None`` passed in Python.
    """

    session_update: Literal["session_info_update"] = "session_info_update"
    title: OrDefault[Clearable[str]] = None
    updated_at: OrDefault[Clearable[str]] = None
    """ISO 8601 timestamp of last activity."""


class Cost(ACPModel):
    """Cost information for a session."""

    amount: float
    """Total cumulative cost for the session."""
    currency: str
    """ISO 4217 currency code, e.g. ``"USD"``."""


class UsageUpdate(ACPModel):
    """Context window and cost update for a session."""

    session_update: Literal["usage_update"] = "usage_update"
    used: UInt64
    """Tokens currently in context."""
    size: UInt64
    """Total context window size in tokens."""
    cost: OrDefault[Cost | None] = None


class UnknownSessionUpdate(ACPModel):
    """A ``session/update`` variant this package does not know; every received field is kept."""

    session_update: str


if TYPE_CHECKING:
    SessionUpdate: TypeAlias = (
        UserMessageChunk
        | AgentMessageChunk
        | AgentThoughtChunk
        | ToolCall
        | ToolCallProgress
        | Plan
        | AvailableCommandsUpdate
        | CurrentModeUpdate
        | ConfigOptionUpdate
        | SessionInfoUpdate
        | UsageUpdate
        | UnknownSessionUpdate
    )
else:
    SessionUpdate = tagged_union(
        "session_update",
        UserMessageChunk,
        AgentMessageChunk,
        AgentThoughtChunk,
        ToolCall,
        ToolCallProgress,
        Plan,
        AvailableCommandsUpdate,
        CurrentModeUpdate,
        ConfigOptionUpdate,
        SessionInfoUpdate,
        UsageUpdate,
        unknown=UnknownSessionUpdate,
    )
"""Different types of updates that can be sent during session processing."""


class SessionNotification(ACPModel):
    """Params of ``session/update``: a session update from the agent."""

    session_id: SessionId
    update: SessionUpdate
