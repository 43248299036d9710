"""The connections of `HTTP1Transport`: what the pool needs of one, and the anyio one.

A connection on asyncio is `_http1_asyncio`'s, fed by the event loop; on other anyio
backends (trio) it wraps an anyio byte stream that is read only when its task waits.

Rules:

1. At most one request is in flight on a connection; its ``reader`` is set for that
   exchange and is None while the connection is idle in the pool.
2. A failure is recorded in ``error`` (an httpx exception) and marks the connection
   ``closed``; ``wait`` then returns and the caller raises it. Bytes arriving on an idle
   connection, or its end, make it unusable (`Conn.usable` is then false).
3. ``write`` and ``wait`` raise httpx's timeout errors; a cancelled ``write`` or ``wait``
   leaves the connection in an unknown state, so the caller must close it.
4. A server may answer (a 413, a 401) before the request is all sent, and then drain the
   rest or stop reading and close its side. The asyncio connection reads all the time;
   the anyio one reads while it writes once an exchange has sent more than
   `_UNWATCHED_BYTES` (the first bytes fit in the socket's buffers, so sending them
   cannot wait on the server), up to `_READ_AHEAD` unread body bytes. The connection's end
   (or a broken response) arriving while a write waits ends that write with
   `httpx.WriteError`; the pool then returns the answer if its head came.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl

import anyio
import anyio.abc
import httpx

from ._backend import is_asyncio
from ._http1_parse import ResponseReader

__all__ = ["Conn", "Key", "open_stream_conn"]

Key = tuple[str, str, int]
"""A connection's origin: scheme, host, port."""

_READ_SIZE = 65536
_UNWATCHED_BYTES = 16384
"""What an exchange sends before its writes also read (rule 4): the kernel's smallest
default send buffer on Linux (``tcp_wmem``), so these sends never wait on the server."""
_READ_AHEAD = 256 * 1024
"""Body bytes of an early answer read while the request is still being sent (rule 4)."""

connect_tcp = anyio.connect_tcp
"""The anyio connect the stream connections use (one name, so a test can watch it)."""


class Conn:
    """What the pool and the response streams need from a connection."""

    key: Key
    reader: ResponseReader | None
    error: Exception | None
    closed: bool
    uses: int
    idle_since: float

    def usable(self) -> bool:
        """Open, with nothing received since its last response, on the running loop."""
        raise NotImplementedError

    async def write(self, data: bytes, timeout: float | None) -> None:
        """Send ``data`` (`httpx.WriteError`, `httpx.WriteTimeout`)."""
        raise NotImplementedError

    async def wait(self, timeout: float | None) -> None:
        """Make progress on the response (or raise `httpx.ReadTimeout`)."""
        raise NotImplementedError

    def consumed(self) -> None:
        """The caller took the buffered body bytes."""

    async def aclose(self) -> None:
        """Close at once, without waiting for the peer."""
        raise NotImplementedError


async def open_stream_conn(
    key: Key, context: ssl.SSLContext | None, timeout: float | None, address: str | None = None
) -> Conn:
    """A new anyio connection to ``key`` (`httpx.ConnectError`, `httpx.ConnectTimeout`).

    With ``address`` (an IP an address policy checked) the socket connects to it, never
    to the name; TLS still names ``key``'s host.
    """
    _, host, port = key
    try:
        with anyio.fail_after(timeout):
            stream: anyio.abc.ByteStream
            if context is None:
                stream = await connect_tcp(address or host, port)
            else:
                stream = await connect_tcp(
                    address or host,
                    port,
                    ssl_context=context,
                    tls_hostname=host,
                    tls_standard_compatible=False,
                )
    except TimeoutError:
        raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
    except (OSError, anyio.BrokenResourceError) as exc:
        raise httpx.ConnectError(str(exc) or repr(exc)) from None
    return _StreamConn(stream, key)


def _readable(sock: socket.socket) -> bool:
    if hasattr(select, "poll"):  # select.select fails on descriptors above FD_SETSIZE
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


class _StreamConn(Conn):
    """A connection on any anyio backend: bytes are read when the caller waits for them."""

    def __init__(self, stream: anyio.abc.ByteStream, key: Key) -> None:
        self.stream = stream
        self.key = key
        self.reader = None
        self.error = None
        self.uses = 0
        self.idle_since = 0.0
        self.closed = False
        self._sent_for: ResponseReader | None = None  # the exchange `_sent` counts for
        self._sent = 0

    def usable(self) -> bool:
        if self.closed or is_asyncio():
            return False
        try:
            sock = self.stream.extra(anyio.abc.SocketAttribute.raw_socket)
            return not _readable(sock)  # its end, or bytes nobody asked for
        except (OSError, ValueError, anyio.TypedAttributeLookupError):
            return False

    async def write(self, data: bytes, timeout: float | None) -> None:
        if self.closed:
            raise httpx.WriteError("the connection was closed")
        reader = self.reader
        if reader is not self._sent_for:
            self._sent_for, self._sent = reader, 0
        watched = reader is not None and self._sent + len(data) > _UNWATCHED_BYTES
        self._sent += len(data)
        try:
            with anyio.fail_after(timeout):
                if not watched:
                    await self.stream.send(data)
                elif not await self._send_while_reading(data):
                    raise httpx.WriteError("the server closed the connection during the request")
        except TimeoutError:
            raise httpx.WriteTimeout("timed out sending the request") from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise httpx.WriteError(str(exc) or repr(exc)) from None

    async def _send_while_reading(self, data: bytes) -> bool:
        """Send ``data`` while reading the response (rule 4); ``False`` if the
        connection ended (or the response broke) first, and the send was abandoned."""
        reader = self.reader
        assert reader is not None
        sent = False
        async with anyio.create_task_group() as group:

            async def read_meanwhile() -> None:
                while not reader.done:
                    if reader.buffered > _READ_AHEAD:
                        return  # the caller reads the rest once the request is sent
                    await self.wait(None)
                    if self.closed or self.error is not None:
                        break
                else:
                    # A done response: what can follow is the connection's end, or
                    # bytes nobody asked for; either way the connection is finished.
                    with contextlib.suppress(Exception):
                        await self.stream.receive(_READ_SIZE)
                self.closed = True
                group.cancel_scope.cancel()

            group.start_soon(read_meanwhile)
            await self.stream.send(data)
            sent = True
            group.cancel_scope.cancel()
        return sent

    async def wait(self, timeout: float | None) -> None:
        reader = self.reader
        assert reader is not None
        try:
            with anyio.fail_after(timeout):
                data = await self.stream.receive(_READ_SIZE)
        except TimeoutError:
            raise httpx.ReadTimeout("timed out waiting for the response") from None
        except anyio.EndOfStream:
            self.closed = True
            try:
                reader.eof()
            except httpx.RemoteProtocolError as exc:
                self.error = exc
            return
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self.closed = True
            self.error = httpx.ReadError(str(exc) or repr(exc))
            return
        try:
            reader.feed(data)
        except httpx.RemoteProtocolError as exc:
            self.closed = True
            self.error = exc

    async def aclose(self) -> None:
        self.closed = True
        try:
            await anyio.aclose_forcefully(self.stream)
        except Exception:  # a stream of another event loop, left in the pool
            pass
