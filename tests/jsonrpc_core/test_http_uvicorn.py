"""The echo server over real uvicorn on 127.0.0.1, through `running_server`.

uvicorn runs in a thread with its own event loop, so these tests run on asyncio and
trio alike. Each kind of HTTP transport gets one server and goes through: `echo`,
`ask` (the server calls the client mid-call), 32 concurrent calls, a 2 MB message, and
a client that disconnects mid-stream, after which the server must still serve.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from socket import IPPROTO_TCP, TCP_NODELAY
from typing import Any

import anyio
import httpx
import pytest
from _connect import HTTP_TRANSPORTS, http_app
from _http_fixtures import wait_until

from jsonrpc_core import (
    BearerAuth,
    HTTPSSETransport,
    JsonRpcHTTPApp,
    MethodRegistry,
    Peer,
    StreamableHTTPTransport,
    running_server,
)
from jsonrpc_core.http import SSEDecoder

pytestmark = pytest.mark.anyio

SESSION = "session-id"
POST_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
SLEEP = b'{"jsonrpc": "2.0", "id": "slow", "method": "sleep", "params": {"seconds": 30}}'


@pytest.fixture(params=HTTP_TRANSPORTS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def client_registry(answers: list[str]) -> MethodRegistry:
    registry = MethodRegistry()

    def answer(params: Any, ctx: Any) -> str:
        answers.append(params["question"])
        return f"answer to {params['question']}"

    registry.on("client/answer", answer)
    return registry


@asynccontextmanager
async def client_peer(kind: str, base: str, answers: list[str]) -> AsyncIterator[Peer]:
    transport: Any
    if kind == "http+sse-legacy":
        transport = HTTPSSETransport(base + "/sse", timeout=10)
    else:
        transport = StreamableHTTPTransport(base + "/rpc", timeout=10, default_retry_ms=50)
    async with transport, Peer(transport, client_registry(answers)) as peer:
        yield peer


def active_requests(app: JsonRpcHTTPApp) -> int:
    return sum(session.active_requests for session in app.sessions.all())


async def disconnect_mid_stream(kind: str, base: str, app: JsonRpcHTTPApp) -> None:
    """Start a long call with a raw client, see its stream begin, and hang up."""
    async with httpx.AsyncClient(base_url=base, timeout=10) as raw:
        if kind == "http+sse-legacy":
            async with raw.stream("GET", "/sse", headers={"accept": "text/event-stream"}) as r:
                # keep the iterator referenced: a collected one closes the connection
                chunks = r.aiter_bytes()
                decoder = SSEDecoder()
                events: list[Any] = []
                while not events:
                    events.extend(decoder.feed(await chunks.__anext__()))
                assert events[0].event == "endpoint"
                accepted = await raw.post(events[0].data, content=SLEEP, headers=POST_HEADERS)
                assert accepted.status_code == 202
                assert len(app.sessions) == 2  # the client's own, and this one
                await chunks.aclose()  # type: ignore[attr-defined]
            # the stream is gone: so is its session
            await wait_until(lambda: len(app.sessions) == 1)
            return
        headers = dict(POST_HEADERS)
        if kind != "http-stateless":
            opened = await raw.post(
                "/rpc", content=b'{"jsonrpc":"2.0","id":0,"method":"echo"}', headers=headers
            )
            headers[SESSION] = opened.headers[SESSION]
        if kind == "http-json":
            # the answer would come as one JSON body: give up waiting for it
            with anyio.move_on_after(0.2):
                await raw.post("/rpc", content=SLEEP, headers=headers)
        else:
            async with raw.stream("POST", "/rpc", content=SLEEP, headers=headers) as r:
                assert r.status_code == 200
                assert r.headers["content-type"].startswith("text/event-stream")
                chunks = r.aiter_bytes()
                assert await chunks.__anext__()  # the stream has begun (priming or comment)
                await chunks.aclose()  # type: ignore[attr-defined]
        if kind != "http-stateless":
            session = app.sessions.get(headers[SESSION])
            assert session is not None
            await wait_until(lambda: session.active_requests == 0)


async def test_echo_server_over_uvicorn(kind: str) -> None:
    app = http_app(kind)
    answers: list[str] = []
    async with running_server(app) as base:
        assert base.startswith("http://127.0.0.1:")
        with anyio.fail_after(20):
            async with client_peer(kind, base, answers) as peer:
                assert await peer.request("echo", {"text": "héllo"}) == {"text": "héllo"}
                assert await peer.request("ask", {"question": "why?"}) == {
                    "question": "why?",
                    "answer": "answer to why?",
                }

                results: dict[int, Any] = {}

                async def call(i: int) -> None:
                    if i % 8 == 0:
                        results[i] = await peer.request("ask", {"question": str(i)})
                    else:
                        results[i] = await peer.request("echo", {"n": i})

                async with anyio.create_task_group() as tg:
                    for i in range(32):
                        tg.start_soon(call, i)
                for i in range(32):
                    expected = (
                        {"question": str(i), "answer": f"answer to {i}"} if i % 8 == 0 else {"n": i}
                    )
                    assert results[i] == expected

                big = {"blob": "x" * (2 * 1024 * 1024), "tail": "🙂"}
                assert await peer.request("echo", big) == big

                await disconnect_mid_stream(kind, base, app)
                # the server is healthy: same client, and a fresh one
                assert await peer.request("echo", ["after"]) == ["after"]
                assert await peer.request("ask", {"question": "still?"}) == {
                    "question": "still?",
                    "answer": "answer to still?",
                }
            async with client_peer(kind, base, answers) as fresh:
                assert await fresh.request("echo", ["fresh"]) == ["fresh"]
            assert active_requests(app) == 0
    assert answers.count("why?") == 1
    assert len(answers) == 1 + 4 + 1


class TokenAuth(httpx.Auth):
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["authorization"] = "Bearer secret"
        yield request


async def verify(token: str) -> Any:
    return "alice" if token == "secret" else None


async def test_auth_and_headers_with_the_transports_own_client() -> None:
    seen: list[tuple[str, str | None, str | None]] = []
    app = http_app("http-sse", auth=BearerAuth(verify))

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            auth = headers.get(b"authorization")
            custom = headers.get(b"x-client")
            seen.append(
                (scope["method"], auth and auth.decode(), custom and custom.decode()),
            )
        await app(scope, receive, send)

    async with running_server(recording) as base:
        with anyio.fail_after(20):
            transport = StreamableHTTPTransport(
                base + "/rpc", auth=TokenAuth(), headers={"x-client": "uvicorn-test"}
            )
            async with transport, Peer(transport) as peer:
                assert await peer.request("echo", [1]) == [1]
                assert await peer.request("echo", [2]) == [2]
                await wait_until(lambda: any(method == "GET" for method, _, _ in seen))
            refused = StreamableHTTPTransport(base + "/rpc")
            async with refused, Peer(refused) as anonymous:
                with pytest.raises(Exception, match="401"):
                    await anonymous.request("echo", [3])
    mine = [entry for entry in seen if entry[2] == "uvicorn-test"]
    assert {method for method, _, _ in mine} == {"POST", "GET", "DELETE"}
    assert all(auth == "Bearer secret" for _, auth, _ in mine)


async def test_running_server_connections_have_tcp_nodelay() -> None:
    """An HTTP response goes out in several writes (headers, then body chunks, SSE
    events); without TCP_NODELAY each exchange waits on Nagle's algorithm and the
    peer's delayed ACK. asyncio sets TCP_NODELAY only on connections accepted from a
    socket whose protocol is ``IPPROTO_TCP``."""
    flags: list[int | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        # uvicorn's send is a method of its per-request cycle, which holds the transport
        transport = getattr(getattr(send, "__self__", None), "transport", None)
        sock = transport.get_extra_info("socket") if transport is not None else None
        flags.append(None if sock is None else sock.getsockopt(IPPROTO_TCP, TCP_NODELAY))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async with running_server(app) as base, httpx.AsyncClient(base_url=base) as client:
        with anyio.fail_after(20):
            assert (await client.get("/")).text == "ok"
    assert len(flags) == 1
    assert flags[0] is not None, "cannot reach the connection's socket through uvicorn"
    assert flags[0] != 0, "TCP_NODELAY is off on connections served by running_server"
