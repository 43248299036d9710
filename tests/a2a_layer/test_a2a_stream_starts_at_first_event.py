"""A SendStreamingMessage answer starts as soon as its first event is there.

The A2A JSON-RPC endpoint holds a streaming call's response until its first event (so
that an error before it is answered as plain JSON, ``test_a2a_stream_errors``). An agent
that emits a burst of events without awaiting anything else gives the event loop only a
turn now and then (when its subscriber's queue passes half full): the new task goes to the
stream before the agent goes on, and the response must begin within one such burst,
streamed in several body messages, not be held until the burst is over and then written
whole with a ``Content-Length``.

The app is driven at the ASGI level (no HTTP server): what is counted is how many chunks
the agent had emitted when the response started, and the body messages it was sent in.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest
from a2a_fixtures.harness import make_card, message, rpc_body

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater

pytestmark = pytest.mark.anyio

CHUNKS = 200
RELIEF = 32
"""The runtime's relief point (half the default subscriber buffer of 256, at most 32):
a bursting agent gives the loop one turn each time a subscriber has this many waiting."""


class BurstAgent:
    """One artifact in `CHUNKS` chunks, awaiting nothing but the updater, then completed."""

    def __init__(self) -> None:
        self.emitted = 0

    async def __call__(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        artifact_id = await updater.add_artifact("chunk 0", name="result")
        self.emitted = 1
        for i in range(1, CHUNKS):
            await updater.add_artifact(
                f"chunk {i}", artifact_id=artifact_id, append=True, last_chunk=i == CHUNKS - 1
            )
            self.emitted += 1
        await updater.complete()


def _scope(body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"text/event-stream, application/json"),
            (b"a2a-version", b"1.0"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def test_a_burst_of_events_is_streamed_from_its_first_turn(anyio_backend: str) -> None:
    agent = BurstAgent()
    server = A2AServer(make_card(), agent)
    body = json.dumps(rpc_body("SendStreamingMessage", {"message": message("go", "m-1")}))
    sent: list[MutableMapping[str, Any]] = []
    emitted_at_start: list[int] = []
    response_ended = anyio.Event()
    request_read = False

    async def receive() -> dict[str, Any]:
        nonlocal request_read
        if not request_read:
            request_read = True
            return {"type": "http.request", "body": body.encode(), "more_body": False}
        await response_ended.wait()  # the client stays until the response is complete
        return {"type": "http.disconnect"}

    async def send(asgi_message: MutableMapping[str, Any]) -> None:
        if asgi_message["type"] == "http.response.start":
            emitted_at_start.append(agent.emitted)
        sent.append(asgi_message)
        if asgi_message["type"] == "http.response.body" and not asgi_message["more_body"]:
            response_ended.set()

    async with server.running():
        with anyio.fail_after(10):
            await server.http(_scope(body.encode()), receive, send)

    start = sent[0]
    assert start["type"] == "http.response.start" and start["status"] == 200
    headers = dict(start["headers"])
    assert headers[b"content-type"] == b"text/event-stream"
    assert b"content-length" not in headers  # streamed, not held and written whole
    # The new task is handed to the stream before the agent goes on, so the response
    # starts after one burst of the agent at most (a wait ended and a second disconnect
    # watch begun took several more). asyncio runs ready tasks in order; trio runs each
    # batch in either order, which can let one more burst in first.
    bound = RELIEF if anyio_backend == "asyncio" else 2 * RELIEF
    assert len(emitted_at_start) == 1 and emitted_at_start[0] <= bound
    bodies = [m for m in sent[1:] if m["type"] == "http.response.body"]
    assert len(bodies) > 2
    events = [
        json.loads(line[len("data: ") :])
        for m in bodies
        for line in m["body"].decode().splitlines()
        if line.startswith("data: ")
    ]
    assert len(events) == 1 + CHUNKS + 1  # the task, every chunk, the completed status
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
