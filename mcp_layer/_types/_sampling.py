"""Sampling: the server asks the client's LLM for a message, optionally with tools.

Since 2025-11-25 a `SamplingMessage` may carry a list of blocks and the blocks may be
tool uses and tool results; older peers send one text, image or audio block. Both
shapes are accepted and kept as sent (`SamplingMessage.blocks` gives a list either way).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from ._base import MCPModel, Result, Role
from ._content import (
    UNKNOWN_CONTENT_TAG,
    AudioContent,
    ContentBlock,
    ImageContent,
    TextContent,
    UnknownContent,
    content_discriminator,
)
from ._task_params import TaskAugmentedRequestParams
from ._tools import Tool

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingContent",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "StopReason",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
]


class ToolUseContent(MCPModel):
    """A request from the assistant to call a tool."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    """A unique identifier for this tool use, matched by a `ToolResultContent`."""
    name: str
    input: dict[str, Any]
    """The arguments to pass to the tool, conforming to its input schema."""
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolResultContent(MCPModel):
    """The result of a tool use, provided by the user back to the assistant."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


SamplingMessageContentBlock: TypeAlias = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ToolUseContent, Tag("tool_use")]
    | Annotated[ToolResultContent, Tag("tool_result")]
    | Annotated[UnknownContent, Tag(UNKNOWN_CONTENT_TAG)],
    Discriminator(
        content_discriminator(frozenset({"text", "image", "audio", "tool_use", "tool_result"})),
        custom_error_type="content_type",
        custom_error_message="a content block needs a string 'type' member",
    ),
]
"""One block of a sampling message."""

SamplingContent: TypeAlias = SamplingMessageContentBlock | list[SamplingMessageContentBlock]
"""The content of a sampling message: one block, or (since 2025-11-25) a list of blocks."""

IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]
"""Whose context the client attaches; ``thisServer`` and ``allServers`` are soft-deprecated."""

StopReason: TypeAlias = Literal["endTurn", "stopSequence", "maxTokens", "toolUse"] | str
"""Why sampling stopped; an open string that allows provider-specific reasons."""


class SamplingMessage(MCPModel):
    """A message issued to or received from an LLM API."""

    role: Role
    content: SamplingContent
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    @property
    def blocks(self) -> list[SamplingMessageContentBlock]:
        """The content as a list, whichever shape the sender used."""
        return self.content if isinstance(self.content, list) else [self.content]


class ModelHint(MCPModel):
    """A hint for model selection: a substring to match against model names."""

    name: str | None = None


class ModelPreferences(MCPModel):
    """The server's preferences for model selection; the client may ignore them."""

    hints: list[ModelHint] | None = None
    """Model name hints, in order of preference."""
    cost_priority: float | None = Field(default=None, ge=0, le=1)
    speed_priority: float | None = Field(default=None, ge=0, le=1)
    intelligence_priority: float | None = Field(default=None, ge=0, le=1)


class ToolChoice(MCPModel):
    """Controls tool selection behaviour for sampling requests."""

    mode: Literal["auto", "required", "none"] | None = None
    """``auto`` (the default), ``required`` (use at least one tool) or ``none``."""


class CreateMessageRequestParams(TaskAugmentedRequestParams):
    """Parameters for a ``sampling/createMessage`` request."""

    messages: list[SamplingMessage]
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    """Context to attach; values other than ``none`` need the ``sampling.context`` capability."""
    temperature: float | None = None
    max_tokens: int
    """The maximum number of tokens to sample (required)."""
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    """Provider-specific metadata passed through to the LLM provider."""
    tools: list[Tool] | None = None
    """Tools the model may use (needs the client's ``sampling.tools`` capability)."""
    tool_choice: ToolChoice | None = None


class CreateMessageResult(Result):
    """The client's response to a ``sampling/createMessage`` request."""

    role: Role
    content: SamplingContent
    model: str
    """The name of the model that generated the message."""
    stop_reason: StopReason | None = None

    @property
    def blocks(self) -> list[SamplingMessageContentBlock]:
        """The content as a list, whichever shape the sender used."""
        return self.content if isinstance(self.content, list) else [self.content]
