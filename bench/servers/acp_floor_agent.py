"""The ACP floor: a hand-written NDJSON agent, standard library only.

It answers ``initialize`` and ``session/new`` with fixed results, and each
``session/prompt`` with ``--chunks`` ``session/update`` notifications
(``agent_message_chunk``, text ``chunk <i> ``), each written and flushed as its own line,
then the ``end_turn`` response: the same 11 messages per prompt as the SDK agents, and
nothing else (no validation, no models, no concurrency, no cancellation).

Run: python bench/servers/acp_floor_agent.py [--chunks 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


async def serve(chunks: int) -> None:
    """Answer requests from stdin on stdout until stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    loads, dumps = json.loads, json.dumps
    texts = [f"chunk {i} " for i in range(chunks)]
    sessions = 0
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
        result: object
        if method == "session/prompt":
            sid = message["params"]["sessionId"]
            for text in texts:
                update = {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": sid,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": text},
                        },
                    },
                }
                out.write(dumps(update, separators=(",", ":")).encode() + b"\n")
                out.flush()
            result = {"stopReason": "end_turn"}
        elif method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        elif method == "session/new":
            sessions += 1
            result = {"sessionId": f"sess_floor_{sessions}"}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": "Method not found"},
            }
            out.write(dumps(reply, separators=(",", ":")).encode() + b"\n")
            out.flush()
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(dumps(reply, separators=(",", ":")).encode() + b"\n")
        out.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(serve(args.chunks))


if __name__ == "__main__":
    main()
