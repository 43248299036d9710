"""`PostgresSubscriptionBus`: ``subscriptions/listen`` (MCP 2026-07-28) across replicas.
Two buses on one database stand for two replicas; the bus runs the driver in threads,
so these tests run on asyncio and trio."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from jsonrpc_core import Notification, Request, Response, memory_pair
from mcp_layer import ChangeEvent, MCPServer, PostgresSubscriptionBus
from mcp_layer.types import (
    CLIENT_CAPABILITIES_META_KEY,
    MODERN_PROTOCOL_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
)

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def buses(dsn: str, count: int) -> AsyncIterator[list[PostgresSubscriptionBus]]:
    made = [PostgresSubscriptionBus(dsn) for _ in range(count)]
    try:
        yield made
    finally:
        for bus in made:
            await bus.close()


async def test_events_published_on_one_replica_reach_the_others(pg_dsn: str) -> None:
    big_task = {"taskId": "t1", "status": "working", "statusMessage": "x" * 9000}
    async with buses(pg_dsn, 2) as (a, b):
        async with b.subscribe() as on_b, a.subscribe() as on_a:
            await a.publish(ChangeEvent("tools"))
            await b.publish(ChangeEvent("resource", uri="file:///x"))
            await a.publish(ChangeEvent("task", task_id="t1", task=big_task))  # > 8000 bytes
            with anyio.fail_after(10):
                got_b = [await on_b.receive() for _ in range(3)]
                got_a = [await on_a.receive() for _ in range(3)]
        assert got_a == got_b  # every replica, one order
        assert {e.kind for e in got_b} == {"tools", "resource", "task"}
        task_events = [e for e in got_b if e.kind == "task"]
        assert task_events[0].task == big_task
        assert a.subscriber_count == b.subscriber_count == 0


async def test_close_ends_every_subscription(pg_dsn: str) -> None:
    async with buses(pg_dsn, 1) as (bus,):
        async with bus.subscribe() as events:
            await bus.close()
            with anyio.fail_after(5):
                assert [e async for e in events] == []


def modern(method: str, request_id: int, params: dict[str, Any]) -> Request:
    meta = {
        PROTOCOL_VERSION_META_KEY: MODERN_PROTOCOL_VERSIONS[0],
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    return Request(request_id, method, {**params, "_meta": meta})


async def test_listen_on_one_server_hears_a_change_made_on_another(pg_dsn: str) -> None:
    async with buses(pg_dsn, 2) as (bus_a, bus_b):
        server_a = MCPServer("a", subscriptions=bus_a)
        server_b = MCPServer("b", subscriptions=bus_b)
        for server in (server_a, server_b):
            server.tool()(lambda: "hi")
        client, server_end = memory_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server_b.serve, server_end)
            listen = {"notifications": {"toolsListChanged": True}}
            await client.send(modern("subscriptions/listen", 1, listen))
            with anyio.fail_after(10):
                first = (await client.receive()).payload
                assert isinstance(first, Notification)
                assert first.method == "notifications/subscriptions/acknowledged"
                await server_a.notify_tools_changed()  # on the other replica
                changed = (await client.receive()).payload
                assert isinstance(changed, Notification)
                assert changed.method == "notifications/tools/list_changed"
                await bus_b.close()  # shutdown: the listen request completes
                done = (await client.receive()).payload
                assert isinstance(done, Response) and done.id == 1
            await client.aclose()
            tg.cancel_scope.cancel()
