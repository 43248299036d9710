"""The A2A client's direct JSON-RPC path (`jsonrpc_core.http.HTTPCaller`): streams whose
events arrive several per chunk or split across chunks, calls answered as SSE, error
answers, the one POST per call, and the httpx client the A2A client makes for itself.
The SSE decoding itself is checked in tests/jsonrpc_core/test_sse_decoder_chunks.py.

Tests the private unit `a2a_layer._client` on purpose: it replaces the module's
`new_async_client` to see the httpx client the A2A client makes for itself.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import httpx
import pytest
from _http_fixtures import Answer, ScriptedPeer, json_response, sse_response

import a2a_layer._client as client_module
from a2a_layer import A2AClient, TaskNotFound
from a2a_layer.types import AgentCard, StreamResponse, Task, TaskState
from jsonrpc_core import HTTPStatusError, TransportError

pytestmark = pytest.mark.anyio

URL = "http://agent.test/rpc"
STAMP = "2026-11-30T08:00:00.000Z"


def _card() -> AgentCard:
    return AgentCard.model_validate(
        {
            "name": "a",
            "description": "a",
            "version": "1",
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
            "supportedInterfaces": [
                {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
        }
    )


def _reply(request_id: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def _task(state: str = "TASK_STATE_COMPLETED") -> dict[str, Any]:
    return {"id": "t1", "contextId": "c1", "status": {"state": state, "timestamp": STAMP}}


def _events(request_id: Any, chunks: int) -> list[bytes]:
    """The JSON of a stream: the task, ``chunks`` artifact updates, the completed status."""
    out = [_reply(request_id, {"task": _task("TASK_STATE_SUBMITTED")})]
    for i in range(chunks):
        update = {
            "taskId": "t1",
            "contextId": "c1",
            "artifact": {"artifactId": "a1", "parts": [{"text": f"chunk {i}"}]},
            "append": i > 0,
        }
        out.append(_reply(request_id, {"artifactUpdate": update}))
    status = {"taskId": "t1", "contextId": "c1", "status": _task()["status"]}
    out.append(_reply(request_id, {"statusUpdate": status}))
    return out


def _client(answer: Answer) -> tuple[A2AClient, ScriptedPeer]:
    agent = ScriptedPeer(answer)
    return A2AClient(_card(), http=httpx.AsyncClient(transport=agent)), agent


# -- streams and calls over the direct path -----------------------------------------------


@pytest.mark.parametrize("cut", ["one chunk", "split", "bytewise", "per event"])
async def test_a_stream_yields_every_event_however_the_chunks_fall(cut: str) -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        body = b"".join(b"data: " + e + b"\n\n" for e in _events(request["id"], 5))
        if cut == "one chunk":
            chunks = [body]
        elif cut == "split":
            chunks = [body[i : i + 37] for i in range(0, len(body), 37)]
        elif cut == "bytewise":
            chunks = [body[i : i + 1] for i in range(len(body))]
        else:
            chunks = [b"data: " + e + b"\n\n" for e in _events(request["id"], 5)]
        return sse_response(chunks)

    client, agent = _client(answer)
    async with client:
        events = [event async for event in client.stream("go")]
    assert [e.artifact_update is not None for e in events] == [False] + [True] * 5 + [False]
    assert events[0].task is not None and events[0].task.id == "t1"
    texts = [e.artifact_update.artifact.parts[0].text for e in events[1:-1]]  # type: ignore[union-attr]
    assert texts == [f"chunk {i}" for i in range(5)]
    assert events[-1].status_update is not None
    assert len(agent.requests) == 1


async def test_one_post_per_call_with_the_prepared_headers_and_body() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        return json_response(_reply(request["id"], {"task": _task()}))

    client, agent = _client(answer)
    async with client:
        first = await client.send("hello", message_id="m1")
        second = await client.send("again", message_id="m2")
    assert isinstance(first, Task) and isinstance(second, Task)
    assert first.status.state == TaskState.COMPLETED
    assert len(agent.requests) == 2
    for request, (request_id, message_id) in zip(
        agent.requests, [(1, "m1"), (2, "m2")], strict=True
    ):
        assert request.method == "POST" and str(request.url) == URL
        assert request.headers["content-type"] == "application/json"
        assert request.headers["accept"] == "application/json, text/event-stream"
        assert request.headers["a2a-version"] == "1.0"
        sent = json.loads(request.content)
        assert sent["jsonrpc"] == "2.0" and sent["id"] == request_id
        assert sent["method"] == "SendMessage"
        assert sent["params"]["message"]["messageId"] == message_id
        assert b" " not in request.content  # compact JSON, serialised once


async def test_a_send_request_is_validated_once_as_a_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`send` validates its SendMessageRequest in one pass (nested dicts), not one model at
    a time; the wire form is the one the models built one by one would give."""
    from a2a_layer.types import Message, Part, SendMessageConfiguration, SendMessageRequest

    built: list[str] = []
    for model in (Part, Message, SendMessageConfiguration, SendMessageRequest):
        original = model.__init__

        def counted(
            self: Any, /, _name: str = model.__name__, _init: Any = original, **data: Any
        ) -> None:
            built.append(_name)
            _init(self, **data)

        monkeypatch.setattr(model, "__init__", counted)

    def answer(request: dict[str, Any]) -> httpx.Response:
        return json_response(_reply(request["id"], {"task": _task()}))

    client, agent = _client(answer)
    async with client:
        await client.send(
            "hello", message_id="m1", context_id="c1", metadata={"k": 1}, history_length=2
        )
    assert built == []
    monkeypatch.undo()
    expected = SendMessageRequest(
        message=Message(
            message_id="m1",
            role="ROLE_USER",
            parts=[Part(text="hello")],
            task_id=None,
            context_id="c1",
            metadata=None,
            reference_task_ids=None,
        ),
        configuration=SendMessageConfiguration(
            accepted_output_modes=None,
            task_push_notification_config=None,
            history_length=2,
            return_immediately=False,
        ),
        tenant=None,
        metadata={"k": 1},
    )
    sent = json.loads(agent.requests[0].content)["params"]
    assert sent == expected.model_dump(mode="json", exclude_none=True)


async def test_a_call_answered_as_an_event_stream() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        note = b'{"jsonrpc":"2.0","method":"note"}'
        reply = _reply(request["id"], _task())
        return sse_response([b"data: " + note + b"\n\ndata: " + reply[:20], reply[20:] + b"\n\n"])

    client, _ = _client(answer)
    async with client:
        task = await client.get_task("t1")
    assert task.id == "t1" and task.status.state == TaskState.COMPLETED


async def test_a_call_whose_event_stream_ends_unanswered_fails() -> None:
    client, _ = _client(lambda request: sse_response([b": nothing\n\n"]))
    async with client:
        with pytest.raises(TransportError, match="without answering"):
            await client.get_task("t1")


async def test_leaving_a_stream_early_closes_its_response() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        return sse_response([b"data: " + e + b"\n\n" for e in _events(request["id"], 50)])

    client, agent = _client(answer)
    async with client:
        async with aclosing(client.stream("go")) as events:
            async for _event in events:
                break
        assert agent.bodies[0].closed
    assert agent.bodies[0].sent < 52


async def test_an_error_event_in_a_stream_raises_the_agents_error() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        error = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32001, "message": "no"}}
        first = _reply(request["id"], {"task": _task("TASK_STATE_WORKING")})
        return sse_response(
            [b"data: " + first + b"\n\ndata: " + json.dumps(error).encode() + b"\n\n"]
        )

    client, _ = _client(answer)
    got = []
    async with client:
        with pytest.raises(TaskNotFound):
            async for event in client.subscribe("t1", max_reconnects=0):
                got.append(event)
    assert len(got) == 1


async def test_http_errors_become_the_agents_error_or_a_status_error() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        if request["params"]["id"] == "missing":
            error = {"code": -32001, "message": "Task not found"}
            return json_response(
                json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode(), 404
            )
        return httpx.Response(401, content=b"who are you?")

    client, _ = _client(answer)
    async with client:
        with pytest.raises(TaskNotFound) as not_found:
            await client.get_task("missing")
        assert not_found.value.received
        with pytest.raises(HTTPStatusError) as denied:
            await client.get_task("other")
        assert denied.value.status == 401


async def test_answers_without_a_response_fail_instead_of_hanging() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        task_id = request["params"]["id"]
        if task_id == "accepted":
            return httpx.Response(202)
        if task_id == "other-id":
            return json_response(_reply(999, _task()))
        if task_id == "text":
            return httpx.Response(200, headers={"content-type": "text/plain"}, content=b"hi")
        error = {"code": -32700, "message": "Parse error"}
        return json_response(json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode())

    client, _ = _client(answer)
    async with client:
        for task_id in ("accepted", "other-id", "text"):
            with pytest.raises(TransportError):
                await client.get_task(task_id)
        with pytest.raises(Exception, match="Parse error"):
            await client.get_task("null-id")


def _stream_broken_after_two_events(posts: list[str], *, drop_connection: bool) -> Answer:
    """An agent answering GetTask with the completed task, and a stream with two of its
    events and then a torn event, or (``drop_connection``) a connection that fails."""

    def answer(request: dict[str, Any]) -> httpx.Response:
        posts.append(request["method"])
        if request["method"] == "GetTask":
            return json_response(_reply(request["id"], _task()))
        chunks = [b"data: " + e + b"\n\n" for e in _events(request["id"], 3)[:2]]
        if drop_connection:
            return sse_response(chunks, fail=True)
        return sse_response([*chunks, b"data: {tru"])

    return answer


async def _stream_through_a_break(
    *, drop_connection: bool
) -> tuple[list[StreamResponse], ScriptedPeer]:
    """What ``stream`` yields when the stream breaks after two events (see
    `_stream_broken_after_two_events`); the client must follow up with one GetTask."""
    posts: list[str] = []
    client, agent = _client(_stream_broken_after_two_events(posts, drop_connection=drop_connection))
    async with client:
        events = [event async for event in client.stream("go", reconnect_delay=0)]
    assert posts == ["SendStreamingMessage", "GetTask"]
    return events, agent


async def test_a_stream_that_breaks_is_resumed_by_the_client() -> None:
    events, _ = await _stream_through_a_break(drop_connection=False)
    assert events[-1].task is not None and events[-1].task.status.state == TaskState.COMPLETED


# -- the httpx client -------------------------------------------------------------------


async def test_the_client_makes_its_httpx_client_with_new_async_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[dict[str, Any]] = []
    agent = ScriptedPeer(lambda request: json_response(_reply(request["id"], _task())))

    def fake(**kwargs: Any) -> httpx.AsyncClient:
        made.append(kwargs)
        return httpx.AsyncClient(transport=agent, **kwargs)

    monkeypatch.setattr(client_module, "new_async_client", fake)
    async with A2AClient(_card(), timeout=5.0, read_timeout=60.0) as client:
        assert (await client.get_task("t1")).id == "t1"
    assert len(made) == 1
    timeout = made[0]["timeout"]
    assert (timeout.connect, timeout.read) == (5.0, 60.0)

    given = httpx.AsyncClient(transport=agent)
    async with A2AClient(_card(), http=given) as client:
        assert client.http is given
    assert len(made) == 1


async def test_a_stream_whose_connection_breaks_is_followed_up_with_get_task() -> None:
    events, agent = await _stream_through_a_break(drop_connection=True)
    assert [e.task is not None for e in events] == [True, False, True]
    assert agent.bodies[0].closed


async def test_a_broken_stream_before_any_event_is_a_transport_error() -> None:
    client, _ = _client(lambda request: sse_response([b": hello\n\n"], fail=True))
    async with client:
        with pytest.raises(TransportError, match="response stream broke"):
            async for _event in client.stream("go"):
                pass


async def test_an_error_event_answers_a_call() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        error = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32001, "message": "no"}}
        return sse_response([b"data: " + json.dumps(error).encode() + b"\n\n"])

    client, _ = _client(answer)
    async with client:
        with pytest.raises(TaskNotFound) as raised:
            await client.get_task("t1")
    assert raised.value.received


async def test_an_http_error_on_a_stream_is_the_agents_error() -> None:
    def answer(request: dict[str, Any]) -> httpx.Response:
        error = {"code": -32001, "message": "Task not found"}
        body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
        return json_response(body, 404)

    client, _ = _client(answer)
    async with client:
        with pytest.raises(TaskNotFound):
            async for _event in client.subscribe("missing", max_reconnects=0):
                pass
