"""What both HTTP client transports share: their HTTP errors, and `HTTPTransportBase`
(the httpx client, the inbound queue, the background task group).

See ``_http_client`` for the rules both transports keep.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from ._errors import JsonRpcError, TransportError
from ._http1 import AnyAsyncClient, as_httpx_client, new_async_client
from ._http_body import DEFAULT_MAX_BODY_SIZE
from ._transport import Received
from ._wire import ErrorResponse, Incoming, InvalidMessage, parse

__all__ = ["HTTPStatusError", "HTTPTransportBase", "SessionExpired", "error_from_response"]

logger = logging.getLogger("jsonrpc_core.http.client")


class HTTPStatusError(TransportError):
    """The server answered with an HTTP error status.

    ``error`` is the JSON-RPC error the body carried, if any (servers often explain a
    400 or 403 that way, with a null id).
    """

    def __init__(self, status: int, message: str, error: JsonRpcError | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}" if message else f"HTTP {status}")
        self.status = status
        self.error = error


class SessionExpired(HTTPStatusError):
    """The server no longer knows our session (HTTP 404); start a new one."""


def error_from_response(status: int, body: bytes, request_id: Any) -> Exception:
    """The JSON-RPC error meant for ``request_id``, else an `HTTPStatusError`."""
    payload = parse(body) if body else None
    if isinstance(payload, ErrorResponse):
        if request_id is not None and payload.id == request_id:
            return payload.error
        return HTTPStatusError(status, payload.error.message, payload.error)
    return HTTPStatusError(status, body.decode("utf-8", "replace").strip()[:300])


class HTTPTransportBase:
    """What both HTTP clients share: the httpx client, the inbound queue, the task group,
    and their arguments: ``url``; ``headers`` for every request; ``auth`` for each
    request (also on a given ``client``); ``timeout``, each exchange's total deadline
    (module rule 4 of ``_http_client``); ``sse_read_timeout``, httpx's read timeout (a
    wait on an event stream); ``client``, an httpx client to use instead of an owned one;
    ``max_body_size``, the cap on a JSON answer or error body (decoded bytes)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        client: AnyAsyncClient | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    ) -> None:
        self.url = url
        self.max_body_size = max_body_size  # a JSON answer or error body, decoded bytes
        try:  # parsed once: httpx parses a str again per request
            self._url: httpx.URL | str = httpx.URL(url)
        except httpx.InvalidURL:
            self._url = url  # each request raises it, as before
        self.headers: dict[str, str] = dict(headers or {})
        self._auth = auth
        self.timeout = timeout  # the total deadline of an exchange (module rule 4)
        self._timeout = httpx.Timeout(timeout, read=sse_read_timeout)
        # A user's httpx2 client is fronted by an httpx one (`as_httpx_client`).
        self._client = None if client is None else as_httpx_client(client)
        self._owns_client = client is None
        self._inbound_send, self._inbound = anyio.create_memory_object_stream[Received](256)
        # Messages put on the inbound stream and not yet handled by its reader (one handed to
        # a waiting reader is not in the stream's buffer, so the buffer alone cannot say).
        # The direct dispatch below waits for none, so nothing overtakes what came first.
        self._unhandled = 0
        self._holding = False  # the reader holds one it took and has not asked past yet
        self._dispatcher: Callable[[Received], bool] | None = None
        self._task_group: TaskGroup | None = None
        self._background: set[anyio.CancelScope] = set()
        self._closed = False

    @property
    def _auth_arg(self) -> Any:
        """``auth`` for each request: ours, also on a client we were given."""
        return self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT

    @property
    def client(self) -> httpx.AsyncClient:
        """The httpx client in use."""
        assert self._client is not None, "use the transport as an async context manager"
        return self._client

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
        await self._exit()

    async def aclose(self) -> None:
        """Stop delivering and close every background stream."""
        self._stop()

    async def _open(self) -> None:
        if self._client is None:
            self._client = new_async_client(timeout=self._timeout, auth=self._auth)
            await self._client.__aenter__()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()

    def _start(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``func`` in the background under its own scope.

        The task group's own scope also covers the code of whoever entered the
        transport, so background work is cancelled through these scopes instead.
        """

        async def run() -> None:
            with anyio.CancelScope() as scope:
                self._background.add(scope)
                try:
                    await func(*args)
                finally:
                    self._background.discard(scope)

        assert self._task_group is not None
        self._task_group.start_soon(run)

    def _stop(self) -> None:
        """Stop delivering and cancel background streams (safe from any task)."""
        self._closed = True
        self._inbound_send.close()
        for scope in list(self._background):
            scope.cancel()

    async def _exit(self) -> None:
        """Leave the task group and close an owned client (in the task that entered)."""
        self._stop()
        if self._task_group is not None:
            task_group, self._task_group = self._task_group, None
            await task_group.__aexit__(None, None, None)
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.__aexit__(None, None, None)

    async def _deliver(self, payload: Incoming) -> None:
        received = Received(payload)
        dispatcher = self._dispatcher
        if dispatcher is not None and not self._closed and not self._unhandled:
            if dispatcher(received):
                return
        try:
            self._unhandled += 1
            try:
                self._inbound_send.send_nowait(received)  # room: no scheduling point
            except anyio.WouldBlock:
                await self._inbound_send.send(received)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._unhandled -= 1

    async def _deliver_payload(self, payload: Incoming) -> None:
        """Deliver a payload read from the server; an invalid one is logged and dropped."""
        if isinstance(payload, InvalidMessage):
            logger.warning("invalid message from server: %s", payload.error.message)
            return
        await self._deliver(payload)

    def _attach_dispatcher(self, dispatcher: Callable[[Received], bool] | None) -> None:
        """Called by the Peer reading this transport: ``dispatcher`` takes a message
        directly when it can (``True``), skipping the inbound queue (and so ``receive``:
        not done for a subclass that overrides it)."""
        if type(self).receive is HTTPTransportBase.receive:
            self._dispatcher = dispatcher

    async def receive(self) -> Received:
        if self._holding:  # asking for the next one: the reader is done with the last
            self._holding = False
            self._unhandled -= 1
        try:
            received = self._inbound.receive_nowait()  # queued: no scheduling point
        except anyio.WouldBlock:
            received = await self._inbound.receive()
        self._holding = True
        return received

    def _request_headers(self, accept: str) -> dict[str, str]:
        return {**self.headers, "accept": accept}
