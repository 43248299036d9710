"""Opening a `ClientSession` to a server: a command (stdio), a URL, or a server object."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_core import memory_pair, spawn_stdio

from ._client import ClientSession

if TYPE_CHECKING:
    import httpx

    from jsonrpc_core.http import AnyAsyncClient

    from ._server import MCPServer

__all__ = ["connect", "connect_http", "connect_memory", "connect_sse", "connect_stdio"]


@asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    max_message_size: int | None = None,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """Start a stdio server process and open an initialized session to it."""
    spawn_options: dict[str, Any] = {"env": env, "cwd": cwd}
    if max_message_size is not None:
        spawn_options["max_message_size"] = max_message_size
    async with spawn_stdio(list(command), **spawn_options) as process:
        async with ClientSession(process, **session_options) as session:
            yield session


@asynccontextmanager
async def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = 30.0,
    client: AnyAsyncClient | None = None,
    max_body_size: int | None = None,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """Open a session over Streamable HTTP.

    ``max_body_size`` caps each JSON answer or error body, in decoded bytes (16 MiB by
    default).

    ``timeout`` bounds every exchange, however slowly the server sends: each request
    in all (the handshake's too; it is the session's ``request_timeout`` unless one is
    given) and each HTTP request the transport makes on its own; past it
    `jsonrpc_core.RequestTimeout` is raised and the connection closed. A tool that
    rightly takes longer needs a larger ``timeout`` on its call (``math.inf``: none).
    """
    from jsonrpc_core import StreamableHTTPTransport
    from jsonrpc_core.http import DEFAULT_MAX_BODY_SIZE

    from ._headers import SESSION_HEADER

    session_options.setdefault("request_timeout", timeout)

    # The standalone GET stream waits for the handshake: like every request after it,
    # it must carry the negotiated MCP-Protocol-Version header.
    async with StreamableHTTPTransport(
        url,
        headers=headers,
        auth=auth,
        timeout=timeout,
        client=client,
        standalone_stream=False,
        max_body_size=max_body_size or DEFAULT_MAX_BODY_SIZE,
        session_header=SESSION_HEADER,
    ) as stream:
        async with ClientSession(stream, **session_options) as session:
            await stream.open_standalone_stream(wait=min(5.0, timeout))
            yield session


@asynccontextmanager
async def connect_sse(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = 30.0,
    client: AnyAsyncClient | None = None,
    max_body_size: int | None = None,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """Open a session over the 2024-11-05 HTTP+SSE transport; ``timeout`` bounds every
    exchange as in `connect_http` (the event stream until its ``endpoint`` event), and
    ``max_body_size`` caps each body as there."""
    from jsonrpc_core import HTTPSSETransport
    from jsonrpc_core.http import DEFAULT_MAX_BODY_SIZE

    session_options.setdefault("request_timeout", timeout)

    async with HTTPSSETransport(
        url,
        headers=headers,
        auth=auth,
        timeout=timeout,
        client=client,
        max_body_size=max_body_size or DEFAULT_MAX_BODY_SIZE,
    ) as stream:
        async with ClientSession(stream, **session_options) as session:
            yield session


@asynccontextmanager
async def connect_memory(server: MCPServer, **session_options: Any) -> AsyncIterator[ClientSession]:
    """Open a session to a server object in this process (for tests)."""
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(server.serve, server_end)
        try:
            async with ClientSession(client_end, **session_options) as session:
                yield session
        finally:
            task_group.cancel_scope.cancel()


@asynccontextmanager
async def connect(
    target: str | Sequence[str] | MCPServer, *, sse: bool = False, **options: Any
) -> AsyncIterator[ClientSession]:
    """A session to ``target``: a URL (Streamable HTTP, or HTTP+SSE with ``sse=True``), a
    command as a list of arguments (stdio), or an `MCPServer` object (in memory)."""
    from ._server import MCPServer

    if isinstance(target, MCPServer):
        async with connect_memory(target, **options) as session:
            yield session
    elif isinstance(target, str):
        opener = connect_sse if sse else connect_http
        async with opener(target, **options) as session:
            yield session
    else:
        async with connect_stdio(target, **options) as session:
            yield session
