"""Servers close connections that trickle: request heads and bodies have deadlines.

Real sockets on 127.0.0.1 against `running_server` (uvicorn in a thread, so every test
runs on asyncio and trio alike), with the deadlines set short (1 s): N connections
sending one header byte (or one body byte) every 0.2 s are all closed by the server
well within a generous bound, a slow body is answered 408, and the server still
answers a normal request afterwards. Both uvicorn HTTP protocols are covered.

Reads the private `jsonrpc_core._http_deadlines` limits and `_http_serve._config` on
purpose: the uvicorn settings they make are under test.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator, MutableMapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import httpx
import pytest
from _connect import http_app

from jsonrpc_core import _http_common, running_server
from jsonrpc_core.http import HTTPRequest, HTTPResponse, Route
from mcp_layer import MCPServer

pytestmark = pytest.mark.anyio

TRICKLERS = 20
DEADLINE = 1.0
BOUND = 10.0
"""Every trickler must be cut off within this many seconds of starting (deadline 1 s)."""
PACE = 0.2
"""Seconds between two trickled bytes (the behaviour under test, not a synchronisation)."""
MAX_TRICKLE = 200
"""Bytes a trickler sends at most (40 s at PACE): every loop is bounded."""

POST_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
ECHO = {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "still here"}}


@pytest.fixture(params=["httptools", "h11"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextmanager
def uvicorn_errors() -> Iterator[list[logging.LogRecord]]:
    """Errors uvicorn logs (its loggers do not propagate to pytest's caplog; entered
    once the server runs, since uvicorn's logging setup replaces their handlers)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append  # type: ignore[method-assign,assignment]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


@asynccontextmanager
async def short_deadline_server(app: Any, protocol: str) -> AsyncIterator[tuple[str, int]]:
    async with running_server(
        app, header_timeout=DEADLINE, body_timeout=DEADLINE, http=protocol
    ) as url:
        yield url, int(url.rsplit(":", 1)[1])


def head(port: int, path: str = "/rpc", *, length: int = 100) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        f"content-length: {length}\r\n\r\n"
    ).encode()


async def trickle(port: int, prefix: bytes, drip: bytes) -> tuple[float, bytes]:
    """Send ``prefix``, then ``drip`` a byte at a time, until the server closes the
    connection; the seconds that took and what the server sent."""
    started = time.monotonic()
    received = bytearray()
    with anyio.fail_after(BOUND):
        await _trickle(port, prefix, drip, received)
    return time.monotonic() - started, bytes(received)


async def _trickle(port: int, prefix: bytes, drip: bytes, received: bytearray) -> None:
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        closed = anyio.Event()

        async def read() -> None:
            try:
                while True:
                    received.extend(await stream.receive())
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                pass
            closed.set()

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(read)
            try:
                if prefix:
                    await stream.send(prefix)
                for byte in drip[:MAX_TRICKLE]:
                    if closed.is_set():
                        break
                    await stream.send(bytes([byte]))
                    with anyio.move_on_after(PACE):
                        await closed.wait()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass
            await closed.wait()


async def trickle_all(port: int, prefix: bytes, drip: bytes) -> list[tuple[float, bytes]]:
    results: list[tuple[float, bytes]] = []

    async def one() -> None:
        results.append(await trickle(port, prefix, drip))

    async with anyio.create_task_group() as task_group:
        for _ in range(TRICKLERS):
            task_group.start_soon(one)
    return results


async def assert_still_serving(url: str, path: str = "/rpc") -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(url + path, json=ECHO, headers=POST_HEADERS)
    assert response.status_code == 200, response.text
    assert "still here" in response.text


def slow_head(port: int) -> bytes:
    return head(port) + b"x" * MAX_TRICKLE


async def test_connections_trickling_a_header_byte_are_closed(protocol: str) -> None:
    async with short_deadline_server(http_app("http-stateless"), protocol) as (url, port):
        results = await trickle_all(port, b"", head(port))
        seconds = [s for s, _ in results]
        assert len(results) == TRICKLERS
        assert max(seconds) < BOUND, seconds
        # Closed at the deadline, not after the whole head went through.
        assert all(received == b"" for _, received in results)
        await assert_still_serving(url)


async def test_connections_trickling_a_body_byte_get_408_and_are_closed(protocol: str) -> None:
    async with short_deadline_server(http_app("http-stateless"), protocol) as (url, port):
        with uvicorn_errors() as server_errors:
            results = await trickle_all(port, head(port), b"{" * 100)
        assert len(results) == TRICKLERS
        assert max(s for s, _ in results) < BOUND, results
        for _, received in results:
            assert received.startswith(b"HTTP/1.1 408 "), received
        await assert_still_serving(url)
    # The app, cut off mid-body, ends quietly: no "Exception in ASGI application".
    assert [r.getMessage() for r in server_errors] == []


async def test_a_connection_that_sends_nothing_is_closed(protocol: str) -> None:
    async with short_deadline_server(http_app("http-stateless"), protocol) as (url, port):
        seconds, received = await trickle(port, b"", b"")
        assert seconds < BOUND
        assert received == b""
        await assert_still_serving(url)


async def test_a_stalled_body_gets_408_after_the_deadline(protocol: str) -> None:
    async with short_deadline_server(http_app("http-stateless"), protocol) as (url, port):
        # Half the body, then nothing more: only a timer can notice.
        seconds, received = await trickle(port, head(port) + b'{"jsonrpc"', b"")
        assert seconds < BOUND
        assert received.startswith(b"HTTP/1.1 408 "), received
        await assert_still_serving(url)


async def test_blank_lines_between_requests_do_not_hold_a_connection(protocol: str) -> None:
    async with short_deadline_server(http_app("http-stateless"), protocol) as (url, port):
        seconds, _ = await trickle(port, b"", b"\r\n" * (MAX_TRICKLE // 2))
        assert seconds < BOUND
        await assert_still_serving(url)


async def test_a_head_larger_than_the_limit_is_refused() -> None:
    async with short_deadline_server(http_app("http-stateless"), "httptools") as (url, port):
        start = f"POST /rpc HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n".encode()
        padding = b"".join(b"x-pad-%d: %s\r\n" % (i, b"y" * 1000) for i in range(80))
        seconds, received = await trickle(port, start + padding, b"")
        assert seconds < BOUND
        assert received.startswith(b"HTTP/1.1 431 "), received
        await assert_still_serving(url)


async def test_an_mcp_server_closes_header_and_body_tricklers() -> None:
    server = MCPServer("deadlines")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    async with short_deadline_server(server.asgi_app(stateless=True), "auto") as (url, port):
        heads = await trickle_all(port, b"", head(port, "/mcp"))
        bodies = await trickle_all(port, head(port, "/mcp"), b"{" * 100)
        assert max(s for s, _ in heads) < BOUND
        assert max(s for s, _ in bodies) < BOUND
        assert all(received.startswith(b"HTTP/1.1 408 ") for _, received in bodies)
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(
                url + "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={**POST_HEADERS, "mcp-protocol-version": "2025-06-18"},
            )
        assert response.status_code == 200, response.text
        assert "echo" in response.text


def test_served_apps_bound_concurrency_head_size_and_read_times_by_default() -> None:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from jsonrpc_core._http_deadlines import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_HEAD_SIZE
    from jsonrpc_core._http_serve import LIMIT_CONCURRENCY, _config

    config = _config(http_app("http-stateless"), "127.0.0.1", 0, "warning", 10.0, 30.0)
    assert config.limit_concurrency == LIMIT_CONCURRENCY == 1000
    assert config.h11_max_incomplete_event_size == MAX_HEAD_SIZE == 64 * 1024
    assert (HEADER_TIMEOUT, BODY_TIMEOUT) == (10.0, 30.0)
    assert config.http.header_timeout == HEADER_TIMEOUT
    assert config.http.body_timeout == BODY_TIMEOUT
    # A protocol class of the caller's own is left as it is.
    config = _config(
        http_app("http-stateless"), "127.0.0.1", 0, "warning", 10.0, 30.0, http=H11Protocol
    )
    assert config.http is H11Protocol


async def echo_route(request: HTTPRequest) -> HTTPResponse:
    return HTTPResponse(200, request.body)


@pytest.mark.parametrize("path", ["/rpc", "/upload"])
async def test_a_body_trickling_past_its_deadline_gets_408_from_the_app_itself(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under any ASGI server (here: none, the app called directly), the app checks the
    deadline per chunk; the clock is faked, each chunk taking 0.4 s of it."""
    clock = [0.0]
    monkeypatch.setattr(_http_common, "_now", lambda: clock[0])
    app = http_app(
        "http-stateless", body_timeout=1.0, routes=[Route("/upload", ("POST",), echo_route)]
    )
    chunks = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal chunks
        chunks += 1
        clock[0] += 0.4
        if chunks > MAX_TRICKLE:
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": b" ", "more_body": True}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "query_string": b"",
        "client": ("127.0.0.1", 50000),
        "headers": [
            (b"host", b"127.0.0.1"),
            *((k.encode(), v.encode()) for k, v in POST_HEADERS.items()),
        ],
    }
    async with app.running():
        with anyio.fail_after(BOUND):
            await app(scope, receive, send)
    assert sent, f"no answer after {chunks} chunks"
    start = sent[0]
    assert start["status"] == 408
    assert (b"connection", b"close") in start["headers"]
    assert chunks <= 4  # 1 s of 0.4 s chunks, then no more reads
