"""jsonrpc_core._http1 under hostile servers and callers: pool accounting, odd framing,
cancellation at each step, slow consumers. Servers are the raw ones of
``test_http1_transport``; both anyio backends.

Inspects the private pool state of `HTTP1Transport` (`_count`, `_idle`, `_waiters`) on
purpose: the accounting is what is under test.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import anyio.abc
import httpx
import pytest
from test_http1_transport import (
    LIMIT,
    Server,
    ServerConn,
    answering,
    certificate,  # noqa: F401 - the fixture
    idle_connections_spoiled,
    keep_answering,
    ok,
    queued,
    raw_server,
)

from jsonrpc_core.http import HTTP1Transport, new_async_client

pytestmark = pytest.mark.anyio


def consistent(transport: HTTP1Transport) -> None:
    """No request in flight: every counted connection is idle, nobody waits."""
    idle = sum(len(conns) for conns in transport._idle.values())
    assert transport._count == transport._idle_count == idle
    assert not transport._stale
    assert not [event for event in transport._waiters if not event.is_set()]


# the pool under many requests


async def test_pool_accounting_after_many_mixed_outcomes() -> None:
    """Successes, closes, resets, half bodies, timeouts and cancellations on a small pool."""

    async def handler(conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            path = request[0].split(b" ")[1]
            if path == b"/ok":
                await conn.send(ok(b"fine"))
            elif path == b"/close":
                await conn.send(ok(b"bye", b"Connection: close\r\n"))
                return
            elif path == b"/drop":
                return
            elif path == b"/half":
                await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
                return
            elif path == b"/garbage":
                await conn.send(b"NOT HTTP AT ALL\r\n\r\n")
            elif path == b"/extra":
                await conn.send(ok(b"x") + b"surplus")
            else:  # /hang
                await anyio.sleep_forever()

    transport = HTTP1Transport(limits=httpx.Limits(max_connections=3, max_keepalive_connections=2))
    paths = ["ok", "close", "drop", "half", "garbage", "extra", "hang", "ok", "ok"] * 6
    outcomes: list[str] = []
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:

            async def one(index: int, path: str) -> None:
                with anyio.move_on_after(0.3 if path == "hang" else LIMIT):
                    try:
                        if index % 4 == 0:
                            async with client.stream("GET", f"{server.url}/{path}") as response:
                                async for _ in response.aiter_raw():
                                    break  # closed half read
                        else:
                            await client.get(f"{server.url}/{path}")
                        outcomes.append("ok")
                    except httpx.HTTPError as exc:
                        outcomes.append(type(exc).__name__)
                    assert transport._count <= 3

            with anyio.fail_after(LIMIT * 3):
                async with anyio.create_task_group() as tg:
                    for index, path in enumerate(paths):
                        tg.start_soon(one, index, path)
            consistent(transport)
            assert transport._count <= 2
            with anyio.fail_after(LIMIT):
                async with anyio.create_task_group() as tg:
                    for _ in range(6):
                        tg.start_soon(client.get, f"{server.url}/ok")
            consistent(transport)
    assert "ok" in outcomes and len(outcomes) >= len(paths) - paths.count("hang")


async def test_a_waiter_is_woken_when_the_connection_is_discarded() -> None:
    """max_connections=1: the one in use fails mid-body; the waiting request gets the room."""
    holding = anyio.Event()
    fail = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
            holding.set()
            await fail.wait()
            return  # closes mid-body
        await conn.send(ok(b"second"))
        await conn.read_request()

    transport = HTTP1Transport(limits=httpx.Limits(max_connections=1))
    results: list[bytes] = []
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:

            async def second() -> None:
                results.append((await client.get(server.url)).content)

            with anyio.fail_after(LIMIT):
                async with anyio.create_task_group() as tg:
                    async with client.stream("GET", server.url) as response:
                        await holding.wait()
                        tg.start_soon(second)
                        await queued(transport)
                        fail.set()
                        with pytest.raises(httpx.RemoteProtocolError):
                            await response.aread()
            consistent(transport)
    assert results == [b"second"] and server.accepts == 2


async def test_a_waiter_is_woken_when_the_request_holding_the_room_is_cancelled() -> None:
    holding = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        if conn.index == 1:
            holding.set()
            await anyio.sleep_forever()
        await conn.send(ok(b"second"))
        await keep_answering(ok(b"more"))(conn)

    transport = HTTP1Transport(limits=httpx.Limits(max_connections=1))
    results: list[bytes] = []
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:

            async def second() -> None:
                results.append((await client.get(server.url)).content)

            first = anyio.CancelScope()

            async def hold() -> None:
                with first:
                    await client.get(server.url)

            with anyio.fail_after(LIMIT):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(hold)
                    await holding.wait()
                    tg.start_soon(second)
                    await queued(transport)
                    first.cancel()
            consistent(transport)
    assert results == [b"second"]


async def test_closing_the_transport_fails_a_waiting_request_without_a_new_connection() -> None:
    holding = anyio.Event()
    release = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        holding.set()
        await release.wait()
        await conn.send(ok(b"first"))
        await keep_answering(ok(b"more"))(conn)

    transport = HTTP1Transport(limits=httpx.Limits(max_connections=1))
    results: list[object] = []
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:

            async def get() -> None:
                try:
                    results.append((await client.get(server.url)).content)
                except RuntimeError as exc:
                    results.append(exc)

            with anyio.fail_after(LIMIT):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(get)
                    await holding.wait()
                    tg.start_soon(get)
                    await queued(transport)
                    await transport.aclose()
                    release.set()
        assert transport._count == 0 and transport._idle_count == 0
    assert results[0] == b"first" or results[1] == b"first"
    assert any(isinstance(result, RuntimeError) for result in results)
    assert server.accepts == 1


async def test_closing_the_client_while_a_body_streams_closes_it_at_its_end() -> None:
    more = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
        await more.wait()
        await conn.send(b"def")
        await conn.read_request()

    transport = HTTP1Transport()
    async with raw_server(handler) as server:
        client = httpx.AsyncClient(transport=transport, timeout=LIMIT)
        with anyio.fail_after(LIMIT):
            async with client.stream("GET", server.url) as response:
                await client.aclose()
                more.set()
                body = await response.aread()
    assert body == b"abcdef"
    assert transport._count == 0 and transport._idle_count == 0


# framing a connection must not be reused after


async def test_extra_bytes_after_a_complete_response_spoil_the_connection() -> None:
    responses = [
        ok(b"one") + b"junk",
        ok(b"two") + ok(b"unasked"),
        b"HTTP/1.1 304 Not Modified\r\n\r\nbody a 304 must not have",
        b"HTTP/1.1 204 No Content\r\n\r\nbody a 204 must not have",
    ]

    async def handler(conn: ServerConn) -> None:
        request = await conn.read_request()
        if request is None:
            return
        await conn.send(responses[conn.index - 1] if conn.index <= 4 else ok(b"clean"))
        await keep_answering(ok(b"clean"))(conn)

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        contents = []
        for _ in range(5):
            response = await client.get(server.url)
            contents.append((response.status_code, response.content))
    assert contents == [(200, b"one"), (200, b"two"), (304, b""), (204, b""), (200, b"clean")]
    assert server.accepts == 5


async def test_bytes_arriving_on_an_idle_connection_spoil_it() -> None:
    idle = anyio.Event()
    sent = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        if conn.index == 1:
            await conn.read_request()
            await conn.send(ok(b"first"))
            await idle.wait()  # the client has read the answer: its connection is idle
            await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
            sent.set()
        await keep_answering(ok(b"fresh"))(conn)

    async def body() -> AsyncIterator[bytes]:
        yield b"streamed: no retry may hide a reuse"

    transport = HTTP1Transport()
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            await client.get(server.url)
            idle.set()
            await sent.wait()
            await idle_connections_spoiled(transport)  # the stale bytes reached the client
            response = await client.post(server.url, content=body())
    assert response.content == b"fresh" and server.accepts == 2


async def test_chunked_with_connection_close_is_not_reused() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunked += b"3\r\nabc\r\n0\r\n\r\n"
    async with raw_server(keep_answering(chunked)) as server, new_async_client() as client:
        first = await client.get(server.url)
        second = await client.get(server.url)
    assert first.content == second.content == b"abc"
    assert server.accepts == 2


async def test_transfer_encoding_with_content_length_is_refused() -> None:
    both = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
    both += b"3\r\nabc\r\n0\r\n\r\n"

    async def handler(conn: ServerConn) -> None:
        await answering(both if conn.index == 1 else ok(b"after"))(conn)

    async with raw_server(handler) as server:
        async with new_async_client(timeout=LIMIT) as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(server.url)
            after = await client.get(server.url)
    assert after.content == b"after" and server.accepts == 2


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: Chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nTransfer-Encoding: chunked\n\n",
    ],
)
async def test_chunked_applied_twice_is_refused_and_the_connection_dropped(head: bytes) -> None:
    """RFC 9112 6.1: chunked is applied at most once (h11 and httpx refuse it too)."""
    twice = head + b"3\r\nabc\r\n0\r\n\r\n"

    async def handler(conn: ServerConn) -> None:
        await answering(twice if conn.index == 1 else ok(b"after"))(conn)

    async with raw_server(handler) as server:
        async with new_async_client(timeout=LIMIT) as client:
            with pytest.raises(httpx.RemoteProtocolError, match="chunked applied more than once"):
                await client.get(server.url)
            after = await client.get(server.url)
    assert after.content == b"after" and server.accepts == 2


@pytest.mark.parametrize("status", [b"099", b"000", b"042"])
async def test_a_final_status_below_100_is_refused_and_the_connection_dropped(
    status: bytes,
) -> None:
    """Neither interim nor final: h11 and httpx refuse a status below 100."""
    odd = b"HTTP/1.1 %b Odd\r\nContent-Length: 3\r\n\r\nabc" % status

    async def handler(conn: ServerConn) -> None:
        await answering(odd if conn.index == 1 else ok(b"after"))(conn)

    async with raw_server(handler) as server:
        async with new_async_client(timeout=LIMIT) as client:
            with pytest.raises(httpx.RemoteProtocolError, match="invalid HTTP status code"):
                await client.get(server.url)
            after = await client.get(server.url)
    assert after.content == b"after" and server.accepts == 2


async def test_non_ascii_header_bytes_are_kept() -> None:
    response = ok(b"x", b"X-Name: caf\xc3\xa9 \xff\r\n")
    async with raw_server(keep_answering(response)) as server, new_async_client() as client:
        got = await client.get(server.url)
    assert (b"X-Name", b"caf\xc3\xa9 \xff") in got.headers.raw


async def test_obsolete_line_folding_is_unfolded() -> None:
    """RFC 9112 5.2: a user agent replaces each obs-fold with SP (h11 did too)."""
    response = ok(b"x", b"X-Folded: one\r\n two\r\n\tthree\r\nX-After: yes\r\n")
    async with raw_server(keep_answering(response)) as server, new_async_client() as client:
        got = await client.get(server.url)
        again = await client.get(server.url)
    assert got.headers["x-folded"].split() == ["one", "two", "three"]
    assert got.headers["x-after"] == "yes" and again.content == b"x"
    assert server.accepts == 2


async def test_a_folded_head_after_an_interim_response_in_one_packet() -> None:
    response = b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"body\r\n x", b"X-F: a\r\n b\r\n")
    async with raw_server(keep_answering(response)) as server, new_async_client() as client:
        first = await client.get(server.url)
        second = await client.get(server.url)
    assert first.headers["x-f"] == "a b" and first.content == second.content == b"body\r\n x"
    assert server.accepts == 2  # a repaired head's connection is not reused


async def test_bare_lf_line_ends_and_a_repeated_content_length_are_repaired() -> None:
    responses = (
        b"HTTP/1.1 200 OK\nContent-Length: 3\nX-A: a\n\nabc",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length: 3, 3\r\n\r\ndef",
    )

    async def handler(conn: ServerConn) -> None:
        await answering(responses[conn.index - 1] if conn.index <= 2 else ok(b"clean"))(conn)

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        first = await client.get(server.url)
        second = await client.get(server.url)
        third = await client.get(server.url)
    assert (first.content, first.headers["x-a"], second.content) == (b"abc", "a", b"def")
    assert second.headers.get_list("content-length") == ["3"]
    assert third.content == b"clean" and server.accepts == 3


@pytest.mark.parametrize(
    "response",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd",
        b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\x01\r\nContent-Length: 1\r\n\r\nz",
        b"HTTP/1.1 200 OK\nBad Name: a\n\nz",
    ],
)
async def test_heads_beyond_repair_are_still_refused(response: bytes) -> None:
    async with raw_server(answering(response)) as server, new_async_client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(server.url)


async def test_a_folded_head_past_the_cap_is_refused() -> None:
    endless = b"HTTP/1.1 200 OK\r\nX-F: a" + b"\r\n b" * 40000

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(endless)
        await conn.read_request()

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="larger than"):
            await client.get(server.url)


async def test_a_response_dribbled_byte_by_byte() -> None:
    chunked = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
    chunked += b"X-A: b\r\nX-F: c\r\n d\r\n\r\n5\r\nhello\r\n0\r\nT: t\r\n\r\n"

    async def handler(conn: ServerConn) -> None:
        while await conn.read_request() is not None:
            for index in range(len(chunked)):
                await conn.send(chunked[index : index + 1])

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        first = await client.get(server.url)
        second = await client.get(server.url)
    assert first.content == second.content == b"hello" and first.headers["x-a"] == "b"
    assert first.headers["x-f"] == second.headers["x-f"] == "c d"
    assert server.accepts == 2


# timing


async def test_read_timeout_counts_only_the_wait_not_a_slow_consumer() -> None:
    consumed = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n")
        await consumed.wait()
        await conn.send(b"7\r\nsecond\n\r\n0\r\n\r\n")
        await conn.read_request()

    chunks: list[bytes] = []
    async with raw_server(handler) as server, new_async_client(timeout=0.2) as client:
        async with client.stream("GET", server.url) as response:
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
                if len(chunks) == 1:
                    # Time is under test: a pause longer than the read timeout.
                    await anyio.sleep(0.5)
                    consumed.set()
    assert chunks == [b"first\n", b"second\n"]


async def test_a_slow_consumer_of_a_large_body_gets_every_byte() -> None:
    body = bytes(range(256)) * 4096 * 3  # 3 MiB

    async with raw_server(keep_answering(ok(body))) as server:
        async with new_async_client(timeout=LIMIT) as client:
            received = bytearray()
            async with client.stream("GET", server.url) as response:
                async for chunk in response.aiter_raw():
                    received += chunk
                    if len(received) < 1024 * 1024:  # paced on purpose: a slow consumer
                        await anyio.sleep(0.001)
            again = await client.get(server.url)
    assert bytes(received) == body and again.content == body
    assert server.accepts == 1


# cancellation at each step


async def test_cancelled_or_timed_out_connect_leaves_no_count(anyio_backend: str) -> None:
    """A TLS handshake the server never answers: cancel, then a connect timeout."""
    stop = anyio.Event()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    accepted = anyio.Event()

    async def serve(stream: anyio.abc.ByteStream) -> None:
        accepted.set()
        async with stream:
            await stop.wait()

    transport = HTTP1Transport(verify=ssl.create_default_context())
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            with anyio.fail_after(LIMIT):
                async with anyio.create_task_group() as inner:
                    inner.start_soon(client.get, f"https://127.0.0.1:{port}/")
                    await accepted.wait()
                    inner.cancel_scope.cancel()
            assert transport._count == 0
            with pytest.raises(httpx.ConnectTimeout):
                await client.get(f"https://127.0.0.1:{port}/", timeout=httpx.Timeout(0.2))
            assert transport._count == 0
        stop.set()
        tg.cancel_scope.cancel()
    await listener.aclose()


async def test_cancelled_while_writing_the_body_then_the_pool_recovers() -> None:
    got_head = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        if conn.index == 1:
            while b"\r\n\r\n" not in conn.buf:
                await conn._more()
            got_head.set()
            await anyio.sleep_forever()
        await keep_answering(ok(b"next"))(conn)

    transport = HTTP1Transport()
    async with raw_server(handler, receive_buffer=4096) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            with anyio.fail_after(LIMIT):
                async with anyio.create_task_group() as tg:
                    big = b"x" * (32 * 1024 * 1024)
                    tg.start_soon(functools.partial(client.post, server.url, content=big))
                    await got_head.wait()
                    await anyio.wait_all_tasks_blocked()  # the client waits to write more
                    tg.cancel_scope.cancel()
            assert transport._count == 0
            assert (await client.get(server.url)).content == b"next"
            consistent(transport)


async def test_a_request_body_that_fails_midway_closes_its_connection() -> None:
    async def handler(conn: ServerConn) -> None:
        if conn.index == 1:
            while await conn._more():
                pass
            return
        await keep_answering(ok(b"next"))(conn)

    async def body() -> AsyncIterator[bytes]:
        yield b"part"
        raise ValueError("the producer broke")

    transport = HTTP1Transport()
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            with pytest.raises(ValueError, match="producer"):
                await client.post(server.url, content=body())
            assert transport._count == 0
            assert (await client.get(server.url)).content == b"next"
            consistent(transport)
    assert server.accepts == 2


async def test_an_early_answer_while_the_server_drains_the_body_keeps_the_connection() -> None:
    async def handler(conn: ServerConn) -> None:
        while b"\r\n\r\n" not in conn.buf:
            await conn._more()
        head, _, conn.buf = conn.buf.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await conn.send(b"HTTP/1.1 413 Too Large\r\nContent-Length: 3\r\n\r\nbig")
        assert await conn._exactly(length) is not None  # read and dropped
        await keep_answering(ok(b"after"))(conn)

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        response = await client.post(server.url, content=bytes(8 * 1024 * 1024))
        after = await client.get(server.url)
    assert (response.status_code, response.content) == (413, b"big")
    assert after.content == b"after" and server.accepts == 1


async def test_a_waiter_timing_out_as_it_is_woken_passes_the_wake_up_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool timeout of the woken waiter fires before it runs: the next one gets the room."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # the woken one's connect fails at once, which shows it woke
    key = ("http", "127.0.0.1", port)
    transport = HTTP1Transport(limits=httpx.Limits(max_connections=1))
    transport._count = 1  # a connection in use elsewhere
    real_fail_after = anyio.fail_after

    @contextlib.contextmanager
    def deadline_as_woken(delay: float | None) -> Iterator[None]:
        with real_fail_after(delay):
            yield
        if delay is not None:  # the deadline passed just as the wake-up came
            raise TimeoutError

    monkeypatch.setattr(anyio, "fail_after", deadline_as_woken)
    outcomes: dict[str, str] = {}

    async def acquire(name: str, pool: float | None) -> None:
        try:
            await transport._acquire(key, {"pool": pool}, False)
        except httpx.HTTPError as exc:
            outcomes[name] = type(exc).__name__

    with anyio.move_on_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(acquire, "first", LIMIT)
            await queued(transport)
            tg.start_soon(acquire, "second", None)
            await queued(transport, 2)
            transport._count -= 1  # that connection is released
            transport._wake_one()
    assert outcomes == {"first": "PoolTimeout", "second": "ConnectError"}
    assert transport._count == 0 and not transport._waiters


async def test_tls_keep_alive_reuse_with_a_large_streamed_body(
    certificate: tuple[Path, Path],  # noqa: F811 - the fixture
) -> None:
    cert_path, key_path = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_path, key_path)
    client_context = ssl.create_default_context(cafile=str(cert_path))
    body = bytes(range(256)) * 4096 * 2  # 2 MiB
    async with raw_server(keep_answering(ok(body)), server_context) as server:
        async with new_async_client(verify=client_context, timeout=LIMIT) as client:
            for _ in range(4):
                received = bytearray()
                async with client.stream("GET", server.url) as response:
                    async for chunk in response.aiter_raw():
                        received += chunk
                assert bytes(received) == body
            small = await client.post(server.url, content=b"x" * 100_000)
    assert small.content == body and server.accepts == 1


@pytest.mark.parametrize("parts", [[b"abc", b"de"], [b"a"]])
async def test_a_streamed_body_not_matching_its_content_length_is_refused(
    parts: list[bytes],
) -> None:
    """Bytes past the declared length would be read as the next request (h11 refused too)."""
    seen: list[bytes] = []
    ended = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        while await conn._more():
            pass
        seen.append(conn.buf)
        ended.set()

    async def body() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    transport = HTTP1Transport()
    async with raw_server(handler) as server:
        async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
            with pytest.raises(httpx.LocalProtocolError, match="Content-Length"):
                await client.post(server.url, content=body(), headers={"Content-Length": "3"})
            assert transport._count == 0
        with anyio.fail_after(LIMIT):
            await ended.wait()  # the server read to the end of what the client sent
    assert seen and not seen[0].endswith(b"de")


async def test_a_streamed_body_with_a_bad_or_exact_content_length() -> None:
    holder: list[Server] = []

    async def handler(conn: ServerConn) -> None:
        await answering(ok(b"1"), ok(b"2"), record=holder[0])(conn)

    async def body(*parts: bytes) -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as client:
        holder.append(server)
        with pytest.raises(httpx.LocalProtocolError, match="Content-Length"):
            await client.post(server.url, content=body(b"a"), headers={"Content-Length": "x"})
        exact = await client.post(
            server.url, content=body(b"ab", b"c"), headers={"Content-Length": "3"}
        )
        empty = await client.post(server.url, content=body(), headers={"Content-Length": "0"})
    assert (exact.content, empty.content) == (b"1", b"2")
    assert [request[2] for request in server.requests] == [b"abc", b""]
