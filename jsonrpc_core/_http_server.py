"""The JSON-RPC HTTP server: Streamable HTTP and HTTP+SSE as one ASGI application.

`JsonRpcHTTPApp` serves one JSON-RPC endpoint over Streamable HTTP (POST carries
messages, answered as JSON or as an SSE stream; GET opens the standalone stream or
resumes one with ``Last-Event-ID``; DELETE ends a session) and, optionally, the older
HTTP+SSE transport (GET opens a stream that announces an ``endpoint``; POSTs there are
answered on that stream). Protocol layers plug in through `HTTPServerOptions`: a
session policy, a validation hook, the response mode per request, extra routes.

Rules:

1. Every request passes the Host/Origin check, then authentication, before its body
   is read; the body is read with a size limit. The scopes each message needs are
   checked once it is parsed, before anything is dispatched.
2. A new session is registered only once its first request has been answered without
   error (see ``_http_sessions``).
3. A client that disconnects never cancels its request (MCP: disconnection is not
   cancellation); its answer is stored for resumption when an event store is
   configured, and dropped otherwise. The HTTP task itself ends at once.
4. The app runs its Peers in its own task group, entered through ASGI lifespan or
   `JsonRpcHTTPApp.running`.
5. An answer that is complete before its response starts (a quick handler) is written
   whole: as JSON, or as an SSE stream with a ``Content-Length`` (the same events,
   without chunked framing); otherwise an SSE stream begins at once and the client is
   watched for a disconnect until it ends (a JSON answer only after a few event-loop
   turns without it). SSE events already queued together go out in one body message
   (a bounded number of them); none waits for a later one.
6. When a session ends (DELETE, reaped, or its Peer stopped) its event-store streams
   are forgotten (a shared store forgets the session), since a resumption names its
   session; only a stopping app leaves a shared store's sessions to other replicas.

The app is small: it holds the shared state (options, the session table, the
`SessionRunner` that runs sessions in its task group, the `SSEWriter`) and hands each
request to its unit, which gets that state explicitly: `StreamableHTTPHandler`
(``_http_streamable``: POST, GET, DELETE), `LegacySSEHandler` (``_http_legacy_sse``:
the HTTP+SSE event stream and messages endpoint), or an extra route.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from ._errors import JsonRpcError
from ._http_common import (
    ASGIReceive,
    ASGIScope,
    ASGISend,
    BodyTooLarge,
    BodyTooSlow,
    ClientDisconnected,
    HTTPError,
    HTTPRequest,
    HTTPRequestInfo,
    HTTPResponse,
    Route,
    json_rpc_error_body,
    read_body,
    scope_headers,
    scope_query,
    send_response,
)
from ._http_legacy_sse import LegacySSEHandler
from ._http_security import without_credentials
from ._http_server_options import HTTPServerOptions as HTTPServerOptions
from ._http_server_options import ServeConnection as ServeConnection
from ._http_server_options import body_too_slow
from ._http_sessions import SessionRunner, SessionTable
from ._http_sse_writer import COALESCE_EVENTS, DisconnectWatch, SSEWriter, stream_route_events
from ._http_streamable import StreamableHTTPHandler

__all__ = ["HTTPServerOptions", "JsonRpcHTTPApp", "ServeConnection"]

logger = logging.getLogger("jsonrpc_core.http")

# The names these units had here before the split, for the tests of them
# (test_http_disconnect_watch, test_http_sse_coalesce).
_DisconnectWatch = DisconnectWatch
_COALESCE_EVENTS = COALESCE_EVENTS


class JsonRpcHTTPApp:
    """An ASGI app serving JSON-RPC over Streamable HTTP (and HTTP+SSE if enabled)."""

    def __init__(self, serve: ServeConnection, options: HTTPServerOptions | None = None) -> None:
        self.serve_connection = serve
        self.options = options = options or HTTPServerOptions()
        self.sessions = SessionTable(
            max_sessions=options.max_sessions, idle_timeout=options.idle_timeout
        )
        # `serve_connection` is looked up per connection, so a wrapper set on it later (the
        # CLI's --trace taps every connection so) serves them.
        self._runner = SessionRunner(
            lambda stream: self.serve_connection(stream),
            self.sessions,
            event_store=options.event_store,
        )
        writer = SSEWriter(
            retry_interval_ms=options.retry_interval_ms, event_name=options.event_name
        )
        self._streamable = StreamableHTTPHandler(options, self.sessions, self._runner, writer)
        self._legacy = LegacySSEHandler(options, self.sessions, self._runner, writer)
        self._endpoint = options.path.rstrip("/") or "/"

    # -- lifetime ------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the app is running (inside lifespan or `running`)."""
        return self._runner.task_group is not None

    def close(self) -> None:
        """Stop serving: end every session and stream; later requests get 503."""
        task_group = self._runner.task_group
        self._runner.end(unregister=True)
        if task_group is not None:
            task_group.cancel_scope.cancel()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[JsonRpcHTTPApp]:
        """Run the app's background work; lifespan does this for you under uvicorn."""
        if self._runner.task_group is not None:
            yield self
            return
        async with anyio.create_task_group() as task_group:
            stateless = self.options.sessions is None
            self._runner.begin(task_group, reap=not stateless)
            if stateless:
                self._runner.shared_channel()
            try:
                yield self
            finally:
                self._runner.end(unregister=False)
                task_group.cancel_scope.cancel()

    async def _lifespan(self, receive: ASGIReceive, send: ASGISend) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        try:
            async with self.running():
                await send({"type": "lifespan.startup.complete"})
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except Exception as exc:
            await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    # -- dispatch ------------------------------------------------------------------

    async def __call__(self, scope: ASGIScope, receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = scope_headers(scope)
        info = HTTPRequestInfo(
            method=scope["method"],
            path=scope["path"],
            headers=headers,
            query=scope_query(scope),
            client=tuple(scope["client"]) if scope.get("client") else None,
        )
        try:
            await self._dispatch(scope, receive, send, info)
        except HTTPError as exc:
            await self._send_http_error(send, exc)
        except ClientDisconnected:
            # Gone mid-body (or closed by the server's body deadline): nobody to answer.
            logger.debug("client left before its request body was complete: %s", info.path)

    async def _send_http_error(self, send: ASGISend, exc: HTTPError) -> None:
        body = exc.body
        if body is None:
            body = json_rpc_error_body(exc.error or JsonRpcError(exc.message, code=-32000))
        await send_response(
            send, exc.status, body, content_type="application/json", headers=exc.headers
        )

    async def _dispatch(
        self, scope: ASGIScope, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo
    ) -> None:
        options = self.options
        if options.origin_policy is not None:
            options.origin_policy.check(info.headers)
        path = info.path.rstrip("/") or "/"
        if path == self._endpoint:
            if self._runner.task_group is None:
                raise HTTPError(503, "Server not started: serve it with lifespan or app.running()")
            await self._authenticate(info)
            method = info.method
            if method == "POST":
                await self._streamable.post(receive, send, info)
            elif method == "GET":
                await self._streamable.get(receive, send, info)
            elif method == "DELETE":
                await self._streamable.delete(send, info)
            else:
                raise HTTPError(405, "Method not allowed", headers={"allow": "GET, POST, DELETE"})
            return
        if options.legacy_sse_path is not None and path in (
            options.legacy_sse_path.rstrip("/"),
            options.legacy_messages_path.rstrip("/"),
        ):
            if self._runner.task_group is None:
                raise HTTPError(503, "Server not started: serve it with lifespan or app.running()")
            await self._authenticate(info)
            if path == options.legacy_sse_path.rstrip("/") and info.method == "GET":
                await self._legacy.stream(scope, receive, send, info)
            elif path == options.legacy_messages_path.rstrip("/") and info.method == "POST":
                await self._legacy.post(receive, send, info)
            else:
                raise HTTPError(405, "Method not allowed")
            return
        # The first route whose path matches decides the path; among the routes that
        # declare that same path, the method picks one (GET and DELETE of one resource).
        routes = [*options.routes, *(options.auth.routes if options.auth is not None else ())]
        matched = next((r for r in routes if r.match(info.path) is not None), None)
        if matched is not None:
            siblings = [r for r in routes if r.path == matched.path]
            for route in siblings:
                if info.method in route.methods:
                    params = route.match(info.path)
                    assert params is not None
                    await self._extra_route(route, params, receive, send, info)
                    return
            allowed = list(dict.fromkeys(m for r in siblings for m in r.methods))
            raise HTTPError(405, "Method not allowed", headers={"allow": ", ".join(allowed)})
        raise HTTPError(404, "Not found")

    async def _authenticate(self, info: HTTPRequestInfo) -> None:
        """Verify the bearer token, if the app requires one; the token stays here."""
        if self.options.auth is not None:
            info.principal = await self.options.auth.authenticate(info.headers)
            info.headers = without_credentials(info.headers)

    # -- extra routes --------------------------------------------------------------

    async def _extra_route(
        self,
        route: Route,
        params: dict[str, str],
        receive: ASGIReceive,
        send: ASGISend,
        info: HTTPRequestInfo,
    ) -> None:
        try:
            body = await read_body(receive, self.options.max_body_size, self.options.body_timeout)
        except BodyTooLarge:
            raise HTTPError(413, "Payload Too Large") from None
        except BodyTooSlow:
            raise body_too_slow(self.options) from None
        request = HTTPRequest(info.method, info.path, info.headers, info.query, body, params, info)
        response = await route.handler(request)
        if isinstance(response, HTTPResponse):
            await send_response(
                send,
                response.status,
                response.body,
                content_type=response.content_type,
                headers=response.headers,
                head=info.method == "HEAD",  # a route that takes HEAD answers as for GET
            )
            return
        await stream_route_events(send, receive, response)
