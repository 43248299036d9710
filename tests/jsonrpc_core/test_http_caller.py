"""`HTTPCaller`: sessionless JSON-RPC over HTTP, one POST per call, its JSON or SSE
answer read in the caller's task (what the A2A client's JSON-RPC transport stands on)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import httpx
import pydantic
import pytest
from _http_fixtures import ScriptedPeer, json_response, sse_response

from jsonrpc_core import (
    STANDARD_ERRORS,
    ConnectionClosed,
    ErrorTable,
    HTTPStatusError,
    JsonRpcError,
    MethodNotFound,
    Peer,
    ResultValidationError,
    StreamableHTTPTransport,
    TapRecord,
    TransportError,
    WireTap,
)
from jsonrpc_core.http import HTTPCaller

pytestmark = pytest.mark.anyio

URL = "http://server.test/rpc"
TABLE = ErrorTable("test", parent=STANDARD_ERRORS)


@TABLE.register
class Busy(JsonRpcError):
    code = -32042


def _caller(answer: Callable[[dict[str, Any]], httpx.Response]) -> tuple[HTTPCaller, ScriptedPeer]:
    server = ScriptedPeer(answer)
    client = httpx.AsyncClient(transport=server)
    return HTTPCaller(client, URL, headers={"X-Test": "1"}, errors=TABLE), server


def _msg(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


async def test_a_call_is_one_post_with_the_headers_and_a_fresh_id() -> None:
    caller, server = _caller(
        lambda r: json_response(_msg(id=r["id"], result={"echo": r["params"]}))
    )
    assert await caller.call("echo", {"a": 1}) == {"echo": {"a": 1}}
    assert await caller.call("echo", [2]) == {"echo": [2]}
    first, second = server.requests
    assert json.loads(first.content) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "echo",
        "params": {"a": 1},
    }
    assert json.loads(second.content)["id"] == 2
    assert first.headers["accept"] == "application/json, text/event-stream"
    assert first.headers["content-type"] == "application/json"
    assert first.headers["x-test"] == "1"


async def test_a_result_goes_through_the_validator() -> None:
    class Point(pydantic.BaseModel):
        x: int

    caller, _ = _caller(lambda r: json_response(_msg(id=r["id"], result={"x": r["params"]["x"]})))
    assert await caller.call("p", {"x": 1}, Point.model_validate) == Point(x=1)
    with pytest.raises(ResultValidationError, match="p: the result does not match"):
        await caller.call("p", {"x": "nope"}, Point.model_validate)


async def test_a_call_answered_as_an_event_stream_skips_other_messages() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        note = _msg(method="progress", params={})
        other = _msg(id=999, result="not ours")
        ours = _msg(id=r["id"], result="ours")
        wire = b": hi\n\nevent: ping\ndata: x\n\ndata: " + note + b"\n\ndata: " + other
        return sse_response([wire[:17], wire[17:] + b"\n\nid: 1\ndata: " + ours + b"\n\n"])

    caller, server = _caller(answer)
    assert await caller.call("m") == "ours"
    assert server.bodies[0].closed


async def test_the_servers_error_is_raised_refined_and_received() -> None:
    error = {"code": -32042, "message": "busy"}
    caller, _ = _caller(lambda r: json_response(_msg(id=r["id"], error=error)))
    with pytest.raises(Busy) as caught:
        await caller.call("m")
    assert caught.value.received
    caller, _ = _caller(
        lambda r: sse_response([b"data: " + _msg(id=r["id"], error=error) + b"\n\n"])
    )
    with pytest.raises(Busy) as caught:
        await caller.call("m")
    assert caught.value.received


@pytest.mark.parametrize("answer", ["json", "sse"])
async def test_a_streamed_calls_error_is_raised_refined_and_received(answer: str) -> None:
    error = _msg(id=1, error={"code": -32042, "message": "busy"})
    reply = (
        json_response(error) if answer == "json" else sse_response([b"data: " + error + b"\n\n"])
    )
    caller, _ = _caller(lambda r: reply)
    with pytest.raises(Busy) as caught:
        async with aclosing(caller.stream("s")) as results:
            async for _ in results:
                pass
    assert caught.value.received


async def test_http_error_statuses() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        if r["method"] == "ours":
            return json_response(_msg(id=r["id"], error={"code": -32601, "message": "no"}), 400)
        if r["method"] == "null-id":
            return json_response(_msg(id=None, error={"code": -32600, "message": "bad"}), 400)
        return json_response(b"upstream down", 503, "text/plain")

    caller, _ = _caller(answer)
    with pytest.raises(MethodNotFound) as caught:
        await caller.call("ours")
    assert caught.value.received
    with pytest.raises(HTTPStatusError) as status:
        await caller.call("null-id")
    assert status.value.status == 400 and status.value.error is not None
    with pytest.raises(HTTPStatusError, match="upstream down") as status:
        await caller.call("other")
    assert status.value.status == 503


_UNANSWERED: dict[str, Callable[[], httpx.Response]] = {
    "202": lambda: httpx.Response(202),
    "html": lambda: json_response(b"<html/>", 200, "text/html"),
    "json-without-answer": lambda: json_response(_msg(method="note")),
    "sse-ended": lambda: sse_response([b"data: " + _msg(method="note") + b"\n\n"]),
    "sse-ended-with-id": lambda: sse_response([b"id: 4\ndata: " + _msg(method="note") + b"\n\n"]),
    "broke": lambda: sse_response([b"data: " + _msg(id=1, result=1)[:5]], fail=True),
}


@pytest.mark.parametrize("case", list(_UNANSWERED))
async def test_answers_without_the_response_raise_transport_error(case: str) -> None:
    caller, _ = _caller(lambda r: _UNANSWERED[case]())
    with pytest.raises(TransportError):
        await caller.call("m")


async def test_stream_yields_every_response_then_checks_the_end() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        wire = b"".join(b"data: " + _msg(id=r["id"], result=i) + b"\n\n" for i in range(5))
        return sse_response([wire[i : i + 9] for i in range(0, len(wire), 9)])

    caller, _ = _caller(answer)
    async with aclosing(caller.stream("s", None, lambda n: n * 10)) as results:
        assert [n async for n in results] == [0, 10, 20, 30, 40]


async def test_stream_errors_after_events() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        one = b"data: " + _msg(id=r["id"], result=1) + b"\n\n"
        if r["method"] == "error":
            return sse_response(
                [
                    one,
                    b"data: " + _msg(id=r["id"], error={"code": -32042, "message": "x"}) + b"\n\n",
                ]
            )
        if r["method"] == "retry":
            return sse_response([b"id: 1\n" + one, b"retry: 10\n\n"])
        return sse_response([one], fail=True)

    caller, _ = _caller(answer)
    for method, error in (("error", Busy), ("retry", TransportError), ("broke", TransportError)):
        got: list[Any] = []
        with pytest.raises(error):
            async with aclosing(caller.stream(method)) as results:
                async for result in results:
                    got.append(result)
        assert got == [1], method


async def test_leaving_a_stream_early_closes_its_response() -> None:
    caller, server = _caller(
        lambda r: sse_response([b"data: " + _msg(id=r["id"], result=i) + b"\n\n" for i in range(5)])
    )
    async with aclosing(caller.stream("s")) as results:
        async for _ in results:
            break
    assert server.bodies[0].closed


async def test_a_closed_caller_refuses_calls() -> None:
    caller, server = _caller(lambda r: json_response(_msg(id=r["id"], result=1)))
    caller.close()
    with pytest.raises(ConnectionClosed):
        await caller.call("m")
    assert server.requests == []


async def test_an_unreachable_server_is_a_transport_error() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        raise httpx.ConnectError("refused")

    caller, _ = _caller(answer)
    with pytest.raises(TransportError, match=r"POST http://server\.test/rpc failed"):
        await caller.call("m")


# -- the wire tap: the records a TappedStream makes of the same exchange ------------


def _tap_records(records: list[TapRecord]) -> list[tuple[Any, ...]]:
    """Each record without its time; the message also as written (member order counts)."""
    return [
        (r.direction, r.transport, r.local, r.remote, r.message, json.dumps(r.message))
        for r in records
    ]


async def _tapped_caller_records(
    answer: Callable[[dict[str, Any]], httpx.Response], run: Callable[[Any], Any]
) -> list[tuple[Any, ...]]:
    records: list[TapRecord] = []
    server = ScriptedPeer(answer)
    caller = HTTPCaller(
        httpx.AsyncClient(transport=server),
        URL,
        errors=TABLE,
        tap=WireTap(records.append),
        local="client",
        remote="agent",
        transport="http",
    )
    await run(caller)
    return _tap_records(records)


async def _tapped_stream_records(
    answer: Callable[[dict[str, Any]], httpx.Response], run: Callable[[Any], Any]
) -> list[tuple[Any, ...]]:
    """What a `Peer` over a tapped `StreamableHTTPTransport` records (the A2A client's
    tapped path before it used `HTTPCaller`)."""
    records: list[TapRecord] = []
    http = StreamableHTTPTransport(
        URL,
        client=httpx.AsyncClient(transport=ScriptedPeer(answer)),
        standalone_stream=False,
        terminate_on_close=False,
        max_reconnects=0,
    )
    async with http:
        stream = WireTap(records.append).wrap(
            http, local="client", remote="agent", transport="http"
        )
        async with Peer(stream, errors=TABLE) as peer:
            await run(peer)
    return _tap_records(records)


async def _both(
    answer: Callable[[dict[str, Any]], httpx.Response],
    on_caller: Callable[[HTTPCaller], Any],
    on_peer: Callable[[Peer], Any],
) -> list[tuple[Any, ...]]:
    ours = await _tapped_caller_records(answer, on_caller)
    reference = await _tapped_stream_records(answer, on_peer)
    assert ours == reference
    return ours


def _reordered(**fields: Any) -> bytes:
    """A message with its members in an unusual order (records hold it re-encoded)."""
    return json.dumps({**fields, "jsonrpc": "2.0"}).encode()


async def test_tap_records_a_json_answer_as_a_tapped_stream_does() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        return json_response(_reordered(result={"b": 1, "a": [1.5, None]}, id=r["id"]))

    async def on_caller(caller: HTTPCaller) -> None:
        assert await caller.call("echo", {"x": "é"}) == {"b": 1, "a": [1.5, None]}

    async def on_peer(peer: Peer) -> None:
        await peer.request("echo", {"x": "é"})

    records = await _both(answer, on_caller, on_peer)
    assert [r[:5] for r in records] == [
        ("send", "http", "client", "agent", _m(id=1, method="echo", params={"x": "é"})),
        ("receive", "http", "client", "agent", _m(id=1, result={"b": 1, "a": [1.5, None]})),
    ]


async def test_tap_records_each_event_of_an_sse_answer_as_a_tapped_stream_does() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        events = [
            _msg(method="progress", params={"n": 1}),
            _reordered(result="first", id=r["id"]),
            b"{not json",
            _msg(id=999, result="not ours"),
            _msg(id=r["id"], result="second"),
            json.dumps([json.loads(_msg(method="a")), json.loads(_msg(method="b"))]).encode(),
            _msg(id=r["id"], result="third"),
        ]
        wire = b"".join(b"id: %d\ndata: %s\n\n" % (i, e) for i, e in enumerate(events))
        return sse_response([wire[i : i + 23] for i in range(0, len(wire), 23)])

    async def on_caller(caller: HTTPCaller) -> None:
        async with aclosing(caller.stream("s", {"k": 1})) as results:
            assert [r async for r in results] == ["first", "second", "third"]

    async def on_peer(peer: Peer) -> None:
        stream: Any = peer.request_stream("s", {"k": 1})
        async with aclosing(stream) as results:
            assert [r async for r in results] == ["first", "second", "third"]

    records = await _both(answer, on_caller, on_peer)
    assert [r[0] for r in records] == ["send"] + ["receive"] * 6  # not the invalid event
    assert records[-2][4] == [_m(method="a"), _m(method="b")]


@pytest.mark.parametrize("how", ["json", "sse", "http-400"])
async def test_tap_records_an_error_answer_as_a_tapped_stream_does(how: str) -> None:
    error = {"code": -32042, "message": "busy", "data": {"why": 1}}

    def answer(r: dict[str, Any]) -> httpx.Response:
        if how == "sse":
            one = b"data: " + _msg(id=r["id"], result=1) + b"\n\n"
            return sse_response([one, b"data: " + _reordered(error=error, id=r["id"]) + b"\n\n"])
        return json_response(_reordered(error=error, id=r["id"]), 400 if how == "http-400" else 200)

    async def on_caller(caller: HTTPCaller) -> None:
        with pytest.raises(Busy):
            if how == "sse":
                async with aclosing(caller.stream("m")) as results:
                    assert [r async for r in results] == [1]
            else:
                await caller.call("m")

    async def on_peer(peer: Peer) -> None:
        with pytest.raises(Busy):
            if how == "sse":
                stream: Any = peer.request_stream("m")
                async with aclosing(stream) as results:
                    assert [r async for r in results] == [1]
            else:
                await peer.request("m")

    records = await _both(answer, on_caller, on_peer)
    received = [r[4] for r in records if r[0] == "receive"]
    # An HTTP error status's body is raised with the send, not received as a message.
    assert received[-1:] == ([] if how == "http-400" else [_m(id=1, error=error)])


async def test_tap_records_a_send_even_when_the_post_fails() -> None:
    def answer(r: dict[str, Any]) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async def on_caller(caller: HTTPCaller) -> None:
        with pytest.raises(TransportError):
            await caller.call("m")

    async def on_peer(peer: Peer) -> None:
        with pytest.raises(TransportError):
            await peer.request("m")

    records = await _both(answer, on_caller, on_peer)
    assert [r[0] for r in records] == ["send"]


def _m(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}
