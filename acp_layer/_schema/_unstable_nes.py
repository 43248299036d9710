"""UNSTABLE: next edit suggestions (``nes/*``) and document sync (``document/*``).

Types that exist only in schema.unstable.json; they may change or disappear. Positions follow
LSP 3.17: zero-based lines, character offsets in the negotiated `PositionEncodingKind`
(UTF-16 by default).
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from ._base import ACPModel, EmptyResult, Int64, SessionId, UInt32, UInt64
from ._lenient import ItemsOrEmpty, OrDefault, tagged_union

__all__ = [
    "AcceptNesNotification",
    "ClientNesCapabilities",
    "CloseNesRequest",
    "CloseNesResponse",
    "DidChangeDocumentNotification",
    "DidCloseDocumentNotification",
    "DidFocusDocumentNotification",
    "DidOpenDocumentNotification",
    "DidSaveDocumentNotification",
    "NesCapabilities",
    "NesContextCapabilities",
    "NesDiagnostic",
    "NesDiagnosticSeverity",
    "NesDiagnosticsCapabilities",
    "NesDocumentDidChangeCapabilities",
    "NesDocumentDidCloseCapabilities",
    "NesDocumentDidFocusCapabilities",
    "NesDocumentDidOpenCapabilities",
    "NesDocumentDidSaveCapabilities",
    "NesDocumentEventCapabilities",
    "NesEditHistoryCapabilities",
    "NesEditHistoryEntry",
    "NesEditSuggestion",
    "NesEventCapabilities",
    "NesExcerpt",
    "NesJumpCapabilities",
    "NesJumpSuggestion",
    "NesOpenFile",
    "NesOpenFilesCapabilities",
    "NesRecentFile",
    "NesRecentFilesCapabilities",
    "NesRejectReason",
    "NesRelatedSnippet",
    "NesRelatedSnippetsCapabilities",
    "NesRenameCapabilities",
    "NesRenameSuggestion",
    "NesRepository",
    "NesSearchAndReplaceCapabilities",
    "NesSearchAndReplaceSuggestion",
    "NesSuggestContext",
    "NesSuggestion",
    "NesSuggestionId",
    "NesTextEdit",
    "NesTriggerKind",
    "NesUserAction",
    "NesUserActionsCapabilities",
    "Position",
    "PositionEncodingKind",
    "Range",
    "RejectNesNotification",
    "StartNesRequest",
    "StartNesResponse",
    "SuggestNesRequest",
    "SuggestNesResponse",
    "TextDocumentContentChangeEvent",
    "TextDocumentSyncKind",
    "WorkspaceFolder",
]

NesSuggestionId = str
PositionEncodingKind = Literal["utf-16", "utf-32", "utf-8"]
"""The encoding used for character offsets in positions (default UTF-16)."""
TextDocumentSyncKind = Literal["full", "incremental"]
"""How the agent wants document changes delivered."""
NesTriggerKind = Literal["automatic", "diagnostic", "manual"]
"""What triggered the suggestion request."""
NesRejectReason = Literal["rejected", "ignored", "replaced", "cancelled"]
"""The reason a suggestion was rejected."""
NesDiagnosticSeverity = Literal["error", "warning", "information", "hint"]
"""Severity of a diagnostic."""


class Position(ACPModel):
    """A zero-based position in a text document."""

    line: UInt32
    character: UInt32


class Range(ACPModel):
    """A range in a text document: ``start`` inclusive, ``end`` exclusive."""

    start: Position
    end: Position


# --- capabilities ----------------------------------------------------------------------------


class NesJumpCapabilities(ACPModel):
    """Marker for jump suggestion support."""


class NesRenameCapabilities(ACPModel):
    """Marker for rename suggestion support."""


class NesSearchAndReplaceCapabilities(ACPModel):
    """Marker for search and replace suggestion support."""


class ClientNesCapabilities(ACPModel):
    """NES capabilities advertised by the client during initialization."""

    jump: OrDefault[NesJumpCapabilities | None] = None
    rename: OrDefault[NesRenameCapabilities | None] = None
    search_and_replace: OrDefault[NesSearchAndReplaceCapabilities | None] = None


class NesDocumentDidOpenCapabilities(ACPModel):
    """Marker for ``document/didOpen`` capability support."""


class NesDocumentDidChangeCapabilities(ACPModel):
    """Capabilities for ``document/didChange`` events."""

    sync_kind: TextDocumentSyncKind


class NesDocumentDidCloseCapabilities(ACPModel):
    """Marker for ``document/didClose`` capability support."""


class NesDocumentDidSaveCapabilities(ACPModel):
    """Marker for ``document/didSave`` capability support."""


class NesDocumentDidFocusCapabilities(ACPModel):
    """Marker for ``document/didFocus`` capability support."""


class NesDocumentEventCapabilities(ACPModel):
    """Document event capabilities the agent wants to receive."""

    did_open: OrDefault[NesDocumentDidOpenCapabilities | None] = None
    did_change: OrDefault[NesDocumentDidChangeCapabilities | None] = None
    did_close: OrDefault[NesDocumentDidCloseCapabilities | None] = None
    did_save: OrDefault[NesDocumentDidSaveCapabilities | None] = None
    did_focus: OrDefault[NesDocumentDidFocusCapabilities | None] = None


class NesEventCapabilities(ACPModel):
    """Event capabilities the agent can consume."""

    document: OrDefault[NesDocumentEventCapabilities | None] = None


class NesRecentFilesCapabilities(ACPModel):
    """Capabilities for recent files context."""

    max_count: OrDefault[UInt32 | None] = None


class NesRelatedSnippetsCapabilities(ACPModel):
    """Capabilities for related snippets context."""


class NesEditHistoryCapabilities(ACPModel):
    """Capabilities for edit history context."""

    max_count: OrDefault[UInt32 | None] = None


class NesUserActionsCapabilities(ACPModel):
    """Capabilities for user actions context."""

    max_count: OrDefault[UInt32 | None] = None


class NesOpenFilesCapabilities(ACPModel):
    """Capabilities for open files context."""


class NesDiagnosticsCapabilities(ACPModel):
    """Capabilities for diagnostics context."""


class NesContextCapabilities(ACPModel):
    """Context capabilities the agent wants attached to each suggestion request."""

    recent_files: OrDefault[NesRecentFilesCapabilities | None] = None
    related_snippets: OrDefault[NesRelatedSnippetsCapabilities | None] = None
    edit_history: OrDefault[NesEditHistoryCapabilities | None] = None
    user_actions: OrDefault[NesUserActionsCapabilities | None] = None
    open_files: OrDefault[NesOpenFilesCapabilities | None] = None
    diagnostics: OrDefault[NesDiagnosticsCapabilities | None] = None


class NesCapabilities(ACPModel):
    """NES capabilities advertised by the agent during initialization."""

    events: OrDefault[NesEventCapabilities | None] = None
    context: OrDefault[NesContextCapabilities | None] = None


# --- nes/start, nes/close, nes/accept, nes/reject ---------------------------------------------


class WorkspaceFolder(ACPModel):
    """A workspace folder."""

    uri: str
    name: str


class NesRepository(ACPModel):
    """Repository metadata for an NES session."""

    name: str
    owner: str
    remote_url: str


class StartNesRequest(ACPModel):
    """Request to start an NES session."""

    workspace_uri: OrDefault[str | None] = None
    workspace_folders: list[WorkspaceFolder] | None = None
    repository: OrDefault[NesRepository | None] = None


class StartNesResponse(ACPModel):
    """Response to ``nes/start``."""

    session_id: SessionId


class CloseNesRequest(ACPModel):
    """Request to close an NES session."""

    session_id: SessionId


class CloseNesResponse(EmptyResult):
    """Response from closing an NES session."""


class AcceptNesNotification(ACPModel):
    """Notification sent when a suggestion is accepted."""

    session_id: SessionId
    id: NesSuggestionId


class RejectNesNotification(ACPModel):
    """Notification sent when a suggestion is rejected."""

    session_id: SessionId
    id: NesSuggestionId
    reason: OrDefault[NesRejectReason | None] = None


# --- nes/suggest -----------------------------------------------------------------------------


class NesRecentFile(ACPModel):
    """A recently accessed file."""

    uri: str
    language_id: str
    text: str


class NesExcerpt(ACPModel):
    """A code excerpt from a file (zero-based lines)."""

    start_line: UInt32
    end_line: UInt32
    text: str


class NesRelatedSnippet(ACPModel):
    """A related code snippet from a file."""

    uri: str
    excerpts: list[NesExcerpt]


class NesEditHistoryEntry(ACPModel):
    """An entry in the edit history."""

    uri: str
    diff: str


class NesUserAction(ACPModel):
    """A user action (typing, cursor movement, etc.)."""

    action: str
    uri: str
    position: Position
    timestamp_ms: UInt64


class NesOpenFile(ACPModel):
    """An open file in the editor."""

    uri: str
    language_id: str
    visible_range: OrDefault[Range | None] = None
    last_focused_ms: OrDefault[UInt64 | None] = None


class NesDiagnostic(ACPModel):
    """A diagnostic (error, warning, etc.)."""

    uri: str
    range: Range
    severity: NesDiagnosticSeverity
    message: str


class NesSuggestContext(ACPModel):
    """Context attached to a suggestion request, as the agent's capabilities asked."""

    recent_files: list[NesRecentFile] | None = None
    related_snippets: list[NesRelatedSnippet] | None = None
    edit_history: list[NesEditHistoryEntry] | None = None
    user_actions: list[NesUserAction] | None = None
    open_files: list[NesOpenFile] | None = None
    diagnostics: list[NesDiagnostic] | None = None


class SuggestNesRequest(ACPModel):
    """Request for a code suggestion."""

    session_id: SessionId
    uri: str
    version: Int64
    position: Position
    trigger_kind: NesTriggerKind
    selection: Range | None = None
    context: NesSuggestContext | None = None


class NesTextEdit(ACPModel):
    """A text edit within a suggestion."""

    range: Range
    new_text: str


class NesEditSuggestion(ACPModel):
    """A text edit suggestion."""

    kind: Literal["edit"] = "edit"
    id: NesSuggestionId
    uri: str
    edits: list[NesTextEdit]
    cursor_position: OrDefault[Position | None] = None


class NesJumpSuggestion(ACPModel):
    """A jump-to-location suggestion."""

    kind: Literal["jump"] = "jump"
    id: NesSuggestionId
    uri: str
    position: Position


class NesRenameSuggestion(ACPModel):
    """A rename symbol suggestion."""

    kind: Literal["rename"] = "rename"
    id: NesSuggestionId
    uri: str
    position: Position
    new_name: str


class NesSearchAndReplaceSuggestion(ACPModel):
    """A search-and-replace suggestion (tag ``searchAndReplace``, camelCase on the wire)."""

    kind: Literal["searchAndReplace"] = "searchAndReplace"
    id: NesSuggestionId
    uri: str
    search: str
    replace: str
    is_regex: bool | None = None
    """Whether ``search`` is a regular expression (default false)."""


if TYPE_CHECKING:
    NesSuggestion: TypeAlias = (
        NesEditSuggestion | NesJumpSuggestion | NesRenameSuggestion | NesSearchAndReplaceSuggestion
    )
else:
    NesSuggestion = tagged_union(
        "kind",
        NesEditSuggestion,
        NesJumpSuggestion,
        NesRenameSuggestion,
        NesSearchAndReplaceSuggestion,
    )
"""A suggestion returned by the agent, told apart by ``kind``."""


class SuggestNesResponse(ACPModel):
    """Response to ``nes/suggest``."""

    suggestions: list[NesSuggestion]


# --- document/* ------------------------------------------------------------------------------


class TextDocumentContentChangeEvent(ACPModel):
    """A content change; without ``range`` the text replaces the whole document."""

    text: str
    range: Range | None = None


class DidOpenDocumentNotification(ACPModel):
    """Notification sent when a file is opened in the editor."""

    session_id: SessionId
    uri: str
    language_id: str
    version: Int64
    text: str


class DidChangeDocumentNotification(ACPModel):
    """Notification sent when a file is edited."""

    session_id: SessionId
    uri: str
    version: Int64
    content_changes: ItemsOrEmpty[TextDocumentContentChangeEvent]


class DidCloseDocumentNotification(ACPModel):
    """Notification sent when a file is closed."""

    session_id: SessionId
    uri: str


class DidSaveDocumentNotification(ACPModel):
    """Notification sent when a file is saved."""

    session_id: SessionId
    uri: str


class DidFocusDocumentNotification(ACPModel):
    """Notification sent when a file becomes the active editor tab."""

    session_id: SessionId
    uri: str
    version: Int64
    position: Position
    visible_range: Range
