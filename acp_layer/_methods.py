"""ACP's methods declared once, as data (meta.json, meta.unstable.json).

Both sides of an ACP connection are JSON-RPC servers. `AGENT_METHODS` are served by the agent
(the client calls them), `CLIENT_METHODS` by the client; ``$/cancel_request`` is served by
both and appears in both tables. Each descriptor is also a module constant::

    registry.on(SESSION_PROMPT, handle_prompt)            # agent side
    await peer.request(FS_READ_TEXT_FILE, ReadTextFileRequest(...))  # agent calling the client

Unstable methods (meta.unstable.json minus meta.json) are declared in ``_methods_unstable``
with types from ``acp_layer.schema_unstable``; their tables `UNSTABLE_AGENT_METHODS` and
`UNSTABLE_CLIENT_METHODS` are also reachable here, loaded on first access. Invariant (checked
by the tests): the tables hold exactly the methods of meta.json / meta.unstable.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, cast

from jsonrpc_core import NotificationType, RequestType

from . import schema as s

if TYPE_CHECKING:
    from ._methods_unstable import UNSTABLE_AGENT_METHODS, UNSTABLE_CLIENT_METHODS

__all__ = [
    "AGENT_METHODS",
    "AUTHENTICATE",
    "CANCEL_REQUEST",
    "CLIENT_METHODS",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "FS_READ_TEXT_FILE",
    "FS_WRITE_TEXT_FILE",
    "INITIALIZE",
    "LOGOUT",
    "PROTOCOL_METHODS",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_LIST",
    "SESSION_LOAD",
    "SESSION_NEW",
    "SESSION_PROMPT",
    "SESSION_REQUEST_PERMISSION",
    "SESSION_RESUME",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_SET_MODE",
    "SESSION_UPDATE",
    "TERMINAL_CREATE",
    "TERMINAL_KILL",
    "TERMINAL_OUTPUT",
    "TERMINAL_RELEASE",
    "TERMINAL_WAIT_FOR_EXIT",
    "UNSTABLE_AGENT_METHODS",
    "UNSTABLE_CLIENT_METHODS",
    "Descriptor",
    "table",
]

Descriptor = RequestType[Any, Any] | NotificationType[Any]

# --- served by the agent -------------------------------------------------------------------

INITIALIZE: Final = RequestType("initialize", s.InitializeRequest, s.InitializeResponse)
AUTHENTICATE: Final = RequestType("authenticate", s.AuthenticateRequest, s.AuthenticateResponse)
LOGOUT: Final = RequestType("logout", s.LogoutRequest, s.LogoutResponse)
SESSION_NEW: Final = RequestType("session/new", s.NewSessionRequest, s.NewSessionResponse)
SESSION_LOAD: Final = RequestType("session/load", s.LoadSessionRequest, s.LoadSessionResponse)
SESSION_LIST: Final = RequestType("session/list", s.ListSessionsRequest, s.ListSessionsResponse)
SESSION_DELETE: Final = RequestType(
    "session/delete", s.DeleteSessionRequest, s.DeleteSessionResponse
)
SESSION_RESUME: Final = RequestType(
    "session/resume", s.ResumeSessionRequest, s.ResumeSessionResponse
)
SESSION_CLOSE: Final = RequestType("session/close", s.CloseSessionRequest, s.CloseSessionResponse)
SESSION_SET_MODE: Final = RequestType(
    "session/set_mode", s.SetSessionModeRequest, s.SetSessionModeResponse
)
SESSION_SET_CONFIG_OPTION: Final = RequestType(
    "session/set_config_option", s.SetSessionConfigOptionRequest, s.SetSessionConfigOptionResponse
)
SESSION_PROMPT: Final = RequestType("session/prompt", s.PromptRequest, s.PromptResponse)
SESSION_CANCEL: Final = NotificationType("session/cancel", s.CancelNotification)

# --- served by the client ------------------------------------------------------------------

SESSION_REQUEST_PERMISSION: Final = RequestType(
    "session/request_permission", s.RequestPermissionRequest, s.RequestPermissionResponse
)
FS_READ_TEXT_FILE: Final = RequestType(
    "fs/read_text_file", s.ReadTextFileRequest, s.ReadTextFileResponse
)
FS_WRITE_TEXT_FILE: Final = RequestType(
    "fs/write_text_file", s.WriteTextFileRequest, s.WriteTextFileResponse
)
TERMINAL_CREATE: Final = RequestType(
    "terminal/create", s.CreateTerminalRequest, s.CreateTerminalResponse
)
TERMINAL_OUTPUT: Final = RequestType(
    "terminal/output", s.TerminalOutputRequest, s.TerminalOutputResponse
)
TERMINAL_RELEASE: Final = RequestType(
    "terminal/release", s.ReleaseTerminalRequest, s.ReleaseTerminalResponse
)
TERMINAL_WAIT_FOR_EXIT: Final = RequestType(
    "terminal/wait_for_exit", s.WaitForTerminalExitRequest, s.WaitForTerminalExitResponse
)
TERMINAL_KILL: Final = RequestType("terminal/kill", s.KillTerminalRequest, s.KillTerminalResponse)
# Params and result are unions (by mode / action), not classes: hence the explicit type
# arguments, and `Any` for the runtime objects (pydantic validates them via a TypeAdapter).
ELICITATION_CREATE: Final = RequestType[s.CreateElicitationRequest, s.CreateElicitationResponse](
    "elicitation/create",
    cast(Any, s.CreateElicitationRequest),
    cast(Any, s.CreateElicitationResponse),
)
SESSION_UPDATE: Final = NotificationType("session/update", s.SessionNotification)
ELICITATION_COMPLETE: Final = NotificationType(
    "elicitation/complete", s.CompleteElicitationNotification
)

# --- served by both ------------------------------------------------------------------------

CANCEL_REQUEST: Final = NotificationType("$/cancel_request", s.CancelRequestNotification)


def table(*descriptors: Descriptor) -> Mapping[str, Descriptor]:
    """A read-only method name -> descriptor mapping."""
    return MappingProxyType({d.method: d for d in descriptors})


PROTOCOL_METHODS: Final = table(CANCEL_REQUEST)
"""Methods every side serves (meta.json ``protocolMethods``)."""

AGENT_METHODS: Final = table(
    INITIALIZE,
    AUTHENTICATE,
    LOGOUT,
    SESSION_NEW,
    SESSION_LOAD,
    SESSION_LIST,
    SESSION_DELETE,
    SESSION_RESUME,
    SESSION_CLOSE,
    SESSION_SET_MODE,
    SESSION_SET_CONFIG_OPTION,
    SESSION_PROMPT,
    SESSION_CANCEL,
    CANCEL_REQUEST,
)
"""Method name -> descriptor for every method the agent serves."""

CLIENT_METHODS: Final = table(
    SESSION_REQUEST_PERMISSION,
    FS_READ_TEXT_FILE,
    FS_WRITE_TEXT_FILE,
    TERMINAL_CREATE,
    TERMINAL_OUTPUT,
    TERMINAL_RELEASE,
    TERMINAL_WAIT_FOR_EXIT,
    TERMINAL_KILL,
    ELICITATION_CREATE,
    SESSION_UPDATE,
    ELICITATION_COMPLETE,
    CANCEL_REQUEST,
)
"""Method name -> descriptor for every method the client serves."""


def __getattr__(name: str) -> Any:
    # The unstable tables load their models on first use: stable users never pay for them.
    if name in ("UNSTABLE_AGENT_METHODS", "UNSTABLE_CLIENT_METHODS"):
        from . import _methods_unstable

        return getattr(_methods_unstable, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
