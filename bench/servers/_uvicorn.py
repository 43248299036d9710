"""Serve a benchmark ASGI app with uvicorn on 127.0.0.1, the same way for every server.

The socket is bound first (port 0, ``IPPROTO_TCP`` so that asyncio sets TCP_NODELAY on
accepted connections), the app is built knowing its base URL, and ``LISTENING <port>`` is
printed once uvicorn has started. The uvicorn settings are those of `jsonrpc_core.serve`
(lifespan on, no websockets, log level warning). SIGINT/SIGTERM stop it.

Imported by the server scripts of this folder, which run with it on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = ["HOST", "lifespan", "read_body", "serve"]

HOST = "127.0.0.1"
STARTUP_POLLS = 4_000
"""Bound on the start-up wait: 4,000 polls of 5 ms (20 s)."""


async def lifespan(receive: Any, send: Any) -> None:
    """Answer an ASGI ``lifespan`` scope of an app with nothing to start or stop:
    acknowledge startup, then shutdown, and return."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_body(receive: Any) -> bytes:
    """The whole body of an ASGI ``http`` request (every ``http.request`` message)."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


async def _serve(app: Any, sock: socket.socket, access_log: bool) -> None:
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        host=HOST,
        port=port,
        log_level="warning",
        access_log=access_log,
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


def serve(build: Callable[[str], Any], *, access_log: bool) -> None:
    """Bind 127.0.0.1:0, build the app with ``build(base_url)``, serve until stopped.

    ``access_log`` is uvicorn's setting of that name (its default is on).
    """
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on accepted sockets whose
    # proto is IPPROTO_TCP, and a socket made with the default proto 0 would leave Nagle
    # on (each SSE response would then wait ~40 ms for the client's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    try:
        app = build(f"http://{HOST}:{sock.getsockname()[1]}")
        asyncio.run(_serve(app, sock, access_log))
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT that stopped it
        pass
    finally:
        sock.close()
