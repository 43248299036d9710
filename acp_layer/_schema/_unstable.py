"""UNSTABLE: types that exist only in schema.unstable.json; they may change or disappear.

Covers session forking, LLM providers, MCP-over-ACP, plans by id, notices, context
compaction and usage totals (NES and document sync are in ``_unstable_nes``). Unstable
*fields* of stable types arrive as extra fields on the stable models (nothing is lost); the
``Unstable*`` subclasses here give them types: capabilities, `UnstableInitializeRequest` /
`UnstableInitializeResponse`, `UnstablePromptResponse`, tool calls with ``name``, and
`UnstableSessionUpdate` (stable and unstable variants, open like the stable union).
"""

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import Field

from ._base import ACPModel, EmptyResult, SessionId, UInt64
from ._capabilities import (
    AgentCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    McpCapabilities,
    SessionCapabilities,
)
from ._config import SessionConfigOption
from ._content import ContentBlock
from ._initialize import InitializeRequest, InitializeResponse
from ._lenient import (
    Clearable,
    ItemsOrDefault,
    ItemsOrEmpty,
    OrDefault,
    SkipInvalidItems,
    tagged_union,
)
from ._mcp import McpServerHttp, McpServerSse, McpServerStdio, UnknownMcpServer
from ._prompt import PromptResponse
from ._session import SessionModeState
from ._tool_calls import ToolCall, ToolCallProgress, ToolCallUpdate
from ._unstable_nes import ClientNesCapabilities, NesCapabilities, PositionEncodingKind
from ._updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Plan,
    PlanEntry,
    SessionInfoUpdate,
    UnknownSessionUpdate,
    UsageUpdate,
    UserMessageChunk,
)

__all__ = [
    "CompactionCapabilities",
    "CompactionId",
    "CompactionStatus",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "ConnectMcpRequest",
    "ConnectMcpResponse",
    "DisableProviderRequest",
    "DisableProviderResponse",
    "DisconnectMcpRequest",
    "DisconnectMcpResponse",
    "ForkSessionRequest",
    "ForkSessionResponse",
    "ListProvidersRequest",
    "ListProvidersResponse",
    "LlmProtocol",
    "McpConnectionId",
    "McpServerAcp",
    "McpServerAcpId",
    "MessageMcpNotification",
    "MessageMcpRequest",
    "MessageMcpResponse",
    "Notice",
    "NoticeSeverity",
    "PlanCapabilities",
    "PlanFile",
    "PlanId",
    "PlanItems",
    "PlanMarkdown",
    "PlanRemoved",
    "PlanUpdate",
    "PlanUpdateContent",
    "ProviderCurrentConfig",
    "ProviderId",
    "ProviderInfo",
    "ProvidersCapabilities",
    "SessionForkCapabilities",
    "SetProviderRequest",
    "SetProviderResponse",
    "UnstableAgentCapabilities",
    "UnstableClientCapabilities",
    "UnstableClientSessionCapabilities",
    "UnstableInitializeRequest",
    "UnstableInitializeResponse",
    "UnstableMcpCapabilities",
    "UnstableMcpServer",
    "UnstablePromptResponse",
    "UnstableSessionCapabilities",
    "UnstableSessionNotification",
    "UnstableSessionUpdate",
    "UnstableToolCall",
    "UnstableToolCallProgress",
    "UnstableToolCallUpdate",
    "Usage",
]

CompactionId = str
PlanId = str
ProviderId = str
McpServerAcpId = str
McpConnectionId = str
LlmProtocol: TypeAlias = str
"""LLM API protocol: ``anthropic``, ``openai``, ``azure``, ``vertex``, ``bedrock`` or other."""
NoticeSeverity: TypeAlias = str
"""Presentation severity of a notice: ``info``, ``warning``, ``error`` or a future value."""
CompactionStatus: TypeAlias = str
"""``in_progress``, ``completed``, ``failed``, ``cancelled`` or a future value."""
MessageMcpResponse: TypeAlias = Any
"""Result of ``mcp/message``: the inner MCP result, any JSON value."""

# --- capabilities ----------------------------------------------------------------------------


class CompactionCapabilities(ACPModel):
    """Client support for id-addressed context compaction updates (present means supported)."""


class PlanCapabilities(ACPModel):
    """Client support for id-addressed plan updates (present means supported)."""


class ProvidersCapabilities(ACPModel):
    """Agent support for ``providers/*`` (present means supported)."""


class SessionForkCapabilities(ACPModel):
    """Agent support for ``session/fork`` (present means supported)."""


class UnstableMcpCapabilities(McpCapabilities):
    """`McpCapabilities` with the unstable ``acp`` flag (MCP over ACP)."""

    acp: OrDefault[bool] = False


class UnstableSessionCapabilities(SessionCapabilities):
    """`SessionCapabilities` with the unstable ``fork`` capability."""

    fork: OrDefault[SessionForkCapabilities | None] = None


class UnstableAgentCapabilities(AgentCapabilities):
    """`AgentCapabilities` with the unstable providers, NES and position-encoding fields."""

    mcp_capabilities: OrDefault[UnstableMcpCapabilities] = Field(
        default_factory=UnstableMcpCapabilities
    )
    session_capabilities: OrDefault[UnstableSessionCapabilities] = Field(
        default_factory=UnstableSessionCapabilities
    )
    providers: OrDefault[ProvidersCapabilities | None] = None
    nes: OrDefault[NesCapabilities | None] = None
    position_encoding: OrDefault[PositionEncodingKind | None] = None


class UnstableClientSessionCapabilities(ClientSessionCapabilities):
    """`ClientSessionCapabilities` with the unstable ``compaction`` capability."""

    compaction: OrDefault[CompactionCapabilities | None] = None


class UnstableClientCapabilities(ClientCapabilities):
    """`ClientCapabilities` with the unstable plan, NES and position-encoding fields."""

    session: OrDefault[UnstableClientSessionCapabilities | None] = None
    plan: OrDefault[PlanCapabilities | None] = None
    nes: OrDefault[ClientNesCapabilities | None] = None
    position_encodings: ItemsOrDefault[PositionEncodingKind] = Field(default_factory=list)


class UnstableInitializeRequest(InitializeRequest):
    """`InitializeRequest` typed with `UnstableClientCapabilities`."""

    client_capabilities: OrDefault[UnstableClientCapabilities] = Field(
        default_factory=UnstableClientCapabilities
    )


class UnstableInitializeResponse(InitializeResponse):
    """`InitializeResponse` typed with `UnstableAgentCapabilities`."""

    agent_capabilities: OrDefault[UnstableAgentCapabilities] = Field(
        default_factory=UnstableAgentCapabilities
    )


# --- usage, tool call names ------------------------------------------------------------------


class Usage(ACPModel):
    """Token usage totals across the session."""

    total_tokens: UInt64
    input_tokens: UInt64
    output_tokens: UInt64
    thought_tokens: OrDefault[UInt64 | None] = None
    cached_read_tokens: OrDefault[UInt64 | None] = None
    cached_write_tokens: OrDefault[UInt64 | None] = None


class UnstablePromptResponse(PromptResponse):
    """`PromptResponse` with the unstable ``usage`` totals."""

    usage: OrDefault[Usage | None] = None


class UnstableToolCall(ToolCall):
    """`ToolCall` with the unstable ``name`` (the tool's name)."""

    name: OrDefault[str | None] = None


class UnstableToolCallUpdate(ToolCallUpdate):
    """`ToolCallUpdate` with the unstable ``name``."""

    name: OrDefault[str | None] = None


class UnstableToolCallProgress(ToolCallProgress):
    """`ToolCallProgress` (``tool_call_update``) with the unstable ``name``."""

    name: OrDefault[str | None] = None


# --- MCP over ACP ----------------------------------------------------------------------------


class McpServerAcp(ACPModel):
    """An MCP server reached over the ACP connection itself (``mcp/connect``, ``mcp/message``)."""

    type: Literal["acp"] = "acp"
    name: str
    server_id: McpServerAcpId


if TYPE_CHECKING:
    UnstableMcpServer: TypeAlias = (
        McpServerHttp | McpServerSse | McpServerAcp | McpServerStdio | UnknownMcpServer
    )
else:
    UnstableMcpServer = tagged_union(
        "type",
        McpServerHttp,
        McpServerSse,
        McpServerAcp,
        untagged=McpServerStdio,
        aliases={"stdio": McpServerStdio},
        unknown=UnknownMcpServer,
    )
"""`McpServer` with the unstable ``acp`` transport."""


class ConnectMcpRequest(ACPModel):
    """Open an MCP-over-ACP connection to a server declared with `McpServerAcp`."""

    server_id: McpServerAcpId


class ConnectMcpResponse(ACPModel):
    """Response to ``mcp/connect``."""

    connection_id: McpConnectionId


class DisconnectMcpRequest(ACPModel):
    """Close an MCP-over-ACP connection."""

    connection_id: McpConnectionId


class DisconnectMcpResponse(EmptyResult):
    """Response to ``mcp/disconnect``."""


class MessageMcpRequest(ACPModel):
    """Request parameters for ``mcp/message``: an inner MCP request."""

    connection_id: McpConnectionId
    method: str
    params: dict[str, Any] | None = None


class MessageMcpNotification(ACPModel):
    """Notification parameters for ``mcp/message``: an inner MCP notification."""

    connection_id: McpConnectionId
    method: str
    params: OrDefault[dict[str, Any] | None] = None


# --- session/fork, providers/* ---------------------------------------------------------------


class ForkSessionRequest(ACPModel):
    """Request parameters for forking an existing session into a new one."""

    session_id: SessionId
    cwd: str
    mcp_servers: ItemsOrDefault[UnstableMcpServer] = Field(default_factory=list)
    additional_directories: ItemsOrDefault[str] = Field(default_factory=list)


class ForkSessionResponse(ACPModel):
    """Response from forking a session."""

    session_id: SessionId
    modes: OrDefault[SessionModeState | None] = None
    config_options: ItemsOrDefault[SessionConfigOption] | None = None


class ProviderCurrentConfig(ACPModel):
    """Current effective, non-secret routing configuration of a provider."""

    api_type: LlmProtocol
    base_url: str


class ProviderInfo(ACPModel):
    """Information about a configurable LLM provider."""

    provider_id: ProviderId
    supported: ItemsOrEmpty[LlmProtocol]
    required: bool
    """A required provider cannot be disabled with ``providers/disable``."""
    current: ProviderCurrentConfig | None = None
    """``None`` means the provider is disabled."""


class ListProvidersRequest(ACPModel):
    """Request parameters for ``providers/list``."""


class ListProvidersResponse(ACPModel):
    """Response to ``providers/list``."""

    providers: list[ProviderInfo]


class SetProviderRequest(ACPModel):
    """Request parameters for ``providers/set``: replaces one provider's configuration."""

    provider_id: ProviderId
    api_type: LlmProtocol
    base_url: str
    headers: dict[str, str] = Field(default_factory=dict)


class SetProviderResponse(EmptyResult):
    """Response to ``providers/set``."""


class DisableProviderRequest(ACPModel):
    """Request parameters for ``providers/disable``."""

    provider_id: ProviderId


class DisableProviderResponse(EmptyResult):
    """Response to ``providers/disable``."""


# --- unstable session updates ----------------------------------------------------------------


class PlanItems(ACPModel):
    """Structured plan entries."""

    type: Literal["items"] = "items"
    plan_id: PlanId
    entries: ItemsOrEmpty[PlanEntry]


class PlanFile(ACPModel):
    """A URI pointing to a file containing the plan."""

    type: Literal["file"] = "file"
    plan_id: PlanId
    uri: str


class PlanMarkdown(ACPModel):
    """Raw markdown content for the plan."""

    type: Literal["markdown"] = "markdown"
    plan_id: PlanId
    content: str


if TYPE_CHECKING:
    PlanUpdateContent: TypeAlias = PlanItems | PlanFile | PlanMarkdown
else:
    PlanUpdateContent = tagged_union("type", PlanItems, PlanFile, PlanMarkdown)
"""The content of a plan update, told apart by ``type``."""


class PlanUpdate(ACPModel):
    """A content update for a plan identified by id (``plan_update``)."""

    session_update: Literal["plan_update"] = "plan_update"
    plan: PlanUpdateContent


class PlanRemoved(ACPModel):
    """A plan identified by id was removed (``plan_removed``)."""

    session_update: Literal["plan_removed"] = "plan_removed"
    plan_id: PlanId


class Notice(ACPModel):
    """Fire-and-forget advisory information for the user (``notice``); may be ignored."""

    session_update: Literal["notice"] = "notice"
    severity: NoticeSeverity
    title: str
    description: OrDefault[str | None] = None


class CompactionUpdate(ACPModel):
    """A context compaction upsert (``compaction_update``); later updates patch it by id.

    ``summary`` and ``error`` are patches: absent leaves the value, `CLEAR` (``null``) clears it.
    """

    session_update: Literal["compaction_update"] = "compaction_update"
    compaction_id: CompactionId
    status: CompactionStatus
    summary: OrDefault[Clearable[Annotated[list[ContentBlock], SkipInvalidItems]]] = None
    error: OrDefault[Clearable[str]] = None


class CompactionSummaryChunk(ACPModel):
    """A content block appended to the summary of an in-progress compaction."""

    session_update: Literal["compaction_summary_chunk"] = "compaction_summary_chunk"
    compaction_id: CompactionId
    content: ContentBlock


if TYPE_CHECKING:
    UnstableSessionUpdate: TypeAlias = (
        UserMessageChunk
        | AgentMessageChunk
        | AgentThoughtChunk
        | UnstableToolCall
        | UnstableToolCallProgress
        | Plan
        | PlanUpdate
        | PlanRemoved
        | AvailableCommandsUpdate
        | CurrentModeUpdate
        | ConfigOptionUpdate
        | SessionInfoUpdate
        | UsageUpdate
        | Notice
        | CompactionUpdate
        | CompactionSummaryChunk
        | UnknownSessionUpdate
    )
else:
    UnstableSessionUpdate = tagged_union(
        "session_update",
        UserMessageChunk,
        AgentMessageChunk,
        AgentThoughtChunk,
        UnstableToolCall,
        UnstableToolCallProgress,
        Plan,
        PlanUpdate,
        PlanRemoved,
        AvailableCommandsUpdate,
        CurrentModeUpdate,
        ConfigOptionUpdate,
        SessionInfoUpdate,
        UsageUpdate,
        Notice,
        CompactionUpdate,
        CompactionSummaryChunk,
        unknown=UnknownSessionUpdate,
    )
"""`SessionUpdate` with the unstable variants."""


class UnstableSessionNotification(ACPModel):
    """`SessionNotification` whose update may be an unstable variant."""

    session_id: SessionId
    update: UnstableSessionUpdate
