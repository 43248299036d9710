"""The one interface every transport implements, and the in-memory pair.

A transport moves whole JSON-RPC messages. It encodes what it sends and parses what it
receives with the core's `encode`/`parse`, so a peer never sees bytes. Failures are
raised, never delivered as messages: ``receive`` raises ``anyio.EndOfStream`` when the
other side finished, `TransportError` when the transport broke.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._wire import Incoming, Message, RequestId, encode, encode_batch, parse

__all__ = ["MemoryMessageStream", "MessageStream", "Received", "encode_payload", "memory_pair"]


@dataclass(slots=True)
class Received:
    """A parsed payload and what the transport knows about where it came from.

    ``info`` is transport-specific (an HTTP transport puts the request headers,
    session and authenticated principal there); it reaches handlers as ``ctx.info``.
    """

    payload: Incoming
    info: Any = None


@runtime_checkable
class MessageStream(Protocol):
    """A bidirectional stream of JSON-RPC messages."""

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        """Send one message or a batch.

        ``related_request_id`` names the incoming request this message belongs to
        (a progress notification, a callback request, the response itself); transports
        that multiplex per request, like Streamable HTTP, route by it.
        """
        ...

    async def receive(self) -> Received:
        """The next payload; raises ``anyio.EndOfStream`` once the other side closed."""
        ...

    async def aclose(self) -> None:
        """Close the stream; pending and later ``receive`` calls end."""
        ...


def encode_payload(payload: Message | list[Message]) -> bytes:
    """Serialise a message or a batch."""
    return encode_batch(payload) if isinstance(payload, list) else encode(payload)


class MemoryMessageStream:
    """One end of an in-memory connection; messages cross it as bytes, like on a wire."""

    def __init__(
        self,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        await self._send_stream.send(encode_payload(payload))

    async def send_raw(self, data: bytes) -> None:
        """Send bytes as they are (for tests that speak broken JSON-RPC)."""
        await self._send_stream.send(data)

    async def receive(self) -> Received:
        return Received(parse(await self._receive_stream.receive()))

    async def receive_raw(self) -> bytes:
        """The next frame as bytes, unparsed."""
        return await self._receive_stream.receive()

    async def aclose(self) -> None:
        await self._send_stream.aclose()
        await self._receive_stream.aclose()


def memory_pair(max_buffer_size: int = 32) -> tuple[MemoryMessageStream, MemoryMessageStream]:
    """Two connected in-memory message streams (client end, server end)."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](max_buffer_size)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](max_buffer_size)
    return MemoryMessageStream(a_send, a_receive), MemoryMessageStream(b_send, b_receive)


# -- light synchronisation for the hot path (not exported; the layers import it here) ----
#
# anyio's Event and memory object streams look the backend up on every call and yield
# to the event loop on every send and receive. The message paths below only need a
# wake-up, so on asyncio they use bare futures and on trio they fall back to anyio.

_T = TypeVar("_T")


async def _yield_once() -> None:
    """Let every other ready task run once (a checkpoint, cheap on asyncio)."""
    if asyncio._get_running_loop() is not None:
        await asyncio.sleep(0)
    else:
        await anyio.lowlevel.checkpoint()


class Waiter:
    """One task waiting for one wake-up (a future on asyncio, an anyio Event on trio)."""

    __slots__ = ("_event", "_future")

    def __init__(self) -> None:
        loop = asyncio._get_running_loop()
        if loop is not None:
            self._future: asyncio.Future[None] | None = loop.create_future()
            self._event: anyio.Event | None = None
        else:
            self._future = None
            self._event = anyio.Event()

    def wake(self) -> None:
        future = self._future
        if future is not None:
            if not future.done():
                future.set_result(None)
        else:
            assert self._event is not None
            self._event.set()

    @property
    def woken(self) -> bool:
        future = self._future
        if future is not None:
            return future.done() and not future.cancelled()
        assert self._event is not None
        return self._event.is_set()

    async def wait(self) -> None:
        if self._future is not None:
            await self._future
        else:
            assert self._event is not None
            await self._event.wait()


class FifoLock:
    """A FIFO mutex without an owner check, taken without a scheduling point when free.

    (anyio's Lock looks the current task up on every acquire and release, a measurable
    share of a busy stream's CPU.) A release with tasks waiting hands the lock straight
    to the first of them, so waiters are served in order and a newcomer cannot overtake
    them; a waiter cancelled after it was handed the lock passes it on, and one cancelled
    before is skipped.
    """

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[Waiter] = deque()

    def locked(self) -> bool:
        """Whether some task holds the lock."""
        return self._locked

    def try_acquire(self) -> bool:
        """Take the lock if it is free; whether it was."""
        if self._locked:
            return False
        self._locked = True
        return True

    def acquire_nowait(self) -> None:
        """Take the lock, or raise `anyio.WouldBlock`."""
        if self._locked:
            raise anyio.WouldBlock
        self._locked = True

    async def acquire(self) -> None:
        """Take the lock, waiting (FIFO) while another task holds it."""
        if not self._locked:
            self._locked = True
            return
        waiter = Waiter()
        self._waiters.append(waiter)
        try:
            await waiter.wait()
        except BaseException:
            if waiter.woken:
                self.release()  # handed over, but this task will not use it
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give the lock to the next waiter, or free it."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            waiter.wake()
            if waiter.woken:  # not a waiter whose wait was cancelled meanwhile
                return
        self._locked = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class Flag:
    """A one-shot event whose waiting machinery is only made when somebody waits."""

    __slots__ = ("_is_set", "_waiters")

    def __init__(self) -> None:
        self._is_set = False
        self._waiters: list[Waiter] | None = None

    def set(self) -> None:
        if self._is_set:
            return
        self._is_set = True
        waiters, self._waiters = self._waiters, None
        if waiters:
            for waiter in waiters:
                waiter.wake()

    def is_set(self) -> bool:
        return self._is_set

    async def wait(self) -> None:
        if self._is_set:
            return
        waiter = Waiter()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter.wait()
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)


class _Queue(Generic[_T]):
    """A bounded FIFO between tasks with the semantics of an anyio memory object stream
    pair (``WouldBlock``, ``EndOfStream`` once closed and drained, ``ClosedResourceError``
    / ``BrokenResourceError``), except that ``send`` and ``receive`` only yield to the
    event loop when they have to wait."""

    __slots__ = ("_capacity", "_closed", "_getters", "_items", "_putters", "_receiver_closed")

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: deque[_T] = deque()
        self._getters: deque[Waiter] = deque()
        self._putters: deque[Waiter] = deque()
        self._closed = False
        self._receiver_closed = False

    def __len__(self) -> int:
        return len(self._items)

    @property
    def waiting_receivers(self) -> int:
        """How many receivers wait for an item (not counting ones already woken)."""
        return len(self._getters)

    def send_nowait(self, item: _T) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._receiver_closed:
            raise anyio.BrokenResourceError
        if len(self._items) >= self._capacity:
            raise anyio.WouldBlock
        self._items.append(item)
        if self._getters:
            self._getters.popleft().wake()

    async def send(self, item: _T) -> None:
        while True:
            try:
                self.send_nowait(item)
                return
            except anyio.WouldBlock:
                pass
            waiter = Waiter()
            self._putters.append(waiter)
            try:
                await waiter.wait()
            except BaseException:
                self._forget(self._putters, waiter)
                raise

    def receive_nowait(self) -> _T:
        if self._items:
            item = self._items.popleft()
            if self._putters:
                self._putters.popleft().wake()
            return item
        if self._receiver_closed:
            raise anyio.ClosedResourceError
        if self._closed:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> _T:
        while True:
            if self._items or self._receiver_closed or self._closed:
                return self.receive_nowait()
            waiter = Waiter()
            self._getters.append(waiter)
            try:
                await waiter.wait()
            except BaseException:
                self._forget(self._getters, waiter)
                raise

    def _forget(self, waiters: deque[Waiter], waiter: Waiter) -> None:
        """A waiter left (cancelled): pass on a wake-up it received but cannot use."""
        try:
            waiters.remove(waiter)
        except ValueError:
            pass
        if waiter.woken and waiters:
            waiters.popleft().wake()

    def close(self) -> None:
        """The sending side is done: receivers get ``EndOfStream`` once it is drained."""
        self._closed = True
        self._wake_all()

    def close_receiver(self) -> None:
        """The receiving side is gone: senders get ``BrokenResourceError``."""
        self._receiver_closed = True
        self._items.clear()
        self._wake_all()

    def _wake_all(self) -> None:
        for waiters in (self._getters, self._putters):
            while waiters:
                waiters.popleft().wake()

    async def __aenter__(self) -> _Queue[_T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close_receiver()

    def __aiter__(self) -> _Queue[_T]:
        return self

    async def __anext__(self) -> _T:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
