"""One A2A server replica on a shared PostgreSQL store (run as a process).

    python tests/scaleout/a2a_replica.py DSN NAME

Prints its URL on the first line. The agent does what the message's first word says:

- ``echo``: replies with a direct message (no task);
- ``gated N GATE``: adds artifact chunks 0 .. N/2-1, waits until the file GATE exists,
  adds the rest, completes. Every chunk is one part whose text is its number;
- ``once LOG GATE``: appends this replica's NAME to the file LOG, waits until the file
  GATE exists, completes (how many lines LOG has is how many times the agent ran);
- ``hold MARK``: works until cancelled, then writes NAME to the file MARK (whole: it
  appears with its text);
- ``ask``: asks for input (input-required); the answer completes the task.

A POST that carries the header ``x-test-arrivals: DIR`` writes the file DIR/NAME as it
reaches the app: how a test knows its requests arrived before it lets a run end.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from a2a_layer import A2AServer, ExecutionContext, PostgresTaskStore, TaskUpdater
from a2a_layer.types import AgentCapabilities, AgentCard
from jsonrpc_core import running_server

NAME = sys.argv[2] if len(sys.argv) > 2 else "replica"
ARRIVALS_HEADER = b"x-test-arrivals"


async def _wait_for(path: anyio.Path, limit: float = 60.0) -> None:
    with anyio.fail_after(limit):
        while not await path.exists():  # noqa: ASYNC110 - a file from another process
            await anyio.sleep(0.01)  # a bounded poll: the file is the only signal


async def _write_whole(path: anyio.Path, text: str) -> None:
    """Write ``path`` so that it appears with its text: a test waiting for it to exist
    could otherwise read it between its creation and the write."""
    partial = path.with_name(path.name + ".partial")
    await partial.write_text(text)
    await partial.rename(path)  # atomic on POSIX


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    words = context.text.split()
    command = words[0] if words else ""
    if command == "echo":
        await updater.reply(f"echo from {NAME}")
        return
    if command == "ask" or not context.is_new_task:
        if context.is_new_task:
            await updater.requires_input("what now?")
        else:
            await updater.complete(f"answered on {NAME}")
        return
    await updater.start_work(f"started on {NAME}")
    if command == "gated":
        count, gate = int(words[1]), anyio.Path(words[2])
        for index in range(count):
            if index == count // 2:
                await _wait_for(gate)
            await updater.add_artifact(str(index), artifact_id="chunks", append=index > 0)
        await updater.complete("done")
    elif command == "once":
        async with await anyio.open_file(words[1], "a") as log:
            await log.write(NAME + "\n")
        # The run lasts until the test opens the gate, once its duplicates have arrived.
        await _wait_for(anyio.Path(words[2]))
        await updater.complete(f"ran on {NAME}")
    elif command == "hold":
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await _write_whole(anyio.Path(words[1]), NAME)
    else:
        await updater.complete(f"done on {NAME}")


def logging_arrivals(app: Any) -> Any:
    """``app``, where a POST with `ARRIVALS_HEADER` first writes NAME's file in that
    directory."""

    async def logged(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            for name, value in scope["headers"]:
                if name == ARRIVALS_HEADER:
                    await _write_whole(anyio.Path(value.decode()) / NAME, NAME)
        await app(scope, receive, send)

    return logged


async def main(dsn: str) -> None:
    card = AgentCard(
        name="scale-out agent",
        description="One of several replicas on one PostgreSQL database.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
    )
    server = A2AServer(card, agent, store=PostgresTaskStore(dsn, pool_size=4))
    async with running_server(logging_arrivals(server.asgi_app())) as url:
        print(url, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
