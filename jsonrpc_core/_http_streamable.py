"""The Streamable HTTP endpoint of the server: POST, GET and DELETE.

A POST carries messages and is answered as JSON or as an SSE stream (module rule 5 of
``_http_server``); a GET opens the session's standalone stream or resumes one with
``Last-Event-ID``; a DELETE ends the session. `StreamableHTTPHandler` gets what it
shares with the rest of the app explicitly: the options, the session table, the
`SessionRunner` that runs sessions in the app's task group, and the `SSEWriter`.

Rules: a new session is reserved when its first POST arrives and registered only once
that POST's first answer is out without error (``_http_sessions``); a request counts as
in flight on its session from the lookup until its response has ended.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import anyio.lowlevel

from ._errors import InvalidRequest, JsonRpcError
from ._http_channel import Outbox, ServerChannel, new_stream_id
from ._http_common import (
    ASGIReceive,
    ASGISend,
    HTTPError,
    HTTPRequestInfo,
    accepts,
    json_rpc_error_body,
    send_response,
)
from ._http_server_options import HTTPServerOptions, ResponseMode, read_payload, run_validate
from ._http_sessions import (
    HTTPSession,
    SessionPolicy,
    SessionRunner,
    SessionTable,
    shared_store_of,
)
from ._http_sse_writer import EventQueue, SSEWriter, wait_or_disconnect, watch_for
from ._transport import Received
from ._wire import ErrorResponse, Incoming, InvalidMessage, Request, encode

__all__ = ["StreamableHTTPHandler"]

_QUICK_TURNS = 3
"""Event-loop turns a JSON answer is awaited for before the client is watched."""


@dataclass(slots=True)
class _Post:
    """One POST being served: its ASGI channel, parsed payload and session."""

    receive: ASGIReceive
    send: ASGISend
    info: HTTPRequestInfo
    payload: Incoming
    session: HTTPSession | None
    provisional: bool  # the session opens with this POST (not registered yet)


class StreamableHTTPHandler:
    """Serves POST, GET and DELETE on the Streamable HTTP endpoint (see module rules)."""

    def __init__(
        self,
        options: HTTPServerOptions,
        sessions: SessionTable,
        runner: SessionRunner,
        writer: SSEWriter,
    ) -> None:
        self._options = options
        self._sessions = sessions
        self._runner = runner
        self._writer = writer

    # -- POST ----------------------------------------------------------------------

    async def post(self, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo) -> None:
        """Serve a POST: authorize and route its messages, then answer it."""
        options = self._options
        self._check_post_accept(info)
        payload = await read_payload(options, receive, info)
        if options.auth is not None:
            options.auth.authorize(info.principal, payload)
        session, provisional = self._session_for_post(info, payload)
        try:
            await self._serve_post(_Post(receive, send, info, payload, session, provisional))
        finally:
            if session is not None:
                session.active_requests -= 1
                session.touch()

    def _check_post_accept(self, info: HTTPRequestInfo) -> None:
        if not self._options.require_accept:
            return
        accept = info.headers.get("accept")
        if not (accepts(accept, "application/json") and accepts(accept, "text/event-stream")):
            raise HTTPError(
                406, "Not Acceptable: Accept must list application/json and text/event-stream"
            )

    async def _serve_post(self, post: _Post) -> None:
        """Serve a POST whose session (counted as in flight by the caller) is known."""
        options, info, payload, session = self._options, post.info, post.payload, post.session
        channel = self._runner.shared_channel() if session is None else session.channel
        assert channel is not None
        if session is not None:
            info.session_id = session.id
        if options.validate is not None and not await self._validate_post(post):
            return
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
            await self._deliver_unanswered(post, channel, invalid)
            return
        mode = self._response_mode(requests, info)
        json_mode = mode == "json"
        if isinstance(payload, Request):
            info.request_id = payload.id
        info.disconnected = anyio.Event()
        outbox = self._route(channel, requests, session, json_mode=json_mode)
        queue = None if json_mode else outbox.attach(with_backlog=False)
        generation = outbox.generation
        try:
            await self._answer(post, channel, outbox, queue, generation, mode, invalid)
        finally:
            if queue is not None:
                outbox.detach_if_current(generation)
                # Closed here whatever the answer was (JSON in "auto" mode never reads
                # it): an unclosed stream costs a ResourceWarning when collected.
                queue.close()
            if session is not None and post.provisional and outbox.failed:
                session.close()

    async def _validate_post(self, post: _Post) -> bool:
        """Run the validate hook on a POST; ``False`` if it was refused with a JSON-RPC
        error (answered here), an `HTTPError` is raised on."""
        session, payload = post.session, post.payload
        try:
            await run_validate(self._options, post.info, payload, session)
        except JsonRpcError as exc:
            request_id = payload.id if isinstance(payload, Request) else None
            if session is not None and post.provisional:
                self._sessions.release(session.id)
                session.close()
            await send_response(
                post.send,
                200,
                json_rpc_error_body(exc, request_id),
                content_type="application/json",
            )
            return False
        except HTTPError as exc:
            if session is not None and post.provisional:
                self._sessions.release(session.id)
                session.close()
            if exc.error is not None and exc.body is None and isinstance(payload, Request):
                exc.body = json_rpc_error_body(exc.error, payload.id)
            raise
        return True

    async def _deliver_unanswered(
        self, post: _Post, channel: ServerChannel, invalid: list[ErrorResponse]
    ) -> None:
        """A POST with no request in it (notifications, responses): 202, or the errors
        of its invalid members."""
        try:
            await channel.deliver_inbound(Received(post.payload, post.info))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise HTTPError(404, "Session not found: it has ended") from None
        if invalid:
            body = b"[" + b",".join(encode(e) for e in invalid) + b"]"
            await send_response(post.send, 200, body, content_type="application/json")
        else:
            await send_response(post.send, 202)

    def _route(
        self,
        channel: ServerChannel,
        requests: list[Request],
        session: HTTPSession | None,
        *,
        json_mode: bool,
    ) -> Outbox:
        """The outbox the answers to ``requests`` go to, routed on ``channel``."""
        options = self._options
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
        return outbox

    async def _answer(
        self,
        post: _Post,
        channel: ServerChannel,
        outbox: Outbox,
        queue: EventQueue | None,
        generation: int,
        mode: ResponseMode,
        invalid: list[ErrorResponse],
    ) -> None:
        """Hand the POST to the Peer and write its answer (JSON, deferred or SSE)."""
        info, payload, session = post.info, post.payload, post.session
        send, receive = post.send, post.receive
        priming_id: str | None = None
        if queue is not None and outbox.event_store is not None:
            # The priming id is taken first, so resuming from it replays everything
            # the handler sends, even before the response starts; closing is offered
            # before the handler can run, and only where the stream is stored.
            priming_id = await outbox.event_store.append(outbox.stream_id, b"")
            info.close_sse_stream = outbox.detach
        if session is not None and post.provisional:
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
        headers = await self._session_headers(session, post.provisional, outbox, receive)
        if headers is None:
            return
        if self._options.response_headers is not None:
            headers = {**headers, **self._options.response_headers(info)}
        if mode == "json":
            await self._answer_json(
                send, receive, outbox, headers, info, batch=isinstance(payload, list)
            )
            return
        assert queue is not None
        deferred = mode == "auto" and not isinstance(payload, list)
        # The "auto" mode's wait and the stream after it are guarded by one watch: the
        # stream then starts in the very turn its first event wakes this task. (A watch
        # ended and another begun take turns of the event loop, in which an agent's
        # burst of events can complete the whole stream before its response starts.)
        # With the first message here already there is no wait, and no watch yet.
        waits = deferred and not outbox.progressed.is_set()
        async with watch_for(outbox, receive, info.disconnected, enabled=waits):
            if deferred and await self._answer_deferred(send, outbox, headers, info):
                return
            await self._writer.write(
                send,
                receive,
                outbox,
                queue,
                headers,
                generation=generation,
                prime=True,
                priming_id=priming_id,
                disconnected=info.disconnected,
                watched=waits,
            )

    def _response_mode(self, requests: list[Request], info: HTTPRequestInfo) -> ResponseMode:
        hook = self._options.response_mode
        if hook is not None:
            modes = {hook(request, info) for request in requests}
            for mode in ("sse", "auto", "json"):
                if mode in modes:
                    return mode
        return "json" if self._options.json_response else "sse"

    def _status_for(self, outbox: Outbox, info: HTTPRequestInfo) -> int:
        hook = self._options.error_status
        first = outbox.first_payload
        if hook is None or not isinstance(first, ErrorResponse):
            return 200
        return hook(first.error, info) or 200

    # -- sessions of POSTs ---------------------------------------------------------

    def _session_for_post(
        self, info: HTTPRequestInfo, payload: Incoming
    ) -> tuple[HTTPSession | None, bool]:
        policy = self._options.sessions
        if policy is None:
            return None, False
        if policy.is_sessionless is not None and policy.is_sessionless(info, payload):
            return None, False
        session_id = info.headers.get(policy.header)
        if session_id:
            session = self._sessions.get(session_id)
            if session is None:
                raise HTTPError(404, "Session not found: it has expired or was terminated")
            if session.principal is not None and session.principal != info.principal:
                raise HTTPError(404, "Session not found: it belongs to another principal")
        else:
            if not policy.is_start(payload):
                raise HTTPError(400, f"Bad Request: missing {policy.header} header")
            if self._sessions.full:
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
            event_store=self._options.event_store,
            event_name=self._options.event_name,
            standalone=True,
        )
        channel = ServerChannel(standalone=standalone)
        session = HTTPSession(session_id, channel, standalone, principal=info.principal)
        if standalone.event_store is not None:
            session.stream_ids.add(standalone.stream_id)
        self._sessions.reserve(session_id)
        self._runner.start(session)
        return session

    def _abandon_session(self, session: HTTPSession) -> None:
        """Unregister a session whose first request failed: it was never validly opened.

        Runs while the error is being delivered, so the session is closed later, by the
        request's own handler (closing now would cancel that very delivery).
        """
        if self._sessions.get(session.id) is session:
            self._sessions.remove(session.id)
        self._sessions.release(session.id)

    async def _session_headers(
        self,
        session: HTTPSession | None,
        provisional: bool,
        outbox: Outbox,
        receive: ASGIReceive,
    ) -> dict[str, str] | None:
        """Response headers; for a new session, wait for its first answer to decide."""
        policy = self._options.sessions
        if session is None or policy is None:
            return {}
        if not provisional:
            return {policy.header: session.id} if self._options.session_header_on == "all" else {}
        if not outbox.first_message.is_set() and await wait_or_disconnect(
            outbox.first_message.wait, receive
        ):
            self._sessions.release(session.id)
            session.close()
            return None
        if outbox.failed:
            return {}  # closed once its answer is out (see _serve_post)
        self._sessions.add(session)
        shared = shared_store_of(self._options.event_store)
        if shared is not None:  # other replicas may resume its streams (_http_resume)
            await shared.register_session(session.id, session.principal)
        return {policy.header: session.id}

    # -- answers -------------------------------------------------------------------

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
        if not done.is_set() and await wait_or_disconnect(done.wait, receive):
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
        outbox: Outbox,
        headers: dict[str, str],
        info: HTTPRequestInfo,
    ) -> bool:
        """The ``"auto"`` response mode, inside the caller's disconnect watch: ``True``
        if the request was answered as JSON (its answer came first); ``False`` to go on
        with SSE."""
        if not outbox.progressed.is_set():
            with anyio.move_on_after(self._options.sse_defer_timeout):
                await outbox.progressed.wait()
        if not (outbox.done.is_set() and outbox.delivered == 1 and outbox.first_data):
            return False
        if outbox.carries_stream and not isinstance(outbox.first_payload, ErrorResponse):
            return False  # one streamed result is still a stream
        status = self._status_for(outbox, info)
        await send_response(
            send, status, outbox.first_data, content_type="application/json", headers=headers
        )
        return True

    # -- GET and DELETE ------------------------------------------------------------

    def _session_for_stream(self, info: HTTPRequestInfo) -> HTTPSession:
        policy = self._options.sessions
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
        session = self._sessions.get(session_id)
        if session is None:
            raise HTTPError(404, "Session not found: it has expired or was terminated")
        if session.principal is not None and session.principal != info.principal:
            raise HTTPError(404, "Session not found: it belongs to another principal")
        info.session_id = session.id
        return session

    async def get(self, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo) -> None:
        """Serve a GET: open the standalone stream, or resume one (``Last-Event-ID``)."""
        options = self._options
        if not accepts(info.headers.get("accept"), "text/event-stream"):
            raise HTTPError(406, "Not Acceptable: Accept must list text/event-stream")
        if not options.standalone_stream:
            raise HTTPError(
                405,
                "Method not allowed: no standalone stream here",
                headers={"allow": "POST, DELETE"},
            )
        last_event_id = info.headers.get("last-event-id")
        shared = shared_store_of(options.event_store)
        policy = options.sessions
        elsewhere = info.headers.get(policy.header) if policy is not None else None
        if shared is not None and last_event_id and elsewhere and not self._sessions.get(elsewhere):
            # A stream of a session another replica holds, resumed here (_http_resume).
            await run_validate(options, info, None, None)
            from ._http_resume import resume_elsewhere

            await resume_elsewhere(
                shared,
                send,
                receive,
                info,
                session_id=elsewhere,
                last_event_id=last_event_id,
                event_name=options.event_name,
            )
            return
        session = self._session_for_stream(info)
        await run_validate(options, info, None, session)
        if self._sessions.get(session.id) is not session:
            # Reaped or deleted while an async validate hook ran.
            raise HTTPError(404, "Session not found: it has expired or was terminated")
        session.touch()
        if last_event_id and options.event_store is not None:
            await self._writer.resume(send, receive, session, last_event_id, options.event_store)
            return
        await self._standalone(send, receive, session)

    async def _standalone(self, send: ASGISend, receive: ASGIReceive, session: HTTPSession) -> None:
        standalone = session.standalone
        if standalone.attached:
            raise HTTPError(409, "Conflict: a standalone stream is already open for this session")
        queue = standalone.attach(with_backlog=True)
        generation = standalone.generation
        try:
            await self._writer.write(
                send, receive, standalone, queue, {}, generation=generation, prime=True
            )
        finally:
            standalone.detach_if_current(generation)
            session.touch()

    async def delete(self, send: ASGISend, info: HTTPRequestInfo) -> None:
        """Serve a DELETE: end the session."""
        session = self._session_for_stream(info)
        await run_validate(self._options, info, None, session)
        self._sessions.remove(session.id)
        session.close()
        await self._runner.forget_streams(session)
        await send_response(send, 200)
