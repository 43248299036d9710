"""Serving ASGI apps with uvicorn: on 127.0.0.1 unless told otherwise.

Rules: extra keyword arguments go to ``uvicorn.Config`` and override the defaults here.
The keep-alive timeout defaults to `KEEP_ALIVE_TIMEOUT`, above the 5 s for which httpx
(and most client pools) keep an idle connection: with equal timeouts a client can
reuse a connection at the moment the server closes it, and the request fails.

Every connection is bounded in time and size by default: its request head must arrive
within ``header_timeout`` seconds (`HEADER_TIMEOUT`) and be at most `MAX_HEAD_SIZE`
bytes, its body within ``body_timeout`` seconds more (`BODY_TIMEOUT`; a slow body gets
408), or the connection is closed: uvicorn protocol subclasses, see ``_http_deadlines``.
At most `LIMIT_CONCURRENCY` connections and requests are served at once; past that,
new requests get 503. ``header_timeout=None`` or ``body_timeout=None`` relaxes that
deadline to an hour; naming a uvicorn protocol class as ``http=`` turns both off (only
uvicorn's ``"auto"``, ``"httptools"`` and ``"h11"`` protocols get them).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import anyio.to_thread

from ._http_common import ASGIApp
from ._http_deadlines import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_HEAD_SIZE, deadline_protocol

__all__ = ["KEEP_ALIVE_TIMEOUT", "LIMIT_CONCURRENCY", "running_server", "serve"]

KEEP_ALIVE_TIMEOUT = 75.0
"""Seconds an idle HTTP connection stays open on the server (uvicorn's default is 5)."""

_NO_DEADLINE = 3600.0
"""A deadline turned off: still an hour, so no connection is held for ever."""

LIMIT_CONCURRENCY = 1000
"""Connections (or running requests) past which uvicorn answers new requests with 503."""


def _config(
    app: ASGIApp,
    host: str,
    port: int,
    log_level: str,
    header_timeout: float | None = HEADER_TIMEOUT,
    body_timeout: float | None = BODY_TIMEOUT,
    **kwargs: Any,
) -> Any:
    import uvicorn

    options: dict[str, Any] = {
        "lifespan": "on",
        "ws": "none",
        "timeout_graceful_shutdown": 2,
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT,
        "limit_concurrency": LIMIT_CONCURRENCY,
        "h11_max_incomplete_event_size": MAX_HEAD_SIZE,
        "http": "auto",
    }
    options.update(kwargs)
    http = options["http"]
    if http in ("auto", "httptools", "h11"):
        max_head = options["h11_max_incomplete_event_size"] or MAX_HEAD_SIZE
        options["http"] = deadline_protocol(
            http,
            _NO_DEADLINE if header_timeout is None else header_timeout,
            _NO_DEADLINE if body_timeout is None else body_timeout,
            max_head,
        )
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, **options)


def serve(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    header_timeout: float | None = HEADER_TIMEOUT,
    body_timeout: float | None = BODY_TIMEOUT,
    **uvicorn_options: Any,
) -> None:
    """Serve ``app`` until interrupted (blocking; uvicorn runs its own event loop).

    A connection whose request head takes longer than ``header_timeout`` seconds, or
    its body ``body_timeout`` seconds more, is closed (a slow body is answered 408).
    ``uvicorn_options`` go to ``uvicorn.Config`` (e.g. ``timeout_keep_alive``,
    ``limit_concurrency``)."""
    import uvicorn

    config = _config(app, host, port, log_level, header_timeout, body_timeout, **uvicorn_options)
    uvicorn.Server(config).run()


@contextmanager
def _bound_socket(host: str, port: int) -> Generator[socket.socket, None, None]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio only sets TCP_NODELAY on sockets that say they are TCP,
    # and without it every small response waits for Nagle and delayed ACKs (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    try:
        yield sock
    finally:
        sock.close()


@asynccontextmanager
async def running_server(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_level: str = "warning",
    startup_timeout: float = 20.0,
    header_timeout: float | None = HEADER_TIMEOUT,
    body_timeout: float | None = BODY_TIMEOUT,
    **uvicorn_options: Any,
) -> AsyncIterator[str]:
    """Run ``app`` under uvicorn in a background thread; yield its base URL.

    Works from asyncio and trio alike (uvicorn keeps its own loop in the thread).
    ``port=0`` picks a free port. The server is stopped on exit. A connection whose
    request head takes longer than ``header_timeout`` seconds, or its body
    ``body_timeout`` seconds more, is closed (a slow body is answered 408).
    ``uvicorn_options`` go to ``uvicorn.Config`` (e.g. ``timeout_keep_alive``).
    """
    import uvicorn

    with _bound_socket(host, port) as sock:
        bound_port = sock.getsockname()[1]
        config = _config(
            app, host, bound_port, log_level, header_timeout, body_timeout, **uvicorn_options
        )
        server = uvicorn.Server(config)
        failure: list[BaseException] = []

        def run() -> None:
            try:
                server.run(sockets=[sock])
            except BaseException as exc:  # surfaced to the caller below
                failure.append(exc)

        thread = threading.Thread(target=run, name=f"uvicorn-{bound_port}", daemon=True)
        thread.start()
        try:
            with anyio.fail_after(startup_timeout):
                while not server.started:
                    if failure or not thread.is_alive():
                        raise RuntimeError(f"uvicorn failed to start: {failure!r}")
                    await anyio.sleep(0.01)
            display_host = f"[{host}]" if ":" in host else host
            yield f"http://{display_host}:{bound_port}"
        finally:
            server.should_exit = True
            await anyio.to_thread.run_sync(thread.join, 10)
