"""An A2A agent on a SQLite store, for the durability test (run as a process).

    python durable_agent.py DB_PATH

Prints its URL on the first line. ``finish ...`` completes at once with an artifact;
anything else starts work, adds an artifact "part one", then works forever (until the
test kills the process).
"""

from __future__ import annotations

import sys

import anyio

from a2a_layer import A2AServer, ExecutionContext, SQLiteTaskStore, TaskUpdater
from a2a_layer.types import AgentCapabilities, AgentCard
from jsonrpc_core import running_server


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.start_work("started")
    if context.text.startswith("finish"):
        await updater.add_artifact("finished output", name="out")
        await updater.complete("done")
        return
    await updater.add_artifact("part one", artifact_id="report", name="report")
    await anyio.sleep_forever()


async def main(path: str) -> None:
    card = AgentCard(
        name="durable agent",
        description="Keeps its tasks in SQLite.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
    )
    server = A2AServer(card, agent, store=SQLiteTaskStore(path))
    async with running_server(server.asgi_app()) as url:
        print(url, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
