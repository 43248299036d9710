"""One suite, every transport: the same interaction must behave the same way."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from _connect import FRAMED, STREAM_TRANSPORTS, TRANSPORTS, connect

from jsonrpc_core import (
    ConnectionClosed,
    ErrorResponse,
    InternalError,
    InvalidParams,
    MethodNotFound,
    MethodRegistry,
    Notification,
    Peer,
    RequestType,
    Response,
    TransportError,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=TRANSPORTS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=STREAM_TRANSPORTS)
def stream_kind(request: pytest.FixtureRequest) -> str:
    """Transports that carry raw bytes; HTTP answers bad bytes with statuses instead
    (tests/jsonrpc_core/test_http_server.py)."""
    return str(request.param)


def client_registry(answers: list[str]) -> MethodRegistry:
    registry = MethodRegistry()

    def answer(params: Any, ctx: Any) -> str:
        answers.append(params["question"])
        return f"answer to {params['question']}"

    registry.on(RequestType("client/answer"), answer)
    return registry


def cancel_hook(request_id: Any, reason: str) -> Notification:
    return Notification("$/cancel_request", {"requestId": request_id})


async def test_request_response_and_errors(kind: str) -> None:
    async with connect(kind) as conn, Peer(conn.stream) as peer:
        with anyio.fail_after(10):
            assert await peer.request("echo", {"text": "héllo"}) == {"text": "héllo"}
            assert await peer.request("echo", [1, None, "x"]) == [1, None, "x"]
            assert await peer.request("add", {"a": 2, "b": 40}) == 42
            with pytest.raises(InvalidParams, match=r"params\.b"):
                await peer.request("add", {"a": 2})
            with pytest.raises(MethodNotFound):
                await peer.request("no/such/method")
            with pytest.raises(InternalError) as failed:
                await peer.request("fail")
            assert "secret" not in failed.value.message
            assert "Traceback" not in failed.value.message
            await peer.notify("echo", {"ignored": True})
            assert await peer.request("echo", ["after-everything"]) == ["after-everything"]
            with pytest.raises(TypeError):
                await peer.request("echo", "a string is neither an object nor an array")


async def test_server_calls_client_while_its_call_is_in_flight(kind: str) -> None:
    answers: list[str] = []
    async with connect(kind) as conn, Peer(conn.stream, client_registry(answers)) as peer:
        with anyio.fail_after(10):
            result = await peer.request("ask", {"question": "why?"})
    assert result == {"question": "why?", "answer": "answer to why?"}
    assert answers == ["why?"]


async def test_many_requests_in_flight_are_matched_by_id(kind: str) -> None:
    answers: list[str] = []
    async with connect(kind) as conn, Peer(conn.stream, client_registry(answers)) as peer:
        results: dict[int, Any] = {}

        async def call(i: int) -> None:
            if i % 4 == 0:
                results[i] = await peer.request("ask", {"question": str(i)})
            else:
                results[i] = await peer.request("echo", {"n": i})

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for i in range(64):
                    tg.start_soon(call, i)
    for i in range(64):
        if i % 4 == 0:
            assert results[i] == {"question": str(i), "answer": f"answer to {i}"}
        else:
            assert results[i] == {"n": i}


async def test_large_message_round_trips(kind: str) -> None:
    payload = {"blob": "x" * (3 * 1024 * 1024), "emoji": "🙂" * 1000}
    async with connect(kind) as conn, Peer(conn.stream) as peer:
        with anyio.fail_after(20):
            assert await peer.request("echo", payload) == payload


async def test_cancelled_call_cancels_the_handler(stream_kind: str) -> None:
    async with connect(stream_kind) as conn:
        with anyio.fail_after(10):
            await conn.send_raw(
                b'{"jsonrpc":"2.0","id":"s1","method":"sleep","params":{"seconds":60}}\n'
            )
            await conn.send_raw(
                b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"s1"}}\n'
            )
            received = await conn.stream.receive()
        assert isinstance(received.payload, ErrorResponse)
        assert received.payload.id == "s1"
        assert received.payload.error.code == -32800


async def test_local_cancellation_tells_the_server_and_connection_lives(kind: str) -> None:
    async with connect(kind) as conn, Peer(conn.stream, on_outgoing_cancel=cancel_hook) as peer:
        with anyio.move_on_after(0.2):
            await peer.request("sleep", {"seconds": 60})
        with anyio.fail_after(10):
            assert await peer.request("echo", [1]) == [1]


async def test_timeout_raises_and_connection_lives(kind: str) -> None:
    from jsonrpc_core import RequestTimeout

    async with connect(kind) as conn, Peer(conn.stream, on_outgoing_cancel=cancel_hook) as peer:
        with pytest.raises(RequestTimeout):
            await peer.request("sleep", {"seconds": 60}, timeout=0.1)
        with anyio.fail_after(10):
            assert await peer.request("echo", [2]) == [2]


async def test_dead_server_fails_pending_calls_promptly(kind: str) -> None:
    async with connect(kind) as conn, Peer(conn.stream) as peer:
        outcome: list[BaseException] = []

        async def pending_call() -> None:
            try:
                await peer.request("sleep", {"seconds": 60})
            except (ConnectionClosed, TransportError) as exc:
                outcome.append(exc)

        with anyio.fail_after(10):
            assert await peer.request("echo", ["alive"]) == ["alive"]
            async with anyio.create_task_group() as tg:
                tg.start_soon(pending_call)
                await anyio.wait_all_tasks_blocked()  # the call is sent and waits for its answer
                await conn.kill_server()
        assert len(outcome) == 1
        with anyio.fail_after(10), pytest.raises((ConnectionClosed, TransportError)):
            await peer.request("echo", ["after death"])


async def test_invalid_json_gets_parse_error_and_connection_lives(stream_kind: str) -> None:
    async with connect(stream_kind) as conn:
        with anyio.fail_after(10):
            await conn.send_raw(b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]\n')
            received = await conn.stream.receive()
            assert isinstance(received.payload, ErrorResponse)
            assert received.payload.id is None
            assert received.payload.error.code == -32700
            await conn.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"echo","params":[5]}\n')
            received = await conn.stream.receive()
        assert isinstance(received.payload, Response)
        assert (received.payload.id, received.payload.result) == (5, [5])


@pytest.mark.parametrize("framed_kind", sorted(FRAMED))
async def test_oversized_message_is_refused_and_next_served(framed_kind: str) -> None:
    """Only framed transports have a size limit; HTTP answers 413 (test_http_server)."""
    limit = 64 * 1024
    async with connect(framed_kind, max_message_size=limit) as conn:
        big = json.dumps(
            {"jsonrpc": "2.0", "id": 77, "method": "echo", "params": {"x": "y" * (limit * 3)}}
        ).encode()
        with anyio.fail_after(10):
            await conn.send_raw(big + b"\n")
            await conn.send_raw(b'{"jsonrpc":"2.0","id":78,"method":"echo","params":[78]}\n')
            first = await conn.stream.receive()
            second = await conn.stream.receive()
        assert isinstance(first.payload, ErrorResponse)
        assert first.payload.id == 77
        assert first.payload.error.code == -32600
        assert "size limit" in first.payload.error.message
        assert isinstance(second.payload, Response)
        assert second.payload.result == [78]
