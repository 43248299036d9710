"""A streaming call that fails before its first event (SubscribeToTask on a terminal or
unknown task, SendStreamingMessage with invalid params, an unknown task or a terminal
one) is answered with a plain JSON-RPC error (``application/json``), on JSON-RPC 1.0
and through the 0.3 bridge, as the HTTP+JSON binding does; a stream with an event is
SSE, even when that event is its only one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from a2a_fixtures.harness import in_process, make_card, message, rpc, rpc_body, sse_data

from a2a_layer import (
    A2AClient,
    A2AServer,
    ExecutionContext,
    TaskNotFound,
    TaskUpdater,
    UnsupportedOperation,
)

pytestmark = pytest.mark.anyio


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    if context.text == "reply":
        await updater.reply("just this")
    elif context.text == "ask":
        await updater.requires_input("and then?")
    else:
        await updater.complete("done")


@pytest.fixture
async def served() -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """An in-process server and the id of a completed task on it."""
    async with in_process(A2AServer(make_card(), agent)) as http:
        done = await rpc(http, "SendMessage", {"message": message("finish", "m-done")})
        yield http, done["result"]["task"]["id"]


async def post(
    http: httpx.AsyncClient, method: str, params: Any, version: str | None
) -> httpx.Response:
    headers = {"accept": "text/event-stream, application/json"}
    if version is not None:
        headers["A2A-Version"] = version
    return await http.post("/", json=rpc_body(method, params), headers=headers)


def v03_message(message_id: str, text: str = "more", **extra: Any) -> dict[str, Any]:
    parts = [{"kind": "text", "text": text}]
    return {"kind": "message", "messageId": message_id, "role": "user", "parts": parts, **extra}


CASES = [
    # (method, params (TASK stands for the completed task's id), version, error code)
    ("SubscribeToTask", {"id": "TASK"}, "1.0", -32004),
    ("SubscribeToTask", {"id": "no-such-task"}, "1.0", -32001),
    ("SendStreamingMessage", {"message": message("more", "m-1", taskId="TASK")}, "1.0", -32004),
    ("SendStreamingMessage", {"message": message("x", "m-2", taskId="gone")}, "1.0", -32001),
    ("SendStreamingMessage", {"message": {"messageId": "m-3"}}, "1.0", -32602),
    ("tasks/resubscribe", {"id": "TASK"}, None, -32004),
    ("tasks/resubscribe", {"id": "no-such-task"}, None, -32001),
    ("message/stream", {"message": v03_message("m-4", taskId="TASK")}, None, -32004),
    ("message/stream", {"message": {"kind": "message"}}, None, -32602),
]


@pytest.mark.parametrize(("method", "params", "version", "code"), CASES)
async def test_an_error_before_the_first_event_is_a_plain_json_rpc_error(
    served: tuple[httpx.AsyncClient, str],
    method: str,
    params: dict[str, Any],
    version: str | None,
    code: int,
) -> None:
    http, task_id = served
    params = {
        k: ({**v, "taskId": task_id} if isinstance(v, dict) and v.get("taskId") == "TASK" else v)
        for k, v in params.items()
    }
    if params.get("id") == "TASK":
        params["id"] = task_id
    response = await post(http, method, params, version)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == 1 and body["error"]["code"] == code and "result" not in body


@pytest.mark.parametrize("version", ["1.0", None])
async def test_a_stream_with_one_event_is_still_sse(
    served: tuple[httpx.AsyncClient, str], version: str | None
) -> None:
    http, _ = served
    method = "SendStreamingMessage" if version else "message/stream"
    msg = message("reply", "m-r") if version else v03_message("m-r", "reply")
    response = await post(http, method, {"message": msg}, version)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_data(response.text)
    assert len(events) == 1 and "result" in events[0]


async def test_subscribing_to_an_interrupted_task_streams(
    served: tuple[httpx.AsyncClient, str],
) -> None:
    http, _ = served
    asked = await rpc(http, "SendMessage", {"message": message("ask", "m-ask")})
    request = rpc_body("SubscribeToTask", {"id": asked["result"]["task"]["id"]})
    headers = {"accept": "text/event-stream", "A2A-Version": "1.0"}
    text = ""
    with anyio.fail_after(10):  # the stream stays open until the task moves on
        async with http.stream("POST", "/", json=request, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            async for chunk in response.aiter_text():
                text += chunk
                if "\n\n" in text.lstrip(": \n"):
                    break
    first = sse_data(text)[0]["result"]["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


async def test_the_client_raises_the_error_of_a_refused_stream(
    served: tuple[httpx.AsyncClient, str],
) -> None:
    http, task_id = served
    async with A2AClient.connect("http://127.0.0.1", http=http) as client:
        with pytest.raises(UnsupportedOperation):
            async for _ in client.subscribe(task_id):
                pass
        with pytest.raises(TaskNotFound):
            async for _ in client.subscribe("no-such-task"):
                pass
