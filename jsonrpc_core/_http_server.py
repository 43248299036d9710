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
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from ._errors import InvalidRequest, JsonRpcError
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._http_channel import Outbox, ServerChannel, new_stream_id
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
    SSEResponse,
    accepts,
    json_rpc_error_body,
    read_body,
    scope_headers,
    scope_query,
    send_response,
)
from ._http_deadlines import BODY_TIMEOUT
from ._http_security import BearerAuth, OriginPolicy, without_credentials
from ._http_sessions import HTTPSession, SessionPolicy, SessionTable
from ._sse import SSEEvent, encode_comment, encode_event
from ._transport import MessageStream, Received
from ._wire import ErrorResponse, Incoming, InvalidMessage, Request, encode, parse

if TYPE_CHECKING:
    from ._event_store import EventStore, SharedEventStore

__all__ = ["HTTPServerOptions", "JsonRpcHTTPApp", "ServeConnection"]

logger = logging.getLogger("jsonrpc_core.http")

_FORGET_TIMEOUT = 5.0
"""How long an ended session's streams may take to leave the event store."""

ServeConnection = Callable[[MessageStream], Awaitable[None]]
"""Serve one connection until its stream ends (typically ``Peer(stream, ...).run()``)."""

ValidateHook = Callable[[HTTPRequestInfo, "Incoming | None", "HTTPSession | None"], Any]
ResponseMode = Literal["json", "sse", "auto"]
ResponseModeHook = Callable[[Request, HTTPRequestInfo], "ResponseMode | None"]
ErrorStatusHook = Callable[[JsonRpcError, HTTPRequestInfo], "int | None"]
ResponseHeadersHook = Callable[[HTTPRequestInfo], Mapping[str, str]]


def _shared_store(store: EventStore | None) -> SharedEventStore | None:
    """``store`` if several processes can share it (``_http_resume``, loaded only for a
    server with an event store)."""
    if store is None:
        return None
    from ._http_resume import shared_store

    return shared_store(store)


_SSE_HEADERS = {
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
}


@dataclass
class HTTPServerOptions:
    """Everything a protocol layer or user can set on the HTTP server.

    ``sessions`` ``None`` means stateless: no per-client state at all, each POST is
    self-contained and GET/DELETE get 405. ``validate`` runs on every parsed POST (and
    on GET and DELETE, with payload ``None``) and may raise `HTTPError` (an HTTP
    status) or `JsonRpcError` (a JSON-RPC error in a 200 response). ``response_mode``
    picks JSON or SSE per request, or ``"auto"``: JSON if the answer is the first
    message the handler sends, SSE as soon as anything else comes first (or after
    ``sse_defer_timeout`` seconds of silence); requests named in ``streaming_methods``
    may be answered with several results (A2A streaming). A streamed request in
    ``"auto"`` mode is answered as JSON only when it fails before its first result (a
    plain error response), and as SSE once its first result is there. ``error_status`` gives the
    HTTP status of a JSON answer that is a JSON-RPC error (``None``: 200), for
    protocols that map error codes to statuses.
    ``response_headers`` adds headers to the answer of each POST that carries a
    request, computed after ``validate`` (A2A echoes its activated extensions).
    A request body must arrive within ``body_timeout`` seconds, or it is answered 408
    and the connection closed (checked per chunk; ``serve`` and ``running_server`` also
    cut off a client that stops sending, with the same default).
    """

    path: str = "/rpc"
    sessions: SessionPolicy | None = None
    json_response: bool = False
    standalone_stream: bool = True
    legacy_sse_path: str | None = None
    legacy_messages_path: str = "/messages"
    max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE
    event_store: EventStore | None = None
    retry_interval_ms: int | None = None
    idle_timeout: float = 1800.0
    max_sessions: int = 10_000
    origin_policy: OriginPolicy | None = field(default_factory=OriginPolicy.loopback)
    auth: BearerAuth | None = None
    routes: Sequence[Route] = ()
    allow_batch: bool = True
    require_accept: bool = True
    event_name: str | None = "message"
    validate: ValidateHook | None = None
    response_mode: ResponseModeHook | None = None
    streaming_methods: frozenset[str] = frozenset()
    response_headers: ResponseHeadersHook | None = None
    session_header_on: Literal["start", "all"] = "start"
    error_status: ErrorStatusHook | None = None
    sse_defer_timeout: float = 10.0
    body_timeout: float | None = BODY_TIMEOUT


class JsonRpcHTTPApp:
    """An ASGI app serving JSON-RPC over Streamable HTTP (and HTTP+SSE if enabled)."""

    def __init__(self, serve: ServeConnection, options: HTTPServerOptions | None = None) -> None:
        self.serve_connection = serve
        self.options = options or HTTPServerOptions()
        self.sessions = SessionTable(
            max_sessions=self.options.max_sessions, idle_timeout=self.options.idle_timeout
        )
        self._task_group: TaskGroup | None = None
        self._shared: ServerChannel | None = None
        self._endpoint = self.options.path.rstrip("/") or "/"
        self._stopping = False

    # -- lifetime ------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the app is running (inside lifespan or `running`)."""
        return self._task_group is not None

    def close(self) -> None:
        """Stop serving: end every session and stream; later requests get 503."""
        self._stopping = True
        for session in self.sessions.all():
            self.sessions.remove(session.id)
            session.close()
        if self._shared is not None:
            self._shared.close_inbound()
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
        self._task_group = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[JsonRpcHTTPApp]:
        """Run the app's background work; lifespan does this for you under uvicorn."""
        if self._task_group is not None:
            yield self
            return
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            self._stopping = False
            if self.options.sessions is None:
                self._shared_channel()
            if self.options.sessions is not None:
                task_group.start_soon(self._reap_idle_sessions)
            try:
                yield self
            finally:
                self._stopping = True
                for session in self.sessions.all():
                    session.close()
                if self._shared is not None:
                    self._shared.close_inbound()
                task_group.cancel_scope.cancel()
                self._task_group = None
                self._shared = None

    def _shared_channel(self) -> ServerChannel:
        """The one connection serving every request without a session (made on first use
        when the app also has sessions)."""
        if self._shared is None:
            assert self._task_group is not None
            shared = ServerChannel(standalone=None, remap_ids=True, max_buffered=256)
            self._shared = shared

            async def serve_shared() -> None:
                await self.serve_connection(shared)

            self._task_group.start_soon(serve_shared)
        return self._shared

    async def _reap_idle_sessions(self) -> None:
        interval = max(0.05, min(self.options.idle_timeout / 4, 30.0))
        while True:
            await anyio.sleep(interval)
            for session in self.sessions.expired():
                logger.info(
                    "session %s expired after %.0f s idle", session.id, self.options.idle_timeout
                )
                self.sessions.remove(session.id)
                session.close()
                await self._forget_streams(session)

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
            if self._task_group is None:
                raise HTTPError(503, "Server not started: serve it with lifespan or app.running()")
            await self._authenticate(info)
            method = info.method
            if method == "POST":
                await self._post(receive, send, info)
            elif method == "GET":
                await self._get(receive, send, info)
            elif method == "DELETE":
                await self._delete(send, info)
            else:
                raise HTTPError(405, "Method not allowed", headers={"allow": "GET, POST, DELETE"})
            return
        if options.legacy_sse_path is not None and path in (
            options.legacy_sse_path.rstrip("/"),
            options.legacy_messages_path.rstrip("/"),
        ):
            if self._task_group is None:
                raise HTTPError(503, "Server not started: serve it with lifespan or app.running()")
            await self._authenticate(info)
            if path == options.legacy_sse_path.rstrip("/") and info.method == "GET":
                await self._legacy_stream(scope, receive, send, info)
            elif path == options.legacy_messages_path.rstrip("/") and info.method == "POST":
                await self._legacy_post(receive, send, info)
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

    # -- POST ----------------------------------------------------------------------

    async def _read_payload(self, receive: ASGIReceive, info: HTTPRequestInfo) -> Incoming:
        content_type = info.headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            raise HTTPError(415, "Unsupported Media Type: Content-Type must be application/json")
        length = info.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.options.max_body_size:
            raise HTTPError(413, f"Payload Too Large: limit is {self.options.max_body_size} bytes")
        try:
            body = await read_body(receive, self.options.max_body_size, self.options.body_timeout)
        except BodyTooLarge:
            raise HTTPError(
                413, f"Payload Too Large: limit is {self.options.max_body_size} bytes"
            ) from None
        except BodyTooSlow:
            raise self._too_slow() from None
        payload = parse(body)
        if isinstance(payload, InvalidMessage):
            raise HTTPError(400, payload.error.message, error=payload.error)
        if isinstance(payload, list):
            if not self.options.allow_batch:
                raise HTTPError(
                    400,
                    "Batches are not supported",
                    error=InvalidRequest("Invalid Request: batches are not supported"),
                )
            invalid = [m for m in payload if isinstance(m, InvalidMessage)]
            if invalid and len(invalid) == len(payload):
                raise HTTPError(400, invalid[0].error.message, error=invalid[0].error)
        return payload

    def _too_slow(self) -> HTTPError:
        return HTTPError(
            408,
            f"Request Timeout: the body took longer than {self.options.body_timeout:g} s",
            headers={"connection": "close"},
        )

    def _check_post_accept(self, info: HTTPRequestInfo) -> None:
        if not self.options.require_accept:
            return
        accept = info.headers.get("accept")
        if not (accepts(accept, "application/json") and accepts(accept, "text/event-stream")):
            raise HTTPError(
                406, "Not Acceptable: Accept must list application/json and text/event-stream"
            )

    async def _post(self, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo) -> None:
        options = self.options
        self._check_post_accept(info)
        payload = await self._read_payload(receive, info)
        if options.auth is not None:
            options.auth.authorize(info.principal, payload)
        session, provisional = self._session_for_post(info, payload)
        try:
            await self._post_to(receive, send, info, payload, session, provisional)
        finally:
            if session is not None:
                session.active_requests -= 1
                session.touch()

    async def _post_to(
        self,
        receive: ASGIReceive,
        send: ASGISend,
        info: HTTPRequestInfo,
        payload: Incoming,
        session: HTTPSession | None,
        provisional: bool,
    ) -> None:
        """Serve a POST whose session (counted as in flight by the caller) is known."""
        options = self.options
        channel = self._shared_channel() if session is None else session.channel
        assert channel is not None
        if session is not None:
            info.session_id = session.id
        if options.validate is not None:
            try:
                await self._validate(info, payload, session)
            except JsonRpcError as exc:
                request_id = payload.id if isinstance(payload, Request) else None
                if session is not None and provisional:
                    self.sessions.release(session.id)
                    session.close()
                await send_response(
                    send, 200, json_rpc_error_body(exc, request_id), content_type="application/json"
                )
                return
            except HTTPError as exc:
                if session is not None and provisional:
                    self.sessions.release(session.id)
                    session.close()
                if exc.error is not None and exc.body is None and isinstance(payload, Request):
                    exc.body = json_rpc_error_body(exc.error, payload.id)
                raise
        items = payload if isinstance(payload, list) else [payload]
        requests = [m for m in items if isinstance(m, Request)]
        # Invalid batch members get their error from here: with no request id to route
        # by, the peer's answer would have nowhere to go.
        invalid = [
            ErrorResponse(m.id, m.error)
            for m in items
            if isinstance(m, InvalidMessage) and m.respond
        ]
        if not requests:
            try:
                await channel.deliver_inbound(Received(payload, info))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise HTTPError(404, "Session not found: it has ended") from None
            if invalid:
                body = b"[" + b",".join(encode(e) for e in invalid) + b"]"
                await send_response(send, 200, body, content_type="application/json")
            else:
                await send_response(send, 202)
            return
        mode = self._response_mode(requests, info)
        json_mode = mode == "json"
        if isinstance(payload, Request):
            info.request_id = payload.id
        info.disconnected = anyio.Event()
        outbox = Outbox(
            new_stream_id(session.id if session is not None else ""),
            json_mode=json_mode,
            # Without a session no stream can be resumed (a resumption names its session).
            event_store=None if json_mode or session is None else options.event_store,
            event_name=options.event_name,
        )
        try:
            for request in requests:
                channel.route(request, outbox, streamed=request.method in options.streaming_methods)
        except ValueError as exc:
            channel.unroute(outbox)
            raise HTTPError(
                400, str(exc), error=InvalidRequest(f"Invalid Request: {exc}")
            ) from None
        if session is not None and outbox.event_store is not None:
            session.stream_ids.add(outbox.stream_id)
        queue = None if json_mode else outbox.attach(with_backlog=False)
        generation = outbox.generation
        try:
            priming_id: str | None = None
            if queue is not None and outbox.event_store is not None:
                # The priming id is taken first, so resuming from it replays everything
                # the handler sends, even before the response starts; closing is offered
                # before the handler can run, and only where the stream is stored.
                priming_id = await outbox.event_store.append(outbox.stream_id, b"")
                info.close_sse_stream = outbox.detach
            if session is not None and provisional:
                outbox.on_failure = lambda: self._abandon_session(session)
            for error in invalid:
                await outbox.deliver(error)
            try:
                await channel.deliver_inbound(Received(payload, info))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise HTTPError(404, "Session not found: it has ended") from None
            # One turn of the event loop lets a quick handler answer before anything is
            # written: the answer then goes out whole, with no disconnect watcher.
            await anyio.lowlevel.checkpoint()
            headers = await self._session_headers(session, provisional, outbox, receive)
            if headers is None:
                return
            if options.response_headers is not None:
                headers = {**headers, **options.response_headers(info)}
            if json_mode:
                await self._answer_json(
                    send, receive, outbox, headers, info, batch=isinstance(payload, list)
                )
                return
            assert queue is not None
            if mode == "auto" and not isinstance(payload, list):
                answered = await self._answer_deferred(send, receive, outbox, headers, info)
                if answered:
                    return
            await self._write_sse(
                send,
                receive,
                outbox,
                queue,
                headers,
                generation=generation,
                prime=True,
                priming_id=priming_id,
                disconnected=info.disconnected,
            )
        finally:
            if queue is not None:
                outbox.detach_if_current(generation)
            if session is not None and provisional and outbox.failed:
                session.close()

    def _response_mode(self, requests: list[Request], info: HTTPRequestInfo) -> ResponseMode:
        hook = self.options.response_mode
        if hook is not None:
            modes = {hook(request, info) for request in requests}
            for mode in ("sse", "auto", "json"):
                if mode in modes:
                    return mode
        return "json" if self.options.json_response else "sse"

    def _status_for(self, outbox: Outbox, info: HTTPRequestInfo) -> int:
        hook = self.options.error_status
        first = outbox.first_payload
        if hook is None or not isinstance(first, ErrorResponse):
            return 200
        return hook(first.error, info) or 200

    def _session_for_post(
        self, info: HTTPRequestInfo, payload: Incoming
    ) -> tuple[HTTPSession | None, bool]:
        policy = self.options.sessions
        if policy is None:
            return None, False
        if policy.is_sessionless is not None and policy.is_sessionless(info, payload):
            return None, False
        session_id = info.headers.get(policy.header)
        if session_id:
            session = self.sessions.get(session_id)
            if session is None:
                raise HTTPError(404, "Session not found: it has expired or was terminated")
            if session.principal is not None and session.principal != info.principal:
                raise HTTPError(404, "Session not found: it belongs to another principal")
        else:
            if not policy.is_start(payload):
                raise HTTPError(400, f"Bad Request: missing {policy.header} header")
            if self.sessions.full:
                raise HTTPError(503, "Service Unavailable: too many sessions")
            session = self._open_session(policy, info)
        # In flight from here (the caller uncounts it): the reaper cannot take it now.
        session.active_requests += 1
        session.touch()
        return session, not session_id

    def _open_session(self, policy: SessionPolicy, info: HTTPRequestInfo) -> HTTPSession:
        session_id = policy.new_id()
        standalone = Outbox(
            new_stream_id(session_id),
            json_mode=False,
            event_store=self.options.event_store,
            event_name=self.options.event_name,
            standalone=True,
        )
        channel = ServerChannel(standalone=standalone)
        session = HTTPSession(session_id, channel, standalone, principal=info.principal)
        if standalone.event_store is not None:
            session.stream_ids.add(standalone.stream_id)
        self.sessions.reserve(session_id)
        assert self._task_group is not None
        self._task_group.start_soon(self._run_session, session)
        return session

    def _abandon_session(self, session: HTTPSession) -> None:
        """Unregister a session whose first request failed: it was never validly opened.

        Runs while the error is being delivered, so the session is closed later, by the
        request's own handler (closing now would cancel that very delivery).
        """
        if self.sessions.get(session.id) is session:
            self.sessions.remove(session.id)
        self.sessions.release(session.id)

    async def _run_session(self, session: HTTPSession) -> None:
        try:
            with session.cancel_scope:
                await self.serve_connection(session.channel)
        finally:
            if self.sessions.get(session.id) is session:
                self.sessions.remove(session.id)
            self.sessions.release(session.id)
            session.close()
            await self._forget_streams(session)

    async def _forget_streams(self, session: HTTPSession) -> None:
        """The session has ended: no one may resume its streams, so drop them (once).

        A shared store forgets the whole session, except while this app is stopping
        (another replica may still resume its streams then)."""
        if not session.stream_ids:
            return
        stream_ids, session.stream_ids = session.stream_ids, set()
        store = self.options.event_store
        shared = _shared_store(store)
        if store is None or (shared is not None and self._stopping):
            return
        with anyio.move_on_after(_FORGET_TIMEOUT, shield=True):
            try:
                if shared is not None:
                    await shared.forget_session(session.id)
                else:
                    for stream_id in stream_ids:
                        await store.forget(stream_id)
            except Exception:
                logger.warning("could not forget session %s's streams", session.id, exc_info=True)

    async def _session_headers(
        self,
        session: HTTPSession | None,
        provisional: bool,
        outbox: Outbox,
        receive: ASGIReceive,
    ) -> dict[str, str] | None:
        """Response headers; for a new session, wait for its first answer to decide."""
        policy = self.options.sessions
        if session is None or policy is None:
            return {}
        if not provisional:
            return {policy.header: session.id} if self.options.session_header_on == "all" else {}
        if not outbox.first_message.is_set() and await _wait_or_disconnect(
            outbox.first_message.wait, receive
        ):
            self.sessions.release(session.id)
            session.close()
            return None
        if outbox.failed:
            return {}  # closed once its answer is out (see _post)
        self.sessions.add(session)
        shared = _shared_store(self.options.event_store)
        if shared is not None:  # other replicas may resume its streams (_http_resume)
            await shared.register_session(session.id, session.principal)
        return {policy.header: session.id}

    async def _answer_json(
        self,
        send: ASGISend,
        receive: ASGIReceive,
        outbox: Outbox,
        headers: dict[str, str],
        info: HTTPRequestInfo,
        *,
        batch: bool,
    ) -> None:
        done = outbox.done
        turns = _QUICK_TURNS
        while turns and not done.is_set():
            # A handler that hands its work to another task (A2A runs its agent apart)
            # answers within a few turns: cheaper than watching the client meanwhile.
            await anyio.lowlevel.checkpoint()
            turns -= 1
        if not done.is_set() and await _wait_or_disconnect(done.wait, receive):
            if info.disconnected is not None:
                info.disconnected.set()
            return
        if not outbox.responses:
            raise HTTPError(503, "Service Unavailable: the session ended before answering")
        if batch:
            body = b"[" + b",".join(outbox.responses) + b"]"
            status = 200
        else:
            body = outbox.responses[0]
            status = self._status_for(outbox, info)
        await send_response(send, status, body, content_type="application/json", headers=headers)

    async def _answer_deferred(
        self,
        send: ASGISend,
        receive: ASGIReceive,
        outbox: Outbox,
        headers: dict[str, str],
        info: HTTPRequestInfo,
    ) -> bool:
        """The ``"auto"`` response mode: ``True`` if the request was answered as JSON
        (its answer came first) or the client left; ``False`` to go on with SSE."""
        if not outbox.progressed.is_set():
            with anyio.move_on_after(self.options.sse_defer_timeout):
                if await _wait_or_disconnect(outbox.progressed.wait, receive):
                    if info.disconnected is not None:
                        info.disconnected.set()
                    return True
        if not (outbox.done.is_set() and outbox.delivered == 1 and outbox.first_data):
            return False
        if outbox.carries_stream and not isinstance(outbox.first_payload, ErrorResponse):
            return False  # one streamed result is still a stream
        status = self._status_for(outbox, info)
        await send_response(
            send, status, outbox.first_data, content_type="application/json", headers=headers
        )
        return True

    async def _write_sse(
        self,
        send: ASGISend,
        receive: ASGIReceive,
        outbox: Outbox,
        queue: MemoryObjectReceiveStream[tuple[str | None, bytes]],
        headers: dict[str, str],
        *,
        generation: int,
        prime: bool,
        priming_id: str | None = None,
        before: Sequence[bytes] = (),
        skip_ids: frozenset[str] = frozenset(),
        disconnected: anyio.Event | None = None,
    ) -> None:
        """Stream ``queue`` (consumer ``generation`` of ``outbox``) as SSE; ``prime``
        starts with an id-only event (``priming_id`` if one was stored already) when
        there is an event store."""
        raw_headers = [(b"content-type", b"text/event-stream")]
        for name, value in {**_SSE_HEADERS, **headers}.items():
            raw_headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
        store = outbox.event_store
        # Everything is queued already (a quick answer): write it all at once, with
        # nothing left to watch the client for.
        complete = outbox.done.is_set() and not outbox.standalone

        def on_disconnect() -> None:
            if disconnected is not None and not outbox.done.is_set():
                disconnected.set()

        async with _DisconnectWatch(receive, on_disconnect, enabled=not complete):
            if not complete:
                await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            # The stream begins at once (priming event or comment), then goes on with
            # every event as soon as it is queued: the events already queued when the
            # queue is looked at go out together, in one body message (at most
            # _COALESCE_EVENTS of them, _COALESCE_BYTES or so), and none waits for a
            # later one. The last events also end the response.
            pending: list[bytes] = []
            if prime and store is not None:
                if priming_id is None:
                    priming_id = await store.append(outbox.stream_id, b"")
                event = SSEEvent("", None, priming_id, self.options.retry_interval_ms)
                pending.append(encode_event(event))
            else:
                pending.append(_COMMENT)
            pending.extend(before)
            if not complete:
                await send(_chunk(b"".join(pending)))
                pending.clear()
            async with queue:
                receive_nowait = queue.receive_nowait
                size = 0  # bytes in pending (events not sent yet)
                while True:
                    try:
                        event_id, data = receive_nowait()
                    except anyio.WouldBlock:
                        if pending:
                            await send(_chunk(b"".join(pending)))
                            pending.clear()
                            size = 0
                        try:
                            event_id, data = await queue.receive()
                        except anyio.EndOfStream:
                            break
                    except anyio.EndOfStream:
                        break
                    if event_id is not None and event_id in skip_ids:
                        continue
                    if not complete and (
                        len(pending) >= _COALESCE_EVENTS or size >= _COALESCE_BYTES
                    ):
                        # Bounded, so that a transport whose back-pressure counts body
                        # messages (not bytes) still holds a stalled reader's backlog down.
                        await send(_chunk(b"".join(pending)))
                        pending.clear()
                        size = 0
                    pending.append(data)
                    size += len(data)
            if not outbox.ended_normally(generation) and self.options.retry_interval_ms is not None:
                # Closed early by the server: tell the client when to resume.
                pending.append(f"retry: {self.options.retry_interval_ms}\n\n".encode())
            body = b"".join(pending)
            if complete:
                # The whole stream is known: one sized body, no chunked framing.
                raw_headers.append((b"content-length", str(len(body)).encode()))
                await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            await send({"type": "http.response.body", "body": body, "more_body": False})

    # -- GET and DELETE ------------------------------------------------------------

    def _session_for_stream(self, info: HTTPRequestInfo) -> HTTPSession:
        policy = self.options.sessions
        if policy is None:
            raise HTTPError(
                405, "Method not allowed: this server is stateless", headers={"allow": "POST"}
            )
        if policy.is_sessionless is not None and policy.is_sessionless(info, None):
            # A GET or DELETE of the sessionless protocol: nothing to stream or end.
            raise HTTPError(405, "Method not allowed: no session here", headers={"allow": "POST"})
        session_id = info.headers.get(policy.header)
        if not session_id:
            raise HTTPError(400, f"Bad Request: missing {policy.header} header")
        session = self.sessions.get(session_id)
        if session is None:
            raise HTTPError(404, "Session not found: it has expired or was terminated")
        if session.principal is not None and session.principal != info.principal:
            raise HTTPError(404, "Session not found: it belongs to another principal")
        info.session_id = session.id
        return session

    async def _get(self, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo) -> None:
        if not accepts(info.headers.get("accept"), "text/event-stream"):
            raise HTTPError(406, "Not Acceptable: Accept must list text/event-stream")
        if not self.options.standalone_stream:
            raise HTTPError(
                405,
                "Method not allowed: no standalone stream here",
                headers={"allow": "POST, DELETE"},
            )
        last_event_id = info.headers.get("last-event-id")
        shared = _shared_store(self.options.event_store)
        policy = self.options.sessions
        elsewhere = info.headers.get(policy.header) if policy is not None else None
        if shared is not None and last_event_id and elsewhere and not self.sessions.get(elsewhere):
            # A stream of a session another replica holds, resumed here (_http_resume).
            await self._validate(info, None, None)
            from ._http_resume import resume_elsewhere

            await resume_elsewhere(
                shared,
                send,
                receive,
                info,
                session_id=elsewhere,
                last_event_id=last_event_id,
                event_name=self.options.event_name,
            )
            return
        session = self._session_for_stream(info)
        await self._validate(info, None, session)
        if self.sessions.get(session.id) is not session:
            # Reaped or deleted while an async validate hook ran.
            raise HTTPError(404, "Session not found: it has expired or was terminated")
        session.touch()
        if last_event_id and self.options.event_store is not None:
            await self._resume(send, receive, session, last_event_id)
            return
        if session.standalone.attached:
            raise HTTPError(409, "Conflict: a standalone stream is already open for this session")
        queue = session.standalone.attach(with_backlog=True)
        generation = session.standalone.generation
        try:
            await self._write_sse(
                send, receive, session.standalone, queue, {}, generation=generation, prime=True
            )
        finally:
            session.standalone.detach_if_current(generation)
            session.touch()

    async def _resume(
        self, send: ASGISend, receive: ASGIReceive, session: HTTPSession, last_event_id: str
    ) -> None:
        store = self.options.event_store
        assert store is not None
        if not last_event_id.startswith(session.id + "."):
            # Another session's stream (or not ours at all): never replay across sessions.
            raise HTTPError(404, "Unknown Last-Event-ID: nothing to resume")
        outbox = self._find_outbox(session, last_event_id)
        # Attach first, replay second: anything stored meanwhile is in both, and the
        # replayed ids are skipped from the live queue.
        queue = outbox.attach(with_backlog=False) if outbox is not None else None
        replay = await store.replay_after(last_event_id)
        if replay is None:
            if outbox is not None:
                outbox.detach()
            raise HTTPError(404, "Unknown Last-Event-ID: nothing to resume")
        if outbox is None:
            # The stream already ended: replay what is stored, then end normally.
            outbox = Outbox(replay.stream_id, json_mode=False, event_name=self.options.event_name)
            outbox.finish()
            queue = outbox.attach(with_backlog=False)
        assert queue is not None
        generation = outbox.generation
        events = [outbox.render(event_id, data) for event_id, data in replay.events if data]
        skip = frozenset(event_id for event_id, _ in replay.events)
        session.active_requests += 1
        try:
            await self._write_sse(
                send,
                receive,
                outbox,
                queue,
                {},
                generation=generation,
                prime=False,
                before=events,
                skip_ids=skip,
            )
        finally:
            outbox.detach_if_current(generation)
            session.active_requests -= 1
            session.touch()

    def _find_outbox(self, session: HTTPSession, last_event_id: str) -> Outbox | None:
        stream_id = last_event_id.rpartition(":")[0]
        if session.standalone.stream_id == stream_id:
            return session.standalone
        for outbox in session.channel.routes.values():
            if outbox.stream_id == stream_id:
                return outbox
        return None

    async def _delete(self, send: ASGISend, info: HTTPRequestInfo) -> None:
        session = self._session_for_stream(info)
        await self._validate(info, None, session)
        self.sessions.remove(session.id)
        session.close()
        await self._forget_streams(session)
        await send_response(send, 200)

    # -- HTTP+SSE (2024-11-05) -----------------------------------------------------

    async def _legacy_stream(
        self, scope: ASGIScope, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo
    ) -> None:
        if not accepts(info.headers.get("accept", "text/event-stream"), "text/event-stream"):
            raise HTTPError(406, "Not Acceptable: Accept must list text/event-stream")
        if self.sessions.full:
            raise HTTPError(503, "Service Unavailable: too many sessions")
        session_id = new_stream_id()
        standalone = Outbox(
            new_stream_id(session_id), json_mode=False, event_name="message", standalone=True
        )
        channel = ServerChannel(standalone=standalone, legacy=True)
        session = HTTPSession(session_id, channel, standalone, principal=info.principal)
        self.sessions.add(session)
        assert self._task_group is not None
        self._task_group.start_soon(self._run_session, session)
        root = scope.get("root_path", "")
        endpoint = f"{root}{self.options.legacy_messages_path}?session_id={session.id}"
        announce = encode_event(SSEEvent(endpoint, "endpoint"))
        queue = standalone.attach(with_backlog=True)
        try:
            await self._write_sse(
                send,
                receive,
                standalone,
                queue,
                {},
                generation=standalone.generation,
                prime=False,
                before=[announce],
            )
        finally:
            self.sessions.remove(session.id)
            session.close()

    async def _legacy_post(
        self, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo
    ) -> None:
        session_id = info.query.get("session_id")
        if not session_id:
            raise HTTPError(400, "Bad Request: missing session_id")
        session = self.sessions.get(session_id)
        if session is None or not session.channel.legacy:
            raise HTTPError(404, "Session not found")
        if session.principal is not None and session.principal != info.principal:
            raise HTTPError(404, "Session not found")
        payload = await self._read_payload(receive, info)
        if self.options.auth is not None:
            self.options.auth.authorize(info.principal, payload)
        info.session_id = session.id
        session.touch()
        try:
            await self._validate(info, payload, session)
        except JsonRpcError as exc:
            # The answer to any request travels on the event stream, refusals included.
            request_id = payload.id if isinstance(payload, Request) else None
            await session.standalone.deliver(ErrorResponse(request_id, exc))
        else:
            await session.channel.deliver_inbound(Received(payload, info))
        await send_response(send, 202, b"Accepted", content_type="text/plain")

    async def _validate(
        self, info: HTTPRequestInfo, payload: Incoming | None, session: HTTPSession | None
    ) -> None:
        """Run the layer's validate hook (``payload`` is ``None`` for GET and DELETE)."""
        if self.options.validate is not None:
            outcome = self.options.validate(info, payload, session)
            if inspect.isawaitable(outcome):
                await outcome

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
            raise self._too_slow() from None
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
        await self._stream_events(send, receive, response)

    async def _stream_events(
        self, send: ASGISend, receive: ASGIReceive, response: SSEResponse
    ) -> None:
        raw_headers = [(b"content-type", b"text/event-stream")]
        for name, value in {**_SSE_HEADERS, **response.headers}.items():
            raw_headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
        async with anyio.create_task_group() as task_group:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                task_group.cancel_scope.cancel()

            task_group.start_soon(watch_disconnect)
            await send(
                {"type": "http.response.start", "status": response.status, "headers": raw_headers}
            )
            async for data in response.events:
                await send(_chunk(data))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            task_group.cancel_scope.cancel()


_COMMENT = encode_comment()

_QUICK_TURNS = 3
"""Event-loop turns a JSON answer is awaited for before the client is watched."""

_COALESCE_EVENTS = 16
_COALESCE_BYTES = 64 * 1024
"""Queued SSE events joined into one body message: at most this many, this many bytes
or so (the event that crosses the byte bound still goes in)."""


def _chunk(data: bytes) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def _wait_or_disconnect(wait: Callable[[], Awaitable[Any]], receive: ASGIReceive) -> bool:
    """Wait for ``wait()``; ``True`` if the client disconnected first."""
    async with _DisconnectWatch(receive) as watch:
        await wait()
    return watch.disconnected


class _DisconnectWatch:
    """Cancels the block it guards once the client disconnects (then ``disconnected``).

    The watcher is a task in a task group of the guarded block's own, so it ends with the
    block and no task outlives the request. What the block raises comes out as it is (not
    in an exception group), and so does an error of the watcher's ``receive``. The watcher
    is stopped through a scope of its own, inside it, so that it ends normally: a task that
    ended cancelled would keep its exception, whose frames reference the task again (a
    reference cycle per request).
    """

    __slots__ = (
        "_enabled",
        "_error",
        "_on_disconnect",
        "_receive",
        "_task_group",
        "_watching",
        "disconnected",
    )

    def __init__(
        self,
        receive: ASGIReceive,
        on_disconnect: Callable[[], None] | None = None,
        *,
        enabled: bool = True,
    ) -> None:
        self._enabled = enabled
        self._receive = receive
        self._on_disconnect = on_disconnect
        self._task_group: TaskGroup | None = None
        self._watching: anyio.CancelScope | None = None
        self._error: Exception | None = None
        self.disconnected = False

    async def __aenter__(self) -> _DisconnectWatch:
        if self._enabled:
            task_group = self._task_group = anyio.create_task_group()
            await task_group.__aenter__()
            self._watching = anyio.CancelScope()
            task_group.start_soon(self._watch, self._watching, task_group.cancel_scope)
        return self

    async def _watch(self, watching: anyio.CancelScope, block: anyio.CancelScope) -> None:
        with watching:
            try:
                while (await self._receive())["type"] != "http.disconnect":
                    pass
            except Exception as exc:  # raised in the guarded block's task, by __aexit__
                self._error = exc
                block.cancel()
                return
            self.disconnected = True
            if self._on_disconnect is not None:
                self._on_disconnect()
            block.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        task_group, self._task_group = self._task_group, None
        if task_group is None:
            return None  # not enabled
        assert self._watching is not None
        self._watching.cancel()  # the block is done: stop watching
        self._watching = None
        if exc is not None and not isinstance(exc, anyio.get_cancelled_exc_class()):
            # The block's own error: the group only waits for the watcher to end, and
            # the error goes on unwrapped.
            await task_group.__aexit__(None, None, None)
            return None
        swallowed = await task_group.__aexit__(exc_type, exc, tb)
        error, self._error = self._error, None
        if error is not None:
            raise error
        return swallowed
