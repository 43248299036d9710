"""acp_layer: the Agent Client Protocol (ACP, protocolVersion 1) on rpcweave's JSON-RPC core.

Agents subclass `Agent` (override ``prompt``, and whatever else they support) and serve it
with `run_agent_stdio` (or `serve_agent` on any message stream); ``agent.client`` is the
`AgentConnection` that sends session updates and calls the editor (permission, files,
terminals, elicitation). `connect_mcp_servers` opens the MCP servers a session was given.

Editors subclass `Client` (or use `LocalClient`: files confined to the session's workspace,
commands run only with the user's consent, see `CommandPolicy`) and open a
`ClientConnection` with `spawn_agent` (starts the agent process) or `connect_agent`.
``spawn_agent(..., auth=METHOD_ID)`` logs in with one of the agent's ``authMethods``
(typed by kind: `typed_auth_method`); a session or prompt refused for want of a login
raises `AuthRequired` with the methods on offer.

`acp_layer.schema` holds the protocol's objects as pydantic models; ``_methods`` the method
tables; `ACP_ERRORS` the error classes. Everything but `schema` loads on first use, to keep
``import acp_layer`` fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import schema

if TYPE_CHECKING:
    from ._agent import Agent
    from ._agent_connection import AgentConnection, AgentSession, TerminalHandle
    from ._agent_server import run_agent_stdio, serve_agent
    from ._auth import (
        AskEnv,
        AuthEnvVar,
        AuthMethodEnvVar,
        AuthMethodNotOffered,
        LoginFailed,
        TerminalLogin,
        TypedAuthMethod,
        auth_method_kind,
        run_terminal_login,
        typed_auth_method,
    )
    from ._client import Client
    from ._client_connect import connect_agent, spawn_agent
    from ._client_connection import ClientConnection, ClientSideSession
    from ._consent import CommandPolicy, CommandRefused, TerminalCommand
    from ._errors import ACP_ERRORS, AuthRequired, ResourceNotFound
    from ._local_client import LocalClient
    from ._mcp import connect_mcp_servers
    from ._rpc import CapabilityError, ProtocolVersionError, after_response
    from ._terminals import OutputBuffer
    from ._workspace import OutsideWorkspace, confine

_LAZY = {
    "ACP_ERRORS": "._errors",
    "Agent": "._agent",
    "AgentConnection": "._agent_connection",
    "AgentSession": "._agent_connection",
    "AskEnv": "._auth",
    "AuthEnvVar": "._auth",
    "AuthMethodEnvVar": "._auth",
    "AuthMethodNotOffered": "._auth",
    "AuthRequired": "._errors",
    "CapabilityError": "._rpc",
    "Client": "._client",
    "ClientConnection": "._client_connection",
    "ClientSideSession": "._client_connection",
    "CommandPolicy": "._consent",
    "CommandRefused": "._consent",
    "LocalClient": "._local_client",
    "LoginFailed": "._auth",
    "OutputBuffer": "._terminals",
    "OutsideWorkspace": "._workspace",
    "ProtocolVersionError": "._rpc",
    "ResourceNotFound": "._errors",
    "TerminalCommand": "._consent",
    "TerminalHandle": "._agent_connection",
    "TerminalLogin": "._auth",
    "TypedAuthMethod": "._auth",
    "after_response": "._rpc",
    "auth_method_kind": "._auth",
    "confine": "._workspace",
    "connect_agent": "._client_connect",
    "connect_mcp_servers": "._mcp",
    "run_agent_stdio": "._agent_server",
    "run_terminal_login": "._auth",
    "serve_agent": "._agent_server",
    "spawn_agent": "._client_connect",
    "typed_auth_method": "._auth",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'acp_layer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ACP_ERRORS",
    "Agent",
    "AgentConnection",
    "AgentSession",
    "AskEnv",
    "AuthEnvVar",
    "AuthMethodEnvVar",
    "AuthMethodNotOffered",
    "AuthRequired",
    "CapabilityError",
    "Client",
    "ClientConnection",
    "ClientSideSession",
    "CommandPolicy",
    "CommandRefused",
    "LocalClient",
    "LoginFailed",
    "OutputBuffer",
    "OutsideWorkspace",
    "ProtocolVersionError",
    "ResourceNotFound",
    "TerminalCommand",
    "TerminalHandle",
    "TerminalLogin",
    "TypedAuthMethod",
    "after_response",
    "auth_method_kind",
    "confine",
    "connect_agent",
    "connect_mcp_servers",
    "run_agent_stdio",
    "run_terminal_login",
    "schema",
    "serve_agent",
    "spawn_agent",
    "typed_auth_method",
]
