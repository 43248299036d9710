"""Serve an ASGI app on 127.0.0.1 with uvicorn, the same way for both SDKs.

The uvicorn settings are those of `jsonrpc_core.serve` (lifespan on, no websockets,
log level warning). The socket is bound before uvicorn starts, on port 0, and the port
is printed as ``LISTENING <port>`` once uvicorn reports that it has started.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any

import uvicorn

__all__ = ["serve_on_free_port"]

STARTUP_POLLS = 4_000
"""Bound on the start-up wait: 4,000 polls of 5 ms (20 s)."""


async def _serve(app: Any, sock: socket.socket) -> None:
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    for _ in range(STARTUP_POLLS):
        if server.started or task.done():
            break
        await asyncio.sleep(0.005)
    if server.started:
        sys.stdout.write(f"LISTENING {port}\n")
        sys.stdout.flush()
    await task


def serve_on_free_port(app: Any) -> None:
    """Bind 127.0.0.1:0, serve ``app`` until SIGINT/SIGTERM."""
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on accepted sockets whose
    # proto is IPPROTO_TCP, and a socket made with the default proto 0 would leave Nagle
    # on (each SSE response would then wait ~40 ms for the client's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    try:
        asyncio.run(_serve(app, sock))
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT that stopped it
        pass
    finally:
        sock.close()
