"""The floor: a minimal NDJSON JSON-RPC 2.0 echo server, standard library only.

It answers every request with its own params as the result and ignores notifications.
This is what a person would write by hand for speed and nothing else: no validation,
no error handling beyond skipping blank lines, no concurrency, one write per response.

Run: python bench/floor_echo_server.py
"""

from __future__ import annotations

import asyncio
import json
import sys


async def serve() -> None:
    """Echo requests from stdin to stdout until stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    loads, dumps = json.loads, json.dumps
    while True:
        line = await reader.readline()
        if not line:
            break
        if not line.strip():
            continue
        message = loads(line)
        if "id" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": message.get("params")}
        out.write(dumps(reply, separators=(",", ":")).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    asyncio.run(serve())
