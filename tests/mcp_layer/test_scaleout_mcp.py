"""MCP Streamable HTTP servers as several processes on one PostgreSQL event store: a
session's stream (2025-11-25, handshake era) is resumed with ``Last-Event-ID`` on a
replica that does not hold the session, while the owner still writes it and after the
owner was killed; nothing is lost or repeated. Requests of a session go to the replica
that holds it (session affinity); only its streams can be resumed anywhere.

The replicas run under uvicorn (asyncio); the test side is plain HTTP, so it runs on
asyncio and trio alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from scaleout.processes import Replica, replicas

from jsonrpc_core.http import SSEDecoder, SSEEvent

pytestmark = pytest.mark.anyio

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def pair(pg_module_dsn: str) -> Iterator[list[Replica]]:
    """Two replicas on one database, shared by this module's tests."""
    with replicas("mcp_replica.py", [pg_module_dsn], 2) as started:
        yield started


async def open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "scale-out test", "version": "1"},
        },
    }
    response = await http.post(f"{url}/mcp", json=init, headers=HEADERS)
    assert response.status_code == 200
    headers = {
        **HEADERS,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(f"{url}/mcp", json=note, headers=headers)).status_code == 202
    return headers


def gated_call(request_id: int, count: int, gate: Path) -> dict[str, Any]:
    params = {"name": "gated", "arguments": {"count": count, "gate": str(gate)}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def summary(events: list[SSEEvent]) -> list[str]:
    """Each message as ``step N`` (a log notification) or ``result: TEXT``."""
    out = []
    for event in events:
        if not event.data:
            continue
        message = json.loads(event.data)
        if message.get("method") == "notifications/message":
            out.append(str(message["params"]["data"]))
        else:
            out.append("result: " + message["result"]["content"][0]["text"])
    return out


async def read_until(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], body: dict[str, Any], messages: int
) -> tuple[list[SSEEvent], str | None]:
    """POST ``body``, read its SSE stream until ``messages`` messages came, then drop the
    connection (as a client that lost it would); the events and the last event id."""
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    async with http.stream("POST", f"{url}/mcp", json=body, headers=headers) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        async for chunk in response.aiter_bytes():
            events.extend(decoder.feed(chunk))
            if len([e for e in events if e.data]) >= messages:
                break
    return events, decoder.last_event_id


async def resume(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], last_event_id: str
) -> tuple[int, list[SSEEvent]]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    get_headers = {**headers, "accept": "text/event-stream", "last-event-id": last_event_id}
    async with http.stream("GET", f"{url}/mcp", headers=get_headers) as response:
        if response.status_code != 200:
            return response.status_code, []
        async for chunk in response.aiter_bytes():
            events.extend(decoder.feed(chunk))
    return 200, events


async def test_a_stream_is_resumed_on_another_replica_while_the_owner_writes(
    pair: list[Replica], tmp_path: Path
) -> None:
    owner, other = pair
    gate = tmp_path / "gate"
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=60.0)) as http:
        headers = await open_session(http, owner.url)
        with anyio.fail_after(60):
            first, last_id = await read_until(http, owner.url, headers, gated_call(1, 6, gate), 3)
            assert summary(first) == ["step 0", "step 1", "step 2"]
            assert last_id is not None
            gate.touch()  # the owner goes on writing while the client resumes elsewhere
            status, rest = await resume(http, other.url, headers, last_id)
        assert status == 200
        assert summary(rest) == ["step 3", "step 4", "step 5", "result: done on r0"]
        ids = [e.id for e in [*first, *rest] if e.data]
        assert len(ids) == len(set(ids)) == 7

        # Another session id, or the session ended on its owner: nothing to resume.
        stranger = {**headers, "mcp-session-id": "0" * 32}
        assert (await resume(http, other.url, stranger, last_id))[0] == 404
        deleted = await http.delete(f"{owner.url}/mcp", headers=headers)
        assert deleted.status_code == 200
        assert (await resume(http, other.url, headers, last_id))[0] == 404


async def test_a_stream_outlives_the_replica_that_wrote_it(
    pair: list[Replica], pg_module_dsn: str, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.touch()
    other = pair[1]
    with replicas("mcp_replica.py", [pg_module_dsn], 1, first=9) as (owner,):
        await _outlive(owner, other, gate)


async def _outlive(owner: Replica, other: Replica, gate: Path) -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=60.0)) as http:
        headers = await open_session(http, owner.url)
        with anyio.fail_after(60):
            # The whole answer was written, but this client kept only the first message.
            events, _ = await read_until(http, owner.url, headers, gated_call(7, 4, gate), 5)
            assert summary(events) == ["step 0", "step 1", "step 2", "step 3", "result: done on r9"]
            kept = next(e.id for e in events if e.data)
            assert kept is not None
            owner.kill()
            status, rest = await resume(http, other.url, headers, kept)
    assert status == 200
    assert summary(rest) == ["step 1", "step 2", "step 3", "result: done on r9"]
