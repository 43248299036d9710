"""A tiny round-robin TCP proxy on 127.0.0.1, for putting replicas behind one address.

Each accepted connection goes to the next backend in turn (a backend that refuses the
connection is skipped, as a load balancer's health check would); bytes are copied both
ways until either side closes. HTTP clients that open one connection per request
(``httpx.Limits(max_keepalive_connections=0)``) thus spread their requests over the
replicas. Runs on asyncio and trio alike (anyio).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketStream

__all__ = ["RoundRobinProxy", "round_robin_proxy"]


class RoundRobinProxy:
    """Backends by URL; `routed` counts the connections each got, `last` the latest's."""

    def __init__(self, backends: Sequence[str]) -> None:
        self.backends = [
            (urlsplit(b).hostname or "127.0.0.1", urlsplit(b).port or 80) for b in backends
        ]
        self.routed = [0] * len(self.backends)
        self.last = -1  # the backend of the latest connection
        self._next = 0

    async def _connect(self) -> SocketStream:
        for _ in range(len(self.backends)):
            index = self._next % len(self.backends)
            self._next += 1
            host, port = self.backends[index]
            try:
                stream = await anyio.connect_tcp(host, port)
            except OSError:
                continue
            self.routed[index] += 1
            self.last = index
            return stream
        raise OSError("no backend accepts connections")

    async def handle(self, client: SocketStream) -> None:
        async with client:
            try:
                backend = await self._connect()
            except OSError:
                return
            async with backend, anyio.create_task_group() as tg:

                async def pipe(source: SocketStream, sink: SocketStream) -> None:
                    try:
                        async for chunk in source:
                            await sink.send(chunk)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        pass
                    tg.cancel_scope.cancel()

                tg.start_soon(pipe, client, backend)
                tg.start_soon(pipe, backend, client)


@asynccontextmanager
async def round_robin_proxy(backends: Sequence[str]) -> AsyncIterator[tuple[str, RoundRobinProxy]]:
    """Serve a `RoundRobinProxy` on a free port of 127.0.0.1; yield its URL and itself."""
    proxy = RoundRobinProxy(backends)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, proxy.handle)
        try:
            yield f"http://127.0.0.1:{port}", proxy
        finally:
            tg.cancel_scope.cancel()
