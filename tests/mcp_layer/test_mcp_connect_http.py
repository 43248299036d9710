"""`mcp_layer.connect_http` against a server that drops what it sends while no standalone
stream is open (as the official TypeScript SDK does): the standalone GET must be answered
before the first request of the session goes out."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import connect

pytestmark = pytest.mark.anyio


class SlowStandaloneServer:
    """A minimal Streamable HTTP MCP server that records what arrives, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        if method == "GET":
            self.events.append("GET received")
            # Answer only once every other task is blocked: a client that sent its next
            # request without waiting for this answer has sent it by then.
            await anyio.wait_all_tasks_blocked()
            self.events.append("GET answered")
            headers = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b": ok\n\n", "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        if method == "DELETE":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        payload = json.loads(body)
        self.events.append(payload["method"])
        if "id" not in payload:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if payload["method"] == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "slow", "version": "1"},
            }
        else:
            result = {"tools": []}
        answer = json.dumps({"jsonrpc": "2.0", "id": payload["id"], "result": result}).encode()
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


async def test_first_request_waits_for_the_standalone_stream() -> None:
    server = SlowStandaloneServer()
    transport = StreamingASGITransport(server)
    async with httpx.AsyncClient(transport=transport) as http:
        with anyio.fail_after(10):
            async with connect("http://127.0.0.1/mcp", client=http) as client:
                await client.list_tools()
    assert server.events.index("GET answered") < server.events.index("tools/list"), server.events
    assert server.events[:2] == ["initialize", "notifications/initialized"]
