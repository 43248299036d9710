"""What the wire tap records: streamed results one by one, never a transport's StreamEnd; and
the A2A client's ``tap`` option."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_layer import A2AClient, TaskNotFound
from jsonrpc_core import (
    Received,
    Request,
    RequestId,
    Response,
    StreamEnd,
    TapRecord,
    WireTap,
    running_server,
)
from rpcweave.examples.a2a.coding_agent import build_server

pytestmark = pytest.mark.anyio


class Scripted:
    """A message stream that hands out given payloads."""

    def __init__(self, *payloads: Any) -> None:
        self.payloads = list(payloads)
        self.sent: list[Any] = []

    async def send(self, payload: Any, *, related_request_id: RequestId | None = None) -> None:
        self.sent.append(payload)

    async def receive(self) -> Received:
        return Received(self.payloads.pop(0))

    async def aclose(self) -> None:
        pass


async def test_stream_end_is_not_a_message() -> None:
    records: list[TapRecord] = []
    inner = Scripted(Response(1, "a"), StreamEnd(1), Response(2, "b"))
    tapped = WireTap(records.append).wrap(inner, local="client", remote="server", transport="t")
    await tapped.send(Request(1, "go"))
    received = [(await tapped.receive()).payload for _ in range(3)]
    assert isinstance(received[1], StreamEnd)  # still delivered to the peer
    assert [(r.direction, r.message) for r in records] == [
        ("send", {"jsonrpc": "2.0", "id": 1, "method": "go"}),
        ("receive", {"jsonrpc": "2.0", "id": 1, "result": "a"}),
        ("receive", {"jsonrpc": "2.0", "id": 2, "result": "b"}),
    ]


async def test_a2a_client_tap_records_calls_and_each_streamed_event() -> None:
    records: list[TapRecord] = []
    server = build_server(delay=0)
    async with running_server(server.asgi_app()) as url:
        async with A2AClient.connect(url, tap=WireTap(records.append)) as client:
            events = [e async for e in client.stream("Write a function that adds, in python")]
            task = await client.get_task(events[0].task.id if events[0].task else "")
    assert task.status.state.name == "COMPLETED"
    sent = [r.message for r in records if r.direction == "send"]
    received = [r.message for r in records if r.direction == "receive"]
    assert [m["method"] for m in sent] == ["SendStreamingMessage", "GetTask"]
    stream_id = sent[0]["id"]
    streamed = [m for m in received if m.get("id") == stream_id]
    assert len(streamed) == len(events) >= 4
    assert {(r.local, r.remote, r.transport) for r in records} == {("client", "agent", "http")}


async def test_a2a_client_tap_records_an_error_answer() -> None:
    records: list[TapRecord] = []
    server = build_server(delay=0)
    async with running_server(server.asgi_app()) as url:
        async with A2AClient.connect(url, tap=WireTap(records.append)) as client:
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
    assert [(r.direction, r.local, r.remote, r.transport) for r in records] == [
        ("send", "client", "agent", "http"),
        ("receive", "client", "agent", "http"),
    ]
    sent, received = (r.message for r in records)
    assert sent["method"] == "GetTask" and sent["params"] == {"id": "no-such-task"}
    assert list(received) == ["jsonrpc", "id", "error"]
    assert received["id"] == sent["id"] and received["error"]["code"] == TaskNotFound.code
