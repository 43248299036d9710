"""Tool calls and what they produce (docs/tool-calls.mdx).

An agent announces a tool call with a ``tool_call`` session update (`ToolCall`) and reports
progress with ``tool_call_update`` (`ToolCallProgress`): every field but the id is optional
there, and a present array replaces the previous one. `ToolCallUpdate` is the same shape
without the update tag; ``session/request_permission`` carries it.
"""

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import Field

from ._base import ACPModel, TerminalId, ToolCallId, UInt32
from ._content import ContentBlock
from ._lenient import ItemsOrDefault, OrDefault, tagged_union

__all__ = [
    "Content",
    "Diff",
    "Terminal",
    "ToolCall",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallProgress",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolKind",
]

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
"""Category of a tool, used by clients to pick icons and UI (absent means ``other``)."""

ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]
"""Execution status of a tool call (absent means ``pending``)."""


class ToolCallLocation(ACPModel):
    """A file location being accessed or modified by a tool ("follow-along" in clients)."""

    path: str
    """Absolute file path."""
    line: OrDefault[UInt32 | None] = None


class Content(ACPModel):
    """Standard content block (text, images, resources) produced by a tool call."""

    type: Literal["content"] = "content"
    content: ContentBlock


class Diff(ACPModel):
    """A diff representing file modifications."""

    type: Literal["diff"] = "diff"
    path: str
    """Absolute path of the modified file."""
    old_text: OrDefault[str | None] = None
    """Original content; ``None`` for a new file."""
    new_text: str


class Terminal(ACPModel):
    """Embed a terminal created with ``terminal/create`` by its id; output streams live."""

    type: Literal["terminal"] = "terminal"
    terminal_id: TerminalId


if TYPE_CHECKING:
    ToolCallContent: TypeAlias = Content | Diff | Terminal
else:
    ToolCallContent = tagged_union("type", Content, Diff, Terminal)
"""Content produced by a tool call, told apart by ``type``."""


class ToolCall(ACPModel):
    """Represents a tool call that the language model has requested (``tool_call`` update)."""

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: ToolCallId
    title: str
    kind: OrDefault[ToolKind | None] = None
    status: OrDefault[ToolCallStatus | None] = None
    content: ItemsOrDefault[ToolCallContent] = Field(default_factory=list)
    locations: ItemsOrDefault[ToolCallLocation] = Field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None


class ToolCallUpdate(ACPModel):
    """An update to an existing tool call: only ``tool_call_id`` is required."""

    tool_call_id: ToolCallId
    title: OrDefault[str | None] = None
    kind: OrDefault[ToolKind | None] = None
    status: OrDefault[ToolCallStatus | None] = None
    content: ItemsOrDefault[ToolCallContent] | None = None
    """Replaces the content collection when present."""
    locations: ItemsOrDefault[ToolCallLocation] | None = None
    """Replaces the locations collection when present."""
    raw_input: Any = None
    raw_output: Any = None


class ToolCallProgress(ToolCallUpdate):
    """Update on the status or results of a tool call (``tool_call_update`` session update)."""

    session_update: Literal["tool_call_update"] = "tool_call_update"
