"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on `MCPServer`.

Raw 2026-07-28 requests over in-process HTTP: a task-supporting tool answers with a
task when the request declares the extension, ``tasks/get`` follows it to its end,
``tasks/update`` answers its questions (partially too), ``tasks/cancel`` stops it, a
listen stream carries ``notifications/tasks``; without the extension the same tool runs
directly, and a task-only tool is refused with -32021. The core messages are validated
against the 2026-07-28 schema; the extension's by SEP-2663's shapes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp2026 import TASKS, VERSION, ModernHTTP, asgi_client, envelope, modern_http, server_wire
from mcp_schema import SchemaCheckingASGI, WireChecker, requires_schema

from jsonrpc_core import InternalError
from jsonrpc_core.http import SSEDecoder
from mcp_layer import Context, InputRequest, MCPServer, TaskManager

pytestmark = [pytest.mark.anyio, requires_schema]

WITH_TASKS: dict[str, Any] = {"extensions": {TASKS: {}}, "elicitation": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Gate:
    """Lets a test decide when a task's work may finish."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = 0
        self.finished = 0


def build_server(gate: Gate) -> MCPServer:
    server = MCPServer("tasks", tasks=TaskManager(ttl_ms=600_000, poll_interval_ms=20))

    @server.tool(task_support="optional")
    async def job(label: str = "x") -> str:
        gate.started += 1
        await gate.release.wait()
        gate.finished += 1
        return f"job {label} done"

    @server.tool(task_support="required")
    async def only_as_task() -> str:
        return "as a task"

    @server.tool(task_support="optional")
    async def tool_error() -> str:
        raise RuntimeError("it did not work")

    @server.tool(task_support="optional")
    async def protocol_error() -> str:
        raise InternalError("broken")

    @server.tool(task_support="optional")
    async def two_questions(ctx: Context) -> str:
        answers = await ctx.ask(
            {"a": InputRequest.elicit("A?", NAME), "b": InputRequest.elicit("B?", NAME)}
        )
        return "+".join(answers[k].content["name"] for k in ("a", "b"))

    @server.tool(task_support="required", task_start="explicit")
    async def ask_then_work(ctx: Context) -> str:
        answer = await ctx.elicit("Who?", NAME, key="who")
        started = await ctx.start_task()
        await ctx.report_progress(1)  # no progress from a task: dropped quietly
        return f"{answer.content['name']} (task: {started})"  # type: ignore[index]

    @server.tool()
    def plain() -> str:
        return "plain"

    return server


@pytest.fixture
def wire() -> Iterator[WireChecker]:
    yield from server_wire()


@asynccontextmanager
async def serving(gate: Gate, wire: WireChecker) -> AsyncIterator[tuple[ModernHTTP, MCPServer]]:
    server = build_server(gate)
    async with modern_http(server, wire) as client:
        yield client, server


POLLS = 200


async def until(client: ModernHTTP, task_id: str, *statuses: str) -> dict[str, Any]:
    """Poll ``tasks/get`` until the task has one of ``statuses``: tasks/get is how a client
    learns a status. The server runs in process, so between polls the task runs until it
    blocks; a task that never gets there fails after ``POLLS`` polls."""
    for _ in range(POLLS):
        answer = await client.post("tasks/get", {"taskId": task_id}, capabilities=WITH_TASKS)
        task: dict[str, Any] = answer.result
        if task["status"] in statuses:
            return task
        await anyio.wait_all_tasks_blocked()
    raise AssertionError(f"task {task_id} never reached {statuses}: last {task['status']}")


def assert_task_shape(task: dict[str, Any]) -> None:
    assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"} <= set(task)
    assert "ttl" not in task and "pollInterval" not in task and "requestState" not in task
    assert isinstance(task["pollIntervalMs"], int)


async def test_a_task_from_creation_to_its_result(wire: WireChecker) -> None:
    gate = Gate()
    async with serving(gate, wire) as (client, server):
        created = await client.post(
            "tools/call", {"name": "job", "arguments": {"label": "a"}}, capabilities=WITH_TASKS
        )
        task = created.result
        assert task["resultType"] == "task" and task["status"] == "working"
        assert_task_shape(task)
        assert not {"result", "error", "inputRequests", "task"} & set(task)
        # It exists as soon as it is announced.
        working = await client.post(
            "tasks/get", {"taskId": task["taskId"]}, capabilities=WITH_TASKS
        )
        assert working.result["resultType"] == "complete"
        assert working.result["status"] == "working" and "result" not in working.result
        gate.release.set()
        done = await until(client, task["taskId"], "completed")
        assert_task_shape(done)
        assert done["result"]["content"] == [{"type": "text", "text": "job a done"}]
        assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})
        assert server.tasks is not None and task["taskId"] in server.tasks.records


async def test_without_the_extension_the_tool_runs_directly(wire: WireChecker) -> None:
    gate = Gate()
    gate.release.set()
    async with serving(gate, wire) as (client, _):
        direct = await client.post("tools/call", {"name": "job", "arguments": {}})
        refused = await client.post("tools/call", {"name": "only_as_task", "arguments": {}})
        gated = [
            await client.post(method, params)
            for method, params in (
                ("tasks/get", {"taskId": "t"}),
                ("tasks/update", {"taskId": "t", "inputResponses": {}}),
                ("tasks/cancel", {"taskId": "t"}),
            )
        ]
        legacy_hint = await client.post(
            "tools/call",
            {"name": "plain", "arguments": {}, "task": {"ttl": 1000, "pollInterval": 10}},
            capabilities=WITH_TASKS,
        )
    assert direct.result["resultType"] == "complete"
    assert direct.result["content"][0]["text"] == "job x done"
    assert (refused.status, refused.error["code"]) == (400, -32021)
    assert refused.error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert [(a.status, a.error["code"]) for a in gated] == [(400, -32021)] * 3
    assert legacy_hint.result["resultType"] == "complete"  # a stray `task` param is ignored


async def test_tool_errors_complete_and_protocol_errors_fail(wire: WireChecker) -> None:
    async with serving(Gate(), wire) as (client, _):
        ids = []
        for name in ("tool_error", "protocol_error"):
            created = await client.post(
                "tools/call", {"name": name, "arguments": {}}, capabilities=WITH_TASKS
            )
            ids.append(created.result["taskId"])
        errored = await until(client, ids[0], "completed", "failed")
        failed = await until(client, ids[1], "completed", "failed")
    assert errored["status"] == "completed" and errored["result"]["isError"] is True
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"] == {"code": -32603, "message": "broken"}


async def test_cancel_is_an_ack_and_settles_cancelled(wire: WireChecker) -> None:
    gate = Gate()
    async with serving(gate, wire) as (client, _):
        created = await client.post(
            "tools/call", {"name": "job", "arguments": {}}, capabilities=WITH_TASKS
        )
        task_id = created.result["taskId"]
        ack = await client.post("tasks/cancel", {"taskId": task_id}, capabilities=WITH_TASKS)
        assert ack.result == {
            "resultType": "complete",
            "_meta": ack.result["_meta"],  # serverInfo only: no task envelope
        }
        cancelled = await until(client, task_id, "cancelled", "completed", "failed")
        again = await client.post("tasks/cancel", {"taskId": task_id}, capabilities=WITH_TASKS)
        unknown = await client.post(
            "tasks/get", {"taskId": "no-such-task"}, capabilities=WITH_TASKS
        )
    assert cancelled["status"] == "cancelled"
    assert gate.finished == 0
    assert again.result["resultType"] == "complete"  # idempotent on a terminal task
    assert (unknown.status, unknown.error["code"]) == (400, -32602)


async def test_questions_wait_for_updates_and_partial_answers(wire: WireChecker) -> None:
    async with serving(Gate(), wire) as (client, _):
        created = await client.post(
            "tools/call", {"name": "two_questions", "arguments": {}}, capabilities=WITH_TASKS
        )
        task_id = created.result["taskId"]
        waiting = await until(client, task_id, "input_required")
        assert set(waiting["inputRequests"]) == {"a", "b"}
        assert waiting["inputRequests"]["a"]["method"] == "elicitation/create"
        first = await client.post(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {
                    "a": {"action": "accept", "content": {"name": "Ada"}},
                    "never-asked": {"ignored": True},
                },
            },
            capabilities=WITH_TASKS,
        )
        assert first.result["resultType"] == "complete" and "status" not in first.result
        half = await client.post("tasks/get", {"taskId": task_id}, capabilities=WITH_TASKS)
        assert half.result["status"] == "input_required"
        assert list(half.result["inputRequests"]) == ["b"]
        await client.post(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {"b": {"action": "accept", "content": {"name": "Bo"}}},
            },
            capabilities=WITH_TASKS,
        )
        done = await until(client, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "Ada+Bo"


async def test_questions_first_then_a_task(wire: WireChecker) -> None:
    async with serving(Gate(), wire) as (client, _):
        first = await client.post(
            "tools/call", {"name": "ask_then_work", "arguments": {}}, capabilities=WITH_TASKS
        )
        assert first.result["resultType"] == "input_required"
        assert "taskId" not in first.result
        second = await client.post(
            "tools/call",
            {
                "name": "ask_then_work",
                "arguments": {},
                "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first.result["requestState"],
            },
            capabilities=WITH_TASKS,
        )
        assert second.result["resultType"] == "task"
        assert "requestState" not in second.result and "inputRequests" not in second.result
        done = await until(client, second.result["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Ada (task: True)"


async def test_task_status_notifications_on_a_listen_stream(wire: WireChecker) -> None:
    gate = Gate()
    server = build_server(gate)
    async with asgi_client(SchemaCheckingASGI(server.asgi_app(), wire)) as http:
        client = ModernHTTP(http)
        with anyio.fail_after(20):
            created = await client.post(
                "tools/call", {"name": "job", "arguments": {}}, capabilities=WITH_TASKS
            )
            task_id = created.result["taskId"]
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 99,
                    "method": "subscriptions/listen",
                    "params": {
                        "_meta": envelope(WITH_TASKS),
                        "notifications": {"taskIds": [task_id]},
                    },
                }
            ).encode()
            headers = {
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": VERSION,
                "mcp-method": "subscriptions/listen",
            }
            messages: list[dict[str, Any]] = []
            async with http.stream("POST", "/mcp", content=body, headers=headers) as response:
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.data:
                            messages.append(json.loads(event.data))
                    if len(messages) == 1:
                        gate.release.set()  # acknowledged: let the task finish
                    if messages and messages[-1]["params"].get("status") == "completed":
                        break
    ack, *updates = messages
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    final = updates[-1]
    assert final["method"] == "notifications/tasks"
    assert final["params"]["taskId"] == task_id
    assert final["params"]["result"]["content"][0]["text"] == "job x done"
    assert final["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 99
    assert "resultType" not in final["params"]
