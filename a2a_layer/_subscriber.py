"""One consumer's stream of a task's events (the runtime's rule 2: bounded, cut off when slow)."""

from __future__ import annotations

import logging
from collections import deque

import anyio

from jsonrpc_core import JsonRpcError

from .types import StreamResponse

__all__ = ["SubscriberItem", "_Subscriber"]

logger = logging.getLogger("a2a_layer.runtime")

SubscriberItem = StreamResponse | JsonRpcError
"""What a subscriber receives: an event, or the error that ends its stream."""


class _Subscriber:
    """One stream of events for one consumer (bounded; see the runtime's rule 2).

    A queue without a scheduling point per item: `offer` never blocks, and the consumer
    takes queued items without giving up the event loop first (it waits only when the
    queue is empty). Use it as ``async with sub: async for item in sub``.
    """

    __slots__ = ("_buffer", "_closed", "_gone", "_items", "_wakeup")

    def __init__(self, buffer: int) -> None:
        self._buffer = buffer
        self._items: deque[SubscriberItem] = deque()
        self._closed = False  # no more items will come (the queued ones still do)
        self._gone = False  # the consumer stopped reading
        self._wakeup: anyio.Event | None = None

    def offer(self, item: SubscriberItem) -> bool:
        """Queue ``item``; ``False`` (and the stream closed) if the consumer is gone or slow."""
        if self._closed or self._gone:
            return False
        if self._wakeup is None and len(self._items) >= self._buffer:
            logger.info("a subscriber fell behind and was cut off")
            self.close()
            return False
        self._items.append(item)
        self._wake()
        return True

    @property
    def pending(self) -> int:
        """How many items wait for the consumer."""
        return len(self._items)

    def close(self) -> None:
        """No more items: the consumer gets the queued ones, then the stream ends."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        wakeup = self._wakeup
        if wakeup is not None:
            self._wakeup = None
            wakeup.set()

    async def __aenter__(self) -> _Subscriber:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._gone = True
        self._items.clear()

    def __aiter__(self) -> _Subscriber:
        return self

    async def __anext__(self) -> SubscriberItem:
        items = self._items
        while not items:
            if self._closed or self._gone:
                raise StopAsyncIteration
            wakeup = self._wakeup = anyio.Event()
            try:
                await wakeup.wait()
            finally:
                if self._wakeup is wakeup:
                    self._wakeup = None
        return items.popleft()
