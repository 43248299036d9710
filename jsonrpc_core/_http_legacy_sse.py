"""The HTTP+SSE endpoints of the server (MCP 2024-11-05, deprecated but still used).

A GET on the SSE path opens a session's event stream, which first announces the
``endpoint`` the client POSTs its messages to (the messages path, with the session id
in the query); every answer, refusals included, travels on that event stream, and each
POST is answered 202. The session lives as long as its event stream.
`LegacySSEHandler` gets the options, the session table, the `SessionRunner` and the
`SSEWriter` from the app.
"""

from __future__ import annotations

from ._errors import JsonRpcError
from ._http_channel import Outbox, ServerChannel, new_stream_id
from ._http_common import (
    ASGIReceive,
    ASGIScope,
    ASGISend,
    HTTPError,
    HTTPRequestInfo,
    accepts,
    send_response,
)
from ._http_server_options import HTTPServerOptions, read_payload, run_validate
from ._http_sessions import HTTPSession, SessionRunner, SessionTable
from ._http_sse_writer import SSEWriter
from ._sse import SSEEvent, encode_event
from ._transport import Received
from ._wire import ErrorResponse, Request

__all__ = ["LegacySSEHandler"]


class LegacySSEHandler:
    """Serves the HTTP+SSE event stream (GET) and its messages endpoint (POST)."""

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

    async def stream(
        self, scope: ASGIScope, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo
    ) -> None:
        """Open a session and serve its event stream until the client leaves."""
        if not accepts(info.headers.get("accept", "text/event-stream"), "text/event-stream"):
            raise HTTPError(406, "Not Acceptable: Accept must list text/event-stream")
        if self._sessions.full:
            raise HTTPError(503, "Service Unavailable: too many sessions")
        session_id = new_stream_id()
        standalone = Outbox(
            new_stream_id(session_id), json_mode=False, event_name="message", standalone=True
        )
        channel = ServerChannel(standalone=standalone, legacy=True)
        session = HTTPSession(session_id, channel, standalone, principal=info.principal)
        self._sessions.add(session)
        self._runner.start(session)
        root = scope.get("root_path", "")
        endpoint = f"{root}{self._options.legacy_messages_path}?session_id={session.id}"
        announce = encode_event(SSEEvent(endpoint, "endpoint"))
        queue = standalone.attach(with_backlog=True)
        try:
            await self._writer.write(
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
            self._sessions.remove(session.id)
            session.close()

    async def post(self, receive: ASGIReceive, send: ASGISend, info: HTTPRequestInfo) -> None:
        """Hand a POSTed message to its session; its answer goes on the event stream."""
        session_id = info.query.get("session_id")
        if not session_id:
            raise HTTPError(400, "Bad Request: missing session_id")
        session = self._sessions.get(session_id)
        if session is None or not session.channel.legacy:
            raise HTTPError(404, "Session not found")
        if session.principal is not None and session.principal != info.principal:
            raise HTTPError(404, "Session not found")
        payload = await read_payload(self._options, receive, info)
        if self._options.auth is not None:
            self._options.auth.authorize(info.principal, payload)
        info.session_id = session.id
        session.touch()
        try:
            await run_validate(self._options, info, payload, session)
        except JsonRpcError as exc:
            # The answer to any request travels on the event stream, refusals included.
            request_id = payload.id if isinstance(payload, Request) else None
            await session.standalone.deliver(ErrorResponse(request_id, exc))
        else:
            await session.channel.deliver_inbound(Received(payload, info))
        await send_response(send, 202, b"Accepted", content_type="text/plain")
