"""The HTTP+JSON binding and the 0.3 JSON-RPC compatibility of `A2AServer`, on the wire.

HTTP+JSON answers carry google.rpc.Status error bodies with the table's statuses; 0.3
clients get ``kind`` discriminators, lowercase states, ``final`` and ``blocking`` on the
same endpoint. Emitted objects are checked against the 1.0 and 0.3 schemas."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from a2a_fixtures import schemas
from a2a_fixtures.harness import in_process, make_card, message, rpc, rpc_stream, sse_data

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater

pytestmark = pytest.mark.anyio

V10 = {"A2A-Version": "1.0"}


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    """``ask``: input-required; ``slow``: working until cancelled; else a full run."""
    if context.text == "ask" and context.is_new_task:
        await updater.requires_input("which?")
        return
    if context.text == "slow":
        await updater.start_work()
        await anyio.sleep_forever()
    await updater.start_work()
    await updater.add_artifact(f"out: {context.text}", name="out")
    await updater.complete()


def server(**options: Any) -> A2AServer:
    # The push configs here name loopback: private webhook targets are opt-in.
    return A2AServer(make_card(push=True), agent, allow_private_webhooks=True, **options)


def rest_send(text: str, mid: str, **extra: Any) -> dict[str, Any]:
    return {"message": message(text, mid), **extra}


async def test_rest_operations_and_error_bodies() -> None:
    async with in_process(server()) as http:
        sent = await http.post("/rest/message:send", json=rest_send("hi", "m-1"), headers=V10)
        task = sent.json()["task"]
        got = await http.get(f"/rest/tasks/{task['id']}", params={"historyLength": 1}, headers=V10)
        listed = await http.get("/rest/tasks", params={"pageSize": 1}, headers=V10)
        cancel = await http.post(f"/rest/tasks/{task['id']}:cancel", json={}, headers=V10)
        missing = await http.get("/rest/tasks/nope", headers=V10)
        sub = await http.get(f"/rest/tasks/{task['id']}:subscribe", headers=V10)
        version = await http.get("/rest/tasks", headers={"A2A-Version": "9.9"})
        no_version = await http.get("/rest/tasks")
        bad_json = await http.post(
            "/rest/message:send", content=b"{", headers={**V10, "content-type": "application/json"}
        )
        bad_part = await http.post(
            "/rest/message:send",
            json={"message": {"messageId": "x", "role": "ROLE_USER", "parts": [{}]}},
            headers=V10,
        )
        nowhere = await http.get("/rest/nowhere/at/all", headers=V10)
    assert sent.status_code == 200 and sent.headers["content-type"] == "application/a2a+json"
    schemas.v10()("SendMessageResponse", sent.json())
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert got.status_code == 200 and len(got.json()["history"]) == 1
    page = listed.json()
    schemas.v10()("ListTasksResponse", page)
    assert len(page["tasks"]) == 1 and page["nextPageToken"] == "" and page["totalSize"] == 1

    def reason(response: Any) -> tuple[int, str, str]:
        error = response.json()["error"]
        assert error["code"] == response.status_code
        return response.status_code, error["status"], error["details"][0]["reason"]

    assert reason(cancel) == (400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
    assert reason(missing) == (404, "NOT_FOUND", "TASK_NOT_FOUND")
    assert reason(sub) == (400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
    assert reason(version) == (400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
    assert reason(no_version) == (400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
    assert reason(bad_json) == (400, "INVALID_ARGUMENT", "JSON_PARSE")
    assert reason(bad_part) == (400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    assert nowhere.status_code == 404


async def test_rest_streaming_and_subscribe() -> None:
    async with in_process(server()) as http:
        streamed = await http.post("/rest/message:stream", json=rest_send("go", "s-1"), headers=V10)
        asked = (
            await http.post("/rest/message:send", json=rest_send("ask", "s-2"), headers=V10)
        ).json()["task"]
        async with anyio.create_task_group() as tg:
            events: list[Any] = []

            async def subscribe() -> None:
                async with http.stream(
                    "POST", f"/rest/tasks/{asked['id']}:subscribe", json={}, headers=V10
                ) as response:
                    assert response.headers["content-type"].startswith("text/event-stream")
                    async for chunk in response.aiter_text():
                        events.extend(sse_data(chunk))
                        if len(events) == 1:
                            answered.set()

            answered = anyio.Event()
            tg.start_soon(subscribe)
            with anyio.fail_after(5):
                await answered.wait()
            body = {"message": {**message("blue", "s-3"), "taskId": asked["id"]}}
            await http.post("/rest/message:send", json=body, headers=V10)
    kinds = [next(iter(e)) for e in sse_data(streamed.text)]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    for event in events:
        schemas.v10()("StreamResponse", event)
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_rest_push_config_crud_and_tenant_routes() -> None:
    async with in_process(server()) as http:
        task = (
            await http.post("/rest/acme/message:send", json=rest_send("ask", "p-1"), headers=V10)
        ).json()["task"]
        base = f"/rest/acme/tasks/{task['id']}/pushNotificationConfigs"
        created = await http.post(
            base, json={"url": "http://127.0.0.1:9/hook", "token": "t"}, headers=V10
        )
        config = created.json()
        got = await http.get(f"{base}/{config['id']}", headers=V10)
        listed = await http.get(base, headers=V10)
        deleted = await http.delete(f"{base}/{config['id']}", headers=V10)
        deleted_again = await http.delete(f"{base}/{config['id']}", headers=V10)
        gone = await http.get(f"{base}/{config['id']}", headers=V10)
        other_tenant = await http.get(f"/rest/tasks/{task['id']}", headers=V10)
    schemas.v10()("TaskPushNotificationConfig", config)
    assert config["taskId"] == task["id"] and config["tenant"] == "acme"
    assert got.json() == config
    assert listed.json()["configs"] == [config]
    assert deleted.status_code == deleted_again.status_code == 200
    assert gone.status_code == 404
    assert other_tenant.status_code == 404


async def test_v03_send_stream_get_cancel_on_the_same_endpoint() -> None:
    v03 = schemas.v03()
    msg = {
        "kind": "message",
        "messageId": "old-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hello"}],
    }
    async with in_process(server()) as http:
        sent = await rpc(http, "message/send", {"message": msg}, version=None)
        task = sent["result"]
        got = await rpc(http, "tasks/get", {"id": task["id"], "historyLength": 1}, version=None)
        stream_msg = {**msg, "messageId": "old-2"}
        events = await rpc_stream(http, "message/stream", {"message": stream_msg}, version=None)
        slow_msg = {**msg, "messageId": "old-3", "parts": [{"kind": "text", "text": "slow"}]}
        slow = await rpc(
            http,
            "message/send",
            {"message": slow_msg, "configuration": {"blocking": False}},
            version="0.3",
        )
        canceled = await rpc(http, "tasks/cancel", {"id": slow["result"]["id"]}, version=None)
        resub = await rpc_stream(http, "tasks/resubscribe", {"id": task["id"]}, version=None)
        missing = await rpc(http, "tasks/get", {"id": "nope"}, version=None)
    v03("Task", task)
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "out: hello"}]
    assert len(got["result"]["history"]) == 1
    results = [e["result"] for e in events]
    assert [r["kind"] for r in results] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
    ]
    v03("TaskStatusUpdateEvent", results[1])
    v03("TaskArtifactUpdateEvent", results[2])
    assert results[1]["final"] is False and results[-1]["final"] is True
    assert results[-1]["status"]["state"] == "completed"
    assert slow["result"]["status"]["state"] in ("submitted", "working")
    assert canceled["result"]["status"]["state"] == "canceled"
    assert resub[0]["error"]["code"] == -32004
    assert missing["error"]["code"] == -32001


async def test_v03_push_config_methods() -> None:
    async with in_process(server()) as http:
        msg = {
            "kind": "message",
            "messageId": "p",
            "role": "user",
            "parts": [{"kind": "text", "text": "ask"}],
        }
        tid = (await rpc(http, "message/send", {"message": msg}, version=None))["result"]["id"]
        params = {
            "taskId": tid,
            "pushNotificationConfig": {
                "url": "http://127.0.0.1:9/hook",
                "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
            },
        }
        created = await rpc(http, "tasks/pushNotificationConfig/set", params, version=None)
        config_id = created["result"]["pushNotificationConfig"]["id"]
        got = await rpc(
            http,
            "tasks/pushNotificationConfig/get",
            {"id": tid, "pushNotificationConfigId": config_id},
            version=None,
        )
        listed = await rpc(http, "tasks/pushNotificationConfig/list", {"id": tid}, version=None)
        deleted = await rpc(
            http,
            "tasks/pushNotificationConfig/delete",
            {"id": tid, "pushNotificationConfigId": config_id},
            version=None,
        )
    schemas.v03()("TaskPushNotificationConfig", created["result"])
    assert created["result"]["pushNotificationConfig"]["authentication"] == {
        "schemes": ["Bearer"],
        "credentials": "secret",
    }
    assert got["result"] == created["result"]
    assert listed["result"] == [created["result"]]
    assert deleted["result"] is None
