"""The HTTP server's disconnect watch lives in a task group and ends with its request.

A private unit tested on purpose (`jsonrpc_core._http_server._DisconnectWatch`), then
through the app: a client that drops mid-request ends its HTTP request at once, and no
task started for it outlives the app's task group.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from _http_fixtures import ASGIPost, peer_app

from jsonrpc_core import (
    MethodRegistry,
    RequestContext,
    RequestType,
)
from jsonrpc_core._http_server import _DisconnectWatch

pytestmark = pytest.mark.anyio

TIMEOUT = 10
SLOW = RequestType[Any, Any]("slow")


class Client:
    """An ASGI ``receive`` whose client stays until ``leave`` (then: disconnect)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.gone = anyio.Event()
        self.error = error
        self.listening = anyio.Event()

    def leave(self) -> None:
        self.gone.set()

    async def receive(self) -> dict[str, Any]:
        self.listening.set()
        await self.gone.wait()
        if self.error is not None:
            raise self.error
        return {"type": "http.disconnect"}


def running_task_ids() -> set[int]:
    return {task.id for task in anyio.get_running_tasks()}


async def test_a_client_that_drops_cancels_the_guarded_block() -> None:
    client = Client()
    before = running_task_ids()
    finished = False
    with anyio.fail_after(TIMEOUT):
        async with _DisconnectWatch(client.receive) as watch:
            await client.listening.wait()
            client.leave()
            await anyio.sleep_forever()
            finished = True
    assert watch.disconnected
    assert not finished
    assert running_task_ids() == before


async def test_the_watcher_ends_with_a_block_that_ends_first() -> None:
    client = Client()
    before = running_task_ids()
    with anyio.fail_after(TIMEOUT):
        async with _DisconnectWatch(client.receive) as watch:
            await client.listening.wait()  # the watcher is waiting for the client
    assert not watch.disconnected
    # Gone by the time the block is left, not merely cancelled (it was a bare asyncio
    # task, cancelled and dropped, that outlived its request).
    assert running_task_ids() == before


async def test_the_guarded_blocks_error_comes_out_unwrapped() -> None:
    client = Client()
    with anyio.fail_after(TIMEOUT), pytest.raises(KeyError):
        async with _DisconnectWatch(client.receive):
            await client.listening.wait()
            raise KeyError("from the block")


async def test_an_error_of_the_clients_receive_comes_out_unwrapped() -> None:
    client = Client(error=OSError("the connection broke"))
    with anyio.fail_after(TIMEOUT), pytest.raises(OSError, match="connection broke"):
        async with _DisconnectWatch(client.receive):
            await client.listening.wait()
            client.leave()
            await anyio.sleep_forever()


async def test_a_disabled_watch_starts_no_task() -> None:
    client = Client()
    before = running_task_ids()
    async with _DisconnectWatch(client.receive, enabled=False) as watch:
        await anyio.lowlevel.checkpoint()
        assert running_task_ids() == before
    assert not watch.disconnected and not client.listening.is_set()


async def test_a_request_dropped_mid_answer_ends_and_leaves_no_task_after_the_app() -> None:
    registry = MethodRegistry()
    started = anyio.Event()
    handler_ended = anyio.Event()

    @registry.method(SLOW)
    async def slow(params: Any, ctx: RequestContext) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            handler_ended.set()

    app = peer_app(registry, path="/mcp", sessions=None)
    post = ASGIPost(b'{"jsonrpc":"2.0","id":1,"method":"slow"}', path="/mcp", disconnect=True)
    before = running_task_ids()
    with anyio.fail_after(TIMEOUT):
        async with app.running():
            # The client is gone once its request is read: the HTTP request ends (its
            # answer has nowhere to go), while the JSON-RPC handler goes on (rule 3).
            await post.run(app)
            await started.wait()
            assert post.listens >= 1
            assert not handler_ended.is_set()
        # Stopping the app ends the handler and every task the request started.
        await handler_ended.wait()
    assert running_task_ids() == before
