"""What the in-process HTTP tests (test_http_client, test_http_server) share.

`HTTPTestServer` is a `JsonRpcHTTPApp` serving one `Peer` per session over a small
registry (``echo``, ``whoami``, ``script``); each test module subclasses it to add its
own methods and bookkeeping. `client_for` opens an httpx client on its app through
`StreamingASGITransport` (no sockets); tests steer long-running handlers through named
gates (`anyio.Event`) instead of sleeping.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from jsonrpc_core import (
    HTTPServerOptions,
    JsonRpcHTTPApp,
    MessageStream,
    MethodRegistry,
    Peer,
    Request,
    SessionPolicy,
)
from jsonrpc_core.testing import StreamingASGITransport

BASE = "http://127.0.0.1"
PATH = "/rpc"
SESSION = "mcp-session-id"
TIMEOUT = 10


def start_on_any_request(payload: Any) -> bool:
    return isinstance(payload, Request)


class HTTPTestServer:
    """A `JsonRpcHTTPApp` plus the handles tests need on its insides.

    ``peers`` holds every server-side Peer (one per session), ``gates`` the events
    that scripted handlers wait on, ``completed`` the ids of finished ``script``
    calls, and ``http_calls`` the number of HTTP requests the app is still serving.
    ``options`` override the defaults (path ``/rpc``, a session per request, 50 ms
    retry interval).
    """

    def __init__(self, **options: Any) -> None:
        self.peers: list[Peer] = []
        self.gates: dict[str, anyio.Event] = {}
        self.completed: list[Any] = []
        self.http_calls = 0
        settings: dict[str, Any] = {
            "path": PATH,
            "sessions": SessionPolicy(is_start=start_on_any_request),
            "retry_interval_ms": 50,
        }
        settings.update(options)
        self.options = HTTPServerOptions(**settings)
        self.app = JsonRpcHTTPApp(self.serve, self.options)

    def gate(self, name: str) -> anyio.Event:
        if name not in self.gates:
            self.gates[name] = anyio.Event()
        return self.gates[name]

    @property
    def peer(self) -> Peer:
        return self.peers[-1]

    async def serve(self, stream: MessageStream) -> None:
        peer = Peer(stream, self.registry(), name="http-server")
        self.peers.append(peer)
        await peer.run()

    def registry(self) -> MethodRegistry:
        """``echo``, ``whoami`` and ``script``; subclasses add their own methods."""
        registry = MethodRegistry()
        server = self

        def echo(params: Any, ctx: Any) -> Any:
            return ctx.raw_params

        def whoami(params: Any, ctx: Any) -> Any:
            return {"principal": ctx.info.principal, "session": ctx.info.session_id}

        async def script(params: Any, ctx: Any) -> Any:
            """Run ``params["ops"]``: note, wait:<gate>, close, fail."""
            notes = 0
            for op in params["ops"]:
                if op == "note":
                    notes += 1
                    await ctx.peer.notify("progress", {"n": notes})
                elif op.startswith("wait:"):
                    await server.gate(op[5:]).wait()
                elif op == "close":
                    ctx.info.close_sse_stream()
                elif op == "fail":
                    raise RuntimeError("scripted failure")
            server.completed.append(ctx.request_id)
            return {"notes": notes}

        registry.on("echo", echo)
        registry.on("whoami", whoami)
        registry.on("script", script)
        return registry

    def saw(self, scope: Any) -> None:
        """Called with every HTTP request's ASGI scope before the app serves it."""

    async def asgi(self, scope: Any, receive: Any, send: Any) -> None:
        """The app, counting the HTTP requests it is serving."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.saw(scope)
        self.http_calls += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.http_calls -= 1


@asynccontextmanager
async def client_for(server: HTTPTestServer) -> AsyncIterator[httpx.AsyncClient]:
    transport = StreamingASGITransport(server.asgi)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        with anyio.fail_after(TIMEOUT):
            yield client


async def wait_until(predicate: Any, *, timeout: float = 5, interval: float = 0.01) -> None:
    """Poll ``predicate`` until it holds (short sleeps, bounded by ``timeout``)."""
    with anyio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110 - polling state the app does not signal
            await anyio.sleep(interval)
