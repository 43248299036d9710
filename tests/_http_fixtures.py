"""What the in-process HTTP tests (test_http_client, test_http_server, test_http_caller,
test_a2a_client_jsonrpc_path, ...) share.

`HTTPTestServer` is a `JsonRpcHTTPApp` serving one `Peer` per session over a small
registry (``echo``, ``whoami``, ``script``); each test module subclasses it to add its
own methods and bookkeeping. `client_for` opens an httpx client on its app through
`StreamingASGITransport` (no sockets); tests steer long-running handlers through named
gates (`anyio.Event`) instead of sleeping. `ASGIPost` drives one POST through an app's
ASGI interface directly; `peer_app` is an app serving a `Peer` per connection, and
`count_to` a streamed method. `ScriptedPeer` is an httpx transport answering each POST
with a function of its JSON body (`json_response` and `sse_response` build the answers).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
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
SESSION = "session-id"
TIMEOUT = 10


def peer_app(registry: MethodRegistry, **options: Any) -> JsonRpcHTTPApp:
    """A `JsonRpcHTTPApp` (`HTTPServerOptions` of ``options``) that serves each connection
    with a `Peer` over ``registry``."""

    async def serve(stream: MessageStream) -> None:
        await Peer(stream, registry).run()

    return JsonRpcHTTPApp(serve, HTTPServerOptions(**options))


async def count_to(params: Any, ctx: Any) -> AsyncIterator[Any]:
    """A streamed method (list it in ``streaming_methods``): ``{"n": 1}`` up to
    ``{"n": params["to"]}``."""

    async def results() -> AsyncIterator[Any]:
        for n in range(params["to"]):
            yield {"n": n + 1}

    return results()


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


class ScriptedBody(httpx.AsyncByteStream):
    """A response body sent as the given chunks (then, with ``fail``, a read error);
    counts the chunks handed out and records whether it was closed."""

    def __init__(self, chunks: Sequence[bytes], fail: bool = False) -> None:
        self.chunks = chunks
        self.fail = fail
        self.closed = False
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk
        if self.fail:
            raise httpx.ReadError("connection reset")

    async def aclose(self) -> None:
        self.closed = True


Answer = Callable[[dict[str, Any]], httpx.Response]
"""Builds the response to one POST from its JSON body."""


class ScriptedPeer(httpx.AsyncBaseTransport):
    """Answers each POST with ``answer(request JSON)``; keeps the requests and the
    `ScriptedBody` of each streamed answer."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []
        self.bodies: list[ScriptedBody] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        self.requests.append(request)
        response = self.answer(json.loads(request.content))
        if isinstance(response.stream, ScriptedBody):
            self.bodies.append(response.stream)
        return response


def json_response(
    body: bytes, status: int = 200, content_type: str = "application/json"
) -> httpx.Response:
    """An answer with ``body`` as it is."""
    return httpx.Response(status, headers={"content-type": content_type}, content=body)


def sse_response(
    chunks: Sequence[bytes], status: int = 200, *, fail: bool = False
) -> httpx.Response:
    """An event-stream answer sent as ``chunks`` (a `ScriptedBody`)."""
    return httpx.Response(
        status, headers={"content-type": "text/event-stream"}, stream=ScriptedBody(chunks, fail)
    )


class ASGIPost:
    """One POST through an app's ASGI interface: the body is read once, then the app may
    listen for a disconnect (counted in ``listens``), which comes once the answer is
    complete (at once with ``disconnect``). Every message the app sends is kept in
    ``sent``; ``on_send`` sees each as it is sent."""

    def __init__(self, body: bytes, *, path: str = PATH, disconnect: bool = False) -> None:
        self.body = body
        self.path = path
        self.disconnect = disconnect
        self.sent: list[dict[str, Any]] = []
        self.listens = 0
        self._body_read = False
        self._complete = anyio.Event()
        self.on_send: Callable[[dict[str, Any]], Awaitable[None]] | None = None

    async def receive(self) -> dict[str, Any]:
        if not self._body_read:
            self._body_read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        self.listens += 1
        if not self.disconnect:
            await self._complete.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Any) -> None:
        self.sent.append(dict(message))
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self._complete.set()
        if self.on_send is not None:
            await self.on_send(message)

    async def run(self, app: JsonRpcHTTPApp) -> None:
        """Send the request to ``app`` and return once it has answered."""
        scope = {
            "type": "http",
            "method": "POST",
            "path": self.path,
            "query_string": b"",
            "client": ("127.0.0.1", 50000),
            "headers": [
                (b"host", b"127.0.0.1"),
                (b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream"),
            ],
        }
        with anyio.fail_after(TIMEOUT):
            await app(scope, self.receive, self.send)

    @property
    def body_messages(self) -> list[dict[str, Any]]:
        """The ``http.response.body`` messages sent, in order."""
        return [m for m in self.sent if m["type"] == "http.response.body"]

    @property
    def bodies(self) -> list[bytes]:
        """The bytes of each body message, in order."""
        return [m.get("body", b"") for m in self.body_messages]
