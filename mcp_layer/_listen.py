"""`Subscription`: the client's end of one ``subscriptions/listen`` stream (2026 era)."""

from __future__ import annotations

from typing import Any

import anyio

from jsonrpc_core import LocalError, RequestId

from .types import SubscriptionFilter

__all__ = ["Subscription"]


class Subscription:
    """One open ``subscriptions/listen``: ``agreed`` is what the server acknowledged;
    iterate it for ``(method, params)`` of each notification. Iteration ends when the
    server ends the subscription; `error` then says why, if it was not graceful."""

    def __init__(self, request_id: RequestId, max_buffered: int) -> None:
        self.id = request_id
        self.agreed: SubscriptionFilter | None = None
        self.error: BaseException | None = None
        self.ended = False
        self._acknowledged = anyio.Event()
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, Any]](max_buffered)

    def acknowledge(self, agreed: SubscriptionFilter) -> None:
        """The server's acknowledgement arrived."""
        self.agreed = agreed
        self._acknowledged.set()

    async def wait_acknowledged(self) -> None:
        """Wait for the acknowledgement; raise if the subscription failed first."""
        await self._acknowledged.wait()
        if self.agreed is None:
            raise self.error or LocalError("the subscription ended before it was acknowledged")

    async def deliver(self, method: str, params: Any) -> None:
        """A notification for this subscription (dropped once it has ended)."""
        try:
            await self._send.send((method, params))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def end(self, error: BaseException | None) -> None:
        """The listen request finished (``error`` ``None``: gracefully)."""
        self.ended = True
        self.error = error
        self._send.close()
        self._acknowledged.set()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, Any]:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
