"""The MCP Streamable HTTP floor: a raw ASGI app (standard library + uvicorn) answering
like the MCP servers do, with nothing else.

``POST /mcp`` with ``initialize`` is answered with an ``InitializeResult`` and a new
``Mcp-Session-Id``; a notification (no ``id``) with ``202 Accepted``; ``tools/call`` of
``echo`` with the ``CallToolResult`` the SDK servers send (the text as content and as
``structuredContent.result``). Results go out as one SSE ``message`` event in a
``text/event-stream`` response, as the stateful servers of the benchmark answer. No
validation, no sessions table, no other tools, no errors beyond a bare 400/404.

Served by `mcp_uvicorn.serve_on_free_port` with the settings of the other MCP servers.

Run: python bench/servers/mcp_floor_server.py --http  (prints ``LISTENING <port>``)
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from _uvicorn import lifespan, read_body

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

PATH = "/mcp"
SERVER_INFO = {"name": "bench-floor", "version": "1.0.0"}
CAPABILITIES = {"tools": {"listChanged": True}}
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
]


async def _bare(send: Any, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def app(scope: Any, receive: Any, send: Any) -> None:
    """The floor ASGI app (lifespan and HTTP)."""
    kind = scope["type"]
    if kind == "lifespan":
        await lifespan(receive, send)
        return
    if kind != "http":
        return
    if scope["method"] != "POST" or scope["path"] != PATH:
        await _bare(send, 404)
        return
    request = json.loads(await read_body(receive))
    if "id" not in request:
        await _bare(send, 202)
        return
    method = request.get("method")
    headers = SSE_HEADERS
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
        }
        headers = [*SSE_HEADERS, (b"mcp-session-id", uuid.uuid4().hex.encode())]
    elif method == "tools/call":
        text = request["params"]["arguments"]["text"]
        result = {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"result": text},
        }
    else:
        await _bare(send, 400)
        return
    reply = _dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"event: message\ndata: " + reply + b"\n\n"})


if __name__ == "__main__":
    from mcp_uvicorn import serve_on_free_port

    serve_on_free_port(app)
