"""UNSTABLE methods (meta.unstable.json, not in meta.json): opt-in, may change or disappear.

Declared like the stable ones in ``_methods``, with types from ``acp_layer.schema_unstable``;
kept apart so that loading the stable tables does not load the unstable models.
"""

from typing import Any, Final

from jsonrpc_core import NotificationType, RequestType

from . import schema_unstable as u
from ._methods import table

__all__ = [
    "DOCUMENT_DID_CHANGE",
    "DOCUMENT_DID_CLOSE",
    "DOCUMENT_DID_FOCUS",
    "DOCUMENT_DID_OPEN",
    "DOCUMENT_DID_SAVE",
    "MCP_CONNECT",
    "MCP_DISCONNECT",
    "MCP_MESSAGE",
    "MCP_MESSAGE_NOTIFICATION",
    "NES_ACCEPT",
    "NES_CLOSE",
    "NES_REJECT",
    "NES_START",
    "NES_SUGGEST",
    "PROVIDERS_DISABLE",
    "PROVIDERS_LIST",
    "PROVIDERS_SET",
    "SESSION_FORK",
    "UNSTABLE_AGENT_METHODS",
    "UNSTABLE_CLIENT_METHODS",
]

PROVIDERS_LIST: Final = RequestType(
    "providers/list", u.ListProvidersRequest, u.ListProvidersResponse
)
PROVIDERS_SET: Final = RequestType("providers/set", u.SetProviderRequest, u.SetProviderResponse)
PROVIDERS_DISABLE: Final = RequestType(
    "providers/disable", u.DisableProviderRequest, u.DisableProviderResponse
)
SESSION_FORK: Final = RequestType("session/fork", u.ForkSessionRequest, u.ForkSessionResponse)
NES_START: Final = RequestType("nes/start", u.StartNesRequest, u.StartNesResponse)
NES_SUGGEST: Final = RequestType("nes/suggest", u.SuggestNesRequest, u.SuggestNesResponse)
NES_CLOSE: Final = RequestType("nes/close", u.CloseNesRequest, u.CloseNesResponse)
NES_ACCEPT: Final = NotificationType("nes/accept", u.AcceptNesNotification)
NES_REJECT: Final = NotificationType("nes/reject", u.RejectNesNotification)
DOCUMENT_DID_OPEN: Final = NotificationType("document/didOpen", u.DidOpenDocumentNotification)
DOCUMENT_DID_CHANGE: Final = NotificationType("document/didChange", u.DidChangeDocumentNotification)
DOCUMENT_DID_CLOSE: Final = NotificationType("document/didClose", u.DidCloseDocumentNotification)
DOCUMENT_DID_SAVE: Final = NotificationType("document/didSave", u.DidSaveDocumentNotification)
DOCUMENT_DID_FOCUS: Final = NotificationType("document/didFocus", u.DidFocusDocumentNotification)
MCP_CONNECT: Final = RequestType("mcp/connect", u.ConnectMcpRequest, u.ConnectMcpResponse)
MCP_DISCONNECT: Final = RequestType(
    "mcp/disconnect", u.DisconnectMcpRequest, u.DisconnectMcpResponse
)
# mcp/message is served by both sides, as a request (the inner MCP result is any JSON value)
# and as a notification under the same name. A table holds one descriptor per name, so the
# tables list the request; register MCP_MESSAGE_NOTIFICATION next to it.
MCP_MESSAGE: Final = RequestType[u.MessageMcpRequest, Any]("mcp/message", u.MessageMcpRequest)
MCP_MESSAGE_NOTIFICATION: Final = NotificationType("mcp/message", u.MessageMcpNotification)

UNSTABLE_AGENT_METHODS: Final = table(
    PROVIDERS_LIST,
    PROVIDERS_SET,
    PROVIDERS_DISABLE,
    SESSION_FORK,
    NES_START,
    NES_SUGGEST,
    NES_ACCEPT,
    NES_REJECT,
    NES_CLOSE,
    DOCUMENT_DID_OPEN,
    DOCUMENT_DID_CHANGE,
    DOCUMENT_DID_CLOSE,
    DOCUMENT_DID_SAVE,
    DOCUMENT_DID_FOCUS,
    MCP_MESSAGE,
)
"""Unstable methods the agent serves (meta.unstable.json, not in meta.json)."""

UNSTABLE_CLIENT_METHODS: Final = table(MCP_CONNECT, MCP_DISCONNECT, MCP_MESSAGE)
"""Unstable methods the client serves (meta.unstable.json, not in meta.json)."""
