"""Serving the agent's calls on a client connection.

Rules:

1. Requests from the agent must name a session this connection set up (see
   `ClientConnection.session`), else -32002.
2. A permission request ends with the ``cancelled`` outcome when the user cancels the turn
   (`ClientConnection.cancel`) and also on ``$/cancel_request`` (not -32800), so the answer
   does not depend on which cancellation reaches the client first.
3. ``session/update`` runs on the read loop, in arrival order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_core import (
    MethodNotFound,
    MethodRegistry,
    RequestContext,
    RequestId,
    RequestType,
)

from . import _methods as m
from . import schema as s
from ._rpc import or_empty, serve_cancel_request

if TYPE_CHECKING:
    from ._client_connection import ClientConnection

__all__ = ["ClientServer"]


class ClientServer:
    """Dispatches the agent's requests and notifications to a `Client`."""

    def __init__(self, conn: ClientConnection) -> None:
        self.conn = conn
        self.client = conn.client
        self._permission_requests: dict[RequestId, anyio.CancelScope] = {}

    def registry(self, unstable: bool) -> MethodRegistry:
        """The methods the connection serves for the agent."""
        client = self.client
        registry = MethodRegistry()
        registry.on(m.SESSION_REQUEST_PERMISSION, self._request_permission)
        registry.on(m.SESSION_UPDATE, self._session_update_handler())
        self._on(registry, m.FS_READ_TEXT_FILE, client.read_text_file)
        self._on(registry, m.FS_WRITE_TEXT_FILE, client.write_text_file, s.WriteTextFileResponse)
        self._on(registry, m.TERMINAL_CREATE, client.create_terminal)
        self._on(registry, m.TERMINAL_OUTPUT, client.terminal_output)
        self._on(registry, m.TERMINAL_WAIT_FOR_EXIT, client.wait_for_terminal_exit)
        self._on(registry, m.TERMINAL_KILL, client.kill_terminal, s.KillTerminalResponse)
        self._on(registry, m.TERMINAL_RELEASE, client.release_terminal, s.ReleaseTerminalResponse)
        registry.on(m.ELICITATION_CREATE, self._create_elicitation)
        registry.on(m.ELICITATION_COMPLETE, _drop_ctx(client.complete_elicitation))
        serve_cancel_request(registry, self._cancel_permission)
        if unstable:
            self._register_unstable(registry)
        registry.fallback = self._ext_method
        registry.notification_fallback = self._ext_notification
        return registry

    def _session_update_handler(self) -> Callable[[Any, RequestContext], Awaitable[None]]:
        conn = self.conn
        session_update = self.client.session_update

        async def after_setup(params: s.SessionNotification) -> None:
            await conn._settle_setup(params.session_id)
            await session_update(params)

        # The hot path of a prompt turn (the Peer validated the params with the model's
        # own validator). Not a coroutine function: the peer awaits what it returns (no
        # extra frame per update).
        def serve(params: s.SessionNotification, ctx: RequestContext) -> Awaitable[None]:
            if params.session_id in conn.sessions:
                return session_update(params)
            return after_setup(params)

        return serve

    def _on(
        self,
        registry: MethodRegistry,
        descriptor: RequestType[Any, Any],
        handler: Callable[[Any], Awaitable[Any]],
        empty: Callable[[], Any] | None = None,
    ) -> None:
        async def serve(params: Any, ctx: RequestContext) -> Any:
            await self.conn.session(params.session_id)
            result = await handler(params)
            return or_empty(result, empty) if empty is not None else result

        registry.on(descriptor, serve)

    async def _request_permission(
        self, params: s.RequestPermissionRequest, ctx: RequestContext
    ) -> s.RequestPermissionResponse:
        session = await self.conn.session(params.session_id)
        with anyio.CancelScope() as scope:
            session.permission_scopes.add(scope)
            if ctx.request_id is not None:
                self._permission_requests[ctx.request_id] = scope
            try:
                answer = await self.client.request_permission(params)
            finally:
                session.permission_scopes.discard(scope)
                if ctx.request_id is not None:
                    self._permission_requests.pop(ctx.request_id, None)
            if isinstance(answer, s.RequestPermissionResponse):
                return answer
            return s.RequestPermissionResponse(outcome=answer)
        return s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())

    def _cancel_permission(self, request_id: RequestId) -> bool:
        # $/cancel_request for a permission request: answer it with the "cancelled" outcome
        # too, so that the answer does not depend on which cancellation arrives first.
        scope = self._permission_requests.get(request_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _create_elicitation(self, params: Any, ctx: RequestContext) -> Any:
        session_id = getattr(params, "session_id", None)
        if session_id is not None:
            await self.conn.session(session_id)
        return await self.client.create_elicitation(params)

    def _register_unstable(self, registry: MethodRegistry) -> None:
        from . import _methods_unstable as u

        handlers = {"mcp/connect": "connect_mcp", "mcp/disconnect": "disconnect_mcp"}
        for name, descriptor in u.UNSTABLE_CLIENT_METHODS.items():
            handler = getattr(self.client, handlers.get(name, "mcp_message"), None)
            if handler is not None and isinstance(descriptor, RequestType):
                registry.on(descriptor, _drop_ctx(handler))

    async def _ext_method(self, params: Any, ctx: RequestContext) -> Any:
        if not ctx.method.startswith("_"):
            raise MethodNotFound(f"Method not found: {ctx.method}")
        return await self.client.ext_method(ctx.method, params)

    async def _ext_notification(self, params: Any, ctx: RequestContext) -> None:
        if ctx.method.startswith("_"):
            await self.client.ext_notification(ctx.method, params)


def _drop_ctx(handler: Callable[[Any], Any]) -> Callable[[Any, RequestContext], Any]:
    # Not a coroutine function: the peer awaits what it returns (no extra frame per call).
    def serve(params: Any, ctx: RequestContext) -> Any:
        return handler(params)

    return serve
