"""`HTTP1Transport`: the keep-alive pool and the request/response exchange on a connection.

Rules:

1. A connection goes back to the pool only when its response was completely received, the
   server allows keep-alive, and nothing else arrived; otherwise it is closed. A response
   stream closed early, a failure and a cancellation close its connection.
2. An idle connection is reused only within ``keepalive_expiry`` and when the server has
   not closed it meanwhile; nothing is awaited between that check and its use. A request
   on a reused connection that fails before the first response byte (the server closed
   it just then) is sent once more on a new connection, when its body is bytes we hold
   and either the request could not be written or its method is idempotent: a POST the
   server may have read is never sent twice (a tool call must not run twice).
3. ``_count`` counts the open connections, idle or in use, and those being opened; it
   never exceeds ``max_connections``. A request waits for room up to its pool timeout;
   each release wakes one waiter. Closing the pool wakes them all, and they fail.
4. With an address policy (``resolve``), a new connection is opened to an address the
   policy returned for the URL's host, tried in its order, never to the name itself (see
   `_http1_resolve`): the address checked is the address connected to. The name stays
   the ``Host`` header and the TLS server name. A refusal is an `httpx.ConnectError`
   whose ``__cause__`` is the policy's `AddressRefused`.
5. Timeouts come from the request (``connect``, ``read`` per wait for bytes, ``write``,
   ``pool``) and raise httpx's timeout errors; network and protocol failures raise httpx's
   `ConnectError`, `ReadError`, `WriteError` and `RemoteProtocolError`.
"""

from __future__ import annotations

import contextlib
import ssl
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import httpx

from ._backend import is_asyncio
from ._http1_asyncio import open_asyncio_conn
from ._http1_conn import Conn, Key, open_stream_conn
from ._http1_parse import ResponseReader, post_head, request_head, send_body_stream
from ._http1_resolve import AddressResolver

__all__ = ["DEFAULT_LIMITS", "HTTP1Transport"]

DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)
"""httpx's own default limits."""

_CONCAT_LIMIT = 65536  # bodies up to this size are sent in the same write as the head
_DEFAULT_PORTS = {"http": 80, "https": 443}
_STAND_INS = 64  # URLs whose stand-in request is kept (a client posts to few)
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})


def _key(url: httpx.URL) -> Key:
    scheme = url.scheme
    if scheme not in _DEFAULT_PORTS:
        raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}")
    return (scheme, url.raw_host.decode("ascii"), url.port or _DEFAULT_PORTS[scheme])


class _Retry(Exception):
    """A reused connection failed before any response byte: try once more on a new one."""


class HTTP1Transport(httpx.AsyncBaseTransport):
    """An HTTP/1.1 keep-alive connection pool for `httpx.AsyncClient` (http and https).

    ``verify`` and ``cert`` mean what they mean to httpx (certifi's roots by default, or an
    `ssl.SSLContext`); ``limits`` bounds the connections (a request waits for one up to its
    pool timeout) and sets how long an idle one is kept. ``resolve``, an address policy
    (`AddressResolver`, e.g. `public_addresses_only()`), makes every connection go to an
    address it returned (rule 4); without it the socket connects to the name.
    """

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | str | bool = True,
        cert: Any = None,
        trust_env: bool = True,
        limits: httpx.Limits = DEFAULT_LIMITS,
        resolve: AddressResolver | None = None,
    ) -> None:
        self._verify = verify
        self._resolve = resolve
        self._cert = cert
        self._trust_env = trust_env
        self._ssl: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) else None
        self._max = limits.max_connections or sys.maxsize
        max_idle = limits.max_keepalive_connections
        self._max_idle = sys.maxsize if max_idle is None else max_idle
        expiry = limits.keepalive_expiry
        self._expiry = float("inf") if expiry is None else expiry
        self._idle: dict[Key, list[Conn]] = {}
        self._idle_count = 0
        self._count = 0
        self._waiters: deque[anyio.Event] = deque()
        self._stale: list[Conn] = []  # dropped from the pool, still to be closed
        self._stand_ins: dict[int, tuple[httpx.URL, httpx.Request]] = {}
        self._closed = False

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(
                verify=self._verify, cert=self._cert, trust_env=self._trust_env
            )
        return self._ssl

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` on a pooled connection and return once its head arrived."""
        timeouts = request.extensions.get("timeout") or {}
        try:
            body: bytes | None = request.content
        except httpx.RequestNotRead:
            body = None
        head, chunked, length = request_head(request, body is None)
        return await self._send(_key(request.url), head, body, chunked, length, request, timeouts)

    async def post(
        self,
        url: httpx.URL,
        defaults: httpx.Headers,
        headers: Mapping[str, str],
        content: bytes,
        timeout: httpx.Timeout,
    ) -> httpx.Response:
        """POST ``content`` to the absolute ``url`` as `httpx.AsyncClient` would, with
        ``defaults`` as its headers and ``timeout`` as its timeout, and return once the
        head arrived; no `httpx.Request` is built for it (the response's ``request`` is a
        stand-in with the method and URL only). `UnicodeEncodeError` for a header value
        that is not ASCII, before anything is sent."""
        key = _key(url)
        head = post_head(url, defaults.raw, headers, len(content))
        stand_in = self._stand_in(url)
        response = await self._send(
            key, head, content, False, len(content), stand_in, timeout.as_dict()
        )
        response.request = stand_in
        return response

    def _stand_in(self, url: httpx.URL) -> httpx.Request:
        """A POST to ``url`` without headers or body, made once per URL object."""
        entry = self._stand_ins.get(id(url))
        if entry is not None and entry[0] is url:
            return entry[1]
        if len(self._stand_ins) >= _STAND_INS:
            self._stand_ins.clear()
        request = httpx.Request("POST", url)
        self._stand_ins[id(url)] = (url, request)  # the URL kept: its id stays its own
        return request

    async def _send(
        self,
        key: Key,
        head: bytes,
        body: bytes | None,
        chunked: bool,
        length: int | None,
        request: httpx.Request,
        timeouts: dict[str, float | None],
    ) -> httpx.Response:
        """The exchange on a pooled connection, sent once more on a new one if rule 2
        allows."""
        fresh = False
        while True:
            conn = None if fresh or self._stale else self._idle_conn(key)
            if conn is not None and self._stale:
                self._put_idle(conn)  # back on top, where it was: `_acquire` closes the stale first
                conn = None
            if conn is None:
                conn = await self._acquire(key, timeouts, fresh)
            try:
                return await self._exchange(conn, head, body, chunked, length, request, timeouts)
            except _Retry:
                await self._discard(conn)
                fresh = True
            except BaseException:
                await self._discard(conn)
                raise

    async def _exchange(
        self,
        conn: Conn,
        head: bytes,
        body: bytes | None,
        chunked: bool,
        length: int | None,
        request: httpx.Request,
        timeouts: dict[str, float | None],
    ) -> httpx.Response:
        reader = conn.reader = ResponseReader(request.method == "HEAD")
        conn.error = None
        write_timeout = timeouts.get("write")
        retry = conn.uses > 0 and body is not None  # while no response byte arrived
        resend_after_write = retry and request.method in _IDEMPOTENT
        try:
            if body is None:
                await conn.write(head, write_timeout)
                await send_body_stream(conn.write, request.stream, chunked, write_timeout, length)
            elif len(body) <= _CONCAT_LIMIT:
                await conn.write(head + body, write_timeout)
            else:
                await conn.write(head, write_timeout)
                await conn.write(body, write_timeout)
        except httpx.WriteError as exc:
            if retry and not reader.got:
                raise _Retry from None
            write_error: httpx.WriteError | None = exc
        else:
            write_error = None
        read_timeout = timeouts.get("read")
        if write_error is not None:
            # The server may have answered before it stopped reading (a 413, say).
            with contextlib.suppress(httpx.HTTPError):
                while not reader.head_done and conn.error is None and not conn.closed:
                    await conn.wait(read_timeout)
            if not reader.head_done:
                raise write_error
        while not reader.head_done:
            if conn.error is not None:
                if resend_after_write and not reader.got:
                    raise _Retry
                raise conn.error
            if reader.done:
                raise httpx.RemoteProtocolError("response without a head")
            await conn.wait(read_timeout)
        extensions = {"http_version": reader.http_version(), "reason_phrase": reader.reason}
        done = reader.done
        stream: httpx.AsyncByteStream
        if done:
            stream = _Buffered(reader.take() if reader.body else b"")
        else:
            stream = _Body(self, conn, read_timeout)
        response = httpx.Response(
            reader.status, headers=reader.headers, stream=stream, extensions=extensions
        )
        if done:
            closing = self._put_back(conn)
            if closing is not None:
                with anyio.CancelScope(shield=True):  # the caller must not discard it again
                    await closing.aclose()
        return response

    # the pool

    def _idle_conn(self, key: Key) -> Conn | None:
        """A reusable idle connection to ``key``; the stale ones met go to ``_stale``."""
        idle = self._idle.get(key)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            if now - conn.idle_since < self._expiry and conn.usable():
                return conn
            self._count -= 1
            self._stale.append(conn)
        return None

    async def _acquire(self, key: Key, timeouts: dict[str, float | None], fresh: bool) -> Conn:
        deadline: float | None = None
        while True:
            if self._closed:  # checked again after each wait: `aclose` wakes the waiters
                raise RuntimeError("the transport is closed")
            while self._stale:
                await self._stale.pop().aclose()
            conn = None if fresh else self._idle_conn(key)
            if conn is not None:
                if not self._stale:
                    return conn
                self._put_idle(conn)  # back on top, where it was; checked again after
                continue
            if self._count >= self._max and self._idle_count:
                await self._close_oldest_idle()
            if self._count < self._max:
                self._count += 1
                try:
                    return await self._open(key, timeouts.get("connect"))
                except BaseException:
                    self._count -= 1
                    self._wake_one()
                    raise
            pool_timeout = timeouts.get("pool")
            if deadline is None and pool_timeout is not None:
                deadline = anyio.current_time() + pool_timeout
            wait = None if deadline is None else deadline - anyio.current_time()
            event = anyio.Event()
            self._waiters.append(event)
            try:
                with anyio.fail_after(wait):
                    await event.wait()
            except BaseException as exc:
                if event.is_set():  # woken too late for this one: pass the wake-up on
                    self._wake_one()
                if isinstance(exc, TimeoutError):
                    raise httpx.PoolTimeout("timed out waiting for a connection") from None
                raise
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(event)

    async def _open(self, key: Key, timeout: float | None) -> Conn:
        """A new connection to ``key``: to an address of the policy when there is one."""
        context = self._ssl_context() if key[0] == "https" else None
        opener = open_asyncio_conn if is_asyncio() else open_stream_conn
        if self._resolve is None:
            return await opener(key, context, timeout)
        _, host, port = key
        try:
            with anyio.fail_after(timeout):
                addresses = await self._resolve(host, port)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"timed out resolving {host}") from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or repr(exc)) from exc
        error: httpx.ConnectError | None = None
        for address in addresses:
            try:
                return await opener(key, context, timeout, address)
            except httpx.ConnectTimeout:
                raise
            except httpx.ConnectError as exc:
                error = exc
        raise error or httpx.ConnectError(f"no address to connect to for {host}")

    def _wake_one(self) -> None:
        while self._waiters:
            event = self._waiters.popleft()
            if not event.is_set():
                event.set()
                return

    def _pop_oldest_idle(self) -> Conn | None:
        oldest: Conn | None = None
        for conns in self._idle.values():
            if conns and (oldest is None or conns[0].idle_since < oldest.idle_since):
                oldest = conns[0]
        if oldest is not None:
            self._idle[oldest.key].remove(oldest)
            self._idle_count -= 1
            self._count -= 1
        return oldest

    async def _close_oldest_idle(self) -> None:
        oldest = self._pop_oldest_idle()
        if oldest is not None:
            await oldest.aclose()

    async def _release(self, conn: Conn) -> None:
        """Back to the pool if its response was complete and keep-alive, else closed."""
        closing = self._put_back(conn)
        if closing is not None:
            await closing.aclose()

    def _put_back(self, conn: Conn) -> Conn | None:
        """`_release` up to the closing: returns the connection to close, if any."""
        reader, conn.reader = conn.reader, None
        if self._waiters:
            self._wake_one()
        if (
            reader is None
            or not reader.done
            or not reader.keep_alive
            or conn.error is not None
            or self._closed
            or not conn.usable()
        ):
            self._count -= 1
            return conn
        conn.uses += 1
        conn.idle_since = time.monotonic()
        self._put_idle(conn)
        if self._idle_count > self._max_idle:
            return self._pop_oldest_idle()
        return None

    def _put_idle(self, conn: Conn) -> None:
        idle = self._idle.get(conn.key)
        if idle is None:
            idle = self._idle[conn.key] = []
        idle.append(conn)
        self._idle_count += 1

    async def _discard(self, conn: Conn) -> None:
        conn.reader = None
        self._count -= 1
        self._wake_one()
        await conn.aclose()

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their responses end.

        Requests waiting for a connection fail with `RuntimeError`.
        """
        self._closed = True
        while self._waiters:
            self._waiters.popleft().set()
        idle = [conn for conns in self._idle.values() for conn in conns]
        self._idle.clear()
        self._count -= len(idle)
        self._idle_count = 0
        idle += self._stale
        self._stale.clear()
        for conn in idle:
            await conn.aclose()


class _Body(httpx.AsyncByteStream):
    """A response body read from its connection as it arrives."""

    def __init__(self, pool: HTTP1Transport, conn: Conn, timeout: float | None) -> None:
        self._pool = pool
        self._conn: Conn | None = conn
        self._timeout = timeout

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        conn = self._conn
        if conn is None:
            raise StopAsyncIteration
        reader = conn.reader
        assert reader is not None
        while True:
            if reader.body:
                chunk = reader.take()
                conn.consumed()
                return chunk
            if reader.done:
                self._conn = None
                await self._pool._release(conn)
                raise StopAsyncIteration
            if conn.error is not None:
                self._conn = None
                await self._pool._discard(conn)
                raise conn.error
            try:
                await conn.wait(self._timeout)
            except BaseException:
                self._conn = None
                await self._pool._discard(conn)
                raise

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._pool._release(conn)


class _Buffered(httpx.AsyncByteStream):
    """A response body that had fully arrived with its head."""

    __slots__ = ("_chunk",)

    def __init__(self, chunk: bytes) -> None:
        self._chunk = chunk

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        chunk = self._chunk
        if not chunk:
            raise StopAsyncIteration
        self._chunk = b""
        return chunk

    async def aclose(self) -> None:
        pass
