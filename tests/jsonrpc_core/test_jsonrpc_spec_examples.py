"""Every example of the JSON-RPC 2.0 specification, section 7, against a real `Peer`.

https://www.jsonrpc.org/specification#examples

The test speaks raw bytes to a `Peer` through `memory_pair()`: it sends the exact text
of each example with ``send_raw`` and reads the answers with ``receive_raw``.

"No response" is proven without sleeping: after the notification(s) the test sends a
request to a known method, and the very next frame must be that request's response.
Notifications and invalid messages are handled in order on the peer's read loop, so
any answer to them would have been sent before the known request was even read.

Error messages are free text in the specification ("SHOULD be limited to a concise
single sentence"); the tests require the standard message as a prefix, e.g. the peer
may say ``"Method not found: foobar"`` where the specification shows ``"Method not found"``.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from jsonrpc_core import (
    ErrorResponse,
    InvalidMessage,
    InvalidRequest,
    MemoryMessageStream,
    MethodNotFound,
    MethodRegistry,
    Notification,
    NotificationType,
    ParseError,
    Peer,
    Request,
    RequestContext,
    RequestType,
    Response,
    ServerError,
    encode,
    encode_batch,
    memory_pair,
    parse,
    recover_id,
)

pytestmark = pytest.mark.anyio

TIMEOUT = 5

STANDARD_MESSAGES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}


# --- the server of the specification's examples ------------------------------------


@dataclass
class SpecServer:
    """Handlers for every method the examples call; notifications are recorded."""

    notified: list[tuple[str, Any]] = field(default_factory=list)

    def registry(self) -> MethodRegistry:
        registry = MethodRegistry()
        registry.on(RequestType("subtract"), self.subtract)
        registry.on(RequestType("sum"), self.sum)
        registry.on(RequestType("get_data"), self.get_data)
        for name in ("update", "notify_hello", "notify_sum"):
            registry.on(NotificationType(name), self.recorder(name))
        return registry

    @staticmethod
    def subtract(params: Any, ctx: RequestContext) -> Any:
        if isinstance(params, list):
            minuend, subtrahend = params
        else:
            minuend, subtrahend = params["minuend"], params["subtrahend"]
        return minuend - subtrahend

    @staticmethod
    async def sum(params: Any, ctx: RequestContext) -> Any:
        await anyio.lowlevel.checkpoint()
        return sum(params)

    @staticmethod
    def get_data(params: Any, ctx: RequestContext) -> Any:
        return ["hello", 5]

    def recorder(self, name: str) -> Any:
        def record(params: Any, ctx: RequestContext) -> None:
            assert ctx.request_id is None
            self.notified.append((name, ctx.raw_params))

        return record


@asynccontextmanager
async def serving(server: SpecServer | None = None) -> AsyncIterator[MemoryMessageStream]:
    """A `Peer` serving the specification's methods; yields the client end (raw bytes)."""
    server = server if server is not None else SpecServer()
    client, server_end = memory_pair()
    async with Peer(server_end, server.registry(), name="spec-server") as peer:
        yield client
        assert not peer.closed, "the peer stopped serving"
    await client.aclose()


def strict_loads(data: bytes) -> Any:
    """Decode a frame as RFC 8259 JSON (no NaN/Infinity, UTF-8 only)."""

    def reject(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(data.decode("utf-8"), parse_constant=reject)


async def receive_json(client: MemoryMessageStream) -> Any:
    with anyio.fail_after(TIMEOUT):
        raw = await client.receive_raw()
    return strict_loads(raw)


async def exchange(client: MemoryMessageStream, text: str) -> Any:
    """Send ``text`` as one frame and return the decoded frame that answers it."""
    await client.send_raw(text.encode())
    return await receive_json(client)


_probe_counter = 0


async def assert_no_response(client: MemoryMessageStream) -> None:
    """Whatever was sent before produced no frame: the next frame answers a probe."""
    global _probe_counter
    _probe_counter += 1
    probe_id = f"probe-{_probe_counter}"
    probe = {"jsonrpc": "2.0", "method": "subtract", "params": [5, 3], "id": probe_id}
    await client.send_raw(json.dumps(probe).encode())
    assert await receive_json(client) == {"jsonrpc": "2.0", "result": 2, "id": probe_id}


def assert_response(actual: Any, expected: dict[str, Any]) -> None:
    """``actual`` is the response the specification shows (error messages by prefix)."""
    assert isinstance(actual, dict), actual
    assert actual.get("jsonrpc") == "2.0", actual
    assert "id" in actual, actual
    assert actual["id"] == expected["id"], actual
    assert type(actual["id"]) is type(expected["id"]), actual
    if "result" in expected:
        assert set(actual) == {"jsonrpc", "id", "result"}, actual
        assert actual["result"] == expected["result"], actual
        return
    assert set(actual) == {"jsonrpc", "id", "error"}, actual
    error = actual["error"]
    assert isinstance(error, dict), actual
    assert set(error) <= {"code", "message", "data"}, actual
    code = expected["error"]["code"]
    assert error["code"] == code, actual
    assert isinstance(error["message"], str), actual
    assert error["message"].startswith(STANDARD_MESSAGES[code]), actual


def by_id(responses: list[Any]) -> dict[Any, Any]:
    """Index batch responses by id (``None`` ids collected in a list)."""
    indexed: dict[Any, Any] = {}
    for response in responses:
        key = response.get("id")
        if key is None:
            indexed.setdefault(None, []).append(response)
        else:
            assert key not in indexed, f"two responses for id {key!r}"
            indexed[key] = response
    return indexed


def error(code: int, id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": STANDARD_MESSAGES[code]}, "id": id}


def result(value: Any, id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "result": value, "id": id}


# --- section 7, against a real peer ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
            result(19, 1),
            id="positional-1",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}',
            result(-19, 2),
            id="positional-2",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", '
            '"params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
            result(19, 3),
            id="named-3",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", '
            '"params": {"minuend": 42, "subtrahend": 23}, "id": 4}',
            result(19, 4),
            id="named-4",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
            error(-32601, "1"),
            id="non-existent-method",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
            error(-32700),
            id="invalid-json",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
            error(-32600),
            id="invalid-request-object",
        ),
        pytest.param(
            '[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n'
            '  {"jsonrpc": "2.0", "method"\n]',
            error(-32700),
            id="batch-invalid-json",
        ),
        pytest.param("[]", error(-32600), id="empty-array"),
    ],
)
async def test_single_response_examples(text: str, expected: dict[str, Any]) -> None:
    async with serving() as client:
        assert_response(await exchange(client, text), expected)
        # Exactly one answer: nothing else is queued behind it.
        await assert_no_response(client)


async def test_notifications_get_no_response() -> None:
    server = SpecServer()
    async with serving(server) as client:
        await client.send_raw(b'{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}')
        await client.send_raw(b'{"jsonrpc": "2.0", "method": "foobar"}')
        await assert_no_response(client)
    assert server.notified == [("update", [1, 2, 3, 4, 5])]


@pytest.mark.parametrize(
    ("text", "count"),
    [
        pytest.param("[1]", 1, id="invalid-batch-of-one"),
        pytest.param("[1,2,3]", 3, id="invalid-batch-of-three"),
    ],
)
async def test_invalid_batch_examples(text: str, count: int) -> None:
    async with serving() as client:
        response = await exchange(client, text)
        assert isinstance(response, list), response
        assert len(response) == count
        for item in response:
            assert_response(item, error(-32600))
        await assert_no_response(client)


MIXED_BATCH = """[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"""


async def test_mixed_batch() -> None:
    server = SpecServer()
    async with serving(server) as client:
        response = await exchange(client, MIXED_BATCH)
        assert isinstance(response, list), response
        # The order of a batch response is free: compare by id.
        assert len(response) == 5, response
        indexed = by_id(response)
        assert set(indexed) == {"1", "2", "5", "9", None}
        assert_response(indexed["1"], result(7, "1"))
        assert_response(indexed["2"], result(19, "2"))
        assert len(indexed[None]) == 1
        assert_response(indexed[None][0], error(-32600))
        assert_response(indexed["5"], error(-32601, "5"))
        assert_response(indexed["9"], result(["hello", 5], "9"))
        await assert_no_response(client)
    assert server.notified == [("notify_hello", [7])]


async def test_all_notifications_batch_gets_nothing() -> None:
    server = SpecServer()
    async with serving(server) as client:
        await client.send_raw(
            b'[\n  {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},\n'
            b'  {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}\n]'
        )
        await assert_no_response(client)
    assert server.notified == [("notify_sum", [1, 2, 4]), ("notify_hello", [7])]


async def test_every_example_in_sequence_on_one_connection() -> None:
    """The whole of section 7 on one connection: the peer keeps serving throughout."""
    async with serving() as client:
        assert await exchange(
            client, '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}'
        ) == result(19, 1)
        await client.send_raw(b'{"jsonrpc": "2.0", "method": "foobar"}')
        assert_response(
            await exchange(client, '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}'),
            error(-32601, "1"),
        )
        assert_response(
            await exchange(client, '{"jsonrpc": "2.0", "method": "foobar, "p'), error(-32700)
        )
        assert_response(await exchange(client, "[]"), error(-32600))
        response = await exchange(client, MIXED_BATCH)
        assert len(response) == 5
        await client.send_raw(b'[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1]}]')
        await assert_no_response(client)


async def test_response_with_result_and_error_is_not_answered() -> None:
    async with serving() as client:
        await client.send_raw(
            b'{"jsonrpc": "2.0", "result": 19, "error": {"code": -32600, "message": "x"}, "id": 1}'
        )
        await client.send_raw(b'[{"jsonrpc": "2.0", "result": 1, "error": null, "id": 2}]')
        await assert_no_response(client)


async def test_responses_to_unknown_ids_are_not_answered() -> None:
    async with serving() as client:
        await client.send_raw(b'{"jsonrpc": "2.0", "result": 19, "id": 1}')
        await client.send_raw(
            b'{"jsonrpc": "2.0", "error": {"code": -32601, "message": "nope"}, "id": null}'
        )
        await client.send_raw(b'[{"jsonrpc": "2.0", "result": 7, "id": "1"}]')
        await assert_no_response(client)


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": 1.5}',
        '{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": 1.0}',
        '{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": true}',
        '{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": [1]}',
        '{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": {"a": 1}}',
    ],
)
async def test_float_bool_and_structured_ids_are_invalid(text: str) -> None:
    async with serving() as client:
        assert_response(await exchange(client, text), error(-32600))
        await assert_no_response(client)


async def test_request_with_null_id_is_answered_with_null_id() -> None:
    async with serving() as client:
        response = await exchange(
            client, '{"jsonrpc": "2.0", "method": "subtract", "params": [3, 1], "id": null}'
        )
        assert response == result(2, None)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_non_json_number_literals_are_a_parse_error(literal: str) -> None:
    """RFC 8259 section 6: NaN and Infinity are not JSON; the spec answers -32700."""
    async with serving() as client:
        text = f'{{"jsonrpc": "2.0", "method": "sum", "params": [{literal}], "id": 7}}'
        assert_response(await exchange(client, text), error(-32700))


async def test_peer_never_sends_non_json_numbers() -> None:
    """1e400 is valid JSON (it overflows a double); the answer must still be valid JSON."""
    async with serving() as client:
        await client.send_raw(b'{"jsonrpc": "2.0", "method": "sum", "params": [1e400], "id": 8}')
        with anyio.fail_after(TIMEOUT):
            raw = await client.receive_raw()
        assert b"Infinity" not in raw and b"NaN" not in raw, raw
        strict_loads(raw)


# --- parse: classification of the same examples -------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
            Request(1, "subtract", [42, 23]),
        ),
        (
            '{"jsonrpc": "2.0", "method": "subtract", '
            '"params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
            Request(3, "subtract", {"subtrahend": 23, "minuend": 42}),
        ),
        ('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', Request("1", "foobar")),
        ('{"jsonrpc": "2.0", "method": "foobar", "id": null}', Request(None, "foobar")),
        (
            '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
            Notification("update", [1, 2, 3, 4, 5]),
        ),
        ('{"jsonrpc": "2.0", "method": "foobar"}', Notification("foobar")),
        ('{"jsonrpc": "2.0", "result": 19, "id": 1}', Response(1, 19)),
        ('{"jsonrpc": "2.0", "result": -19, "id": 2}', Response(2, -19)),
        ('{"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}', Response("9", ["hello", 5])),
        ('{"jsonrpc": "2.0", "result": null, "id": 4}', Response(4, None)),
    ],
)
def test_parse_valid_messages(text: str, expected: Any) -> None:
    assert parse(text) == expected
    assert parse(text.encode()) == expected
    assert parse(bytearray(text.encode())) == expected


@pytest.mark.parametrize(
    ("text", "code", "msg_id"),
    [
        (
            '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, '
            '"id": "1"}',
            -32601,
            "1",
        ),
        (
            '{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}',
            -32700,
            None,
        ),
        (
            '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, '
            '"id": null}',
            -32600,
            None,
        ),
    ],
)
def test_parse_error_responses(text: str, code: int, msg_id: Any) -> None:
    message = parse(text)
    assert isinstance(message, ErrorResponse)
    assert message.id == msg_id
    assert message.error.code == code
    assert message.error.message == STANDARD_MESSAGES[code]
    assert not message.error.has_data


def test_parse_error_response_keeps_data_and_registered_class() -> None:
    message = parse(
        '{"jsonrpc":"2.0","error":{"code":-32601,"message":"m","data":{"x":[1]}},"id":3}'
    )
    assert isinstance(message, ErrorResponse)
    assert isinstance(message.error, MethodNotFound)
    assert message.error.data == {"x": [1]}
    unknown = parse('{"jsonrpc":"2.0","error":{"code":-32042,"message":"custom"},"id":3}')
    assert isinstance(unknown, ErrorResponse)
    assert isinstance(unknown.error, ServerError)
    assert unknown.error.code == -32042


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
        '[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n'
        '  {"jsonrpc": "2.0", "method"\n]',
        "",
        "   ",
        '{"jsonrpc": "2.0"',
        '{"jsonrpc": "2.0", "method": "a", "id": 1} trailing',
    ],
)
def test_parse_invalid_json_is_parse_error(text: str) -> None:
    message = parse(text)
    assert isinstance(message, InvalidMessage)
    assert isinstance(message.error, ParseError)
    assert message.error.code == -32700
    assert message.id is None
    assert message.respond


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_parse_rejects_non_json_number_literals(literal: str) -> None:
    """RFC 8259 section 6: ``NaN``/``Infinity`` are not JSON, so this is a parse error."""
    message = parse(f'{{"jsonrpc": "2.0", "method": "sum", "params": [{literal}], "id": 7}}')
    assert isinstance(message, InvalidMessage), message
    assert isinstance(message.error, ParseError)


@pytest.mark.parametrize(
    ("text", "msg_id"),
    [
        ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', None),
        ("[]", None),
        ("1", None),
        ('"a string"', None),
        ("null", None),
        ('{"foo": "boo"}', None),
        ('{"jsonrpc": "2.0", "method": 1, "params": "bar", "id": 5}', 5),
        ('{"jsonrpc": "2.0", "method": "x", "params": "bar", "id": "abc"}', "abc"),
        ('{"jsonrpc": "2.0", "method": "x", "params": 3}', None),
        ('{"jsonrpc": "1.0", "method": "subtract", "params": [1, 2], "id": 7}', 7),
        ('{"method": "subtract", "params": [1, 2], "id": "q"}', "q"),
        ('{"jsonrpc": 2.0, "method": "subtract", "id": 8}', 8),
        ('{"jsonrpc": "2.0", "method": "subtract", "id": 1.5}', None),
        ('{"jsonrpc": "2.0", "method": "subtract", "id": false}', None),
        ('{"jsonrpc": "2.0", "method": "subtract", "id": 1.0}', None),
        ('{"jsonrpc": "2.0", "id": 9}', 9),
    ],
)
def test_parse_invalid_request_object(text: str, msg_id: Any) -> None:
    message = parse(text)
    assert isinstance(message, InvalidMessage), message
    assert isinstance(message.error, InvalidRequest)
    assert message.error.code == -32600
    assert message.id == msg_id
    assert type(message.id) is type(msg_id)
    assert message.respond


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc": "2.0", "result": 19, "error": {"code": 1, "message": "x"}, "id": 1}',
        '{"jsonrpc": "2.0", "result": 19}',
        '{"jsonrpc": "2.0", "error": {"code": 1, "message": "x"}}',
        '{"jsonrpc": "2.0", "result": 19, "id": 1.5}',
        '{"jsonrpc": "2.0", "result": 19, "id": true}',
    ],
)
def test_parse_broken_response_is_invalid_and_not_answered(text: str) -> None:
    message = parse(text)
    assert isinstance(message, InvalidMessage), message
    assert isinstance(message.error, InvalidRequest)
    assert message.respond is False


def test_parse_batches() -> None:
    batch = parse(MIXED_BATCH)
    assert isinstance(batch, list)
    assert batch[0] == Request("1", "sum", [1, 2, 4])
    assert batch[1] == Notification("notify_hello", [7])
    assert batch[2] == Request("2", "subtract", [42, 23])
    assert isinstance(batch[3], InvalidMessage) and batch[3].id is None
    assert isinstance(batch[3].error, InvalidRequest)
    assert batch[4] == Request("5", "foo.get", {"name": "myself"})
    assert batch[5] == Request("9", "get_data")

    ones = parse("[1,2,3]")
    assert isinstance(ones, list) and len(ones) == 3
    for item in ones:
        assert isinstance(item, InvalidMessage)
        assert isinstance(item.error, InvalidRequest)
        assert item.id is None and item.respond

    empty = parse("[]")
    assert isinstance(empty, InvalidMessage)
    assert isinstance(empty.error, InvalidRequest)

    assert parse(
        '[{"jsonrpc": "2.0", "result": 7, "id": "1"},'
        ' {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"},'
        ' "id": "5"}]'
    ) == [Response("1", 7), ErrorResponse("5", MethodNotFound("Method not found"))]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":42,"method":"x","params":[1,2', 42),
        (b'{"jsonrpc":"2.0","id":"abc","method":"x","params":{"a":', "abc"),
        (b'{"jsonrpc":"2.0","method":"x","params":[1, 2, 3', None),
        (b'{"jsonrpc":"2.0","id":-7, "method"', -7),
    ],
)
def test_recover_id_from_broken_request(data: bytes, expected: Any) -> None:
    assert recover_id(data) == expected


# --- encode --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            Request(1, "subtract", [42, 23]),
            {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1},
        ),
        (
            Request(3, "subtract", {"subtrahend": 23, "minuend": 42}),
            {
                "jsonrpc": "2.0",
                "method": "subtract",
                "params": {"subtrahend": 23, "minuend": 42},
                "id": 3,
            },
        ),
        (Request("9", "get_data"), {"jsonrpc": "2.0", "method": "get_data", "id": "9"}),
        (Request(None, "get_data"), {"jsonrpc": "2.0", "method": "get_data", "id": None}),
        (
            Notification("update", [1, 2, 3, 4, 5]),
            {"jsonrpc": "2.0", "method": "update", "params": [1, 2, 3, 4, 5]},
        ),
        (Notification("foobar"), {"jsonrpc": "2.0", "method": "foobar"}),
        (Response(1, 19), {"jsonrpc": "2.0", "result": 19, "id": 1}),
        (Response("9", ["hello", 5]), {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}),
        (Response(2, None), {"jsonrpc": "2.0", "result": None, "id": 2}),
        (Response(2, {"a": None}), {"jsonrpc": "2.0", "result": {"a": None}, "id": 2}),
        (
            ErrorResponse("1", MethodNotFound()),
            {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"},
        ),
        (
            ErrorResponse(None, ParseError()),
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
        ),
        (
            ErrorResponse(None, InvalidRequest(data=None)),
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid Request", "data": None},
                "id": None,
            },
        ),
    ],
)
def test_encode(message: Any, expected: dict[str, Any]) -> None:
    data = encode(message)
    assert isinstance(data, bytes)
    decoded = strict_loads(data)
    assert decoded == expected
    # Compact: byte-identical to the same object dumped without any whitespace.
    assert data == json.dumps(decoded, separators=(",", ":"), ensure_ascii=False).encode()
    assert b'"jsonrpc":"2.0"' in data
    # And it round-trips through parse.
    assert parse(data) == message


def test_encode_non_ascii_as_utf8() -> None:
    data = encode(Response("é", {"text": "héllo ☃"}))
    assert "héllo ☃".encode() in data
    assert parse(data) == Response("é", {"text": "héllo ☃"})


def test_encode_batch_matches_spec_mixed_batch_response() -> None:
    replies = [
        Response("1", 7),
        Response("2", 19),
        ErrorResponse(None, InvalidRequest()),
        ErrorResponse("5", MethodNotFound()),
        Response("9", ["hello", 5]),
    ]
    data = encode_batch(replies)  # type: ignore[arg-type]
    decoded = strict_loads(data)
    assert decoded == [
        result(7, "1"),
        result(19, "2"),
        error(-32600),
        error(-32601, "5"),
        result(["hello", 5], "9"),
    ]
    assert data == json.dumps(decoded, separators=(",", ":")).encode()
    assert parse(data) == replies


def test_encode_non_finite_float_is_not_emitted_as_json() -> None:
    """RFC 8259: NaN/Infinity are not JSON; encode must refuse them (ValueError) or not
    emit them as the bare ``NaN``/``Infinity`` tokens."""
    for value in (math.inf, -math.inf, math.nan):
        try:
            data = encode(Response(1, [value]))
        except ValueError:
            continue
        strict_loads(data)
