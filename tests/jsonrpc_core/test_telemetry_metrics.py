"""The duration histograms: ``{protocol}.{client,server}.operation.duration`` for every
request and notification, ``{protocol}.{client,server}.session.duration`` per connection,
with low-cardinality attributes only (no ids, no URIs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _otel import Recorded, otel
from _otel_apps import ReadingAgent, Steps, build, run_acp
from a2a_fixtures.harness import BASE, in_process, make_card

from a2a_layer import A2AClient, A2AServer
from mcp_layer import connect

pytestmark = pytest.mark.anyio

__all__ = ["otel"]


def points(otel: Recorded, name: str, **attributes: object) -> list[object]:
    """The data points of ``name`` whose attributes include ``attributes``."""
    return [
        point
        for point in otel.histograms().get(name, [])
        if all(point.attributes.get(k) == v for k, v in attributes.items())
    ]


async def test_mcp_operation_and_session_durations(otel: Recorded) -> None:
    async with connect(build()) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("add", {"a": 2, "b": 3})
        await client.call_tool("boom")
    for side in ("client", "server"):
        name = f"mcp.{side}.operation.duration"
        (calls,) = points(
            otel, name, **{"mcp.method.name": "tools/call", "gen_ai.tool.name": "add"}
        )
        assert calls.count == 2 and calls.sum >= 0  # type: ignore[attr-defined]
        assert calls.attributes["gen_ai.operation.name"] == "execute_tool"  # type: ignore[attr-defined]
        assert calls.attributes["mcp.protocol.version"] == "2025-11-25"  # type: ignore[attr-defined]
        assert not any(k.endswith(".id") for k in calls.attributes)  # type: ignore[attr-defined]
        (failed,) = points(otel, name, **{"gen_ai.tool.name": "boom"})
        assert failed.attributes["error.type"] == "tool_error"  # type: ignore[attr-defined]
        assert points(otel, name, **{"mcp.method.name": "notifications/initialized"})
        (session,) = points(otel, f"mcp.{side}.session.duration")
        assert session.count == 1  # type: ignore[attr-defined]


async def test_acp_operation_and_session_durations(otel: Recorded, tmp_path: Path) -> None:
    agent = ReadingAgent()
    agent.root = tmp_path
    await run_acp(tmp_path, agent)
    for side in ("client", "server"):
        name = f"acp.{side}.operation.duration"
        turns = points(otel, name, **{"acp.method.name": "session/prompt"})
        assert sum(p.count for p in turns) == 2  # type: ignore[attr-defined]
        assert any(p.attributes.get("error.type") for p in turns)  # type: ignore[attr-defined]
        # The agent's fs/read_text_file is a client operation of the agent's end.
        reads = points(otel, name, **{"acp.method.name": "fs/read_text_file"})
        assert len(reads) == 1
        assert points(otel, f"acp.{side}.session.duration")


async def test_a2a_operation_durations(otel: Recorded) -> None:
    server = A2AServer(make_card(), Steps())
    async with in_process(server) as http:
        async with A2AClient.connect(BASE, http=http, bindings=("JSONRPC",)) as client:
            await client.send("build")
    for side in ("client", "server"):
        (sent,) = points(
            otel, f"a2a.{side}.operation.duration", **{"a2a.method.name": "SendMessage"}
        )
        assert sent.count == 1  # type: ignore[attr-defined]
        assert sent.attributes["gen_ai.operation.name"] == "invoke_agent"  # type: ignore[attr-defined]
        assert "a2a.task.id" not in sent.attributes  # type: ignore[attr-defined]
