"""SSE responses join the events that are already queued into one body message.

`JsonRpcHTTPApp._write_sse` sends, in one ASGI ``http.response.body`` message, every
event queued when it looks at its queue, and sends them before it waits again: events
arrive whole and in order, a slow reader still gets all of them, and no event waits for
a later one. A JSON answer that is ready within a few event-loop turns is written
without watching the client for a disconnect.

Reads the private `jsonrpc_core._http_server._COALESCE_EVENTS` on purpose: the bound on
events per body message is under test.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from _http_fixtures import ASGIPost, peer_app

from jsonrpc_core import (
    JsonRpcHTTPApp,
    MethodRegistry,
    RequestContext,
    RequestType,
)
from jsonrpc_core._http_server import _COALESCE_EVENTS
from jsonrpc_core.http import SSEDecoder

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
BURST = RequestType[Any, Any]("burst")
PAUSE = RequestType[Any, Any]("pause")
HANDOFF = RequestType[Any, Any]("handoff")


def make_app(registry: MethodRegistry, *, json_response: bool = False) -> JsonRpcHTTPApp:
    return peer_app(
        registry,
        path="/rpc",
        json_response=json_response,
        streaming_methods=frozenset({"burst", "pause"}),
    )


def json_post(body: dict[str, Any]) -> ASGIPost:
    return ASGIPost(json.dumps(body).encode())


def results(post: ASGIPost) -> list[Any]:
    """The results of the SSE events of ``post``'s answer."""
    events = SSEDecoder().feed(b"".join(post.bodies))
    return [json.loads(event.data)["result"] for event in events]


def burst_registry(count: int) -> MethodRegistry:
    registry = MethodRegistry()

    @registry.method(BURST)
    async def burst(params: Any, ctx: RequestContext) -> AsyncIterator[int]:
        async def results() -> AsyncIterator[int]:
            await anyio.wait_all_tasks_blocked()  # the response has begun before the burst
            for i in range(count):
                yield i  # no scheduling point between results: they queue up

        return results()

    return registry


async def test_queued_events_share_one_body_message_whole_and_in_order() -> None:
    app = make_app(burst_registry(20))
    post = json_post({"jsonrpc": "2.0", "id": 1, "method": "burst"})
    async with app.running():
        await post.run(app)
    assert results(post) == list(range(20))
    events = [b for b in post.bodies if b"data:" in b]
    # Queued together, written together: far fewer body messages than events.
    assert len(events) < 20
    assert 1 < max(body.count(b"data:") for body in events) <= _COALESCE_EVENTS
    for body in post.bodies:  # every body message holds whole events only
        assert body.endswith(b"\n\n") or body == b""


async def test_a_slow_reader_still_gets_every_event_in_order() -> None:
    app = make_app(burst_registry(300))
    post = json_post({"jsonrpc": "2.0", "id": 2, "method": "burst"})

    async def slow(message: dict[str, Any]) -> None:
        await anyio.sleep(0.001)  # paced on purpose: the slow reader is under test

    post.on_send = slow
    async with app.running():
        await post.run(app)
    assert results(post) == list(range(300))


async def test_an_event_is_sent_before_the_next_one_exists() -> None:
    gate = anyio.Event()
    registry = MethodRegistry()

    @registry.method(PAUSE)
    async def pause(params: Any, ctx: RequestContext) -> AsyncIterator[str]:
        async def results() -> AsyncIterator[str]:
            yield "first"
            await gate.wait()  # released only once "first" is on the wire
            yield "second"

        return results()

    app = make_app(registry)
    post = json_post({"jsonrpc": "2.0", "id": 3, "method": "pause"})

    async def release_on_first(message: dict[str, Any]) -> None:
        if b'"first"' in message.get("body", b""):
            assert not gate.is_set()
            gate.set()

    post.on_send = release_on_first
    async with app.running():
        await post.run(app)
    assert gate.is_set()
    assert results(post) == ["first", "second"]


async def test_a_json_answer_from_another_task_needs_no_disconnect_watcher() -> None:
    registry = MethodRegistry()

    @registry.method(HANDOFF)
    async def handoff(params: Any, ctx: RequestContext) -> Any:
        # Answered a turn after the request arrived, as when the work is handed to
        # another task (A2A runs its agent apart).
        await anyio.lowlevel.checkpoint()
        return "ok"

    app = make_app(registry, json_response=True)
    async with app.running():
        await json_post({"jsonrpc": "2.0", "id": 4, "method": "handoff"}).run(app)  # warm up
        post = json_post({"jsonrpc": "2.0", "id": 5, "method": "handoff"})
        await post.run(app)
    assert json.loads(post.bodies[-1])["result"] == "ok"
    assert post.listens == 0
