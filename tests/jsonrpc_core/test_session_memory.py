"""What the load soak found, as fast tests: a session that ends gives back everything.

A Streamable HTTP session's POSTs answered as SSE leave their events in the server's
event store (for resumption with ``Last-Event-ID``). Once the session is gone, reaped
after its idle timeout or ended with DELETE, nobody may resume those streams (a
resumption names its session), so they must leave the store too; otherwise an
in-memory store keeps them until ``max_streams`` newer streams push them out, and the
memory of reaped sessions is not reclaimed (the soak's second wave grows by it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from soak.kit import eventually

from jsonrpc_core import InMemoryEventStore
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import MCPServer

pytestmark = pytest.mark.anyio

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"},
    },
}


@asynccontextmanager
async def served(idle_timeout: float) -> AsyncIterator[tuple[httpx.AsyncClient, Any, Any]]:
    server = MCPServer("memory", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    store = InMemoryEventStore()
    app = server.asgi_app(event_store=store, idle_timeout=idle_timeout)
    async with app.running():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", timeout=10
        ) as http:
            yield http, app, store


async def open_session(http: httpx.AsyncClient) -> dict[str, str]:
    """A session that made three SSE-answered requests; its headers."""
    response = await http.post("/mcp", json=INIT, headers=HEADERS)
    assert response.status_code == 200
    headers = {
        **HEADERS,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post("/mcp", json=note, headers=headers)).status_code == 202
    for request_id, method in enumerate(("tools/list", "ping"), 1):
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}}
        response = await http.post("/mcp", json=body, headers=headers)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
    return headers


async def test_a_reaped_sessions_streams_leave_the_event_store() -> None:
    async with served(idle_timeout=0.2) as (http, app, store):
        await open_session(http)
        assert len(store) >= 3
        await eventually(lambda: len(app.sessions) == 0)
        assert len(store) == 0


async def test_a_deleted_sessions_streams_leave_the_event_store() -> None:
    async with served(idle_timeout=600) as (http, app, store):
        headers = await open_session(http)
        assert len(store) >= 3
        assert (await http.delete("/mcp", headers=headers)).status_code == 200
        assert len(app.sessions) == 0
        assert len(store) == 0


async def test_a_live_sessions_streams_stay_resumable() -> None:
    async with served(idle_timeout=600) as (http, app, store):
        await open_session(http)
        await open_session(http)
        assert len(app.sessions) == 2
        assert len(store) >= 6
