"""Open the same JSON-RPC interaction over every transport.

`connect(kind)` yields a `Connection`: the client end's message stream, connected to a
server that serves the methods of examples/jsonrpc/echo_server.py, plus a way to kill
that server. Transport tests are written once against it and run over every kind.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx

from jsonrpc_core import (
    DEFAULT_MAX_MESSAGE_SIZE,
    FdReceiveStream,
    FdSendStream,
    HTTPServerOptions,
    HTTPSSETransport,
    InMemoryEventStore,
    JsonRpcHTTPApp,
    MessageStream,
    NdjsonStream,
    Peer,
    Request,
    Response,
    SessionPolicy,
    StreamableHTTPTransport,
    memory_pair,
    spawn_stdio,
)
from jsonrpc_core.testing import StreamingASGITransport

ROOT = Path(__file__).resolve().parent.parent
ECHO_SERVER = ROOT / "examples" / "jsonrpc" / "echo_server.py"

STREAM_TRANSPORTS = ["memory", "pipes", "subprocess"]
HTTP_TRANSPORTS = ["http-sse", "http-json", "http-stateless", "http+sse-legacy"]
TRANSPORTS = STREAM_TRANSPORTS + HTTP_TRANSPORTS
FRAMED = {"pipes", "subprocess"}


def load_example(path: Path) -> ModuleType:
    """Import an example script as a module (examples are not a package)."""
    name = "example_" + path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


echo_example = load_example(ECHO_SERVER)


@dataclass
class Connection:
    """The client's end of a connection and a handle on the server behind it."""

    kind: str
    stream: Any
    kill_server: Callable[[], Awaitable[None]]

    async def send_raw(self, data: bytes) -> None:
        """Write bytes to the server exactly as given (plus nothing)."""
        await self.stream.send_raw(data)


def _pipe_pair(max_message_size: int) -> tuple[NdjsonStream, NdjsonStream, list[int]]:
    client_read, server_write = os.pipe()
    server_read, client_write = os.pipe()
    client = NdjsonStream(
        FdReceiveStream(client_read),
        FdSendStream(client_write, close_fd=True),
        max_message_size=max_message_size,
    )
    server = NdjsonStream(
        FdReceiveStream(server_read),
        FdSendStream(server_write, close_fd=True),
        max_message_size=max_message_size,
    )
    return client, server, [client_read, server_read]


def start_on_any_request(payload: Any) -> bool:
    """Test session policy: a request without a session id opens a session."""
    return isinstance(payload, Request)


async def serve_echo(stream: MessageStream) -> None:
    """Serve the echo example's methods on one connection."""
    await Peer(stream, echo_example.registry, name="http-server").run()


def http_app(kind: str, **options: Any) -> JsonRpcHTTPApp:
    """The echo methods behind the HTTP server, configured for ``kind``."""
    sessions = None if kind == "http-stateless" else SessionPolicy(is_start=start_on_any_request)
    return JsonRpcHTTPApp(
        serve_echo,
        HTTPServerOptions(
            path="/rpc",
            sessions=sessions,
            json_response=kind == "http-json",
            event_store=InMemoryEventStore() if kind == "http-sse" else None,
            retry_interval_ms=50,
            legacy_sse_path="/sse" if kind == "http+sse-legacy" else None,
            **options,
        ),
    )


@asynccontextmanager
async def connect_http(kind: str, **options: Any) -> AsyncIterator[Connection]:
    """An in-process HTTP connection of ``kind`` (no sockets)."""
    app = http_app(kind, **options)
    transport = StreamingASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

        async def kill() -> None:
            app.close()

        stream: Any
        if kind == "http+sse-legacy":
            stream = HTTPSSETransport("http://127.0.0.1/sse", client=client)
        else:
            stream = StreamableHTTPTransport(
                "http://127.0.0.1/rpc", client=client, default_retry_ms=50
            )
        async with stream:
            if kind not in ("http-stateless", "http+sse-legacy"):
                # the first request opens the session, as MCP's initialize does
                await stream.send(Request(0, "echo", ["open session"]))
                with anyio.fail_after(10):
                    while not isinstance((await stream.receive()).payload, Response):
                        pass
            yield Connection(kind, stream, kill)


@asynccontextmanager
async def connect(
    kind: str, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> AsyncIterator[Connection]:
    """A connection of ``kind`` to a server serving the echo example's methods."""
    if kind in HTTP_TRANSPORTS:
        async with connect_http(kind) as connection:
            yield connection
        return
    if kind == "subprocess":
        command = [sys.executable, str(ECHO_SERVER), "--max-message-size", str(max_message_size)]
        async with spawn_stdio(command, shutdown_timeout=5) as process:

            async def kill() -> None:
                process.process.kill()

            yield Connection(kind, process, kill)
        return

    read_fds: list[int] = []
    if kind == "memory":
        client_stream: MessageStream
        client_stream, server_stream = memory_pair()
    elif kind == "pipes":
        client_stream, server_stream, read_fds = _pipe_pair(max_message_size)  # type: ignore[assignment]
    else:
        raise ValueError(kind)
    server = Peer(server_stream, echo_example.registry, name="server")
    server_scope = anyio.CancelScope()

    async def serve() -> None:
        with server_scope:
            await server.run()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)

        async def kill() -> None:
            server_scope.cancel()
            await server_stream.aclose()

        try:
            yield Connection(kind, client_stream, kill)
        finally:
            server_scope.cancel()
            with anyio.CancelScope(shield=True):
                await client_stream.aclose()
                await server_stream.aclose()
            for fd in read_fds:
                os.close(fd)
