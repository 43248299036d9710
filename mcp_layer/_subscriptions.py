"""Change notifications for ``subscriptions/listen`` (MCP 2026-07-28), through a bus.

A server publishes what changed (a tool list, a resource, a task) as a `ChangeEvent`;
every open ``subscriptions/listen`` request is a subscriber of the bus and forwards
the events its client opted in to, tagged with the subscription's id. The bus is
pluggable so that a server running as several processes can share one (Redis,
NATS, ...): implement `SubscriptionBus`. `InMemorySubscriptionBus` serves one process.

Rules:

1. A subscriber is registered before its acknowledgement is sent, so nothing published
   after the acknowledgement is missed.
2. A subscriber that does not keep up is dropped: its stream ends and the listen
   request ends gracefully (a ``complete`` result), so its client knows to listen
   again. Publishing never waits for a slow subscriber.
3. `SubscriptionBus.close` ends every subscription gracefully (server shutdown).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .types import SubscriptionFilter

__all__ = ["ChangeEvent", "InMemorySubscriptionBus", "SubscriptionBus", "wants"]

logger = logging.getLogger("mcp_layer.subscriptions")

ChangeKind = Literal["tools", "prompts", "resources", "resource", "task"]


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """Something a client may be told about.

    ``kind`` is ``tools``/``prompts``/``resources`` (a list changed), ``resource`` (the
    resource at ``uri`` changed) or ``task`` (``task`` is the task's new state, as
    ``tasks/get`` shows it, and ``task_id`` names it).
    """

    kind: ChangeKind
    uri: str | None = None
    task_id: str | None = None
    task: dict[str, Any] | None = None


def wants(selected: SubscriptionFilter, event: ChangeEvent) -> bool:
    """Whether a subscription with the agreed filter ``selected`` gets ``event``."""
    if event.kind == "tools":
        return bool(selected.tools_list_changed)
    if event.kind == "prompts":
        return bool(selected.prompts_list_changed)
    if event.kind == "resources":
        return bool(selected.resources_list_changed)
    if event.kind == "resource":
        return event.uri is not None and event.uri in (selected.resource_subscriptions or ())
    return event.task_id is not None and event.task_id in (selected.task_ids or ())


class SubscriptionBus(Protocol):
    """Where change events meet the open subscriptions."""

    async def publish(self, event: ChangeEvent) -> None:
        """Deliver ``event`` to every current subscriber (never waits for a slow one)."""
        ...

    def subscribe(self) -> Any:
        """An async context manager yielding an async iterator of events."""
        ...

    async def close(self) -> None:
        """End every subscription (their iterators stop)."""
        ...


class InMemorySubscriptionBus:
    """A `SubscriptionBus` for one process; each subscriber buffers ``max_buffered``."""

    def __init__(self, max_buffered: int = 64) -> None:
        self.max_buffered = max_buffered
        self._subscribers: set[MemoryObjectSendStream[ChangeEvent]] = set()

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions are open."""
        return len(self._subscribers)

    async def publish(self, event: ChangeEvent) -> None:
        for send in list(self._subscribers):
            try:
                send.send_nowait(event)
            except anyio.WouldBlock:
                logger.warning("a subscriber fell %d events behind; dropping it", self.max_buffered)
                self._subscribers.discard(send)
                send.close()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._subscribers.discard(send)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[MemoryObjectReceiveStream[ChangeEvent]]:
        send, receive = anyio.create_memory_object_stream[ChangeEvent](self.max_buffered)
        self._subscribers.add(send)
        try:
            async with receive:
                yield receive
        finally:
            self._subscribers.discard(send)
            send.close()

    async def close(self) -> None:
        subscribers, self._subscribers = self._subscribers, set()
        for send in subscribers:
            send.close()
