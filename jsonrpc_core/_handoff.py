"""`HandoffQueue`: the Peer's queue of requests for its workers, kept by measurement.

Everything else in the core uses anyio's primitives (memory object streams, ``Event``,
``Lock(fast_acquire=True)``, task groups). This one queue stays because replacing it
costs more than the issue allows (#22: keep a primitive only for a loss above 10% on a
headline workload). An anyio memory object stream checkpoints on every ``receive``, so
an idle worker goes once more round the event loop before it waits, and makes an
``Event`` (a backend lookup) per wait. Measured on the 2-core bench machine (busy;
the core's stdio ``echo``, CPU per call of client and server together, the minimum of 5
runs alternating between the trees): with a memory object stream as the Peer's work
queue, 322 µs per call at 1 in flight and 94 µs at 32; with this queue, 223 µs and 68
µs: the stream costs +44% and +38%. (With this queue and anyio everywhere else, against
the core before #22, minimum of 6 alternating runs: 239 against 231 µs, 78 against 74 µs.)

It has the semantics of a memory object stream pair in one object (``WouldBlock``;
``EndOfStream`` once closed and drained; ``ClosedResourceError`` /
``BrokenResourceError``), except that ``send`` and ``receive`` yield to the event loop
only when they have to wait, and waiting costs one future on asyncio (made through the
public ``loop.create_future()``; an anyio ``Event`` on trio). `send_nowait` may be
called from an event-loop callback outside any task (the stdio read callback).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

import anyio

from ._backend import is_asyncio

__all__ = ["HandoffQueue"]

_T = TypeVar("_T")


class _Wakeup:
    """One task waiting for one wake-up."""

    __slots__ = ("_event", "_future")

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self._future: asyncio.Future[None] | None = None
        self._event: anyio.Event | None = None
        if loop is not None:
            self._future = loop.create_future()
        else:
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
        """Woken, and not cancelled first (a cancelled future stays unwoken)."""
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


class HandoffQueue(Generic[_T]):
    """A bounded FIFO between tasks that yields only when a side has to wait."""

    __slots__ = (
        "_capacity",
        "_closed",
        "_getters",
        "_items",
        "_loop",
        "_loop_known",
        "_putters",
        "_receiver_closed",
    )

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: deque[_T] = deque()
        self._getters: deque[_Wakeup] = deque()
        self._putters: deque[_Wakeup] = deque()
        self._closed = False
        self._receiver_closed = False
        # The event loop, looked up at the first wait (a queue may be made outside one).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_known = False

    def __len__(self) -> int:
        return len(self._items)

    @property
    def waiting_receivers(self) -> int:
        """How many receivers wait for an item (not counting ones already woken)."""
        return len(self._getters)

    def _wakeup(self) -> _Wakeup:
        if not self._loop_known:
            self._loop = asyncio.get_running_loop() if is_asyncio() else None
            self._loop_known = True
        return _Wakeup(self._loop)

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
            waiter = self._wakeup()
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
            waiter = self._wakeup()
            self._getters.append(waiter)
            try:
                await waiter.wait()
            except BaseException:
                self._forget(self._getters, waiter)
                raise

    def _forget(self, waiters: deque[_Wakeup], waiter: _Wakeup) -> None:
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
