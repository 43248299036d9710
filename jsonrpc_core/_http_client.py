"""JSON-RPC clients over HTTP: Streamable HTTP (here) and the older HTTP+SSE transport
(``_http_legacy_sse_client``), on one base (``_http_client_base``).

Both are `MessageStream`s built on httpx, used as async context managers::

    async with StreamableHTTPTransport("http://127.0.0.1:8000/rpc") as stream:
        async with Peer(stream) as peer:
            ...

Rules:

1. ``send`` returns once the server accepted the POST; an HTTP error status is raised
   from ``send`` (as the JSON-RPC error in the body when there is one, else as
   `TransportError`), so the failing call learns it at once.
2. An SSE response is read in the background, except the answer to a request whose
   caller waits for it (`Peer.request`), which is read in that caller's task until the
   answer is in (the rest of the stream, if any, then in the background). If it
   breaks, or the server closes it before answering, the transport resumes it with
   ``Last-Event-ID`` after the server's ``retry`` delay, up to ``max_reconnects``
   times; when it cannot, only the calls of that stream fail (with `StreamEnd`
   carrying the error).
3. Nothing is ever delivered twice: events already seen are skipped by id.
4. ``timeout`` is also a total deadline (`Deadline`), however slowly the server sends:
   on the whole of each POST that carries no request (notifications, responses) and
   of each HTTP+SSE POST (its answers come on the event stream), on the HTTP+SSE event
   stream until its ``endpoint`` event, and on each GET that opens or resumes a stream
   until its head. A Streamable HTTP POST carrying a request is bounded by the deadline
   of its caller (`Peer.request`'s ``timeout``, which covers the send too): a tool may
   rightly take long to answer. Past it `RequestTimeout` is raised and the response is
   closed (its connection is not reused).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import httpx

from ._deadline import Deadline
from ._errors import RequestTimeout, TransportError
from ._http1 import AnyAsyncClient, send_post
from ._http_body import DEFAULT_MAX_BODY_SIZE, fetch_body, read_response_body
from ._http_client_base import HTTPStatusError as HTTPStatusError
from ._http_client_base import HTTPTransportBase, error_from_response
from ._http_client_base import SessionExpired as SessionExpired
from ._http_common import SESSION_HEADER, accepts
from ._http_legacy_sse_client import HTTPSSETransport as HTTPSSETransport
from ._sse import SSEDecoder
from ._transport import encode_payload
from ._wire import (
    ErrorResponse,
    Message,
    Request,
    RequestId,
    Response,
    StreamEnd,
    parse,
)

__all__ = ["HTTPSSETransport", "HTTPStatusError", "SessionExpired", "StreamableHTTPTransport"]

_ACCEPT_BOTH = "application/json, text/event-stream"


def _fully_received(response: httpx.Response) -> bool:
    """Whether every byte of a response with a ``Content-Length`` has arrived (reading
    on then only sees its end)."""
    length = response.headers.get("content-length")
    return length is not None and length.isdigit() and response.num_bytes_downloaded >= int(length)


class _PostStream:
    """An SSE answer being followed: the response now read (the POST's, or the GET that
    resumed it), its chunk iterator, and what is still awaited from it."""

    __slots__ = ("attempts", "chunks", "decoder", "request_ids", "response", "unanswered")

    def __init__(self, response: httpx.Response, request_ids: list[Any]) -> None:
        self.request_ids = request_ids
        self.unanswered = set(request_ids)
        self.decoder = SSEDecoder()
        self.attempts = 0
        self.restart(response)

    def restart(self, response: httpx.Response) -> None:
        self.response = response
        self.chunks: AsyncIterator[bytes] = response.aiter_bytes()


class StreamableHTTPTransport(HTTPTransportBase):
    """The client side of Streamable HTTP (see module rules).

    ``headers`` is a live dict: protocol layers add headers after negotiation (MCP's
    ``MCP-Protocol-Version``). ``session_header`` names the session id header; the id
    is captured from responses and sent back on every request, and the session is
    ended with DELETE on close. ``client`` may be given (for example one over
    ``jsonrpc_core.testing.StreamingASGITransport``). ``message_headers``, when set,
    gives extra headers for each POST from the message it carries (MCP mirrors the
    method and the tool name into headers).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        client: AnyAsyncClient | None = None,
        session_header: str = SESSION_HEADER,
        standalone_stream: bool = True,
        terminate_on_close: bool = True,
        max_reconnects: int = 5,
        default_retry_ms: int = 1000,
        message_headers: Callable[[Message | list[Message]], Mapping[str, str]] | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    ) -> None:
        super().__init__(
            url,
            headers=headers,
            auth=auth,
            timeout=timeout,
            sse_read_timeout=sse_read_timeout,
            client=client,
            max_body_size=max_body_size,
        )
        self.session_header = session_header
        self.session_id: str | None = None
        self.standalone_stream = standalone_stream
        self.terminate_on_close = terminate_on_close
        self.max_reconnects = max_reconnects
        self.default_retry_ms = default_retry_ms
        self.message_headers = message_headers
        self._standalone_started = False
        self._standalone_answered: anyio.Event | None = None
        self._seen_event_ids: set[str] = set()
        self._request_streams: dict[RequestId, anyio.CancelScope] = {}

    async def __aenter__(self) -> StreamableHTTPTransport:
        await self._open()
        return self

    async def aclose(self) -> None:
        """End the session (DELETE) and stop every background stream."""
        if self._closed:
            return
        self._closed = True
        if self.terminate_on_close and self.session_id is not None and self._client is not None:
            with anyio.move_on_after(5, shield=True):
                try:
                    request = self._client.build_request(
                        "DELETE",
                        self._url,
                        headers={**self.headers, self.session_header: self.session_id},
                    )
                    await fetch_body(self._client, request, self.max_body_size, auth=self._auth_arg)
                except (httpx.HTTPError, TransportError):
                    pass
        self._stop()

    def _headers(self, accept: str) -> dict[str, str]:
        headers = self._request_headers(accept)
        if self.session_id is not None:
            headers[self.session_header] = self.session_id
        return headers

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        await self._post(payload, inline=False)

    async def _send_request(
        self, request: Request, *, related_request_id: RequestId | None = None
    ) -> None:
        """`send` for a request whose caller then waits for its answer (`Peer.request`):
        an SSE answer is read in the calling task, to its end, instead of in the
        background. Cancelling the caller closes that response."""
        if type(self).send is not StreamableHTTPTransport.send:
            await self.send(request, related_request_id=related_request_id)  # overridden
            return
        await self._post(request, inline=True)

    async def _post(self, payload: Message | list[Message], *, inline: bool) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        body = encode_payload(payload)
        if isinstance(payload, list):
            request_ids = [m.id for m in payload if isinstance(m, Request)]
        else:
            request_ids = [payload.id] if isinstance(payload, Request) else []
        headers = self._headers(_ACCEPT_BOTH)
        headers["content-type"] = "application/json"
        if self.message_headers is not None:
            headers.update(self.message_headers(payload))
        # Rule 4: a request is bounded by its caller's deadline (`Peer.request`).
        deadline = Deadline(None if request_ids else self.timeout, self.url, "POST")
        try:
            with deadline:
                response = await send_post(
                    self.client, self._url, headers, body, auth=self._auth_arg
                )
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url} failed: {exc!r}") from exc
        try:
            with deadline:
                await self._handle_post_response(response, request_ids, inline=inline)
        except BaseException:
            await response.aclose()
            raise

    async def _handle_post_response(
        self, response: httpx.Response, request_ids: list[Any], *, inline: bool = False
    ) -> None:
        session_id = response.headers.get(self.session_header)
        if session_id and session_id != self.session_id:
            self.session_id = session_id
        status = response.status_code
        if status == 202 or (status == 200 and not request_ids):
            await response.aclose()
            return
        if status >= 400:
            body = await read_response_body(response, self.max_body_size)
            if status == 404 and self.session_id is not None:
                raise SessionExpired(404, f"session {self.session_id} is no longer known")
            raise error_from_response(status, body, request_ids[0] if request_ids else None)
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("application/json"):
            body = await read_response_body(response, self.max_body_size)
            await self._deliver_payload(parse(body))
        elif content_type.startswith("text/event-stream"):
            if inline:
                self._maybe_open_standalone()
                await self._read_post_stream(response, request_ids, inline=True)
                return
            self._start(self._read_post_stream, response, request_ids)
        else:
            await response.aclose()
            raise TransportError(f"unexpected content type {content_type!r} from {self.url}")
        self._maybe_open_standalone()

    def _maybe_open_standalone(self) -> None:
        if self.standalone_stream:
            self._begin_standalone()

    async def open_standalone_stream(self, *, wait: float = 5.0) -> None:
        """Open the standalone GET stream now, if there is a session and it is not open yet.

        With ``standalone_stream=True`` it opens by itself after the first response that
        carries a session id. A protocol layer whose headers are only known after its
        handshake (MCP's ``MCP-Protocol-Version``) passes ``False`` and calls this once
        they are set, so that the GET carries them too. It returns once the server has
        answered the GET (or after ``wait`` seconds): a server may drop what it sends
        while no standalone stream is open, so requests made right after this must not
        overtake it.
        """
        self._begin_standalone()
        answered = self._standalone_answered
        if answered is not None:
            with anyio.move_on_after(wait):
                await answered.wait()

    def _begin_standalone(self) -> None:
        if self.session_id is not None and not self._standalone_started:
            self._standalone_started = True
            self._standalone_answered = anyio.Event()
            self._start(self._standalone_loop)

    async def _read_events(
        self,
        response: httpx.Response,
        decoder: SSEDecoder,
        unanswered: set[Any],
        *,
        chunks: AsyncIterator[bytes] | None = None,
        until_answered: bool = False,
    ) -> bool:
        """Read one SSE response, delivering its messages, to its end (then closed) or,
        with ``until_answered``, until no request of ``unanswered`` is left (then left
        open for the caller to go on with ``chunks``). True if it stopped early."""
        if chunks is None:
            chunks = response.aiter_bytes()
        stopped = False
        try:
            async for chunk in chunks:
                for data in decoder.feed_messages(chunk, self._seen_event_ids):
                    payload = parse(data)
                    for message in payload if isinstance(payload, list) else [payload]:
                        if isinstance(message, (Response, ErrorResponse)):
                            unanswered.discard(message.id)
                    await self._deliver_payload(payload)
                if until_answered and not unanswered and not _fully_received(response):
                    stopped = True
                    return True
            return False
        finally:
            if not stopped:
                await response.aclose()

    def abandon(self, request_id: RequestId) -> bool:
        """Close the SSE response stream answering ``request_id``, if one is open
        (for protocols where closing the stream cancels the request)."""
        scope = self._request_streams.pop(request_id, None)
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _read_post_stream(
        self, response: httpx.Response, request_ids: list[Any], *, inline: bool = False
    ) -> None:
        await self._follow_post_stream(_PostStream(response, request_ids), inline=inline)

    async def _follow_post_stream(self, stream: _PostStream, *, inline: bool = False) -> None:
        with anyio.CancelScope() as scope:
            # Closing the transport stops the reading too when it runs in a caller's task.
            self._background.add(scope)
            for request_id in stream.request_ids:
                self._request_streams[request_id] = scope
            try:
                await self._read_post_stream_events(stream, inline=inline)
            finally:
                self._background.discard(scope)
                for request_id in stream.request_ids:
                    if self._request_streams.get(request_id) is scope:
                        del self._request_streams[request_id]

    async def _read_post_stream_events(self, stream: _PostStream, *, inline: bool) -> None:
        decoder, unanswered = stream.decoder, stream.unanswered
        error: BaseException | None = None
        while True:
            decoder.ended_with_retry = False
            try:
                if await self._read_events(
                    stream.response,
                    decoder,
                    unanswered,
                    chunks=stream.chunks,
                    until_answered=inline,
                ):
                    # The caller has its answers; whatever else this response carries
                    # (or its end) is read in the background, so that a stream the
                    # server keeps open does not hold the caller.
                    self._start(self._follow_post_stream, stream)
                    return
                error = None
            except (httpx.HTTPError, anyio.BrokenResourceError) as exc:
                error = TransportError(f"response stream broke: {exc!r}")
            # Resume while answers are missing, and also after a broken or deliberately
            # closed stream (a trailing bare ``retry``): streamed results may follow.
            incomplete = bool(unanswered) or error is not None or decoder.ended_with_retry
            if not incomplete or decoder.last_event_id is None:
                break
            if stream.attempts >= self.max_reconnects:
                error = error or TransportError("the response stream could not be resumed")
                break
            stream.attempts += 1
            await anyio.sleep((decoder.retry or self.default_retry_ms) / 1000)
            try:
                stream.restart(await self._resume(decoder.last_event_id))
            except TransportError as exc:
                error = exc
                break
        for request_id in stream.request_ids:
            failure = error
            if request_id in unanswered and failure is None:
                failure = TransportError("the server closed the response stream without answering")
            await self._deliver(StreamEnd(request_id, failure))

    async def _resume(self, last_event_id: str) -> httpx.Response:
        headers = self._headers("text/event-stream")
        headers["last-event-id"] = last_event_id
        request = self.client.build_request("GET", self._url, headers=headers)
        try:
            with Deadline(self.timeout, self.url, "GET"):
                response = await self.client.send(request, stream=True, auth=self._auth_arg)
        except (httpx.HTTPError, RequestTimeout) as exc:
            raise TransportError(f"cannot resume the stream: {exc!r}") from exc
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith(
            "text/event-stream"
        ):
            await response.aclose()
            raise TransportError(f"cannot resume the stream: HTTP {response.status_code}")
        return response

    async def _standalone_loop(self) -> None:
        try:
            await self._standalone_attempts()
        finally:
            if self._standalone_answered is not None:
                self._standalone_answered.set()

    async def _standalone_attempts(self) -> None:
        decoder = SSEDecoder()
        failures = 0
        answered = self._standalone_answered
        while not self._closed and failures <= self.max_reconnects:
            headers = self._headers("text/event-stream")
            if decoder.last_event_id:
                headers["last-event-id"] = decoder.last_event_id
            request = self.client.build_request("GET", self._url, headers=headers)
            try:
                with Deadline(self.timeout, self.url, "GET"):
                    response = await self.client.send(request, stream=True, auth=self._auth_arg)
            except (httpx.HTTPError, RequestTimeout):
                if answered is not None:
                    answered.set()  # no server to wait for
                failures += 1
                await anyio.sleep((decoder.retry or self.default_retry_ms) / 1000)
                continue
            if answered is not None:
                answered.set()
            content_type = response.headers.get("content-type", "")
            if response.status_code != 200 or not accepts(content_type, "text/event-stream"):
                await response.aclose()
                if response.status_code in (404, 405) or decoder.last_event_id is None:
                    return
                decoder.last_event_id = None
                continue
            failures = 0
            try:
                await self._read_events(response, decoder, set())
            except (httpx.HTTPError, anyio.BrokenResourceError):
                failures += 1
            await anyio.sleep((decoder.retry or self.default_retry_ms) / 1000)
