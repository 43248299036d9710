"""A request must arrive in time: uvicorn protocols with header and body deadlines.

uvicorn bounds an idle keep-alive connection (``timeout_keep_alive``) but not a slow
request: a client sending one header or body byte every few seconds holds its
connection, and its place under ``limit_concurrency``, forever. `deadline_protocol`
returns a subclass of uvicorn's httptools or h11 protocol that closes a connection
whose request head is not complete within ``header_timeout`` seconds, or whose body
is not complete within ``body_timeout`` seconds of its head (answering 408 first if
the app has not started a response), and (httptools, which has no head-size limit of
its own) answers 431 to a head larger than ``max_head_size`` bytes.

Rules (what the subclasses rely on, read in uvicorn 0.54 for both protocols; h11 also
has ``conn``, httptools ``pipeline``):

1. The protocol has ``loop``, ``transport``, ``cycle`` (``None`` before the first
   request; then the latest ``RequestResponseCycle``, with ``response_started`` and
   ``response_complete``), and ``connection_made``/``data_received``/
   ``connection_lost``/``on_response_complete`` methods that the subclass extends,
   calling ``super()`` first (httptools: also its parser callbacks). A closed
   transport makes uvicorn answer ``http.disconnect`` to the app's ``receive()``.
2. At most two timers per connection, each armed only while the server waits on the
   client: the head timer from ``connection_made`` (a connection that sends nothing
   is closed too) and from the first read that leaves a later head incomplete,
   cancelled once the head is complete; the body timer from the first read that
   leaves a body incomplete, cancelled once it is complete (answered or not).
   uvicorn's own keep-alive timer still covers an idle connection between requests.
   A request read whole in one ``data_received`` (the common case) arms no timer.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

__all__ = ["BODY_TIMEOUT", "HEADER_TIMEOUT", "MAX_HEAD_SIZE", "deadline_protocol"]

HEADER_TIMEOUT = 10.0
"""Seconds a request head (request line and headers) may take to arrive."""

BODY_TIMEOUT = 30.0
"""Seconds a request body may take to arrive, counted from the end of its head."""

MAX_HEAD_SIZE = 64 * 1024
"""Bytes a request head may have (httptools; h11 takes ``h11_max_incomplete_event_size``)."""


def _close_response(status: bytes, message: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(message)).encode() + b"\r\nconnection: close\r\n\r\n"
    ) + message


_HEAD_TOO_LARGE = _close_response(b"431 Request Header Fields Too Large", b"Request head too large")
_BODY_TOO_SLOW = _close_response(b"408 Request Timeout", b"Request body took too long")


class _ReadDeadlines:
    """The timers of rule 2, shared by both protocol subclasses (a mixin)."""

    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any
    _head_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _arm_body_timer(self) -> None:
        if self._body_timer is None:
            self._body_timer = self.loop.call_later(self.body_timeout, self._body_timed_out)

    def _cancel_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _cancel_timers(self) -> None:
        self._cancel_head_timer()
        self._cancel_body_timer()

    def _answered(self) -> bool:
        cycle = self.cycle
        return cycle is None or bool(cycle.response_complete)

    def _head_timed_out(self) -> None:
        self._head_timer = None
        self._cancel_body_timer()
        if not self.transport.is_closing():
            self.transport.close()

    def _body_timed_out(self) -> None:
        self._body_timer = None
        self._cancel_head_timer()
        if self.transport.is_closing():
            return
        cycle = self.cycle
        # A pipelined request (httptools queues it in ``pipeline``) waits behind a
        # response that may be under way: a 408 would land inside that response.
        if cycle is not None and not cycle.response_started and not getattr(self, "pipeline", ()):
            # The app is still reading the body: it sees http.disconnect, and its
            # sends are dropped once the transport is closed (rule 1).
            cycle.response_started = True
            self.transport.write(_BODY_TOO_SLOW)
        self.transport.close()


def _httptools_class(
    header_timeout: float, body_timeout: float, max_head_size: int
) -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class DeadlineHttpToolsProtocol(_ReadDeadlines, HttpToolsProtocol):
        """uvicorn's httptools protocol with read deadlines and a head-size limit.

        ``_in_head`` and ``_in_message`` follow httptools' callbacks: from
        ``on_message_begin`` to ``on_headers_complete`` and ``on_message_complete``."""

        _in_head = False
        _in_message = False
        _head_bytes = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_timers()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_head:
                self._arm_head_timer()
                self._head_bytes += len(data)
                if self._head_bytes > max_head_size and not self.transport.is_closing():
                    self._cancel_timers()
                    self.transport.write(_HEAD_TOO_LARGE)
                    self.transport.close()
            elif self._in_message:
                self._arm_body_timer()
            elif self._answered():
                # Bytes between requests that start no head (blank lines) cancelled
                # uvicorn's keep-alive timer: the head timer bounds them instead.
                self._arm_head_timer()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head = self._in_message = True
            self._head_bytes = 0

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._cancel_head_timer()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_message = False
            self._cancel_body_timer()
            super().on_message_complete()

    DeadlineHttpToolsProtocol.header_timeout = header_timeout
    DeadlineHttpToolsProtocol.body_timeout = body_timeout
    return DeadlineHttpToolsProtocol


def _h11_class(header_timeout: float, body_timeout: float) -> type[asyncio.Protocol]:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class DeadlineH11Protocol(_ReadDeadlines, H11Protocol):
        """uvicorn's h11 protocol with read deadlines (h11 itself bounds a head's size:
        ``h11_max_incomplete_event_size``). h11's ``their_state`` tells the phase:
        ``IDLE`` until a head is complete, ``SEND_BODY`` while its body comes."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_timers()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow_state(reading=True)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._follow_state(reading=False)

        def _follow_state(self, *, reading: bool) -> None:
            state = self.conn.their_state
            if state is h11.SEND_BODY:
                self._cancel_head_timer()
                self._arm_body_timer()
            elif state is h11.IDLE and reading and self._answered():
                self._arm_head_timer()
            else:
                self._cancel_timers()

    DeadlineH11Protocol.header_timeout = header_timeout
    DeadlineH11Protocol.body_timeout = body_timeout
    return DeadlineH11Protocol


@functools.cache
def deadline_protocol(
    kind: str,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    max_head_size: int = MAX_HEAD_SIZE,
) -> type[asyncio.Protocol]:
    """uvicorn's ``"httptools"`` or ``"h11"`` protocol (``"auto"``: httptools if it is
    installed) with read deadlines; pass it as ``uvicorn.Config(http=...)``."""
    if kind == "auto":
        try:
            import httptools  # noqa: F401
        except ImportError:  # pragma: no cover - httptools is a dependency
            kind = "h11"
        else:
            kind = "httptools"
    if kind == "httptools":
        return _httptools_class(header_timeout, body_timeout, max_head_size)
    if kind == "h11":
        return _h11_class(header_timeout, body_timeout)
    raise ValueError(f"no header deadline for uvicorn protocol {kind!r}")
