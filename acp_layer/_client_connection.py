"""`ClientConnection`: the client's end of an ACP connection (opened by ``_client_connect``).

Rules:

1. Strict out: nothing but ``initialize`` is sent before it succeeded, and optional agent
   methods (``session/load``, ``session/list``, ...), HTTP/SSE MCP servers and rich prompt
   content are refused locally with `CapabilityError` unless the agent advertised them.
2. Requests from the agent name a session this connection set up, else -32002. A request
   that races the answer to ``session/new`` (or load/resume) waits for that answer first.
   An update read together with that answer is handled once the setup call has returned,
   so the caller knows the session first (``session/load`` history, which comes before
   the answer, is never held back).
3. `ClientConnection.cancel` sends ``session/cancel`` and answers the session's pending
   permission requests with the ``cancelled`` outcome, as the spec requires (the requests
   themselves are served by ``_client_server``).
4. An ``auth_required`` (-32000) answer to a session setup or a prompt is raised as
   `AuthRequired` carrying the advertised ``auth_methods``, so the caller can offer them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint

from jsonrpc_core import Peer, RequestType, StdioProcess

from . import _methods as m
from . import schema as s
from ._auth import TypedAuthMethod, auth_method_kind, find_auth_method, typed_auth_method
from ._client import Client
from ._errors import AuthRequired, ResourceNotFound
from ._rpc import (
    CapabilityError,
    ProtocolVersionError,
)

__all__ = ["ClientConnection", "ClientSideSession"]

logger = logging.getLogger("acp_layer.client")

PromptInput = str | s.ContentBlock | Sequence[s.ContentBlock]

_SESSION_SETUP_METHODS = ("session/new", "session/load", "session/resume")


@dataclass
class ClientSideSession:
    """A session set up on this connection: its working directory and extra roots."""

    session_id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    permission_scopes: set[anyio.CancelScope] = field(default_factory=set, repr=False)
    turn: int = 0
    """A number that changes whenever a prompt turn of this session starts or ends."""
    turns_running: int = 0
    """Prompt turns sent and not answered yet (one, unless the caller overlaps them)."""

    @property
    def roots(self) -> list[str]:
        """The session's file-system root set: ``cwd`` and the additional directories."""
        return [self.cwd, *self.additional_directories]

    @property
    def in_turn(self) -> bool:
        """Whether a prompt turn of this session is running."""
        return self.turns_running > 0


class ClientConnection:
    """A connection to an agent: call its methods; the agent's calls go to ``client``.

    Open one with `spawn_agent` (starts the agent process) or `connect_agent` (any message
    stream). After `initialize`, ``agent_capabilities``, ``agent_info`` and ``auth_methods``
    hold the agent's answer; ``sessions`` maps session ids to `ClientSideSession`.
    """

    def __init__(self, client: Client, peer: Peer, task_group: TaskGroup) -> None:
        self.client = client
        self.peer = peer
        self._task_group = task_group
        self.protocol_version: int | None = None
        self.agent_capabilities = s.AgentCapabilities()
        self.agent_info: s.Implementation | None = None
        self.auth_methods: list[TypedAuthMethod] = []
        """The login methods the agent advertised, typed by kind (``env_var`` included)."""
        self.terminal_auth = False
        """Whether ``initialize`` advertises ``auth.terminal`` (set by `spawn_agent` when it
        can run a terminal login)."""
        self.sessions: dict[str, ClientSideSession] = {}
        self.process: StdioProcess | None = None
        self._setups: set[anyio.Event] = set()

    @property
    def initialized(self) -> bool:
        """Whether ``initialize`` succeeded."""
        return self.protocol_version is not None

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run background work for as long as the connection lives."""
        self._task_group.start_soon(func, *args)

    def _require(self, supported: object, what: str) -> None:
        if not self.initialized:
            raise CapabilityError(f"initialize the connection before {what}")
        if not supported:
            raise CapabilityError(f"the agent does not offer {what}")

    # -- connection ------------------------------------------------------------------------

    async def initialize(
        self, *, protocol_version: int = s.PROTOCOL_VERSION
    ) -> s.InitializeResponse:
        """Send ``initialize`` with the client's capabilities; refuse another version."""
        capabilities = self.client.client_capabilities()
        if self.terminal_auth and not capabilities.auth.terminal:
            capabilities = capabilities.model_copy(
                update={"auth": s.AuthCapabilities(terminal=True)}
            )
        request = s.InitializeRequest(
            protocol_version=protocol_version,
            client_capabilities=capabilities,
            client_info=self.client.client_info,
        )
        response = await self.peer.request(m.INITIALIZE, request)
        if response.protocol_version != s.PROTOCOL_VERSION:
            raise ProtocolVersionError(
                f"the agent speaks ACP protocol version {response.protocol_version}, "
                f"not {s.PROTOCOL_VERSION}"
            )
        self.agent_capabilities = response.agent_capabilities
        self.agent_info = response.agent_info
        self.auth_methods = [typed_auth_method(method) for method in response.auth_methods]
        self.protocol_version = response.protocol_version
        return response

    async def authenticate(self, method_id: str) -> s.AuthenticateResponse:
        """Authenticate with one of the agent's ``auth_methods`` (an ``agent`` or ``env_var``
        method; a ``terminal`` one is run by `spawn_agent`'s ``auth``, never sent here)."""
        self._require(True, "authenticate")
        for method in self.auth_methods:
            if getattr(method, "id", None) == method_id and auth_method_kind(method) == "terminal":
                raise CapabilityError(
                    f"{method_id!r} is a terminal login: run it with spawn_agent(auth=...)"
                )
        request = s.AuthenticateRequest(method_id=method_id)
        return await self.peer.request(m.AUTHENTICATE, request)

    async def logout(self) -> s.LogoutResponse:
        """End the authenticated state (needs ``auth.logout``)."""
        self._require(self.agent_capabilities.auth.logout is not None, "logout")
        return await self.peer.request(m.LOGOUT, s.LogoutRequest())

    def auth_method(self, method_id: str) -> TypedAuthMethod:
        """The advertised login method ``method_id``, else `AuthMethodNotOffered`."""
        return find_auth_method(self.auth_methods, method_id)

    async def _request(self, descriptor: RequestType[Any, Any], request: Any) -> Any:
        try:
            return await self.peer.request(descriptor, request)
        except AuthRequired as exc:  # rule 4
            exc.auth_methods = list(self.auth_methods)
            raise

    # -- sessions --------------------------------------------------------------------------

    def _check_mcp_servers(self, servers: Sequence[s.McpServer]) -> None:
        caps = self.agent_capabilities.mcp_capabilities
        for server in servers:
            if isinstance(server, s.McpServerHttp) and not caps.http:
                raise CapabilityError("the agent does not offer MCP servers over HTTP")
            if isinstance(server, s.McpServerSse) and not caps.sse:
                raise CapabilityError("the agent does not offer MCP servers over SSE")

    def _check_directories(self, additional_directories: Sequence[str]) -> None:
        supported = self.agent_capabilities.session_capabilities.additional_directories
        if additional_directories and supported is None:
            raise CapabilityError("the agent does not offer additional directories")

    async def _setup(
        self, descriptor: RequestType[Any, Any], request: Any, session_id: str | None
    ) -> Any:
        done = anyio.Event()
        self._setups.add(done)
        try:
            response = await self._request(descriptor, request)
            new_id = session_id if session_id is not None else response.session_id
            self.sessions[new_id] = ClientSideSession(
                new_id, request.cwd, list(request.additional_directories)
            )
            return response
        finally:
            self._setups.discard(done)
            done.set()

    async def new_session(
        self,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        *,
        additional_directories: Sequence[str] = (),
    ) -> s.NewSessionResponse:
        """Create a session working in ``cwd`` (an absolute path)."""
        self._require(True, "session/new")
        _check_absolute(cwd)
        self._check_mcp_servers(mcp_servers)
        self._check_directories(additional_directories)
        request = s.NewSessionRequest(
            cwd=cwd,
            mcp_servers=list(mcp_servers),
            additional_directories=list(additional_directories),
        )
        response: s.NewSessionResponse = await self._setup(m.SESSION_NEW, request, None)
        return response

    async def load_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        *,
        additional_directories: Sequence[str] = (),
    ) -> s.LoadSessionResponse:
        """Load a stored session; its history arrives as ``session_update`` calls first."""
        self._require(self.agent_capabilities.load_session, "session/load")
        self._check_mcp_servers(mcp_servers)
        self._check_directories(additional_directories)
        request = s.LoadSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=list(mcp_servers),
            additional_directories=list(additional_directories),
        )
        response: s.LoadSessionResponse = await self._setup(m.SESSION_LOAD, request, session_id)
        return response

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        *,
        additional_directories: Sequence[str] = (),
    ) -> s.ResumeSessionResponse:
        """Reconnect to a session without replaying its history."""
        caps = self.agent_capabilities.session_capabilities
        self._require(caps.resume is not None, "session/resume")
        self._check_mcp_servers(mcp_servers)
        self._check_directories(additional_directories)
        request = s.ResumeSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=list(mcp_servers),
            additional_directories=list(additional_directories),
        )
        response: s.ResumeSessionResponse = await self._setup(m.SESSION_RESUME, request, session_id)
        return response

    async def list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None
    ) -> s.ListSessionsResponse:
        """One page of the agent's stored sessions."""
        caps = self.agent_capabilities.session_capabilities
        self._require(caps.list is not None, "session/list")
        request = s.ListSessionsRequest(cwd=cwd, cursor=cursor)
        return await self.peer.request(m.SESSION_LIST, request)

    async def delete_session(self, session_id: str) -> None:
        """Delete a stored session."""
        caps = self.agent_capabilities.session_capabilities
        self._require(caps.delete is not None, "session/delete")
        await self.peer.request(m.SESSION_DELETE, s.DeleteSessionRequest(session_id=session_id))
        self.sessions.pop(session_id, None)

    async def close_session(self, session_id: str) -> None:
        """Close an active session (its running turn is cancelled by the agent)."""
        caps = self.agent_capabilities.session_capabilities
        self._require(caps.close is not None, "session/close")
        self._cancel_permissions(session_id)
        await self.peer.request(m.SESSION_CLOSE, s.CloseSessionRequest(session_id=session_id))
        self.sessions.pop(session_id, None)

    async def set_session_mode(self, session_id: str, mode_id: str) -> None:
        """Switch the session to one of its available modes."""
        self._require(True, "session/set_mode")
        request = s.SetSessionModeRequest(session_id=session_id, mode_id=mode_id)
        await self.peer.request(m.SESSION_SET_MODE, request)

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> s.SetSessionConfigOptionResponse:
        """Set a configuration option; the agent answers with the full set."""
        self._require(True, "session/set_config_option")
        request = s.SetSessionConfigOptionRequest(
            session_id=session_id, config_id=config_id, value=value
        )
        return await self.peer.request(m.SESSION_SET_CONFIG_OPTION, request)

    # -- prompt turns ----------------------------------------------------------------------

    def _check_prompt(self, blocks: Sequence[s.ContentBlock]) -> None:
        caps = self.agent_capabilities.prompt_capabilities
        for block in blocks:
            if isinstance(block, s.ImageContent) and not caps.image:
                raise CapabilityError("the agent does not accept images in prompts")
            if isinstance(block, s.AudioContent) and not caps.audio:
                raise CapabilityError("the agent does not accept audio in prompts")
            if isinstance(block, s.EmbeddedResource) and not caps.embedded_context:
                raise CapabilityError("the agent does not accept embedded resources")

    async def prompt(self, session_id: str, prompt: PromptInput) -> s.PromptResponse:
        """Run a prompt turn; updates reach ``client.session_update`` before this returns.

        ``prompt`` is text, one content block or a list of them. A turn cancelled with
        `cancel` returns stop reason ``cancelled``.
        """
        self._require(True, "session/prompt")
        if type(prompt) is str and type(session_id) is str:
            # Plain text needs no capability: the wire object is written directly (the
            # same bytes as the PromptRequest model gives).
            request: Any = {"sessionId": session_id, "prompt": [{"type": "text", "text": prompt}]}
        else:
            if isinstance(prompt, str):
                blocks: list[s.ContentBlock] = [s.TextContent(text=prompt)]
            elif isinstance(prompt, s.ACPModel):
                blocks = [prompt]
            else:
                blocks = list(prompt)
            self._check_prompt(blocks)
            request = s.PromptRequest(session_id=session_id, prompt=blocks)
        # The session's turn marks bound what is granted for a turn (LocalClient's
        # execute permissions): they start and end with this call.
        session = self.sessions.get(session_id)
        if session is None:
            unknown: s.PromptResponse = await self._request(m.SESSION_PROMPT, request)
            return unknown
        session.turn += 1
        session.turns_running += 1
        try:
            response: s.PromptResponse = await self._request(m.SESSION_PROMPT, request)
            return response
        finally:
            session.turn += 1
            session.turns_running -= 1

    async def cancel(self, session_id: str) -> None:
        """Cancel the session's prompt turn (the pending ``prompt`` returns ``cancelled``)."""
        await self.peer.notify(m.SESSION_CANCEL, s.CancelNotification(session_id=session_id))
        self._cancel_permissions(session_id)

    def _cancel_permissions(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        for scope in list(session.permission_scopes if session else ()):
            scope.cancel()

    # -- extensions ------------------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call a ``_``-prefixed extension method of the agent."""
        if not method.startswith("_"):
            raise ValueError(f"extension method names start with '_': {method!r}")
        return await self.peer.request(method, params or {})

    async def ext_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a ``_``-prefixed extension notification to the agent."""
        if not method.startswith("_"):
            raise ValueError(f"extension method names start with '_': {method!r}")
        await self.peer.notify(method, params or {})

    # -- sessions seen by the agent's calls (rule 2) ---------------------------------------

    async def _settle_setup(self, session_id: str) -> None:
        # The read loop resolves the answer to a setup and goes on with the next message
        # already read, before the caller resumes: yield so that it registers the session
        # (asyncio runs woken tasks in order; trio may reverse a batch, hence twice). Never
        # waits for an answer not read yet.
        for _ in range(2):
            if session_id in self.sessions or not self._setups:
                return
            await checkpoint()

    async def session(self, session_id: str) -> ClientSideSession:
        """The `ClientSideSession` for ``session_id``; -32002 `ResourceNotFound` if unknown."""
        session = self.sessions.get(session_id)
        while session is None and self._setups:
            for done in list(self._setups):
                await done.wait()
            session = self.sessions.get(session_id)
        if session is None:
            raise ResourceNotFound(
                f"Resource not found: unknown session {session_id!r}",
                {"sessionId": session_id},
            )
        return session


def _check_absolute(cwd: str) -> None:
    """The spec requires an absolute working directory; refuse before sending."""
    if not os.path.isabs(cwd):
        raise ValueError(f"cwd must be an absolute path, not {cwd!r}")
