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

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

from . import schema as schema

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._agent import Agent as Agent
    from ._agent_connection import AgentConnection as AgentConnection
    from ._agent_connection import AgentSession as AgentSession
    from ._agent_connection import TerminalHandle as TerminalHandle
    from ._agent_server import run_agent_stdio as run_agent_stdio
    from ._agent_server import serve_agent as serve_agent
    from ._auth import AskEnv as AskEnv
    from ._auth import AuthEnvVar as AuthEnvVar
    from ._auth import AuthMethodEnvVar as AuthMethodEnvVar
    from ._auth import AuthMethodNotOffered as AuthMethodNotOffered
    from ._auth import LoginFailed as LoginFailed
    from ._auth import TerminalLogin as TerminalLogin
    from ._auth import TypedAuthMethod as TypedAuthMethod
    from ._auth import auth_method_kind as auth_method_kind
    from ._auth import run_terminal_login as run_terminal_login
    from ._auth import typed_auth_method as typed_auth_method
    from ._client import Client as Client
    from ._client_connect import connect_agent as connect_agent
    from ._client_connect import spawn_agent as spawn_agent
    from ._client_connection import ClientConnection as ClientConnection
    from ._client_connection import ClientSideSession as ClientSideSession
    from ._consent import CommandPolicy as CommandPolicy
    from ._consent import CommandRefused as CommandRefused
    from ._consent import TerminalCommand as TerminalCommand
    from ._errors import ACP_ERRORS as ACP_ERRORS
    from ._errors import AuthRequired as AuthRequired
    from ._errors import ResourceNotFound as ResourceNotFound
    from ._local_client import LocalClient as LocalClient
    from ._mcp import connect_mcp_servers as connect_mcp_servers
    from ._rpc import CapabilityError as CapabilityError
    from ._rpc import ProtocolVersionError as ProtocolVersionError
    from ._rpc import after_response as after_response
    from ._terminals import OutputBuffer as OutputBuffer
    from ._workspace import OutsideWorkspace as OutsideWorkspace
    from ._workspace import confine as confine
