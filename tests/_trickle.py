"""A raw TCP server on 127.0.0.1 that answers HTTP requests one byte at a time, forever.

`TrickleServer` reads each request (head and ``Content-Length`` body); ``answer`` (an
async function) decides what to do with it: return the bytes of a whole response to
send at once (the connection then stays open for the next request), or ``None`` to
trickle: one byte every
``interval`` seconds of an endless answer in ``mode``:

- ``"head"``: a status line and then one header line that never ends;
- ``"body"``: a complete head (``Content-Length`` far ahead, ``content_type``), then body
  bytes that never reach it;
- ``"continue"``: ``HTTP/1.1 100 Continue`` interim responses, one after another.

It counts the connections it accepted and the ones the client closed (`closed_by_client`);
`all_closed` is set whenever no connection is left open, and `trickles_closed` when no
trickled answer is (a trickle ends only when the client closes its connection), so a test
can wait for the client to have closed it (nothing keeps reading it).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc

__all__ = ["MODES", "TrickleServer", "response", "trickling"]

MODES = ("head", "body", "continue")

Answer = Callable[["TrickleServer", bytes, bytes], Awaitable["bytes | None"]]
"""(server, request head, request body) -> a whole response to send, or None to trickle;
``server.current`` is the connection the request came on (an event stream's, say)."""


def _endless(mode: str, content_type: str) -> Iterator[int]:
    if mode == "head":
        start = b"HTTP/1.1 200 OK\r\nx-slow: "
        return itertools.chain(start, itertools.repeat(ord("a")))
    if mode == "body":
        head = (
            b"HTTP/1.1 200 OK\r\ncontent-type: " + content_type.encode() + b"\r\n"
            b"content-length: 100000000\r\n\r\n"
        )
        return itertools.chain(head, itertools.repeat(ord(" ")))
    assert mode == "continue"
    return itertools.cycle(b"HTTP/1.1 100 Continue\r\n\r\n")


class TrickleServer:
    """See the module docstring; ``url`` once served (``async with trickling(...)``)."""

    def __init__(
        self,
        mode: str,
        *,
        answer: Answer | None = None,
        interval: float = 0.2,
        content_type: str = "application/json",
    ) -> None:
        assert mode in MODES
        self.mode = mode
        self.answer = answer
        self.interval = interval
        self.content_type = content_type
        self.url = ""
        self.accepted = 0
        self.open = 0
        self.closed_by_client = 0
        self.trickled = 0  # requests answered by trickling
        self.current: anyio.abc.SocketStream | None = None
        self.all_closed = anyio.Event()
        self.trickling = anyio.Event()  # set once a trickled answer has begun
        self.trickles_open = 0
        self.trickles_closed = anyio.Event()  # set when no trickled answer is left open

    async def _read_request(
        self, stream: anyio.abc.SocketStream, buffer: bytearray
    ) -> tuple[bytes, bytes] | None:
        while b"\r\n\r\n" not in buffer:
            try:
                buffer += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return None
        end = buffer.index(b"\r\n\r\n") + 4
        head = bytes(buffer[:end])
        del buffer[:end]
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(buffer) < length:
            try:
                buffer += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return None
        body = bytes(buffer[:length])
        del buffer[:length]
        return head, body

    async def _trickle(self, stream: anyio.abc.SocketStream) -> None:
        """One byte per interval until the client closes the connection."""
        self.trickled += 1
        self.trickles_open += 1
        self.trickling.set()
        try:
            await self._send_slowly(stream)
        finally:
            self.trickles_open -= 1
            if not self.trickles_open:
                self.trickles_closed.set()

    async def _send_slowly(self, stream: anyio.abc.SocketStream) -> None:
        for byte in _endless(self.mode, self.content_type):
            try:
                await stream.send(bytes([byte]))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return
            # Pacing, and watching for the client's end at the same time.
            with anyio.move_on_after(self.interval):
                try:
                    await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    return

    async def handle(self, stream: anyio.abc.SocketStream) -> None:
        self.accepted += 1
        self.open += 1
        self.all_closed = anyio.Event() if self.all_closed.is_set() else self.all_closed
        try:
            buffer = bytearray()
            while True:
                request = await self._read_request(stream, buffer)
                if request is None:
                    break
                self.current = stream
                whole = None if self.answer is None else await self.answer(self, *request)
                if whole is None:
                    await self._trickle(stream)
                    break
                await stream.send(whole)
            self.closed_by_client += 1
        finally:
            await stream.aclose()
            self.open -= 1
            if not self.open:
                self.all_closed.set()


@asynccontextmanager
async def trickling(
    mode: str,
    *,
    answer: Answer | None = None,
    interval: float = 0.2,
    content_type: str = "application/json",
) -> AsyncIterator[TrickleServer]:
    """A `TrickleServer` listening on 127.0.0.1 while in the block."""
    server = TrickleServer(mode, answer=answer, interval=interval, content_type=content_type)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    server.url = f"http://127.0.0.1:{port}"
    async with listener, anyio.create_task_group() as task_group:
        task_group.start_soon(listener.serve, server.handle)
        try:
            yield server
        finally:
            task_group.cancel_scope.cancel()


def response(status: int, body: bytes = b"", content_type: str = "application/json") -> bytes:
    """A whole keep-alive HTTP/1.1 response."""
    reason = {200: "OK", 202: "Accepted", 404: "Not Found"}.get(status, "Status")
    head = f"HTTP/1.1 {status} {reason}\r\ncontent-length: {len(body)}\r\n"
    if body:
        head += f"content-type: {content_type}\r\n"
    return head.encode() + b"\r\n" + body
