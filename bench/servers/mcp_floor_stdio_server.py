"""The MCP stdio floor: a hand-written NDJSON server, standard library only.

It answers ``initialize`` with a fixed ``InitializeResult`` (echoing the requested
protocol version), ignores notifications (``notifications/initialized``), and answers
``tools/call`` of ``echo`` with the ``CallToolResult`` the SDK servers send (the text as
content and as ``structuredContent.result``). Every other request gets a bare
``-32601`` error. One ``write`` + ``flush`` per message, and nothing else: no
validation, no other tools, no concurrency, no cancellation.

Run: python bench/servers/mcp_floor_stdio_server.py
"""

from __future__ import annotations

import asyncio
import json
import sys

SERVER_INFO = {"name": "bench-floor", "version": "1.0.0"}
CAPABILITIES = {"tools": {"listChanged": True}}


async def serve() -> None:
    """Answer requests from stdin on stdout until stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    loads = json.loads
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    while True:
        line = await reader.readline()
        if not line:
            break
        if not line.strip():
            continue
        message = loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        params = message.get("params") or {}
        result: dict[str, object]
        reply: dict[str, object]
        if method == "tools/call" and params.get("name") == "echo":
            text = params["arguments"]["text"]
            result = {
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"result": text},
            }
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        elif method == "initialize":
            result = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": CAPABILITIES,
                "serverInfo": SERVER_INFO,
            }
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        else:
            error = {"code": -32601, "message": "Method not found"}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        out.write(dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    asyncio.run(serve())
