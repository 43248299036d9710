"""Every body a client reads has a cap counted on decoded bytes (16 MiB by default).

A gzip bomb (about 1 MiB expanding to 1 GiB of zeros) and endless bodies (a huge
``Content-Length``, or chunked forever; the server stops after 64 MiB) are served by a
raw server on 127.0.0.1 (`test_http1_transport.raw_server`) to each client: A2A JSON-RPC
and HTTP+JSON, the agent card fetch, `HTTPCaller`, MCP Streamable HTTP and HTTP+SSE,
OAuth discovery, the JWKS fetch and the token endpoint, some over a plain
`httpx.AsyncClient`. Each call ends with the error naming the limit, the response is
closed unread (the server's endless body stops early) and the process's peak memory
grows by far less than the body would take. Both anyio backends.

Tests the private unit `jsonrpc_core._http_body.describe_size` on purpose: the limit's
wording in every error comes from it.
"""

from __future__ import annotations

import functools
import logging
import resource
import struct
import sys
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from test_http1_transport import LIMIT, ServerConn, raw_server

import mcp_layer
from a2a_layer import A2AClient, InMemoryTaskStore, PushDispatcher
from a2a_layer.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    TaskPushNotificationConfig,
)
from jsonrpc_core import TransportError
from jsonrpc_core.http import HTTPCaller, ResponseTooLarge, new_async_client, read_response_body
from mcp_layer.auth import (
    AuthorizationServerMetadata,
    ClientInformation,
    IntrospectionVerifier,
    JWKSCache,
    discover,
    request_token,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = pytest.mark.anyio

MiB = 1 << 20
ENDLESS = 64 * MiB  # what the server sends of an endless body before it stops
PEAK_BOUND = 100 * MiB  # the most the peak RSS may grow while a 1 GiB bomb is refused
REFUSED = "exceeds the 16 MiB limit"


@functools.cache
def gzip_bomb() -> bytes:
    """1 GiB of zeros as a gzip member of about 1 MiB, built without holding 1 GiB:
    1 MiB of zeros deflated then fully flushed is the same bytes wherever it comes (a
    full flush forgets the history), so that piece is made once and repeated."""
    zeros = bytes(MiB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(1024):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    last = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()  # the final block
    return header + piece * 1024 + last + struct.pack("<II", crc, (1024 * MiB) & 0xFFFFFFFF)


class Hostile:
    """Answers every request but ``GET /sse`` with ``kind`` of body and ``status``;
    ``GET /sse`` gets an HTTP+SSE endpoint event (POSTs go to ``/messages``)."""

    def __init__(self, kind: str, status: int = 200) -> None:
        self.kind = kind
        self.status = status
        self.sent = 0  # body bytes of the last hostile answer handed to the socket
        self.finished = anyio.Event()  # set once a hostile answer stopped being sent

    async def handler(self, conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            if request[0].startswith(b"GET /sse"):
                head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                await conn.send(head + b"event: endpoint\ndata: /messages\n\n")
                await conn.read_request()  # open until the client leaves
                return
            try:
                await self.answer(conn)
            finally:
                self.finished.set()
            if self.kind != "bomb":
                return  # an endless body ends with the connection

    async def answer(self, conn: ServerConn) -> None:
        head = b"HTTP/1.1 %d Whatever\r\nContent-Type: application/json\r\n" % self.status
        self.sent = 0
        if self.kind == "bomb":
            bomb = gzip_bomb()
            head += b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb)
            await conn.send(head)
            for start in range(0, len(bomb), 64 * 1024):
                await conn.send(bomb[start : start + 64 * 1024])
            return
        chunked = self.kind == "chunked"
        framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % (1 << 40)
        await conn.send(head + framing + b"\r\n\r\n")
        blank = b" " * MiB  # JSON whitespace, forever
        while self.sent < ENDLESS:
            await conn.send(b"100000\r\n%b\r\n" % blank if chunked else blank)
            self.sent += MiB


class Peak:
    """The growth of the process's peak RSS over a block: VmHWM is reset to the current
    RSS on entry (``/proc/self/clear_refs``), else ``ru_maxrss`` growth is used."""

    def __enter__(self) -> Peak:
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.start = _status_kib("VmRSS") * 1024
            self.reset = True
        except OSError:
            self.start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            self.reset = False
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.reset:
            peak = _status_kib("VmHWM") * 1024
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        self.growth = peak - self.start


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def card(url: str, binding: str) -> AgentCard:
    return AgentCard(
        name="hostile",
        description="answers with endless bodies",
        version="1",
        capabilities=AgentCapabilities(),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        ],
    )


# Each client: (url) -> the call, which must fail (or, for the JWKS cache, log) with the cap.


async def a2a_jsonrpc(url: str) -> None:
    async with A2AClient(card(url, "JSONRPC")) as client:
        await client.send("hi")


async def a2a_jsonrpc_plain_httpx(url: str) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as http:
        async with A2AClient(card(url, "JSONRPC"), http=http) as client:
            await client.send("hi")


async def a2a_rest(url: str) -> None:
    async with A2AClient(card(url, "HTTP+JSON")) as client:
        await client.get_task("t-1")


async def a2a_card(url: str) -> None:
    async with A2AClient.connect(url):
        raise AssertionError("a card was read")


async def http_caller(url: str) -> None:
    async with new_async_client(timeout=LIMIT) as http:
        await HTTPCaller(http, url).call("ping")


async def http_caller_plain_httpx(url: str) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as http:
        await HTTPCaller(http, url).call("ping")


async def mcp_streamable_http(url: str) -> None:
    async with mcp_layer.connect(url + "/mcp"):
        raise AssertionError("the handshake succeeded")


async def mcp_http_sse(url: str) -> None:
    async with mcp_layer.connect(url + "/sse", sse=True):
        raise AssertionError("the handshake succeeded")


async def oauth_discovery(url: str) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as http:
        await discover(http, url + "/mcp", allow_http=True)


async def oauth_token(url: str) -> None:
    metadata = AuthorizationServerMetadata(issuer=url, token_endpoint=url + "/token")
    async with new_async_client(timeout=LIMIT) as http:
        await request_token(
            http,
            metadata,
            {"grant_type": "client_credentials"},
            ClientInformation(client_id="c", token_endpoint_auth_method="none"),
            allow_http=True,
        )


CLIENTS: dict[str, Callable[[str], Awaitable[None]]] = {
    "a2a-jsonrpc": a2a_jsonrpc,
    "a2a-jsonrpc-plain-httpx": a2a_jsonrpc_plain_httpx,
    "a2a-rest": a2a_rest,
    "a2a-card": a2a_card,
    "http-caller": http_caller,
    "http-caller-plain-httpx": http_caller_plain_httpx,
    "mcp-streamable-http": mcp_streamable_http,
    "mcp-http-sse": mcp_http_sse,
    "oauth-discovery": oauth_discovery,
    "oauth-token": oauth_token,
}


def _leaves(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors it groups or was raised from."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    found = [exc]
    if exc.__cause__ is not None:
        found += _leaves(exc.__cause__)
    return found


async def refused(call: Callable[[], Awaitable[None]]) -> BaseException:
    """The error ``call`` ends with (within ``LIMIT`` seconds)."""
    try:
        with anyio.fail_after(LIMIT):
            await call()
    except Exception as exc:
        return exc
    raise AssertionError("the call succeeded")


def assert_refused_at_the_cap(error: BaseException) -> None:
    leaves = _leaves(error)
    too_large = [leaf for leaf in leaves if isinstance(leaf, ResponseTooLarge)]
    assert too_large, f"not refused at the cap: {error!r}"
    assert REFUSED in str(too_large[0]) and too_large[0].limit == 16 * MiB
    assert str(too_large[0]).startswith("answer from http://127.0.0.1:")
    assert isinstance(error, TransportError) or any(
        isinstance(leaf, TransportError) and REFUSED in str(leaf) for leaf in leaves
    )


@pytest.mark.parametrize("kind", ["bomb", "length", "chunked"])
@pytest.mark.parametrize("name", list(CLIENTS))
async def test_every_client_refuses_a_body_past_the_cap(name: str, kind: str) -> None:
    gzip_bomb()  # built before measuring
    hostile = Hostile(kind)
    async with raw_server(hostile.handler) as server:
        with Peak() as peak:
            error = await refused(lambda: CLIENTS[name](server.url))
        assert_refused_at_the_cap(error)
        if kind != "bomb":
            with anyio.fail_after(LIMIT):
                await hostile.finished.wait()
            assert hostile.sent < ENDLESS  # closed unread: the server could not go on
    assert peak.growth < PEAK_BOUND, f"peak RSS grew by {peak.growth / MiB:.0f} MiB"


@pytest.mark.parametrize("kind", ["bomb", "length"])
@pytest.mark.parametrize("name", ["a2a-jsonrpc", "a2a-rest", "http-caller", "mcp-streamable-http"])
async def test_an_error_body_past_the_cap_is_refused(name: str, kind: str) -> None:
    gzip_bomb()
    async with raw_server(Hostile(kind, status=500).handler) as server:
        with Peak() as peak:
            error = await refused(lambda: CLIENTS[name](server.url))
    assert_refused_at_the_cap(error)
    assert peak.growth < PEAK_BOUND, f"peak RSS grew by {peak.growth / MiB:.0f} MiB"


def jwks_keys(url: str, http: httpx.AsyncClient) -> Awaitable[Any]:
    return JWKSCache(url=url + "/jwks", http_client=http).get(None)


def introspected(url: str, http: httpx.AsyncClient) -> Awaitable[Any]:
    verifier = IntrospectionVerifier(
        url + "/introspect", audience="urn:me", http_client=http, allow_http=True
    )
    return verifier.verify("a-token")


Fetch = Callable[[str, httpx.AsyncClient], Awaitable[Any]]
# (the client it fetches with: a plain httpx one or ours, the fetch)
AUTH_FETCHES: dict[str, tuple[Callable[..., Any], Fetch]] = {
    "jwks": (httpx.AsyncClient, jwks_keys),
    "introspection": (new_async_client, introspected),
}


@pytest.mark.parametrize("kind", ["bomb", "length"])
@pytest.mark.parametrize("fetch", ["jwks", "introspection"])
async def test_an_auth_fetch_past_the_cap_fails_logs_why_and_grants_nothing(
    fetch: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The JWKS fetch keeps no keys; token introspection refuses the token."""
    gzip_bomb()
    client, fetched = AUTH_FETCHES[fetch]
    async with raw_server(Hostile(kind).handler) as server:
        async with client(timeout=LIMIT) as http:
            with Peak() as peak, caplog.at_level(logging.WARNING, "mcp_layer.auth"):
                with anyio.fail_after(LIMIT):
                    assert await fetched(server.url, http) is None
    assert any(REFUSED in record.getMessage() for record in caplog.records), caplog.text
    assert peak.growth < PEAK_BOUND, f"peak RSS grew by {peak.growth / MiB:.0f} MiB"


@pytest.mark.parametrize("kind", ["bomb", "length", "chunked"])
async def test_a_webhook_answer_is_not_read_past_a_small_cap(kind: str) -> None:
    """The push sender needs only the webhook's status: past 64 KiB of its answer the
    response is closed unread, and the delivery still counts."""
    gzip_bomb()
    hostile = Hostile(kind)
    async with raw_server(hostile.handler) as server, new_async_client(timeout=LIMIT) as http:
        dispatcher = PushDispatcher(InMemoryTaskStore(), client=http, allow_private_webhooks=True)
        config = TaskPushNotificationConfig(url=server.url + "/hook", task_id="t-1")
        with Peak() as peak, anyio.fail_after(LIMIT):
            assert await dispatcher.deliver(config, b"{}")
        if kind != "bomb":
            with anyio.fail_after(LIMIT):
                await hostile.finished.wait()
            assert hostile.sent < ENDLESS
    assert peak.growth < PEAK_BOUND, f"peak RSS grew by {peak.growth / MiB:.0f} MiB"


async def test_the_cap_is_configurable_and_an_answer_within_it_is_read() -> None:
    """``max_body_size`` on the client; a 2 MiB gzip answer decodes in full within a
    3 MiB cap and is refused past a 1 MiB one, the error naming that limit."""
    payload = b'{"jsonrpc":"2.0","id":1,"result":"' + b"x" * (2 * MiB) + b'"}'
    compressed = zlib.compress(payload, wbits=31)

    async def handler(conn: ServerConn) -> None:
        while await conn.read_request() is not None:
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            head += b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(compressed)
            await conn.send(head + compressed)

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as http:
        result = await HTTPCaller(http, server.url, max_body_size=3 * MiB).call("ping")
        assert result == "x" * (2 * MiB)
        with pytest.raises(ResponseTooLarge, match="exceeds the 1 MiB limit"):
            await HTTPCaller(http, server.url, max_body_size=MiB).call("ping")
        # That answer had fully arrived: its connection is clean and carries the next.
        assert await HTTPCaller(http, server.url, max_body_size=3 * MiB).call("ping")


@pytest.mark.parametrize("sse", [False, True])
async def test_connect_takes_the_cap(sse: bool) -> None:
    async with raw_server(Hostile("chunked").handler) as server:
        target = server.url + ("/sse" if sse else "/mcp")
        error = await refused(lambda: _enter(mcp_layer.connect(target, sse=sse, max_body_size=MiB)))
    assert any("exceeds the 1 MiB limit" in str(leaf) for leaf in _leaves(error)), repr(error)


async def _enter(context: Any) -> None:
    async with context:
        raise AssertionError("the handshake succeeded")


@pytest.mark.parametrize("coding", ["deflate", "deflate-raw", "gzip, gzip"])
async def test_read_body_decodes_deflate_and_chained_codings_within_the_cap(coding: str) -> None:
    body = b"[" + b"1," * 100_000 + b"1]"
    if coding == "deflate":
        encoded, header = zlib.compress(body), b"deflate"
    elif coding == "deflate-raw":
        raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        encoded, header = raw.compress(body) + raw.flush(), b"deflate"
    else:
        encoded, header = zlib.compress(zlib.compress(body, wbits=31), wbits=31), b"gzip, gzip"

    async def handler(conn: ServerConn) -> None:
        while await conn.read_request() is not None:
            head = b"HTTP/1.1 200 OK\r\nContent-Encoding: %b\r\n" % header
            await conn.send(head + b"Content-Length: %d\r\n\r\n%b" % (len(encoded), encoded))

    async with raw_server(handler) as server, httpx.AsyncClient(timeout=LIMIT) as http:
        async with http.stream("GET", server.url) as response:
            assert await read_response_body(response, len(body)) == body
            assert response.json()[:2] == [1, 1]  # kept as the response's content
        async with http.stream("GET", server.url) as response:
            with pytest.raises(ResponseTooLarge):
                await read_response_body(response, len(body) - 1)


async def test_a_content_length_past_the_cap_fails_before_the_body_is_read() -> None:
    sent_head = anyio.Event()

    async def handler(conn: ServerConn) -> None:
        await conn.read_request()
        await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        sent_head.set()
        await conn.read_request()  # the body never comes

    async with raw_server(handler) as server, new_async_client(timeout=LIMIT) as http:
        async with http.stream("GET", server.url) as response:
            await sent_head.wait()
            with anyio.fail_after(LIMIT), pytest.raises(ResponseTooLarge, match="999 bytes"):
                await read_response_body(response, 999)
            assert response.is_closed


async def test_the_limit_in_an_error_reads_as_people_write_it() -> None:
    from jsonrpc_core._http_body import describe_size

    assert [describe_size(n) for n in (16 * MiB, 64 * 1024, 1000, MiB + 1)] == [
        "16 MiB",
        "64 KiB",
        "1000 bytes",
        "1048577 bytes",
    ]
