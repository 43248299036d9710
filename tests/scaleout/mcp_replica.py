"""One MCP Streamable HTTP server replica on a shared PostgreSQL event store (a process).

    python tests/scaleout/mcp_replica.py DSN NAME

Prints its URL on the first line. Tool ``gated(count, gate)`` logs ``step 0`` ..
``step count-1`` (notifications/message), waiting after the first half until the file
``gate`` exists, and returns ``done on NAME``.
"""

from __future__ import annotations

import sys

import anyio

from jsonrpc_core import running_server
from jsonrpc_core.postgres import PostgresEventStore
from mcp_layer import Context, MCPServer

NAME = sys.argv[2] if len(sys.argv) > 2 else "replica"

server = MCPServer("scale-out", version="1.0.0")


@server.tool()
async def gated(count: int, gate: str, ctx: Context) -> str:
    """Log count steps, waiting for the gate file halfway."""
    path = anyio.Path(gate)
    for index in range(count):
        if index == count // 2:
            with anyio.fail_after(60):
                while not await path.exists():  # noqa: ASYNC110 - a file of another process
                    await anyio.sleep(0.01)  # a bounded poll: the file is the only signal
        await ctx.info(f"step {index}")
    return f"done on {NAME}"


async def main(dsn: str) -> None:
    app = server.asgi_app(event_store=PostgresEventStore(dsn, pool_size=4), legacy_sse=False)
    async with running_server(app) as url:
        print(url, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
