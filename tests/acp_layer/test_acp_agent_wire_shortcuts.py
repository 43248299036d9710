"""The fast paths of acp_layer's hot loop (issues #5 and #10) send what the models would.

``AgentConnection.send_text``/``send_thought``/``session_update`` and
``ClientConnection.prompt`` with plain text write wire objects without building models:
the bytes must be the ones the model path gives, valid against schema.json, and anything
the fast path does not cover must still go through the models (and be rejected as before).
Updates are handled on the read loop without an extra frame, yet an update read together
with the answer to ``session/new`` still waits until ``new_session()`` has returned.

Tests the private units `acp_layer._methods` and `_rpc.HookedStream` on purpose: the
shortcuts are compared with the descriptors' own validation and the hooked stream.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import anyio
import pydantic
import pytest
from acp_fixtures.wire import connected, requires_acp_schema, schema_errors

from acp_layer import Agent, AgentConnection, Client, connect_agent
from acp_layer import _methods as m
from acp_layer import schema as s
from acp_layer._rpc import HookedStream
from jsonrpc_core import InvalidParams, Notification, Received, Request, Response, encode

pytestmark = [
    pytest.mark.anyio,
    requires_acp_schema,
]


class _RecordingPeer:
    """Stands in for a `Peer`: records what would be sent."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    async def notify(self, method: Any, params: Any = None) -> None:
        name = method.method if hasattr(method, "method") else method
        self.sent.append(Notification(name, params))


def _connection() -> tuple[AgentConnection, _RecordingPeer]:
    peer = _RecordingPeer()
    return AgentConnection(peer, None), peer  # type: ignore[arg-type]


def _model_bytes(session_id: str, update: s.SessionUpdate) -> bytes:
    note = s.SessionNotification(session_id=session_id, update=update)
    return encode(Notification(m.SESSION_UPDATE.method, note))


def _no_models(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make building these schema models fail (the modules use them as ``s.Name``)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fast path built a model")

    for name in names:
        monkeypatch.setattr(s, name, refuse)


def _as_json(params: Any) -> Any:
    return json.loads(encode(Notification("x", params)))["params"]


@pytest.mark.parametrize("message_id", [None, "msg_1"])
async def test_send_text_bytes_equal_the_model_path(message_id: str | None) -> None:
    conn, peer = _connection()
    await conn.send_text("sess_1", "chunk 0 ", message_id=message_id)
    chunk = s.AgentMessageChunk(content=s.TextContent(text="chunk 0 "), message_id=message_id)
    assert encode(peer.sent[0]) == _model_bytes("sess_1", chunk)
    assert not schema_errors("SessionNotification", peer.sent[0].params)


async def test_send_thought_bytes_equal_the_model_path() -> None:
    conn, peer = _connection()
    await conn.send_thought("sess_1", "hmm")
    chunk = s.AgentThoughtChunk(content=s.TextContent(text="hmm"))
    assert encode(peer.sent[0]) == _model_bytes("sess_1", chunk)
    assert not schema_errors("SessionNotification", peer.sent[0].params)


async def test_send_text_builds_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_models(
        monkeypatch,
        "TextContent",
        "AgentMessageChunk",
        "AgentThoughtChunk",
        "SessionNotification",
    )
    conn, peer = _connection()
    await conn.send_text("sess_1", "a", message_id="m")
    await conn.send_thought("sess_1", "b")
    assert len(peer.sent) == 2


@pytest.mark.parametrize(("session_id", "text"), [("sess_1", 42), (7, "a")])
async def test_send_text_of_wrong_types_is_still_rejected(session_id: Any, text: Any) -> None:
    conn, peer = _connection()
    with pytest.raises(pydantic.ValidationError):
        await conn.send_text(session_id, text)
    with pytest.raises(pydantic.ValidationError):
        await conn.send_thought(session_id, text)
    assert not peer.sent


async def test_send_text_with_a_bad_message_id_drops_it_as_the_model_does() -> None:
    conn, peer = _connection()
    await conn.send_text("sess_1", "a", message_id=3)  # type: ignore[arg-type]
    chunk = s.AgentMessageChunk(content=s.TextContent(text="a"), message_id=3)
    assert chunk.message_id is None  # x-deserialize-default-on-error, also in Python
    assert encode(peer.sent[0]) == _model_bytes("sess_1", chunk)


async def test_session_update_sends_update_models_as_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    updates: list[Any] = [
        s.Plan(entries=[s.PlanEntry(content="x", priority="high", status="pending")]),
        s.ToolCall(tool_call_id="t1", title="Read", kind="read"),
        s.ToolCallProgress(tool_call_id="t1", status="completed"),
        s.AgentMessageChunk(content=s.TextContent(text="x"), meta={"k": 1}),
        s.UsageUpdate(used=1, size=2),
    ]
    expected = [_model_bytes("sess_1", update) for update in updates]
    _no_models(monkeypatch, "SessionNotification")
    conn, peer = _connection()
    for update in updates:
        await conn.session_update("sess_1", update)
    assert [encode(note) for note in peer.sent] == expected
    for note in peer.sent:
        assert not schema_errors("SessionNotification", _as_json(note.params))


async def test_session_update_still_validates_anything_else() -> None:
    conn, peer = _connection()
    # A dict is validated into its model, as before.
    raw = {"sessionUpdate": "current_mode_update", "currentModeId": "code"}
    await conn.session_update("sess_1", raw)  # type: ignore[arg-type]
    assert isinstance(peer.sent[0].params, s.SessionNotification)
    assert isinstance(peer.sent[0].params.update, s.CurrentModeUpdate)
    # A model that is not a session update is refused, never sent.
    with pytest.raises(pydantic.ValidationError):
        await conn.session_update("sess_1", s.TextContent(text="x"))  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError):
        await conn.session_update(5, s.CurrentModeUpdate(current_mode_id="x"))  # type: ignore[arg-type]
    assert len(peer.sent) == 1


class _Inner:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send(self, payload: Any, *, related_request_id: Any = None) -> None:
        self.sent.append(payload)


async def test_hooked_stream_runs_hooks_after_the_response_only() -> None:
    inner = _Inner()
    stream = HookedStream(inner)  # type: ignore[arg-type]
    order: list[str] = []

    async def hook() -> None:
        order.append(f"hook after {len(inner.sent)} sent")

    stream.add_hook(1, hook)
    await stream.send(Notification("session/update", {}))
    await stream.send(Response(2, {}))
    assert order == []
    await stream.send(Response(1, {}))
    assert order == ["hook after 3 sent"]
    await stream.send(Response(1, {}))  # hooks run once
    assert order == ["hook after 3 sent"]


class _Chunks(Agent):
    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        for index in range(5):
            await self.client.send_text(params.session_id, f"chunk {index} ")
        await self.client.send_thought(params.session_id, "thinking")
        return "end_turn"


class _Recorder(Client):
    def __init__(self) -> None:
        self.updates: list[s.SessionNotification] = []

    async def session_update(self, params: s.SessionNotification) -> None:
        await anyio.lowlevel.checkpoint()  # an awaiting handler keeps arrival order
        self.updates.append(params)


async def test_prompt_with_plain_text_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _Recorder()
    async with connected(_Chunks(), client) as (conn, agent_check, client_check):
        sid = (await conn.new_session("/tmp")).session_id
        _no_models(monkeypatch, "TextContent", "PromptRequest")
        response = await conn.prompt(sid, "hello")
        assert response.stop_reason == "end_turn"
        monkeypatch.undo()
        # Content blocks still take the model path, with the capability checks.
        response = await conn.prompt(sid, [s.TextContent(text="again")])
        assert response.stop_reason == "end_turn"
    agent_check.assert_valid()
    client_check.assert_valid()
    sent = client_check.sent("session/prompt")
    assert [p["params"] for p in sent] == [
        {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]},
        {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]},
    ]
    texts = [u.update.content.text for u in client.updates]  # type: ignore[union-attr]
    expected = [f"chunk {i} " for i in range(5)] + ["thinking"]
    assert texts == expected * 2
    assert isinstance(client.updates[-1].update, s.AgentThoughtChunk)


async def test_prompt_with_a_bad_session_id_is_refused_before_sending() -> None:
    async with connected(_Chunks(), _Recorder()) as (conn, _, client_check):
        with pytest.raises(pydantic.ValidationError):
            await conn.prompt(42, "hello")  # type: ignore[arg-type]
    assert not client_check.sent("session/prompt")


class _EagerAgent:
    """A scripted agent end: what it sends in answer to a request is all ready at once,
    so the client's read loop takes the next message without yielding in between."""

    def __init__(self, after_new: list[Any] | None = None) -> None:
        self._ready: deque[Any] = deque()
        self._wake = anyio.Event()
        self._closed = False
        self.after_new = after_new or []
        """More session/update params sent right after the first update of session/new."""

    async def send(self, payload: Any, *, related_request_id: Any = None) -> None:
        if not isinstance(payload, Request):
            return
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": payload.method},
        }
        if payload.method == "initialize":
            caps = {"loadSession": True}
            self._answer(payload, {"protocolVersion": 1, "agentCapabilities": caps})
        elif payload.method == "session/new":
            self._answer(payload, {"sessionId": "sess_new"})
            self._notify({"sessionId": "sess_new", "update": update})
            for params in self.after_new:
                self._notify(params)
        elif payload.method == "session/load":
            # History comes before the answer (the spec's order for session/load).
            self._notify({"sessionId": payload.params.session_id, "update": update})
            self._answer(payload, {})
        self._wake.set()

    def _answer(self, request: Request, result: Any) -> None:
        self._ready.append(Response(request.id, result))

    def _notify(self, params: Any) -> None:
        self._ready.append(Notification("session/update", params))

    async def receive(self) -> Received:
        while not self._ready:
            if self._closed:
                raise anyio.EndOfStream
            await self._wake.wait()
            self._wake = anyio.Event()
        return Received(self._ready.popleft())

    async def aclose(self) -> None:
        self._closed = True
        self._wake.set()


class _SeesReturned(Client):
    def __init__(self) -> None:
        self.returned: list[str] = []
        self.seen: list[tuple[str, list[str]]] = []

    async def session_update(self, params: s.SessionNotification) -> None:
        self.seen.append((params.session_id, list(self.returned)))


async def test_new_session_returns_before_its_first_update_is_handled() -> None:
    client = _SeesReturned()
    with anyio.fail_after(10):
        async with connect_agent(client, _EagerAgent()) as conn:
            sid = (await conn.new_session("/tmp")).session_id
            client.returned.append(sid)
            loaded = "sess_old"
            await conn.load_session(loaded, "/tmp")
            client.returned.append(loaded)
    # The update read together with the session/new answer waited for new_session() to
    # return; the history of session/load, sent before its answer, did not wait for it.
    assert client.seen == [("sess_new", ["sess_new"]), ("sess_old", ["sess_new"])]


class _Counts(Client):
    def __init__(self, expected: int) -> None:
        self.updates: list[s.SessionNotification] = []
        self.expected = expected
        self.done = anyio.Event()

    async def session_update(self, params: s.SessionNotification) -> None:
        self.updates.append(params)
        if len(self.updates) == self.expected:
            self.done.set()


async def test_session_updates_stay_lenient_in(caplog: pytest.LogCaptureFixture) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    bad = {"update": chunk}  # no sessionId
    after_new = [
        bad,
        {"sessionId": "sess_new", "update": {**chunk, "messageId": 5, "_meta": "no"}},
        {"sessionId": "sess_new", "update": {"sessionUpdate": "future_kind", "x": 1}},
        {"sessionId": "sess_new", "update": {"sessionUpdate": "plan", "entries": [1, 2]}},
    ]
    client = _Counts(4)
    with anyio.fail_after(10):
        async with connect_agent(client, _EagerAgent(after_new)) as conn:
            await conn.new_session("/tmp")
            await client.done.wait()
    # The bad notification was dropped (and logged); the others were handled in order.
    first, defaulted, unknown, plan = (u.update for u in client.updates)
    assert isinstance(first, s.AgentMessageChunk)
    assert isinstance(defaulted, s.AgentMessageChunk)
    assert (defaulted.message_id, defaulted.meta) == (None, None)  # bad optional values
    assert isinstance(unknown, s.UnknownSessionUpdate) and unknown.model_extra == {"x": 1}
    assert isinstance(plan, s.Plan) and plan.entries == []  # invalid items skipped
    with pytest.raises(InvalidParams) as expected:
        m.SESSION_UPDATE.validate_params(bad)
    logged = [r for r in caplog.records if "session/update" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert str(logged[0].exc_info[1]) == str(expected.value)  # the same error as before
