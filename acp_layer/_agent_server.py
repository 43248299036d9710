"""Serving an `Agent`: dispatch, the initialize gate, sessions and prompt cancellation.

Rules:

1. Until ``initialize`` has been answered successfully every other request is refused with
   -32600 (as the TypeScript SDK does); notifications are ignored.
2. ``session/prompt``, ``session/set_mode``, ``session/set_config_option`` and
   ``session/close`` name a session this connection created, loaded or resumed; any other
   id is answered with -32002 (`ResourceNotFound`).
3. ``session/cancel`` cancels the session's running prompt turns; each then answers with
   stop reason ``cancelled``, never with an error, whatever the handler raised meanwhile.
   Calls the turn made to the client are abandoned and announced with ``$/cancel_request``.
   ``$/cancel_request`` naming a prompt ends it with -32800 instead. When the client goes
   away, every running turn is cancelled, so the agent process can exit at once.
4. ``_``-prefixed methods go to ``Agent.ext_method``/``ext_notification``; unstable methods
   are served only with ``unstable=True`` (else: -32601), by the agent method of the same
   role (``session/fork`` -> ``fork_session``) when it has one.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, get_args

import anyio

from jsonrpc_core import (
    DEFAULT_MAX_MESSAGE_SIZE,
    InvalidRequest,
    MessageStream,
    MethodNotFound,
    MethodRegistry,
    Peer,
    Request,
    RequestContext,
    RequestType,
    stdio_server,
)

from . import _methods as m
from . import schema as s
from ._agent import Agent
from ._agent_connection import AgentConnection, AgentSession
from ._errors import ACP_ERRORS, ResourceNotFound
from ._rpc import (
    HookedStream,
    cancel_request_message,
    or_empty,
    serve_cancel_request,
    serving,
    stop_serving,
)
from ._telemetry import ACP_AGENT_TELEMETRY

if TYPE_CHECKING:
    from jsonrpc_core import WireTap  # the wire tap loads only where one is given

__all__ = ["run_agent_stdio", "serve_agent"]

logger = logging.getLogger("acp_layer.agent")

AgentFactory = type[Agent] | Callable[[AgentConnection], Agent]

# Unstable method -> the Agent method serving it (when the subclass defines one).
_UNSTABLE_HANDLERS = {
    "session/fork": "fork_session",
    "providers/list": "list_providers",
    "providers/set": "set_provider",
    "providers/disable": "disable_provider",
    "nes/start": "start_nes",
    "nes/suggest": "suggest_nes",
    "nes/close": "close_nes",
    "nes/accept": "accept_nes",
    "nes/reject": "reject_nes",
    "document/didOpen": "did_open_document",
    "document/didChange": "did_change_document",
    "document/didClose": "did_close_document",
    "document/didSave": "did_save_document",
    "document/didFocus": "did_focus_document",
    "mcp/message": "mcp_message",
}


class _Turn:
    """One running ``session/prompt``; it runs in the request's own cancel scope."""

    __slots__ = ("cancel_requested", "ctx")

    def __init__(self, ctx: RequestContext) -> None:
        self.ctx = ctx
        self.cancel_requested = False

    def cancel(self) -> None:
        self.cancel_requested = True
        # Ended by this cancellation, the request is answered with stop reason
        # ``cancelled`` (not the -32800 of ``$/cancel_request``).
        self.ctx.cancel(s.PromptResponse(stop_reason="cancelled"))


class _AgentServer:
    def __init__(self, agent: Agent, conn: AgentConnection, stream: HookedStream) -> None:
        self.agent = agent
        self.conn = conn
        self.stream = stream

    def registry(self, unstable: bool) -> MethodRegistry:
        registry = MethodRegistry()
        on = self._on
        on(registry, m.INITIALIZE, self.initialize)
        on(registry, m.AUTHENTICATE, self.agent.authenticate, s.AuthenticateResponse)
        on(registry, m.LOGOUT, self.agent.logout, s.LogoutResponse)
        on(registry, m.SESSION_NEW, self.new_session)
        on(registry, m.SESSION_LOAD, self.load_session)
        on(registry, m.SESSION_LIST, self.agent.list_sessions)
        on(registry, m.SESSION_DELETE, self.delete_session)
        on(registry, m.SESSION_RESUME, self.resume_session)
        on(registry, m.SESSION_CLOSE, self.close_session)
        on(registry, m.SESSION_SET_MODE, self.set_mode)
        on(registry, m.SESSION_SET_CONFIG_OPTION, self.set_config_option)
        registry.on(m.SESSION_PROMPT, self.prompt)
        registry.on(m.SESSION_CANCEL, self.cancel)
        serve_cancel_request(registry)
        if unstable:
            self._register_unstable(registry)
        registry.fallback = self.ext_method
        registry.notification_fallback = self.ext_notification
        return registry

    def _on(
        self,
        registry: MethodRegistry,
        descriptor: RequestType[Any, Any],
        handler: Callable[[Any], Awaitable[Any]],
        empty: Callable[[], Any] | None = None,
    ) -> None:
        stream = self.stream

        async def serve(params: Any, ctx: RequestContext) -> Any:
            token = serving(stream, ctx.request_id)
            try:
                result = await handler(params)
            finally:
                stop_serving(token)
            return or_empty(result, empty) if empty is not None else result

        registry.on(descriptor, serve)

    def _register_unstable(self, registry: MethodRegistry) -> None:
        from . import _methods_unstable as u

        tables = (u.UNSTABLE_AGENT_METHODS, {"mcp/message": u.MCP_MESSAGE_NOTIFICATION})
        for table in tables:
            for name, descriptor in table.items():
                handler = getattr(self.agent, _UNSTABLE_HANDLERS[name], None)
                if handler is None:
                    continue
                if isinstance(descriptor, RequestType):
                    self._on(registry, descriptor, handler)
                else:
                    registry.on(descriptor, _notification(handler))

    # -- the initialize gate (rule 1) ------------------------------------------------------

    def request_filter(self, request: Request, ctx: RequestContext) -> None:
        if not self.conn.initialized and request.method != m.INITIALIZE.method:
            raise InvalidRequest(
                f"Invalid Request: the ACP connection must be initialized before {request.method!r}"
            )

    async def initialize(self, params: s.InitializeRequest) -> s.InitializeResponse:
        response = await self.agent.initialize(params)
        self.conn.client_capabilities = params.client_capabilities
        self.conn.client_info = params.client_info
        self.conn.protocol_version = response.protocol_version
        return response

    # -- sessions (rule 2) -----------------------------------------------------------------

    def session(self, session_id: str) -> AgentSession:
        session = self.conn.sessions.get(session_id)
        if session is None:
            raise ResourceNotFound(
                f"Resource not found: unknown session {session_id!r}",
                {"sessionId": session_id},
            )
        return session

    def _add_session(
        self,
        session_id: str,
        params: s.NewSessionRequest | s.LoadSessionRequest | s.ResumeSessionRequest,
    ) -> None:
        self.conn.sessions[session_id] = AgentSession(
            session_id, params.cwd, list(params.mcp_servers), list(params.additional_directories)
        )

    async def new_session(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        response = await self.agent.new_session(params)
        self._add_session(response.session_id, params)
        return response

    async def load_session(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        response = or_empty(await self.agent.load_session(params), s.LoadSessionResponse)
        self._add_session(params.session_id, params)
        return response

    async def resume_session(self, params: s.ResumeSessionRequest) -> s.ResumeSessionResponse:
        response = or_empty(await self.agent.resume_session(params), s.ResumeSessionResponse)
        self._add_session(params.session_id, params)
        return response

    async def close_session(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        session = self.session(params.session_id)
        for turn in list(session.turns):
            turn.cancel()
        response = or_empty(await self.agent.close_session(params), s.CloseSessionResponse)
        self.conn.sessions.pop(params.session_id, None)
        return response

    async def delete_session(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        response = or_empty(await self.agent.delete_session(params), s.DeleteSessionResponse)
        session = self.conn.sessions.pop(params.session_id, None)
        for turn in list(session.turns if session else ()):
            turn.cancel()
        return response

    async def set_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
        self.session(params.session_id)
        return or_empty(await self.agent.set_session_mode(params), s.SetSessionModeResponse)

    async def set_config_option(
        self, params: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        self.session(params.session_id)
        return await self.agent.set_config_option(params)

    # -- prompt turns and cancellation (rule 3) --------------------------------------------

    async def prompt(self, params: s.PromptRequest, ctx: RequestContext) -> Any:
        # Served directly (not through `_on`): one frame less on the way to the agent. The
        # answer is a `PromptResponse` or its wire object (the same bytes).
        session = self.session(params.session_id)
        turn = _Turn(ctx)
        turns = session.turns
        turns.add(turn)
        token = serving(self.stream, ctx.request_id)
        result: s.PromptResponse | s.StopReason | None = None
        try:
            result = await self.agent.prompt(params)
        except Exception:
            # Aborted operations often surface as errors: still a cancellation.
            if not turn.cancel_requested:
                raise
            logger.debug("prompt turn ended with an error after session/cancel")
        finally:
            stop_serving(token)
            turns.discard(turn)
        if turn.cancel_requested:
            return s.PromptResponse(stop_reason="cancelled")
        reason = result or "end_turn"
        if type(reason) is str and reason in _STOP_REASONS:
            # The wire object of PromptResponse(stop_reason=reason), without the model.
            return {"stopReason": reason}
        if isinstance(result, s.PromptResponse):
            return result
        return s.PromptResponse(stop_reason=reason)

    async def cancel(self, params: s.CancelNotification, ctx: RequestContext) -> None:
        session = self.conn.sessions.get(params.session_id)
        if session is None:
            logger.debug("session/cancel for unknown session %r ignored", params.session_id)
            return
        for turn in list(session.turns):
            turn.cancel()
        await self.agent.cancel(params)

    def cancel_all(self) -> None:
        """The client is gone: cancel every running turn (nobody waits for its answer)."""
        for session in self.conn.sessions.values():
            for turn in list(session.turns):
                turn.cancel()

    # -- extensions (rule 4) ---------------------------------------------------------------

    async def ext_method(self, params: Any, ctx: RequestContext) -> Any:
        if not ctx.method.startswith("_"):
            raise MethodNotFound(f"Method not found: {ctx.method}")
        token = serving(self.stream, ctx.request_id)
        try:
            return await self.agent.ext_method(ctx.method, params)
        finally:
            stop_serving(token)

    async def ext_notification(self, params: Any, ctx: RequestContext) -> None:
        if ctx.method.startswith("_") and self.conn.initialized:
            await self.agent.ext_notification(ctx.method, params)
        else:
            logger.debug("notification %r ignored", ctx.method)


_STOP_REASONS: frozenset[str] = frozenset(get_args(s.StopReason))


def _notification(handler: Callable[[Any], Any]) -> Callable[[Any, RequestContext], Any]:
    async def serve(params: Any, ctx: RequestContext) -> None:
        outcome = handler(params)
        if inspect.isawaitable(outcome):
            await outcome

    return serve


async def serve_agent(
    agent: Agent | AgentFactory,
    stream: MessageStream,
    *,
    unstable: bool = False,
    tap: WireTap | None = None,
    max_concurrency: int = 64,
) -> None:
    """Serve an ACP agent on ``stream`` until the client closes the connection.

    ``agent`` is an `Agent`, an `Agent` subclass (instantiated without arguments), or a
    factory called with the `AgentConnection` of the connection. ``unstable=True`` serves
    the unstable methods the agent implements; ``tap`` records every message. Bad input
    never ends the connection: it is answered with its error.
    """
    if tap is not None:
        stream = tap.wrap(stream, local="agent", remote="client", transport="acp")
    hooked = HookedStream(stream)
    async with anyio.create_task_group() as task_group:
        peer = Peer(
            hooked,
            name="acp-agent",
            max_concurrency=max_concurrency,
            on_outgoing_cancel=cancel_request_message,
            errors=ACP_ERRORS,
            telemetry=ACP_AGENT_TELEMETRY,
        )
        conn = AgentConnection(peer, task_group)
        if isinstance(agent, Agent):
            instance = agent
        elif isinstance(agent, type):
            instance = agent()  # an Agent subclass: one instance per connection
        else:
            instance = agent(conn)
        instance.on_connect(conn)
        server = _AgentServer(instance, conn, hooked)
        hooked.on_end = server.cancel_all
        peer.registry = server.registry(unstable)
        peer.request_filter = server.request_filter
        await peer.run()
        task_group.cancel_scope.cancel()


async def run_agent_stdio(
    agent: Agent | AgentFactory,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    unstable: bool = False,
) -> None:
    """Serve ``agent`` on this process's stdin/stdout until the client closes stdin.

    Messages over ``max_message_size`` bytes (default 16 MiB) are answered with an error and
    skipped; the connection keeps working. A stray ``print`` goes to stderr, never to the
    protocol stream.
    """
    async with stdio_server(max_message_size=max_message_size) as stream:
        await serve_agent(agent, stream, unstable=unstable)
