"""An in-process httpx transport that streams ASGI responses.

``httpx.ASGITransport`` runs the application to completion and buffers the whole
body, so a response that never ends (``text/event-stream``) hangs it.
:class:`StreamingASGITransport` instead runs every request's application call as
a task and hands body chunks to the client as they are sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.abc
import httpx

__all__ = [
    "ASGIApp",
    "ASGIMessage",
    "ASGIReceive",
    "ASGIScope",
    "ASGISend",
    "StreamingASGITransport",
]

ASGIScope = MutableMapping[str, Any]
"""An ASGI connection scope."""
ASGIMessage = MutableMapping[str, Any]
"""An ASGI event message."""
ASGIReceive = Callable[[], Awaitable[ASGIMessage]]
"""The ASGI ``receive`` callable."""
ASGISend = Callable[[ASGIMessage], Awaitable[None]]
"""The ASGI ``send`` callable."""
ASGIApp = Callable[[ASGIScope, ASGIReceive, ASGISend], Awaitable[None]]
"""An ASGI 3 application."""

_T = TypeVar("_T", bound="StreamingASGITransport")

_MAX_BUFFERED_CHUNKS = 16
_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Exchange:
    """State shared by one request's application task and its response stream."""

    def __init__(self, request: httpx.Request, scope: ASGIScope) -> None:
        self.request = request
        self.scope = scope
        self.cancel_scope = anyio.CancelScope()
        # Set on http.response.start, or when the app ends without one.
        self.response_started = anyio.Event()
        # Once set, receive() answers http.disconnect: the response is complete,
        # the client closed it, or the app ended.
        self.disconnected = anyio.Event()
        self.app_done = anyio.Event()
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.complete = False
        self.client_gone = False
        self.error: Exception | None = None
        self._drop_body = request.method == "HEAD"
        self._request_iter: AsyncIterator[bytes] | None = None
        self._request_done = False
        self._body_tx, self.body_rx = anyio.create_memory_object_stream[bytes](
            max_buffer_size=_MAX_BUFFERED_CHUNKS
        )

    async def receive(self) -> ASGIMessage:
        if not self._request_done and not self.disconnected.is_set():
            return await self._next_request_message()
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def _next_request_message(self) -> ASGIMessage:
        stream = self.request.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        if isinstance(stream, httpx.ByteStream):
            # A fully known body is delivered in one message, as servers do
            # for small bodies; some simple apps only call receive() once.
            self._request_done = True
            body = b"".join([chunk async for chunk in stream])
            return {"type": "http.request", "body": body, "more_body": False}
        if self._request_iter is None:
            self._request_iter = stream.__aiter__()
        # No look-ahead: a chunk is delivered as soon as it is produced, so a
        # request body that waits on the response cannot deadlock.
        try:
            chunk = await self._request_iter.__anext__()
        except StopAsyncIteration:
            self._request_done = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": bytes(chunk), "more_body": True}

    async def send(self, message: ASGIMessage) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self.status is not None:
                raise RuntimeError("ASGI app sent 'http.response.start' twice")
            self.status = int(message["status"])
            self.headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
            self.response_started.set()
        elif kind == "http.response.body":
            if self.status is None:
                raise RuntimeError("ASGI app sent 'http.response.body' before the start")
            if self.complete:
                raise RuntimeError("ASGI app sent 'http.response.body' after the last one")
            if self.client_gone:
                # Like writing to a closed connection, except that it neither
                # blocks nor raises: spec 2.3 apps learn it from receive().
                return
            body = bytes(message.get("body", b""))
            if body and not self._drop_body:
                try:
                    await self._body_tx.send(body)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return
            if not message.get("more_body", False):
                self.complete = True
                self._body_tx.close()
                self.disconnected.set()
        else:
            raise RuntimeError(f"unexpected ASGI message type {kind!r}")

    def client_disconnect(self) -> None:
        self.client_gone = True
        self.disconnected.set()
        # Wakes an app blocked on a full buffer with BrokenResourceError.
        self.body_rx.close()

    def app_finished(self) -> None:
        self._body_tx.close()
        self.disconnected.set()
        self.response_started.set()
        self.app_done.set()

    def raise_if_truncated(self) -> None:
        if self.error is not None:
            raise httpx.ReadError(
                f"ASGI app raised after starting the response: {self.error!r}"
            ) from self.error
        if not self.complete and not self.client_gone:
            raise httpx.ReadError("ASGI app returned without completing the response")


class _ResponseStream(httpx.AsyncByteStream):
    """Response body fed by the application task through a bounded buffer."""

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._exchange.body_rx.receive()
        except anyio.EndOfStream:
            self._exchange.raise_if_truncated()
            raise StopAsyncIteration from None
        except anyio.ClosedResourceError:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._exchange.client_disconnect()


class _Lifespan:
    """Runs the ASGI ``lifespan`` protocol as a background task."""

    def __init__(self, app: ASGIApp, state: dict[str, Any]) -> None:
        self._app = app
        self._scope: ASGIScope = {
            "type": "lifespan",
            "asgi": {"version": "3.0", "spec_version": "2.0"},
            "state": state,
        }
        # Both are also set when the app ends, so waiters never hang.
        self.startup_done = anyio.Event()
        self.shutdown_done = anyio.Event()
        self._shutdown_requested = anyio.Event()
        self._startup_delivered = False
        self._shutdown_delivered = False
        self.startup_complete = False
        self.failure_message: str | None = None
        self.error: Exception | None = None
        self.finished = False

    async def run(self) -> None:
        try:
            await self._app(self._scope, self._receive, self._send)
        except Exception as exc:
            self.error = exc
        finally:
            self.finished = True
            self.startup_done.set()
            self.shutdown_done.set()

    async def _receive(self) -> ASGIMessage:
        if not self._startup_delivered:
            self._startup_delivered = True
            return {"type": "lifespan.startup"}
        await self._shutdown_requested.wait()
        if self._shutdown_delivered:
            await anyio.sleep_forever()
        self._shutdown_delivered = True
        return {"type": "lifespan.shutdown"}

    async def _send(self, message: ASGIMessage) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self.startup_complete = True
            self.startup_done.set()
        elif kind == "lifespan.shutdown.complete":
            self.shutdown_done.set()
        elif kind in ("lifespan.startup.failed", "lifespan.shutdown.failed"):
            self.failure_message = str(message.get("message", ""))
            self.startup_done.set()
            self.shutdown_done.set()
        else:
            raise RuntimeError(f"unexpected ASGI lifespan message type {kind!r}")

    async def startup(self) -> RuntimeError | None:
        """Wait for startup; return the error to raise, if it failed."""
        await self.startup_done.wait()
        if self.startup_complete:
            return None
        if self.failure_message is not None:
            return _chained(f"ASGI lifespan startup failed: {self.failure_message}", self.error)
        if self.error is not None and self._startup_delivered:
            return _chained("ASGI app raised during lifespan startup", self.error)
        # Raising before reading 'lifespan.startup', or returning without
        # answering it, is how apps say they do not support lifespan.
        return None

    async def shutdown(self) -> RuntimeError | None:
        """Run shutdown if startup completed; return the error to raise, if any."""
        if not self.startup_complete:
            return None
        if not self.finished:
            self._shutdown_requested.set()
            await self.shutdown_done.wait()
        if self.failure_message is not None:
            return _chained(f"ASGI lifespan shutdown failed: {self.failure_message}", self.error)
        if self.error is not None:
            return _chained("ASGI app raised in lifespan", self.error)
        return None


def _chained(message: str, cause: BaseException | None) -> RuntimeError:
    error = RuntimeError(message)
    error.__cause__ = cause
    return error


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """httpx transport that calls an ASGI app in process and streams its responses.

    Use it as an async context manager, directly or through
    ``httpx.AsyncClient`` (which enters and exits its transport)::

        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            async with c.stream("GET", "/events") as response:
                async for line in response.aiter_lines():
                    ...

    Entering runs the app's ``lifespan`` startup (tolerating apps without
    lifespan support) and exiting runs its shutdown; both raise
    ``RuntimeError`` if the app reports failure.  It must be entered and exited
    in the same task.

    Each request runs the app in a task.  The response is returned as soon as
    the app sends ``http.response.start``; body chunks then flow through a
    bounded buffer, so a slow reader slows the app down.  Closing the response
    early makes the app's ``receive()`` return ``http.disconnect`` and turns its
    later body sends into no-ops.  An exception raised by the app before the
    response starts propagates from the request; one raised afterwards ends the
    body with ``httpx.ReadError``.  On exit, apps still running are cancelled
    before lifespan shutdown.

    The request URL's path is passed through unchanged; ``root_path`` is only
    reported in the scope.  Each request scope gets a shallow copy of the
    lifespan ``state``.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        client: tuple[str, int] = ("127.0.0.1", 123),
        root_path: str = "",
    ) -> None:
        """Wrap ``app``; ``client`` and ``root_path`` are reported in each scope."""
        self._app = app
        self._client = client
        self._root_path = root_path
        self._task_group: anyio.abc.TaskGroup | None = None
        self._lifespan: _Lifespan | None = None
        self._state: dict[str, Any] = {}
        self._exchanges: set[_Exchange] = set()

    async def __aenter__(self: _T) -> _T:
        """Start the task group and run lifespan startup."""
        if self._task_group is not None:
            raise RuntimeError("StreamingASGITransport is already open")
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        self._state = {}
        lifespan = _Lifespan(self._app, self._state)
        try:
            task_group.start_soon(lifespan.run)
            failure = await lifespan.startup()
        except BaseException as exc:
            self._task_group = None
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        if failure is not None:
            self._task_group = None
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(None, None, None)
            raise failure
        self._lifespan = lifespan
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        """Cancel running apps, run lifespan shutdown and stop the task group."""
        task_group = self._task_group
        if task_group is None:
            return
        failure: RuntimeError | None = None
        try:
            exchanges = list(self._exchanges)
            for exchange in exchanges:
                exchange.client_disconnect()
                exchange.cancel_scope.cancel()
            for exchange in exchanges:
                await exchange.app_done.wait()
            if self._lifespan is not None:
                failure = await self._lifespan.shutdown()
        finally:
            self._task_group = None
            self._lifespan = None
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(None, None, None)
        if failure is not None and exc_value is None:
            raise failure

    async def aclose(self) -> None:
        """Same as leaving the context manager."""
        await self.__aexit__()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Run the app for ``request`` and return once the response has started."""
        task_group = self._task_group
        if task_group is None:
            raise RuntimeError(
                "StreamingASGITransport is not open; use it (or the AsyncClient "
                "wrapping it) as an async context manager"
            )
        if not isinstance(request.stream, httpx.AsyncByteStream):
            raise TypeError("StreamingASGITransport needs an async request body")
        exchange = _Exchange(request, self._build_scope(request))
        self._exchanges.add(exchange)
        task_group.start_soon(self._run_app, exchange)
        try:
            await exchange.response_started.wait()
        except BaseException:
            exchange.client_disconnect()
            raise
        if exchange.status is None:
            exchange.body_rx.close()
            if exchange.error is not None:
                raise exchange.error
            raise RuntimeError("ASGI app returned without sending 'http.response.start'")
        return httpx.Response(
            exchange.status, headers=exchange.headers, stream=_ResponseStream(exchange)
        )

    async def _run_app(self, exchange: _Exchange) -> None:
        try:
            with exchange.cancel_scope:
                await self._app(exchange.scope, exchange.receive, exchange.send)
        except Exception as exc:
            # Never let an app error reach the task group: it would cancel the
            # client code running inside the transport's context.
            exchange.error = exc
        finally:
            self._exchanges.discard(exchange)
            exchange.app_finished()

    def _build_scope(self, request: httpx.Request) -> ASGIScope:
        url = request.url
        headers = [(name.lower(), value) for name, value in request.headers.raw]
        if not any(name == b"host" for name, _ in headers):
            headers.insert(0, (b"host", url.netloc))
        port = url.port if url.port is not None else _DEFAULT_PORTS.get(url.scheme, 80)
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "query_string": url.query,
            "root_path": self._root_path,
            "headers": headers,
            "client": self._client,
            "server": (url.host, port),
            "extensions": {},
            "state": dict(self._state),
        }
