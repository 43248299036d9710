"""Every HTTP server we ship refuses DNS-rebinding and oversized bodies, on every route.

The servers: `MCPServer.asgi_app` (Streamable HTTP and HTTP+SSE, stateful and
stateless), `A2AServer.asgi_app` (JSON-RPC, HTTP+JSON routes, agent card) and a bare
`jsonrpc_core.JsonRpcHTTPApp` with extra routes. For each route: a foreign ``Host`` or
``Origin`` is 403 before anything else happens; a body over the limit is 413, whether
announced by ``Content-Length`` or streamed without one; and the server keeps serving.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
import pytest
from a2a_fixtures.harness import make_card

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater
from jsonrpc_core import (
    HTTPServerOptions,
    JsonRpcHTTPApp,
    MessageStream,
    MethodRegistry,
    Peer,
    SessionPolicy,
)
from jsonrpc_core.http import HTTPRequest, HTTPResponse, Route
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import MCPServer

pytestmark = pytest.mark.anyio

LIMIT = 4096
BASE = "http://127.0.0.1"
EVIL = [
    ({"host": "evil.example"}, "Host"),
    ({"host": "127.0.0.1.evil.example"}, "Host"),
    ({"origin": "http://evil.example"}, "Origin"),
    ({"origin": "http://127.0.0.1.evil.example"}, "Origin"),
    ({"origin": "null"}, "Origin"),
]
JSON_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.complete("ok")


def mcp_server() -> MCPServer:
    server = MCPServer("sec", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    return server


@asynccontextmanager
async def mcp_app(stateless: bool) -> AsyncIterator[Any]:
    app = mcp_server().asgi_app(stateless=stateless, max_body_size=LIMIT)
    async with app.running():
        yield app


@asynccontextmanager
async def a2a_app() -> AsyncIterator[Any]:
    server = A2AServer(make_card(push=True), agent, max_body_size=LIMIT)
    async with server.running():
        yield server.asgi_app()


@asynccontextmanager
async def core_app() -> AsyncIterator[Any]:
    registry = MethodRegistry()
    registry.on("echo", lambda params, ctx: params)

    async def serve(stream: MessageStream) -> None:
        await Peer(stream, registry).run()

    async def route(request: HTTPRequest) -> HTTPResponse:
        return HTTPResponse.json({"size": len(request.body)})

    options = HTTPServerOptions(
        path="/rpc",
        sessions=SessionPolicy(is_start=lambda payload: True),
        legacy_sse_path="/sse",
        max_body_size=LIMIT,
        routes=[Route("/upload", ("POST",), route)],
    )
    app = JsonRpcHTTPApp(serve, options)
    async with app.running():
        yield app


# (name, app factory, [(verb, path)] routes, [(path)] body routes)
Factory = Callable[[], AbstractAsyncContextManager[Any]]
SERVERS: list[tuple[str, Factory, list[tuple[str, str]], list[str]]] = [
    (
        "mcp",
        lambda: mcp_app(False),
        [
            ("POST", "/mcp"),
            ("GET", "/mcp"),
            ("DELETE", "/mcp"),
            ("GET", "/sse"),
            ("POST", "/messages"),
        ],
        ["/mcp", "legacy:/sse"],
    ),
    ("mcp-stateless", lambda: mcp_app(True), [("POST", "/mcp"), ("GET", "/mcp")], ["/mcp"]),
    (
        "a2a",
        a2a_app,
        [
            ("POST", "/"),
            ("GET", "/.well-known/agent-card.json"),
            ("GET", "/.well-known/agent.json"),
            ("POST", "/rest/message:send"),
            ("POST", "/rest/message:stream"),
            ("GET", "/rest/tasks"),
            ("GET", "/rest/tasks/t-1"),
            ("POST", "/rest/tasks/t-1:cancel"),
            ("GET", "/rest/tasks/t-1:subscribe"),
            ("POST", "/rest/tasks/t-1/pushNotificationConfigs"),
            ("GET", "/rest/extendedAgentCard"),
        ],
        ["/", "/rest/message:send", "/rest/tasks/t-1/pushNotificationConfigs"],
    ),
    (
        "core",
        core_app,
        [("POST", "/rpc"), ("GET", "/rpc"), ("GET", "/sse"), ("POST", "/upload")],
        ["/rpc", "/upload", "legacy:/sse"],
    ),
]
IDS = [s[0] for s in SERVERS]


@asynccontextmanager
async def client(factory: Factory) -> AsyncIterator[httpx.AsyncClient]:
    async with factory() as app:
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=10) as http:
            yield http


@pytest.mark.parametrize("server", SERVERS, ids=IDS)
async def test_foreign_host_or_origin_is_403_on_every_route(server: Any) -> None:
    _, factory, routes, _ = server
    async with client(factory) as http:
        for verb, path in routes:
            for headers, named in EVIL:
                response = await http.request(
                    verb, path, headers={**JSON_HEADERS, **headers}, content=b"{}"
                )
                assert response.status_code == 403, (verb, path, headers, response.text)
                assert named in response.text
        # The same routes from a loopback page are not refused as forbidden.
        for verb, path in routes:
            if verb == "GET" and path.endswith(".json"):
                response = await http.get(path, headers={"origin": "http://localhost:5173"})
                assert response.status_code == 200, (path, response.text)


@pytest.mark.parametrize("server", SERVERS, ids=IDS)
async def test_body_over_the_limit_is_413_and_the_server_keeps_serving(server: Any) -> None:
    _, factory, _, body_paths = server
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * LIMIT + b'"}}'

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(big), 1000):
            yield big[start : start + 1000]

    async with client(factory) as http, AsyncExitStack() as streams:
        for path in body_paths:
            if path.startswith("legacy:"):
                # An HTTP+SSE session: its POST endpoint is announced on the stream.
                stream = await streams.enter_async_context(http.stream("GET", path[7:]))
                lines = stream.aiter_lines()
                async for line in lines:
                    if line.startswith("data: "):
                        path = line[6:]
                        break
            response = await http.post(path, content=big, headers=JSON_HEADERS)
            assert response.status_code == 413, (path, response.text)
            response = await http.post(path, content=chunks(), headers=JSON_HEADERS)
            assert "content-length" not in response.request.headers
            assert response.status_code == 413, (path, response.text)
        # Still serving: a small body on the first route is not refused for its size.
        response = await http.post(body_paths[0], content=b"{}", headers=JSON_HEADERS)
        assert response.status_code not in (413, 500, 503), response.text


async def test_loopback_is_the_default_bind_of_every_server() -> None:
    import inspect

    from jsonrpc_core import serve

    for func in (serve, MCPServer.run, A2AServer.run):
        host = inspect.signature(func).parameters["host"].default
        assert host == "127.0.0.1", func
