"""Serve an A2A benchmark app with uvicorn on 127.0.0.1, the same way for every contender.

The socket is bound first (port 0, ``IPPROTO_TCP`` so that asyncio sets TCP_NODELAY on
accepted connections), the app is built knowing its base URL, and ``LISTENING <port>`` is
printed once uvicorn has started. The uvicorn settings are those of `jsonrpc_core.serve`
(lifespan on, no websockets, log level warning, access log off). SIGINT/SIGTERM stop it.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = ["serve_app"]

HOST = "127.0.0.1"
STARTUP_POLLS = 4_000
"""Bound on the start-up wait: 4,000 polls of 5 ms (20 s)."""


async def _serve(app: Any, sock: socket.socket) -> None:
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        host=HOST,
        port=port,
        log_level="warning",
        access_log=False,
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


def serve_app(build: Callable[[str], Any]) -> None:
    """Bind 127.0.0.1:0, build the app with ``build(base_url)``, serve until stopped."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    try:
        app = build(f"http://{HOST}:{sock.getsockname()[1]}")
        asyncio.run(_serve(app, sock))
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT that stopped it
        pass
    finally:
        sock.close()
