"""jsonrpc_core._http1: the lean HTTP/1.1 transport under httpx, against raw servers.

Each server is an anyio TCP listener on 127.0.0.1 whose handler writes hand-made bytes,
so odd and hostile responses can be scripted; ``accepts`` counts the connections it
took, which is how keep-alive reuse (or its absence) shows. Servers and clients meet at
`anyio.Event`s instead of sleeps.

Reads the private `jsonrpc_core._http1.MAX_HEAD` and the pool's private state on purpose:
the head limit and the pool accounting are under test.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from _waiting import until
from anyio.streams.tls import TLSListener

from jsonrpc_core._http1 import MAX_HEAD
from jsonrpc_core.http import HTTP1Transport, new_async_client

pytestmark = pytest.mark.anyio

LIMIT = 10  # seconds: a guard against hangs, never an assertion


class ServerConn:
    """The server side of one connection: reads requests, writes raw bytes."""

    def __init__(self, stream: anyio.abc.ByteStream, index: int) -> None:
        self.stream = stream
        self.index = index
        self.buf = b""

    async def _more(self) -> bool:
        try:
            data = await self.stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        self.buf += data
        return True

    async def _line(self) -> bytes | None:
        while b"\r\n" not in self.buf:
            if not await self._more():
                return None
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    async def _exactly(self, n: int) -> bytes | None:
        while len(self.buf) < n:
            if not await self._more():
                return None
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    async def read_request(self) -> tuple[bytes, dict[bytes, bytes], bytes] | None:
        """(request line, headers with lower-case names, decoded body), None at EOF."""
        while b"\r\n\r\n" not in self.buf:
            if not await self._more():
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        line, *header_lines = head.split(b"\r\n")
        headers = {}
        for header in header_lines:
            name, _, value = header.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if headers.get(b"transfer-encoding") == b"chunked":
            body = b""
            while True:
                size_line = await self._line()
                assert size_line is not None
                size = int(size_line.split(b";")[0], 16)
                chunk = await self._exactly(size + 2)
                assert chunk is not None
                if size == 0:
                    break
                body += chunk[:-2]
        else:
            body = await self._exactly(int(headers.get(b"content-length", b"0"))) or b""
        return line, headers, body

    async def send(self, data: bytes) -> None:
        await self.stream.send(data)


Handler = Callable[[ServerConn], Awaitable[None]]


@dataclass
class Server:
    url: str
    accepts: int = 0
    requests: list[tuple[bytes, dict[bytes, bytes], bytes]] = field(default_factory=list)


@asynccontextmanager
async def raw_server(
    handler: Handler, ssl_context: ssl.SSLContext | None = None, receive_buffer: int = 0
) -> AsyncIterator[Server]:
    listener: anyio.abc.Listener[Any] = await anyio.create_tcp_listener(
        local_host="127.0.0.1", local_port=0
    )
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    if receive_buffer:  # accepted sockets inherit it: no window autotuning
        raw = listener.extra(anyio.abc.SocketAttribute.raw_socket)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    scheme = "http"
    if ssl_context is not None:
        listener = TLSListener(listener, ssl_context, standard_compatible=False)
        scheme = "https"
    server = Server(f"{scheme}://127.0.0.1:{port}")

    async def serve(stream: anyio.abc.ByteStream) -> None:
        server.accepts += 1
        conn = ServerConn(stream, server.accepts)
        try:
            async with stream:
                await handler(conn)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError, ssl.SSLError):
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()
    await listener.aclose()


async def queued(transport: HTTP1Transport, waiting: int = 1) -> None:
    """Until ``waiting`` requests wait for room in the pool."""
    await until(lambda: len(transport._waiters) >= waiting, timeout=LIMIT)


async def idle_connections_spoiled(transport: HTTP1Transport) -> None:
    """Until the client has seen that no idle connection is fit for reuse: a FIN or bytes
    nobody asked for reached it (on asyncio the event loop must have read them). A
    connection already dropped from the pool (the client saw the FIN as it put the
    connection back) counts as not fit, so the pool is looked at afresh each time."""

    def none_usable() -> bool:
        return not any(conn.usable() for conns in transport._idle.values() for conn in conns)

    await until(none_usable, timeout=LIMIT)


def ok(body: bytes = b"ok", extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%b\r\n%b" % (len(body), extra, body)


def answering(*responses: bytes, record: Server | None = None) -> Handler:
    """Answer each request on a connection with the next of ``responses``, then keep open."""

    async def handler(conn: ServerConn) -> None:
        for response in responses:
            request = await conn.read_request()
            if request is None:
                return
            if record is not None:
                record.requests.append(request)
            await conn.send(response)
        await conn.read_request()

    return handler


def keep_answering(response: bytes) -> Handler:
    async def handler(conn: ServerConn) -> None:
        while await conn.read_request() is not None:
            await conn.send(response)

    return handler


# framing


async def test_content_length_request_and_keep_alive_reuse() -> None:
    holder: list[Server] = []

    async def handler(conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            holder[0].requests.append(request)
            await conn.send(ok(b"body-%d" % len(holder[0].requests)))

    async with raw_server(handler) as server, new_async_client() as client:
        holder.append(server)
        first = await client.post(server.url + "/a/b?x=1&y=2", content=b"hello")
        second = await client.get(server.url + "/c")
    assert (first.status_code, first.content, second.content) == (200, b"body-1", b"body-2")
    assert first.http_version == "HTTP/1.1" and first.reason_phrase == "OK"
    assert server.accepts == 1
    line, headers, body = server.requests[0]
    assert line == b"POST /a/b?x=1&y=2 HTTP/1.1"
    assert headers[b"host"] == server.url.removeprefix("http://").encode()
    assert (headers[b"content-length"], body) == (b"5", b"hello")
    assert server.requests[1][0] == b"GET /c HTTP/1.1"


async def test_chunked_response_with_extensions_and_trailers_then_reuse() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n"
    )
    async with raw_server(answering(chunked, ok(b"second"))) as server:
        async with new_async_client() as client:
            first = await client.get(server.url)
            second = await client.get(server.url)
    assert first.content == b"hello world"
    assert "x-trailer" not in first.headers
    assert second.content == b"second"
    assert server.accepts == 1


async def test_body_read_until_close() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\n\r\nall of ")
        await conn.send(b"this")

    async with raw_server(handler) as server, new_async_client() as client:
        first = await client.get(server.url)
        second = await client.get(server.url)
    assert first.content == second.content == b"all of this"
    assert server.accepts == 2


async def test_interim_responses_are_skipped() -> None:
    hints = b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + hints + ok(b"final")
    async with raw_server(answering(interim, ok(b"next"))) as server:
        async with new_async_client() as client:
            response = await client.get(server.url)
            after = await client.get(server.url)
    assert (response.status_code, response.content) == (200, b"final")
    assert "link" not in response.headers
    assert after.content == b"next" and server.accepts == 1


async def test_head_204_304_have_no_body_and_keep_the_connection() -> None:
    responses = (
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n",
        ok(b"last"),
    )
    async with raw_server(answering(*responses)) as server, new_async_client() as client:
        head = await client.head(server.url)
        no_content = await client.get(server.url)
        not_modified = await client.get(server.url)
        last = await client.get(server.url)
    assert (head.status_code, head.content, head.headers["content-length"]) == (200, b"", "10")
    assert (no_content.status_code, no_content.content) == (204, b"")
    assert (not_modified.status_code, not_modified.content) == (304, b"")
    assert last.content == b"last"
    assert server.accepts == 1


async def test_connection_close_is_honoured() -> None:
    async with raw_server(keep_answering(ok(b"x", b"Connection: close\r\n"))) as server:
        async with new_async_client() as client:
            await client.get(server.url)
            await client.get(server.url)
    assert server.accepts == 2


async def test_http_10_response_without_keep_alive_is_not_reused() -> None:
    response = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with raw_server(keep_answering(response)) as server, new_async_client() as client:
        first = await client.get(server.url)
        await client.get(server.url)
    assert first.http_version == "HTTP/1.0"
    assert server.accepts == 2


async def test_streaming_request_body_is_chunked() -> None:
    holder: list[Server] = []

    async def handler(conn: ServerConn) -> None:
        await answering(ok(), record=holder[0])(conn)

    async def body() -> AsyncIterator[bytes]:
        yield b"one "
        yield b""
        yield b"two"

    async with raw_server(handler) as server, new_async_client() as client:
        holder.append(server)
        response = await client.post(server.url, content=body())
    assert response.status_code == 200
    _, headers, received = server.requests[0]
    assert headers[b"transfer-encoding"] == b"chunked" and received == b"one two"


# connections closed by the server


async def test_idle_connection_closed_by_server_is_not_reused() -> None:
    """The request body is a stream, so no retry could hide a reuse of the dead one."""
    closed = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(ok(b"once"))
        if conn.index == 1:
            await conn.stream.aclose()
            closed.set()
            return
        await conn.read_request()

    async def body() -> AsyncIterator[bytes]:
        yield b"streamed"

    transport = HTTP1Transport()
    async with raw_server(handler) as server, httpx.AsyncClient(transport=transport) as client:
        await client.get(server.url)
        await closed.wait()
        await idle_connections_spoiled(transport)  # the client has seen the FIN
        response = await client.post(server.url, content=body())
    assert response.content == b"once"
    assert server.accepts == 2


async def test_reused_connection_failing_before_any_response_byte_is_retried() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(ok(b"first"))
        if conn.index == 1:
            await conn.read_request()  # the server drops the keep-alive just as it comes
            return
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client() as client:
        await client.get(server.url)
        response = await client.put(server.url, content=b"again")
    assert response.content == b"first"
    assert server.accepts == 2


async def test_post_the_server_may_have_read_is_not_sent_twice() -> None:
    """A reused connection that takes a POST and closes without a byte of answer: the
    server may have acted on it, so it is an error, not a silent second POST."""

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(ok(b"first"))
        if conn.index == 1:
            await conn.read_request()  # read, then dropped without an answer
            return
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client() as client:
        await client.get(server.url)
        with pytest.raises(httpx.RemoteProtocolError):
            await client.post(server.url, content=b"tools/call")
    assert server.accepts == 1


async def test_fresh_connection_closed_without_response_is_an_error() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(server.url)
    assert server.accepts == 1


async def test_server_closing_mid_body_is_a_protocol_error_and_the_pool_recovers() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..")
            return
        await conn.send(ok(b"fine"))
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(server.url)
        assert (await client.get(server.url)).content == b"fine"
    assert server.accepts == 2


async def test_server_closing_mid_chunked_body_is_a_protocol_error() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")

    async with raw_server(handler) as server, new_async_client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(server.url)


# malformed responses


@pytest.mark.parametrize(
    "response",
    [
        b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",
        b"NOTHTTP 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header Line\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
async def test_malformed_response_is_a_protocol_error(response: bytes) -> None:
    async def handler(conn: ServerConn) -> None:
        await answering(response if conn.index == 1 else ok(b"after"))(conn)

    async with raw_server(handler) as server:
        async with new_async_client() as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(server.url)
            assert (await client.get(server.url)).content == b"after"
    assert server.accepts == 2


async def test_oversized_head_is_a_protocol_error() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\n")
        filler = b"X-Filler: " + b"a" * 1000 + b"\r\n"
        for _ in range(MAX_HEAD // len(filler) + 2):
            await conn.send(filler)
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client() as client:
        with pytest.raises(httpx.RemoteProtocolError, match="head"):
            await client.get(server.url)


async def test_a_large_head_under_the_cap_is_accepted() -> None:
    filler = b"".join(b"X-F%d: %b\r\n" % (i, b"b" * 1000) for i in range(40))
    async with raw_server(keep_answering(ok(b"big", filler))) as server:
        async with new_async_client() as client:
            response = await client.get(server.url)
    assert response.content == b"big" and response.headers["x-f39"] == "b" * 1000


# streaming


async def test_event_stream_arrives_chunk_by_chunk() -> None:
    first_seen = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        await conn.send(b"d\r\ndata: first\n\n\r\n")
        await first_seen.wait()
        await conn.send(b"e\r\ndata: second\n\n\r\n0\r\n\r\n")
        await keep_answering(ok(b"again"))(conn)

    chunks: list[bytes] = []
    async with raw_server(handler) as server, new_async_client() as client:
        with anyio.fail_after(LIMIT):
            async with client.stream("GET", server.url) as response:
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    first_seen.set()
        again = await client.get(server.url)
    assert chunks == [b"data: first\n\n", b"data: second\n\n"]
    assert again.content == b"again" and server.accepts == 1


async def test_large_body_streams_with_flow_control() -> None:
    body = bytes(range(256)) * 8192  # 2 MiB
    async with raw_server(keep_answering(ok(body))) as server, new_async_client() as client:
        async with client.stream("GET", server.url) as response:
            received = b""
            async for chunk in response.aiter_raw():
                received += chunk
        again = await client.get(server.url)
    assert received == body and again.content == body
    assert server.accepts == 1


async def test_closing_a_half_read_stream_closes_its_connection() -> None:
    eof_seen = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            await conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
            assert await conn.read_request() is None
            eof_seen.set()
            return
        await conn.send(ok(b"new"))
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client() as client:
        with anyio.fail_after(LIMIT):
            async with client.stream("GET", server.url) as response:
                async for chunk in response.aiter_bytes():
                    assert chunk == b"abc"
                    break
            await eof_seen.wait()
        assert (await client.get(server.url)).content == b"new"
    assert server.accepts == 2


# timeouts, cancellation, the pool


async def test_read_timeout_then_the_pool_still_works() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            await conn.read_request()  # never answers
            return
        await conn.send(ok(b"late"))
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client(timeout=0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get(server.url)
        response = await client.get(server.url, timeout=LIMIT)
    assert response.content == b"late"


async def test_read_timeout_between_body_chunks() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client(timeout=0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.get(server.url)


async def test_write_timeout_when_the_server_does_not_read() -> None:
    # A listener that never accepts: the kernel completes the handshake and fills the
    # small receive buffer, and nothing reads it. (An anyio server on asyncio would not
    # do: its transport reads ahead into memory until the handler first receives.)
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        timeout = httpx.Timeout(LIMIT, write=0.2)
        async with new_async_client(timeout=timeout) as client:
            with pytest.raises(httpx.WriteTimeout):
                await client.post(url, content=bytes(32 * 1024 * 1024))


async def test_answer_sent_before_the_server_stopped_reading_is_returned() -> None:
    stop = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        while b"\r\n\r\n" not in conn.buf:
            await conn._more()
        await conn.send(b"HTTP/1.1 413 Too Large\r\nContent-Length: 3\r\n\r\nbig")
        await conn.stream.send_eof()
        await stop.wait()

    async def body() -> AsyncIterator[bytes]:
        for _ in range(64):
            yield bytes(1024 * 1024)

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        response = await client.post(server.url, content=body())
        stop.set()
    assert (response.status_code, response.content) == (413, b"big")


async def test_connect_error_and_connect_timeout_types() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()
    async with new_async_client() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


async def test_cancelling_a_request_leaves_the_pool_usable() -> None:
    received = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            received.set()
            await conn.read_request()
            return
        await conn.send(ok(b"after cancel"))
        await conn.read_request()

    transport = HTTP1Transport()
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.get, server.url)
                await received.wait()
                tg.cancel_scope.cancel()
            assert transport._count == 0
            response = await client.get(server.url)
            assert transport._count == 1 and transport._idle_count == 1
    assert response.content == b"after cancel"
    assert server.accepts == 2


async def test_cancelling_a_body_read_closes_the_connection() -> None:
    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            await conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
            await conn.read_request()
            return
        await conn.send(ok(b"fresh"))
        await conn.read_request()

    transport = HTTP1Transport()
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            with anyio.CancelScope() as scope:
                async with client.stream("GET", server.url) as response:
                    async for _ in response.aiter_bytes():
                        scope.cancel()  # the next read is cancelled while it waits
            assert scope.cancelled_caught
            assert transport._count == 0 and transport._idle_count == 0
            assert (await client.get(server.url)).content == b"fresh"
    assert server.accepts == 2


async def test_pool_limit_makes_requests_wait_and_pool_timeout() -> None:
    release = anyio.Event()
    holding = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        holding.set()
        await release.wait()
        await conn.send(ok(b"1"))
        while await conn.read_request() is not None:
            await conn.send(ok(b"2"))

    transport = HTTP1Transport(limits=httpx.Limits(max_connections=1))
    results: list[bytes] = []
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:

            async def get() -> None:
                results.append((await client.get(server.url)).content)

            async with anyio.create_task_group() as tg:
                tg.start_soon(get)
                await holding.wait()
                with pytest.raises(httpx.PoolTimeout):
                    await client.get(server.url, timeout=httpx.Timeout(LIMIT, pool=0.05))
                tg.start_soon(get)
                await queued(transport)  # waits for the one connection, opens none
                assert results == [] and server.accepts == 1
                release.set()
    assert sorted(results) == [b"1", b"2"]
    assert server.accepts == 1


async def test_idle_connections_beyond_the_keepalive_limit_are_closed() -> None:
    gate = anyio.Event()
    arrived = 0

    async def handler(conn: ServerConn) -> None:
        nonlocal arrived
        while await conn.read_request() is not None:
            arrived += 1
            if arrived == 3:
                gate.set()
            await gate.wait()
            await conn.send(ok())

    transport = HTTP1Transport(limits=httpx.Limits(max_keepalive_connections=1))
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(client.get, server.url)
            assert server.accepts == 3 and transport._idle_count == 1
            assert transport._count == 1


async def test_expired_idle_connection_is_not_reused() -> None:
    transport = HTTP1Transport(limits=httpx.Limits(keepalive_expiry=0.0))
    async with raw_server(keep_answering(ok())) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            await client.get(server.url)
            await client.get(server.url)
    assert server.accepts == 2


async def test_keep_alive_reuse_with_descriptors_above_fd_setsize() -> None:
    resource = pytest.importorskip("resource")
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 1200:
        pytest.skip("needs 1200 file descriptors")
    base = socket.socket()
    filler = [os.dup(base.fileno()) for _ in range(1100)]  # the client's socket comes after
    try:
        async with raw_server(keep_answering(ok())) as server, new_async_client() as client:
            await client.get(server.url)
            await client.get(server.url)
    finally:
        for fd in filler:
            os.close(fd)
        base.close()
    assert server.accepts == 1


async def test_header_with_line_break_is_refused() -> None:
    async with raw_server(keep_answering(ok())) as server, new_async_client() as client:
        with pytest.raises(httpx.LocalProtocolError):
            await client.get(server.url, headers={"x-evil": "a\r\nInjected: yes"})
        assert (await client.get(server.url)).status_code == 200


# auth


class AddHeader(httpx.Auth):
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["x-token"] = "static"
        yield request


class RetryOn401(httpx.Auth):
    requires_response_body = True

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        response = yield request
        if response.status_code == 401:
            request.headers["authorization"] = "Bearer " + response.text
            yield request


async def test_auth_header_and_401_retry_flow() -> None:
    holder: list[Server] = []

    async def handler(conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            holder[0].requests.append(request)
            headers = request[1]
            if b"authorization" not in headers and b"x-token" not in headers:
                await conn.send(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nnonce")
            else:
                await conn.send(ok(headers.get(b"authorization") or headers[b"x-token"]))

    async with raw_server(handler) as server:
        holder.append(server)
        async with new_async_client(auth=AddHeader()) as client:
            assert (await client.get(server.url)).content == b"static"
        async with new_async_client(auth=RetryOn401()) as client:
            response = await client.post(server.url, content=b"payload")
    assert response.content == b"Bearer nonce"
    assert [r[2] for r in server.requests[1:]] == [b"payload", b"payload"]


# TLS


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory = tmp_path_factory.mktemp("tls")
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_tls_with_a_trusted_self_signed_certificate(certificate: tuple[Path, Path]) -> None:
    cert_path, key_path = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_path, key_path)
    client_context = ssl.create_default_context(cafile=str(cert_path))
    async with raw_server(keep_answering(ok(b"secret")), server_context) as server:
        async with new_async_client(verify=client_context) as client:
            first = await client.get(server.url)
            second = await client.get(server.url)
        async with new_async_client() as client:  # certifi's roots do not know it
            with pytest.raises(httpx.ConnectError):
                await client.get(server.url)
    assert first.content == second.content == b"secret"
    assert server.accepts == 1  # the refused handshake never reaches the handler


# the client


async def test_the_client_made_sends_on_http1_transport_unless_given_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The environment's proxies: tests/jsonrpc_core/test_http1_proxies.py.
    sent: list[str] = []
    original = HTTP1Transport.handle_async_request

    async def counting(self: HTTP1Transport, request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return await original(self, request)

    monkeypatch.setattr(HTTP1Transport, "handle_async_request", counting)
    given = httpx.MockTransport(lambda request: httpx.Response(204))
    async with raw_server(keep_answering(ok())) as server:
        async with new_async_client(trust_env=False) as client:
            assert isinstance(client, httpx.AsyncClient)
            await client.get(server.url + "/ours")
        async with new_async_client(transport=given, timeout=3.0) as client:
            assert isinstance(client, httpx.AsyncClient) and client.timeout.read == 3.0
            assert (await client.get(server.url + "/given")).status_code == 204
    assert sent == ["/ours"]


# the client's cookie jar


class CountingJar(CookieJar):
    """A cookie jar that counts the responses it was asked to extract cookies from."""

    def __init__(self) -> None:
        super().__init__()
        self.extractions = 0

    def extract_cookies(self, response: Any, request: Any) -> None:
        self.extractions += 1
        super().extract_cookies(response, request)


async def test_cookies_set_by_the_server_are_sent_back_and_plain_responses_skip_extraction() -> (
    None
):
    seen: list[bytes | None] = []
    answers = [
        ok(b"plain"),
        ok(b"set", b"Set-Cookie: session=abc; Path=/\r\n"),
        ok(b"plain"),
        ok(b"set2", b"set-cookie: other=xyz; Path=/\r\n"),
        ok(b"plain"),
    ]

    async def handler(conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            seen.append(request[1].get(b"cookie"))
            await conn.send(answers[len(seen) - 1])

    jar = CountingJar()
    async with raw_server(handler) as server, new_async_client(cookies=jar) as client:
        for _ in answers:
            await client.get(server.url + "/")
    assert seen[:4] == [None, None, b"session=abc", b"session=abc"]
    assert sorted((seen[4] or b"").split(b"; ")) == [b"other=xyz", b"session=abc"]
    assert jar.extractions == 2  # only the responses with a Set-Cookie header
    assert client.cookies.jar is jar
    assert {cookie.name: cookie.value for cookie in jar} == {"session": "abc", "other": "xyz"}


async def test_cookies_assigned_to_the_client_are_sent_and_still_skip_extraction() -> None:
    seen: list[bytes | None] = []

    async def handler(conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            seen.append(request[1].get(b"cookie"))
            extra = b"Set-Cookie: late=1; Path=/\r\n" if len(seen) == 2 else b""
            await conn.send(ok(b"x", extra))

    async with raw_server(handler) as server, new_async_client() as client:
        client.cookies = {"given": "yes"}
        jar = CountingJar()
        for cookie in client.cookies.jar:
            jar.set_cookie(cookie)
        client.cookies = jar
        await client.get(server.url + "/")
        await client.get(server.url + "/")
        await client.get(server.url + "/")
    assert seen[:2] == [b"given=yes", b"given=yes"]
    assert sorted((seen[2] or b"").split(b"; ")) == [b"given=yes", b"late=1"]
    assert jar.extractions == 1


# the URL parsed once by jsonrpc_core's HTTP client transports


async def test_a_url_parsed_once_still_fails_at_the_first_request_when_invalid() -> None:
    from jsonrpc_core import Notification, StreamableHTTPTransport

    transport = StreamableHTTPTransport("http://host:port/mcp")  # not an error yet
    async with transport:
        with pytest.raises(httpx.InvalidURL):
            await transport.send(Notification("notifications/initialized"))


async def test_a_url_parsed_once_is_the_one_each_request_goes_to() -> None:
    from jsonrpc_core import Notification, StreamableHTTPTransport

    record = Server("")
    accepted = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    async with raw_server(answering(accepted, accepted, record=record)) as server:
        url = server.url + "/a%20b/mcp?x=1"
        async with StreamableHTTPTransport(url, standalone_stream=False) as transport:
            await transport.send(Notification("one"))
            await transport.send(Notification("two"))
    assert [line for line, _, _ in record.requests] == [b"POST /a%20b/mcp?x=1 HTTP/1.1"] * 2
    assert transport.url == url
