"""Tools: definitions, listing and calls.

``inputSchema`` and ``outputSchema`` are JSON Schema objects (2020-12 unless they say
otherwise in ``$schema``) and are kept as plain dicts: JSON Schema is an open vocabulary,
and the layer passes it through verbatim. The schema requires ``"type": "object"`` at
their top level; producing that is the job of whoever builds the schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import MCPModel, PaginatedResult, Result
from ._common import BaseMetadata, Icon
from ._content import ContentBlock
from ._task_params import TaskAugmentedRequestParams

__all__ = [
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


class ToolAnnotations(MCPModel):
    """Hints describing a tool to clients; never to be trusted from an untrusted server."""

    title: str | None = None
    """A human-readable title for the tool."""
    read_only_hint: bool | None = None
    """If true, the tool does not modify its environment (default false)."""
    destructive_hint: bool | None = None
    """If true, the tool may perform destructive updates (default true)."""
    idempotent_hint: bool | None = None
    """If true, repeated calls with the same arguments have no additional effect."""
    open_world_hint: bool | None = None
    """If true, the tool may interact with an open world of external entities."""


class ToolExecution(MCPModel):
    """Execution-related properties of a tool."""

    task_support: Literal["forbidden", "optional", "required"] | None = None
    """Whether the tool supports task-augmented execution (absent means forbidden)."""


class Tool(BaseMetadata):
    """Definition for a tool the client can call."""

    description: str | None = None
    input_schema: dict[str, Any]
    """A JSON Schema object (``"type": "object"``) for the tool's arguments."""
    output_schema: dict[str, Any] | None = None
    """A JSON Schema object for ``structuredContent`` in the tool's results."""
    annotations: ToolAnnotations | None = None
    execution: ToolExecution | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListToolsResult(PaginatedResult):
    """The server's response to a ``tools/list`` request."""

    tools: list[Tool]


class CallToolRequestParams(TaskAugmentedRequestParams):
    """Parameters for a ``tools/call`` request."""

    name: str
    arguments: dict[str, Any] | None = None


class CallToolResult(Result):
    """The server's response to a tool call.

    Errors of the tool itself belong here with ``is_error=True`` (the model can read and
    correct them); protocol errors are JSON-RPC errors instead.
    """

    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    """A JSON object matching the tool's ``output_schema``, if it has one."""
    is_error: bool | None = None
