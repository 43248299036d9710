"""A2A security: a task belongs to the caller that created it, tokens stay secret.

With bearer authentication, another authenticated caller can neither get, list, cancel,
subscribe to, continue, deduplicate against, nor configure push for a task it does not
own, over JSON-RPC (1.0 and 0.3) and HTTP+JSON alike: the task is simply not found.
Bearer tokens and push tokens never appear in a log record or an error body.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx
import pytest
from a2a_fixtures.harness import in_process, make_card, message, rpc, rpc_stream
from soak.kit import eventually

from a2a_layer import A2AServer, ExecutionContext, SQLiteTaskStore, TaskUpdater
from jsonrpc_core import BearerAuth

pytestmark = pytest.mark.anyio

TOKENS = {
    "tok-alice-5f2a9c": {"iss": "https://issuer", "sub": "alice", "scope": "a2a"},
    "tok-bob-77e1d0": {"iss": "https://issuer", "sub": "bob", "scope": "a2a"},
}
ALICE = {"authorization": "Bearer tok-alice-5f2a9c"}
BOB = {"authorization": "Bearer tok-bob-77e1d0"}
PUSH_TOKEN = "push-secret-0c4e1b"
TASK_NOT_FOUND = -32001


async def verify(token: str) -> Any:
    return TOKENS.get(token)


class GatedAgent:
    """Works until ``gate`` is set; records who asked."""

    def __init__(self) -> None:
        self.gate = anyio.Event()
        self.principals: list[Any] = []
        self.tenants: list[str | None] = []

    async def __call__(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        self.principals.append(context.principal)
        self.tenants.append(context.tenant)
        await updater.start_work()
        if context.text == "wait":
            await self.gate.wait()
        await updater.complete("done")


def make_server(agent: GatedAgent, **options: Any) -> A2AServer:
    return A2AServer(
        make_card(push=True),
        agent,
        auth=BearerAuth(verify),
        push_retries=1,
        allow_private_webhooks=True,  # the push configs here name loopback
        **options,
    )


def error_code(answer: dict[str, Any]) -> int | None:
    error = answer.get("error")
    return error["code"] if isinstance(error, dict) else None


async def alice_task(http: httpx.AsyncClient) -> str:
    sent = await rpc(
        http,
        "SendMessage",
        {"message": message("wait", "m-alice"), "configuration": {"returnImmediately": True}},
        headers=ALICE,
    )
    task_id: str = sent["result"]["task"]["id"]
    return task_id


async def test_another_caller_cannot_reach_a_task_over_json_rpc() -> None:
    agent = GatedAgent()
    async with in_process(make_server(agent)) as http:
        task_id = await alice_task(http)
        hook = {"taskId": task_id, "url": "https://example.com/hook", "token": PUSH_TOKEN}
        refused = {
            "GetTask": {"id": task_id},
            "CancelTask": {"id": task_id},
            "CreateTaskPushNotificationConfig": hook,
            "ListTaskPushNotificationConfigs": {"taskId": task_id},
            "GetTaskPushNotificationConfig": {"taskId": task_id, "id": "c"},
            "DeleteTaskPushNotificationConfig": {"taskId": task_id, "id": "c"},
            "SendMessage": {"message": message("more", "m-bob-1", taskId=task_id)},
        }
        for method, params in refused.items():
            answer = await rpc(http, method, params, headers=BOB)
            assert error_code(answer) == TASK_NOT_FOUND, (method, answer)
        events = await rpc_stream(http, "SubscribeToTask", {"id": task_id}, headers=BOB)
        assert [error_code(e) for e in events] == [TASK_NOT_FOUND]
        listed = await rpc(http, "ListTasks", {}, headers=BOB)
        assert listed["result"]["tasks"] == []
        # The same message id from another caller is another message: a new task.
        replayed = await rpc(
            http,
            "SendMessage",
            {"message": message("hi", "m-alice"), "configuration": {"returnImmediately": True}},
            headers=BOB,
        )
        assert replayed["result"]["task"]["id"] != task_id
        # 0.3 names reach the same service.
        answer = await rpc(http, "tasks/get", {"id": task_id}, version=None, headers=BOB)
        assert error_code(answer) == TASK_NOT_FOUND
        # The owner still sees and controls it.
        got = await rpc(http, "GetTask", {"id": task_id}, headers=ALICE)
        assert got["result"]["id"] == task_id
        listed = await rpc(http, "ListTasks", {}, headers=ALICE)
        assert [t["id"] for t in listed["result"]["tasks"]] == [task_id]
        created = await rpc(http, "CreateTaskPushNotificationConfig", hook, headers=ALICE)
        assert "tenant" not in created["result"], "the owner digest must not leak"
        cancelled = await rpc(http, "CancelTask", {"id": task_id}, headers=ALICE)
        assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert agent.principals[0]["sub"] == "alice"
    assert agent.tenants[0] is None, "the agent sees the request's tenant, not the scope"


async def test_another_caller_cannot_reach_a_task_over_http_json() -> None:
    agent = GatedAgent()
    async with in_process(make_server(agent)) as http:
        task_id = await alice_task(http)
        headers = {**BOB, "A2A-Version": "1.0"}
        for verb, path in [
            ("GET", f"/rest/tasks/{task_id}"),
            ("POST", f"/rest/tasks/{task_id}:cancel"),
            ("GET", f"/rest/tasks/{task_id}:subscribe"),
            ("GET", f"/rest/tasks/{task_id}/pushNotificationConfigs"),
        ]:
            response = await http.request(verb, path, headers=headers)
            assert response.status_code == 404, (verb, path, response.text)
        listed = await http.get("/rest/tasks", headers=headers)
        assert listed.status_code == 200 and listed.json().get("tasks", []) == []
        mine = await http.get(f"/rest/tasks/{task_id}", headers={**ALICE, "A2A-Version": "1.0"})
        assert mine.status_code == 200 and mine.json()["id"] == task_id
        agent.gate.set()


async def test_ownership_survives_a_restart_on_sqlite(tmp_path: Any) -> None:
    db = tmp_path / "tasks.db"
    agent = GatedAgent()
    agent.gate.set()
    async with in_process(make_server(agent, store=SQLiteTaskStore(db))) as http:
        sent = await rpc(http, "SendMessage", {"message": message("go", "m-1")}, headers=ALICE)
        task_id = sent["result"]["task"]["id"]
    async with in_process(make_server(agent, store=SQLiteTaskStore(db))) as http:
        answer = await rpc(http, "GetTask", {"id": task_id}, headers=BOB)
        assert error_code(answer) == TASK_NOT_FOUND
        answer = await rpc(http, "GetTask", {"id": task_id}, headers=ALICE)
        assert answer["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_tenant_cannot_forge_another_callers_scope() -> None:
    agent = GatedAgent()
    async with in_process(make_server(agent)) as http:
        task_id = await alice_task(http)
        for tenant in ("\x1f", "x\x1fabc", "\x1f" * 40):
            answer = await rpc(http, "GetTask", {"id": task_id, "tenant": tenant}, headers=BOB)
            assert error_code(answer) in (-32602, TASK_NOT_FOUND), answer
        agent.gate.set()


async def test_tokens_never_reach_logs_or_error_bodies(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    agent = GatedAgent()
    agent.gate.set()
    bodies: list[str] = []
    async with in_process(make_server(agent)) as http:
        # A rejected token, a forged one, a good one, and a failing push delivery.
        for headers in (
            {"authorization": "Bearer tok-alice-5f2a9c-forged"},
            {"authorization": "Basic tok-alice-5f2a9c"},
            ALICE,
        ):
            response = await http.post(
                "/",
                json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}},
                headers={**headers, "A2A-Version": "1.0"},
            )
            bodies.append(response.text + str(response.headers))
            response = await http.get("/rest/tasks/nope", headers={**headers, "A2A-Version": "1.0"})
            bodies.append(response.text + str(response.headers))
        hook = {"url": "http://127.0.0.1:9/hook", "token": PUSH_TOKEN}
        config = {
            "taskPushNotificationConfig": {
                **hook,
                "authentication": {"scheme": "Bearer", "credentials": "cred-9d8e7f"},
            }
        }
        answer = await rpc(
            http,
            "SendMessage",
            {"message": message("go", "m-push"), "configuration": config},
            headers=ALICE,
        )
        bodies.append(str(answer))
        await eventually(lambda: any("push to" in r.getMessage() for r in caplog.records))
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    for secret in ("tok-alice-5f2a9c", "tok-bob-77e1d0", PUSH_TOKEN, "cred-9d8e7f"):
        assert secret not in text, f"{secret} leaked into the logs"
        for body in bodies[:-1]:
            assert secret not in body, f"{secret} leaked into an answer"
