"""Capabilities exchanged in ``initialize``: what each side supports.

Known capabilities are modelled; the set is open, so unknown ones are kept as extra
members. A capability that is "present" with no settings is an empty dict (``{}``);
absent is ``None``.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from ._base import MCPModel

__all__ = [
    "ClientCapabilities",
    "ClientTaskRequestsCapability",
    "ClientTasksCapability",
    "ElicitationCapability",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerTaskRequestsCapability",
    "ServerTasksCapability",
    "TaskElicitationCapability",
    "TaskSamplingCapability",
    "TaskToolsCapability",
    "ToolsCapability",
]

Settings: TypeAlias = dict[str, Any]


class RootsCapability(MCPModel):
    """The client can list roots."""

    list_changed: bool | None = None
    """Whether the client notifies when the list of roots changes."""


class SamplingCapability(MCPModel):
    """The client can sample from an LLM."""

    context: Settings | None = None
    """Supports ``includeContext`` values other than ``none`` (soft-deprecated)."""
    tools: Settings | None = None
    """Supports ``tools`` and ``toolChoice`` in sampling requests (since 2025-11-25)."""


class ElicitationCapability(MCPModel):
    """The client can elicit input from the user; ``{}`` alone means form mode."""

    form: Settings | None = None
    url: Settings | None = None

    @property
    def supports_form(self) -> bool:
        """Form mode: declared, or implied by an empty (pre-2025-11-25) capability."""
        return self.form is not None or self.url is None

    @property
    def supports_url(self) -> bool:
        """URL mode (declared explicitly only)."""
        return self.url is not None


class TaskSamplingCapability(MCPModel):
    """Task support for sampling requests."""

    create_message: Settings | None = None


class TaskElicitationCapability(MCPModel):
    """Task support for elicitation requests."""

    create: Settings | None = None


class ClientTaskRequestsCapability(MCPModel):
    """The client requests that may be task-augmented (the set is exhaustive)."""

    sampling: TaskSamplingCapability | None = None
    elicitation: TaskElicitationCapability | None = None


class ClientTasksCapability(MCPModel):
    """The client supports task-augmented requests."""

    cancel: Settings | None = None
    """Supports ``tasks/cancel``."""
    requests: ClientTaskRequestsCapability | None = None
    list: Settings | None = None
    """Supports ``tasks/list``."""


class ClientCapabilities(MCPModel):
    """Capabilities a client may support; unknown ones are kept."""

    experimental: dict[str, Settings] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None
    extensions: dict[str, Settings] | None = None
    """Extensions the client supports, by identifier (since 2026-07-28)."""


class PromptsCapability(MCPModel):
    """The server offers prompts."""

    list_changed: bool | None = None


class ResourcesCapability(MCPModel):
    """The server offers resources."""

    subscribe: bool | None = None
    list_changed: bool | None = None


class ToolsCapability(MCPModel):
    """The server offers tools."""

    list_changed: bool | None = None


class TaskToolsCapability(MCPModel):
    """Task support for tool requests."""

    call: Settings | None = None


class ServerTaskRequestsCapability(MCPModel):
    """The server requests that may be task-augmented (the set is exhaustive)."""

    tools: TaskToolsCapability | None = None


class ServerTasksCapability(MCPModel):
    """The server supports task-augmented requests."""

    cancel: Settings | None = None
    """Supports ``tasks/cancel``."""
    requests: ServerTaskRequestsCapability | None = None
    list: Settings | None = None
    """Supports ``tasks/list``."""


class ServerCapabilities(MCPModel):
    """Capabilities a server may support; unknown ones are kept."""

    experimental: dict[str, Settings] | None = None
    logging: Settings | None = None
    completions: Settings | None = None
    """Argument autocompletion (since 2025-03-26)."""
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None
    extensions: dict[str, Settings] | None = None
    """Extensions the server supports, by identifier (since 2026-07-28)."""
