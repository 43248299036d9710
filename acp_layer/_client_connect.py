"""Opening a `ClientConnection`: on any message stream, or to a spawned agent process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from jsonrpc_core import DEFAULT_MAX_MESSAGE_SIZE, MessageStream, Peer, WireTap, spawn_stdio

from ._client import Client
from ._client_connection import ClientConnection
from ._client_server import ClientServer
from ._errors import ACP_ERRORS
from ._rpc import cancel_request_message

__all__ = ["connect_agent", "spawn_agent"]


@asynccontextmanager
async def connect_agent(
    client: Client,
    stream: MessageStream,
    *,
    initialize: bool = True,
    unstable: bool = False,
    tap: WireTap | None = None,
    request_timeout: float | None = None,
) -> AsyncIterator[ClientConnection]:
    """A `ClientConnection` to the agent at the other end of ``stream``.

    With ``initialize=True`` (the default) the ``initialize`` exchange is done before the
    connection is handed over. ``request_timeout`` bounds every call to the agent (none by
    default: prompt turns can be long).
    """
    if tap is not None:
        stream = tap.wrap(stream, local="client", remote="agent", transport="acp")
    async with anyio.create_task_group() as task_group:
        peer = Peer(
            stream,
            name="acp-client",
            request_timeout=request_timeout,
            on_outgoing_cancel=cancel_request_message,
            errors=ACP_ERRORS,
        )
        conn = ClientConnection(client, peer, task_group)
        client.on_connect(conn)
        peer.registry = ClientServer(conn).registry(unstable)
        try:
            async with peer:
                if initialize:
                    await conn.initialize()
                yield conn
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose()
            task_group.cancel_scope.cancel()


@asynccontextmanager
async def spawn_agent(
    command: Sequence[str],
    client: Client,
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    cwd: str | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    on_stderr: Callable[[str], Any] | None = None,
    initialize: bool = True,
    unstable: bool = False,
    tap: WireTap | None = None,
    request_timeout: float | None = None,
) -> AsyncIterator[ClientConnection]:
    """Start an agent process and yield an (initialized) `ClientConnection` to it.

    The agent inherits this process's full environment plus ``env`` (``inherit_env=False``
    passes only ``env``); its stderr lines are logged on ``jsonrpc_core.stdio``, passed to
    ``on_stderr`` and kept in ``connection.process.stderr_tail``. A message over
    ``max_message_size`` bytes (default 16 MiB) is answered with an error and skipped; the
    connection lives on. On exit the agent's stdin is closed, then it is terminated.
    """
    async with spawn_stdio(
        command,
        env=env,
        inherit_env=inherit_env,
        cwd=cwd,
        max_message_size=max_message_size,
        on_stderr=on_stderr,
    ) as process:
        async with connect_agent(
            client,
            process,
            initialize=initialize,
            unstable=unstable,
            tap=tap,
            request_timeout=request_timeout,
        ) as conn:
            conn.process = process
            yield conn
