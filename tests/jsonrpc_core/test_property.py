"""Property tests of the wire format, the peer's answers and the line framer.

Each peer example runs in its own event loop: a sync hypothesis test calls
``anyio.run`` (many examples on asyncio, fewer on trio). Every wait is bounded by
``anyio.fail_after``, so a hang fails the example instead of stalling the suite.

The oracle (`classify`) is written from the JSON-RPC 2.0 specification, not from the
implementation, with two documented allowances:

* ``"params": null`` counts as absent params (the core is lenient there);
* a malformed *response* (anything carrying ``result``/``error`` but no ``method``) may be
  answered with an Invalid Request error or ignored: answering broken responses can make
  two peers trade errors forever, so the core drops some of them.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsonrpc_core import (
    LineFramer,
    MemoryMessageStream,
    MethodRegistry,
    Oversized,
    Peer,
    RequestContext,
    RequestType,
    memory_pair,
)

TIMEOUT = 5
ASYNCIO_EXAMPLES = 300
TRIO_EXAMPLES = 60
FRAMER_EXAMPLES = 300

PEER_SETTINGS = settings(
    max_examples=ASYNCIO_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TRIO_SETTINGS = settings(
    max_examples=TRIO_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SENTINEL_ID = "sentinel:6f1d2c84-0b7e-4c59-9d8e-3a1f5e2b7c90"
ECHO = RequestType("echo")


# --- strict JSON -------------------------------------------------------------------


class NotJson(ValueError):
    """The bytes are not RFC 8259 JSON in UTF-8."""


def _reject_constant(constant: str) -> Any:
    raise NotJson(f"not JSON: {constant}")


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def strict_loads(data: bytes) -> Any:
    """Decode RFC 8259 JSON: UTF-8 only, no NaN/Infinity, no unpaired surrogates."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise NotJson(str(exc)) from exc
    if _has_surrogate(value):  # RFC 8259 section 8.2: unpredictable; a parse error is fine
        raise NotJson("unpaired surrogate")
    return value


# --- the oracle --------------------------------------------------------------------


@dataclass
class Expected:
    """What one received element must produce.

    ``kind``: ``"request"`` (exactly one answer with ``id``), ``"silent"`` (no answer),
    ``"error"`` (exactly one Invalid Request error, id in ``ids``) or ``"maybe_error"``
    (at most one such error).
    """

    kind: str
    id: Any = None
    method: str = ""
    params: Any = None
    ids: set[Any] = field(default_factory=lambda: {None})


def _is_id(value: Any) -> bool:
    return value is None or type(value) in (int, str)


def _valid_error_object(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and type(value.get("code")) is int
        and isinstance(value.get("message"), str)
    )


def classify(obj: Any) -> Expected:
    """The specification's verdict on one element (a message or one batch entry)."""
    if not isinstance(obj, dict):
        return Expected("error")
    has_id = "id" in obj
    raw_id = obj.get("id")
    id_ok = _is_id(raw_id)
    own_ids = {None, raw_id} if id_ok else {None}
    version_ok = obj.get("jsonrpc") == "2.0"
    if "method" in obj:
        params = obj.get("params")
        valid = (
            version_ok
            and isinstance(obj["method"], str)
            and (params is None or isinstance(params, (list, dict)))
        )
        if valid and not has_id:
            return Expected("silent")
        if valid and id_ok:
            return Expected("request", raw_id, obj["method"], params)
        return Expected("error", ids=own_ids)
    has_result, has_error = "result" in obj, "error" in obj
    if not (has_result or has_error):
        return Expected("error", ids=own_ids)
    valid_response = (
        version_ok
        and has_result != has_error
        and has_id
        and id_ok
        and (
            (has_result and raw_id is not None) or (has_error and _valid_error_object(obj["error"]))
        )
    )
    if valid_response:
        return Expected("silent")
    return Expected("maybe_error", ids=own_ids)


def frames_needed(payload: Any) -> tuple[int, int]:
    """(min, max) number of frames the payload must produce."""
    if isinstance(payload, list):
        if not payload:
            return 1, 1
        kinds = {classify(item).kind for item in payload}
    else:
        kinds = {classify(payload).kind}
    if kinds & {"request", "error"}:
        return 1, 1
    if "maybe_error" in kinds:
        return 0, 1
    return 0, 0


def check_reply_shape(reply: Any) -> None:
    assert isinstance(reply, dict), reply
    assert reply.get("jsonrpc") == "2.0", reply
    assert "id" in reply and _is_id(reply["id"]), reply
    if "result" in reply:
        assert set(reply) == {"jsonrpc", "id", "result"}, reply
    else:
        assert set(reply) == {"jsonrpc", "id", "error"}, reply
        assert _valid_error_object(reply["error"]), reply
        assert set(reply["error"]) <= {"code", "message", "data"}, reply


def expected_outcome(expect: Expected) -> Any:
    """The answer our registry gives: echo returns its params, anything else is -32601."""
    if expect.method == "echo":
        return ("result", expect.params)
    return ("error", -32601)


def outcome_of(reply: dict[str, Any]) -> Any:
    if "result" in reply:
        return ("result", reply["result"])
    return ("error", reply["error"]["code"])


def check_replies(expectations: list[Expected], replies: list[Any]) -> None:
    """Match the answers of one payload against the verdicts of its elements."""
    for reply in replies:
        check_reply_shape(reply)
    # Our handlers never raise Invalid Request, so -32600 answers belong to invalid
    # elements and every other answer to a request.
    invalid_replies = [r for r in replies if "error" in r and r["error"]["code"] == -32600]
    request_replies = [r for r in replies if r not in invalid_replies]
    requests = [e for e in expectations if e.kind == "request"]

    assert Counter(repr(r["id"]) for r in request_replies) == Counter(
        repr(e.id) for e in requests
    ), (requests, request_replies)
    for reply in request_replies:
        possible = [expected_outcome(e) for e in requests if repr(e.id) == repr(reply["id"])]
        assert outcome_of(reply) in possible, (reply, possible)

    must = [e for e in expectations if e.kind == "error"]
    may = [e for e in expectations if e.kind == "maybe_error"]
    assert len(must) <= len(invalid_replies) <= len(must) + len(may), (
        expectations,
        invalid_replies,
    )
    for reply_id, count in Counter(repr(r["id"]) for r in invalid_replies).items():
        owners = [e for e in must + may if reply_id in {repr(i) for i in e.ids}]
        assert count <= len(owners), (reply_id, expectations, invalid_replies)


def check_json_payload(payload: Any, frames: list[Any]) -> None:
    low, high = frames_needed(payload)
    assert low <= len(frames) <= high, (payload, frames)
    if isinstance(payload, list) and not payload:
        (frame,) = frames
        check_reply_shape(frame)
        assert frame["id"] is None and frame["error"]["code"] == -32600, frame
        return
    if isinstance(payload, list):
        if frames:
            (frame,) = frames
            assert isinstance(frame, list) and frame, frame  # a batch answer is an array
            check_replies([classify(item) for item in payload], frame)
        return
    for frame in frames:
        assert isinstance(frame, dict), frame
    check_replies([classify(payload)], frames)


def check_raw_payload(raw: bytes, frames: list[Any]) -> None:
    try:
        payload = strict_loads(raw)
    except NotJson:
        assert len(frames) == 1, frames
        (frame,) = frames
        check_reply_shape(frame)
        assert "error" in frame, frame
        assert frame["error"]["code"] == -32700 and frame["id"] is None, frame
        return
    check_json_payload(payload, frames)


# --- driving a peer ----------------------------------------------------------------


def echo(params: Any, ctx: RequestContext) -> Any:
    assert params == ctx.raw_params
    return params


def sentinel(number: int) -> tuple[bytes, str]:
    request_id = f"{SENTINEL_ID}:{number}"
    request = {"jsonrpc": "2.0", "method": "echo", "params": [number], "id": request_id}
    return json.dumps(request).encode(), request_id


async def receive_frame(client: MemoryMessageStream) -> Any:
    raw = await client.receive_raw()
    try:
        return strict_loads(raw)
    except NotJson as exc:  # the peer itself must only ever send JSON
        raise AssertionError(f"the peer sent non-JSON: {raw!r}") from exc


def is_sentinel_reply(frame: Any, request_id: str, number: int) -> bool:
    if isinstance(frame, dict) and frame.get("id") == request_id:
        assert frame == {"jsonrpc": "2.0", "id": request_id, "result": [number]}, frame
        return True
    return False


async def answers_to(raw: bytes, min_frames: int) -> list[Any]:
    """Send ``raw`` as one frame to a fresh peer serving ``echo``; return its answers.

    Then proves the peer is alive and quiet: a known request is answered after the
    junk, and a second one is answered next, with nothing left over in between.
    """
    registry = MethodRegistry()
    registry.on(ECHO, echo)
    client, server = memory_pair()
    frames: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with Peer(server, registry, name="property") as peer:
            await client.send_raw(raw)
            first, first_id = sentinel(1)
            await client.send_raw(first)
            seen_first = False
            while not seen_first or len(frames) < min_frames:
                frame = await receive_frame(client)
                if is_sentinel_reply(frame, first_id, 1):
                    assert not seen_first, "the sentinel was answered twice"
                    seen_first = True
                else:
                    frames.append(frame)
            second, second_id = sentinel(2)
            await client.send_raw(second)
            while True:
                frame = await receive_frame(client)
                if is_sentinel_reply(frame, second_id, 2):
                    break
                frames.append(frame)
            assert not peer.closed, "the peer stopped serving"
        await client.aclose()
    return frames


def run_on(backend: str, raw: bytes, min_frames: int) -> list[Any]:
    return anyio.run(answers_to, raw, min_frames, backend=backend)


def min_frames_for_raw(raw: bytes) -> int:
    try:
        payload = strict_loads(raw)
    except NotJson:
        return 1
    return frames_needed(payload)[0]


# --- strategies --------------------------------------------------------------------

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=10,
)

MISSING: Any = object()
valid_ids = st.integers() | st.text(max_size=6)
invalid_ids = st.one_of(
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
valid_params = st.lists(json_values, max_size=3) | st.dictionaries(
    st.text(max_size=4), json_values, max_size=3
)
error_objects = st.fixed_dictionaries(
    {"code": st.integers(-32768, 32767), "message": st.text(max_size=8)},
    optional={"data": json_values},
)
method_names = st.sampled_from(["echo", "echo", "echo", "nope", "rpc.x", ""]) | st.text(max_size=4)
RESERVED = {"jsonrpc", "method", "params", "id", "result", "error"}

# Defects applied to a valid message; each sets (or, with MISSING, deletes) one member.
DEFECTS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "version": ("jsonrpc", st.sampled_from(["1.0", "2", 2.0, None, MISSING, ""]) | json_values),
    "method": ("method", json_values.filter(lambda value: not isinstance(value, str))),
    "no-method": ("method", st.just(MISSING)),
    "params": ("params", json_values),
    "bad-id": ("id", invalid_ids),
    "null-id": ("id", st.none()),
    "no-id": ("id", st.just(MISSING)),
    "add-id": ("id", valid_ids),
    "result": ("result", json_values),
    "error": ("error", error_objects | json_values),
}


@st.composite
def request_like(draw: st.DrawFn) -> dict[str, Any]:
    """A valid request, notification or response with zero to two random defects."""
    members: dict[str, Any] = {"jsonrpc": "2.0"}
    kind = draw(st.sampled_from(["request", "request", "notification", "result", "error"]))
    if kind in ("request", "notification"):
        members["method"] = draw(method_names)
        params = draw(st.just(MISSING) | valid_params)
        if params is not MISSING:
            members["params"] = params
    elif kind == "result":
        members["result"] = draw(json_values)
    else:
        members["error"] = draw(error_objects)
    if kind != "notification":
        members["id"] = draw(valid_ids)
    for defect in draw(st.lists(st.sampled_from(sorted(DEFECTS)), max_size=2)):
        key, values = DEFECTS[defect]
        value = draw(values)
        if value is MISSING:
            members.pop(key, None)
        else:
            members[key] = value
    extra = draw(
        st.dictionaries(
            st.text(max_size=5).filter(lambda key: key not in RESERVED), json_values, max_size=2
        )
    )
    members.update(extra)
    order = draw(st.permutations(list(members)))
    return {key: members[key] for key in order}


elements = request_like() | request_like() | json_values
payloads = elements | st.lists(elements, max_size=6)

JSON_TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b" ",
    b'"',
    b'"jsonrpc"',
    b'"2.0"',
    b'"method"',
    b'"echo"',
    b'"params"',
    b'"id"',
    b'"result"',
    b'"error"',
    b"1",
    b"-2",
    b"0.5",
    b"null",
    b"true",
    b"\\",
    b"\xff",
    b"\r",
    b"\t",
    b'"a"',
    b"\xc3\xa9",
    b"\x00",
]


@st.composite
def truncated_json(draw: st.DrawFn) -> bytes:
    """A JSON payload cut short (or with a byte changed): almost valid, usually not."""
    data = json.dumps(draw(payloads)).encode()
    cut = draw(st.integers(0, len(data)))
    if draw(st.booleans()):
        return data[:cut]
    return data[:cut] + draw(st.sampled_from(JSON_TOKENS)) + data[cut + 1 :]


junk_bytes = st.one_of(
    st.binary(max_size=64),
    st.lists(st.sampled_from(JSON_TOKENS), max_size=40).map(b"".join),
    truncated_json(),
    payloads.map(lambda value: json.dumps(value).encode()),
).map(lambda data: data.replace(b"\n", b" "))


# --- the peer never crashes or hangs, and answers as the spec says -------------------


@PEER_SETTINGS
@given(raw=junk_bytes)
def test_arbitrary_bytes_asyncio(raw: bytes) -> None:
    check_raw_payload(raw, run_on("asyncio", raw, min_frames_for_raw(raw)))


@TRIO_SETTINGS
@given(raw=junk_bytes)
def test_arbitrary_bytes_trio(raw: bytes) -> None:
    check_raw_payload(raw, run_on("trio", raw, min_frames_for_raw(raw)))


@PEER_SETTINGS
@given(payload=payloads)
def test_json_payloads_asyncio(payload: Any) -> None:
    raw = json.dumps(payload).encode()
    check_json_payload(payload, run_on("asyncio", raw, frames_needed(payload)[0]))


@TRIO_SETTINGS
@given(payload=payloads)
def test_json_payloads_trio(payload: Any) -> None:
    raw = json.dumps(payload).encode()
    check_json_payload(payload, run_on("trio", raw, frames_needed(payload)[0]))


@PEER_SETTINGS
@given(batch=st.lists(request_like(), min_size=1, max_size=8))
def test_request_like_batches_asyncio(batch: list[dict[str, Any]]) -> None:
    raw = json.dumps(batch).encode()
    check_json_payload(batch, run_on("asyncio", raw, frames_needed(batch)[0]))


def test_oracle_agrees_with_the_spec_examples() -> None:
    """The oracle itself, on the specification's section 7 verdicts."""
    assert classify({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}) == (
        Expected("request", 1, "subtract", [42, 23])
    )
    assert classify({"jsonrpc": "2.0", "method": "update", "params": [1, 2]}).kind == "silent"
    assert classify({"jsonrpc": "2.0", "method": 1, "params": "bar"}).kind == "error"
    assert classify({"foo": "boo"}).kind == "error"
    assert classify(1).kind == "error"
    assert classify({"jsonrpc": "2.0", "result": 7, "id": "1"}).kind == "silent"
    assert classify({"jsonrpc": "2.0", "method": "x", "id": True}).kind == "error"
    assert classify({"jsonrpc": "2.0", "method": "x", "id": 1.5}).ids == {None}
    assert classify({"jsonrpc": "2.0", "result": 1, "error": {}, "id": 1}).kind == "maybe_error"
    assert frames_needed([]) == (1, 1)
    assert frames_needed([{"jsonrpc": "2.0", "method": "n"}]) == (0, 0)
    assert frames_needed([1, {"jsonrpc": "2.0", "method": "n"}]) == (1, 1)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize(
    ("raw", "count"),
    [
        (b"\xff\xfe", 1),
        (b'{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}', 1),
        (b'[{"jsonrpc":"2.0","method":"echo","id":1},{"jsonrpc":"2.0","method":"echo","id":1}]', 1),
        (b'{"jsonrpc":"2.0","method":"echo"}', 0),
        (b'[{"jsonrpc":"2.0","result":1,"error":null,"id":1}]', 0),
    ],
)
def test_harness_examples(backend: str, raw: bytes, count: int) -> None:
    frames = run_on(backend, raw, min_frames_for_raw(raw))
    assert len(frames) == count
    check_raw_payload(raw, frames)


# --- LineFramer --------------------------------------------------------------------

framer_messages = (
    st.binary(max_size=40)
    .map(lambda data: data.replace(b"\n", b""))
    .filter(lambda data: bool(data.strip()) and not data.endswith(b"\r"))
)


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0, *cuts, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


def feed_all(framer: LineFramer, chunks: list[bytes]) -> list[bytes | Oversized]:
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(framer.feed(chunk))
    out.extend(framer.close())
    return out


@settings(max_examples=FRAMER_EXAMPLES, deadline=None)
@given(
    messages=st.lists(framer_messages, max_size=10),
    separator=st.sampled_from([b"\n", b"\r\n"]),
    trailing=st.booleans(),
    data=st.data(),
)
def test_line_framer_returns_exactly_the_messages(
    messages: list[bytes], separator: bytes, trailing: bool, data: st.DataObject
) -> None:
    stream = separator.join(messages) + (separator if trailing and messages else b"")
    chunks = data.draw(chunked(stream))
    assert b"".join(chunks) == stream
    assert feed_all(LineFramer(), chunks) == messages


@settings(max_examples=FRAMER_EXAMPLES, deadline=None)
@given(
    messages=st.lists(framer_messages, max_size=10),
    limit=st.integers(1, 24),
    blank_lines=st.lists(st.sampled_from([b"", b" ", b"\t", b"\r"]), max_size=3),
    data=st.data(),
)
def test_line_framer_oversized_lines(
    messages: list[bytes], limit: int, blank_lines: list[bytes], data: st.DataObject
) -> None:
    lines = list(messages)
    for blank in blank_lines:  # blank lines are skipped wherever they are
        lines.insert(data.draw(st.integers(0, len(lines))), blank)
    stream = b"".join(line + b"\n" for line in lines)
    chunks = data.draw(chunked(stream))
    out = feed_all(LineFramer(max_message_size=limit), chunks)
    assert len(out) == len(messages), (out, messages)
    for frame, message in zip(out, messages, strict=True):
        if len(message) <= limit:
            assert frame == message
        else:
            assert isinstance(frame, Oversized), (frame, message)
            assert frame.limit == limit
            assert len(frame.prefix) > limit
            assert message.startswith(frame.prefix)


@settings(max_examples=FRAMER_EXAMPLES, deadline=None)
@given(
    messages=st.lists(framer_messages, min_size=1, max_size=6),
    limit=st.integers(1, 24),
    data=st.data(),
)
def test_line_framer_crlf_at_the_limit(
    messages: list[bytes], limit: int, data: st.DataObject
) -> None:
    """A line of at most ``limit`` bytes is delivered whatever the chunking, with ``\\r\\n``
    line ends too (the ``\\r`` is not part of the message)."""
    messages = [message[:limit] for message in messages]
    messages = [m for m in messages if m.strip() and not m.endswith(b"\r")]
    stream = b"".join(message + b"\r\n" for message in messages)
    chunks = data.draw(chunked(stream))
    assert feed_all(LineFramer(max_message_size=limit), chunks) == messages


def test_line_framer_crlf_split_before_newline_at_exact_limit() -> None:
    """The smallest case of the property above: limit 4, ``abcd\\r`` then ``\\n``."""
    framer = LineFramer(max_message_size=4)
    assert framer.feed(b"abcd\r") == []
    assert framer.feed(b"\nnext\n") == [b"abcd", b"next"]


def test_line_framer_oversized_line_arriving_in_pieces() -> None:
    framer = LineFramer(max_message_size=8)
    assert framer.feed(b"0123") == []
    out = framer.feed(b"456789")
    assert len(out) == 1 and isinstance(out[0], Oversized)
    assert out[0].prefix == b"0123456789" and out[0].limit == 8
    assert framer.feed(b"more junk") == []
    assert framer.feed(b" still\nok\n") == [b"ok"]
    assert framer.close() == []
