"""The asyncio connection of `HTTP1Transport`: an `asyncio.Protocol` on the fast path.

The event loop feeds the connection's `ResponseReader` as bytes arrive and wakes the one
task waiting; nothing is read by the task itself. The rules of `_http1_conn` hold, and:

1. Reading pauses while more than ``_PAUSE_READING`` body bytes wait for the caller
   (`Conn.consumed` resumes it): a slow reader bounds the client's memory.
2. A connection belongs to the event loop that opened it: on another it is unusable.
3. A connection whose opening fails or is cancelled is closed at once.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable

import httpx

from ._backend import is_asyncio
from ._http1_conn import Conn, Key

__all__ = ["open_asyncio_conn"]

_PAUSE_READING = 256 * 1024


def create_connection(
    loop: asyncio.AbstractEventLoop,
    conn: asyncio.Protocol,
    host: str,
    port: int,
    context: ssl.SSLContext | None,
    server_hostname: str | None,
) -> Awaitable[tuple[asyncio.BaseTransport, asyncio.Protocol]]:
    """``loop.create_connection`` for ``conn`` (one name, so a test can watch it)."""
    return loop.create_connection(
        lambda: conn, host, port, ssl=context, server_hostname=server_hostname
    )


async def open_asyncio_conn(
    key: Key, context: ssl.SSLContext | None, timeout: float | None, address: str | None = None
) -> Conn:
    """A new asyncio connection to ``key`` (`httpx.ConnectError`, `httpx.ConnectTimeout`).

    With ``address`` (an IP an address policy checked) the socket connects to it, never
    to the name; TLS still names ``key``'s host (SNI and certificate check).
    """
    _, host, port = key
    loop = asyncio.get_running_loop()
    conn = _AsyncioConn(loop, key)
    opening = create_connection(
        loop, conn, address or host, port, context, host if context else None
    )
    try:
        if timeout is None:
            await opening
        else:
            await asyncio.wait_for(opening, timeout)
    except asyncio.TimeoutError:
        await conn.aclose()
        raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
    except OSError as exc:
        await conn.aclose()
        raise httpx.ConnectError(str(exc) or repr(exc)) from None
    except BaseException:
        await conn.aclose()  # cancelled just as the connection was made
        raise
    return conn


class _AsyncioConn(asyncio.Protocol, Conn):
    """A connection on asyncio: the event loop feeds the reader as data arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop, key: Key) -> None:
        self.loop = loop
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.reader = None
        self.error = None
        self.uses = 0
        self.idle_since = 0.0
        self.closed = False
        self.waiter: asyncio.Future[bool] | None = None
        self.write_paused = False
        self.read_paused = False
        self.drained: asyncio.Future[None] | None = None
        self.deadline: float | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        if reader is None:
            self._abort()
            return
        try:
            reader.feed(data)
        except httpx.RemoteProtocolError as exc:
            self.error = exc
            self._abort()
        else:
            if reader.buffered > _PAUSE_READING and not reader.done and self.transport:
                self.read_paused = True
                self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._closed_by_peer(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed_by_peer(exc)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _closed_by_peer(self, exc: Exception | None) -> None:
        drained = self.drained  # a write waiting for room will never get it
        if drained is not None and not drained.done():
            drained.set_result(None)
        if not self.closed:
            self.closed = True
            reader = self.reader
            if reader is not None and self.error is None:
                try:
                    reader.eof()
                except httpx.RemoteProtocolError as error:
                    self.error = error if exc is None else httpx.ReadError(str(exc) or repr(exc))
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    def usable(self) -> bool:
        return (
            not self.closed
            and self.transport is not None
            and not self.transport.is_closing()
            and is_asyncio()
            and asyncio.get_running_loop() is self.loop
        )

    async def write(self, data: bytes, timeout: float | None) -> None:
        transport = self.transport
        if self.closed or transport is None or transport.is_closing():
            raise httpx.WriteError("the connection was closed")
        transport.write(data)
        if self.write_paused:
            loop = self.loop
            drained = self.drained = loop.create_future()
            handle = None if timeout is None else loop.call_later(timeout, _expire, drained)
            try:
                await drained
            finally:
                self.drained = None
                if handle is not None:
                    handle.cancel()
            if self.write_paused and not self.closed:
                raise httpx.WriteTimeout("timed out sending the request")

    async def wait(self, timeout: float | None) -> None:
        loop = self.loop
        waiter = self.waiter = loop.create_future()
        if timeout is None:
            self.deadline = None
        else:
            # One timer per connection, re-armed only when it fires early: waits are
            # many and short, timeouts rare.
            deadline = self.deadline = loop.time() + timeout
            timer = self.timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self.timer = loop.call_at(deadline, self._on_timer)
        try:
            progressed = await waiter
        finally:
            self.waiter = None
        if not progressed:
            raise httpx.ReadTimeout("timed out waiting for the response")

    def _on_timer(self) -> None:
        self.timer = None
        deadline = self.deadline
        waiter = self.waiter
        if deadline is None or waiter is None or waiter.done():
            return
        if self.loop.time() >= deadline:
            waiter.set_result(False)
        else:
            self.timer = self.loop.call_at(deadline, self._on_timer)

    def consumed(self) -> None:
        if self.read_paused and self.transport is not None:
            self.read_paused = False
            self.transport.resume_reading()

    async def aclose(self) -> None:
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.transport is not None:
            try:
                self.transport.abort()
            except RuntimeError:  # its event loop is gone (the pool outlived an asyncio.run)
                pass


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
