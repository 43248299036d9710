"""2025-11-25 tasks (basic/utilities/tasks), our server and our client, in memory.

Every message either side sends is checked against the 2025-11-25 schema;
the raw checks call ``client.peer.request`` with a method name, which answers the
result as received.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp_schema import WireChecker, requires_schema

from jsonrpc_core import InvalidParams, JsonRpcError, LocalError, MessageStream, MethodNotFound
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import Context, MCPServer, TaskCancelled, connect
from mcp_layer.types import RELATED_TASK_META_KEY, ElicitResult, Task

pytestmark = [pytest.mark.anyio, requires_schema]


class Gates:
    """What the test tools wait on, so the tests decide when a task moves."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()


def build(gates: Gates) -> MCPServer:
    server = MCPServer("tasks", "1.0")

    @server.tool(task_support="required")
    async def research(ctx: Context, topic: str, steps: int = 2) -> str:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return f"report on {topic}"

    @server.tool(task_support="optional")
    def double(x: int) -> int:
        return 2 * x

    @server.tool()
    def plain() -> str:
        return "plain"

    @server.tool(task_support="optional")
    def broken() -> str:
        raise ValueError("bad input")

    @server.tool(task_support="required")
    def refuses() -> str:
        raise InvalidParams("no such topic")

    @server.tool(task_support="required")
    async def waits() -> str:
        gates.started.set()
        try:
            await gates.release.wait()
        except BaseException:
            gates.cancelled.set()
            raise
        return "released"

    @server.tool(task_support="required")
    async def asks(ctx: Context) -> str:
        answer = await ctx.elicit("Which one?", {"type": "object", "properties": {}})
        return f"answer: {answer.action}"

    return server


def checked(gates: Gates) -> tuple[MCPServer, WireChecker]:
    """The test server, every message of its connections checked, both directions."""
    wire = WireChecker()
    server = build(gates)
    original = server.serve

    async def serve(stream: MessageStream, **options: Any) -> None:
        tapped = wire.wrap(stream, role="server", check_received=True, transport="server")
        await original(tapped, **options)

    server.serve = serve  # type: ignore[method-assign]
    return server, wire


async def test_a_required_tool_runs_as_a_task_with_status_and_progress() -> None:
    server, wire = checked(Gates())
    statuses: list[tuple[str, str | None]] = []
    progress: list[float] = []
    async with connect(server) as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}
        assert tools["research"].execution is not None
        assert tools["research"].execution.task_support == "required"
        assert tools["plain"].execution is None
        result = await client.call_tool(
            "research",
            {"topic": "tides", "steps": 3},
            task_ttl=60_000,
            progress=lambda done, total, message: progress.append(done),
            on_task_status=lambda task: statuses.append((task.status, task.status_message)),
        )
    assert result.content[0].text == "report on tides"  # type: ignore[union-attr]
    assert result.meta is not None and RELATED_TASK_META_KEY in result.meta
    assert statuses[0][0] == "working" and statuses[-1][0] == "completed"
    assert progress == [1, 2, 3]
    [call] = wire.sent_by("client", "tools/call")
    assert call["params"]["task"] == {"ttl": 60_000}
    assert wire.sent_by("client", "tasks/result")
    wire.assert_clean()


async def test_the_server_declares_tasks_and_refuses_a_plain_call_of_a_required_tool() -> None:
    server, wire = checked(Gates())
    async with connect(server) as client:
        tasks = client.server_capabilities.tasks
        assert tasks is not None and tasks.list is not None and tasks.cancel is not None
        assert tasks.requests is not None and tasks.requests.tools is not None
        assert tasks.requests.tools.call is not None
        with pytest.raises(MethodNotFound, match="requires task augmentation"):
            await client.call_tool("research", {"topic": "x"}, as_task=False)
        with pytest.raises(MethodNotFound, match="does not support task augmentation"):
            await client.peer.request("tools/call", {"name": "plain", "task": {}})
        with pytest.raises(LocalError, match="does not support running as a task"):
            await client.call_tool("plain", as_task=True)
    wire.assert_clean()


async def test_a_server_without_task_tools_declares_no_tasks_and_ignores_task() -> None:
    server = MCPServer("plain")

    @server.tool()
    def echo(text: str) -> str:
        return text

    async with connect(server) as client:
        assert client.server_capabilities.tasks is None
        raw = await client.peer.request(
            "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "task": {}}
        )
        assert raw["content"][0]["text"] == "hi"


async def test_an_optional_tool_runs_as_a_task_only_when_asked() -> None:
    server, wire = checked(Gates())
    async with connect(server) as client:
        plain = await client.call_tool("double", {"x": 2})
        as_task = await client.call_tool("double", {"x": 3}, as_task=True)
        assert plain.structured_content == {"result": 4}
        assert as_task.structured_content == {"result": 6}
        assert len(server.tasks.records) == 1  # type: ignore[union-attr]
    calls = wire.sent_by("client", "tools/call")
    assert ["task" in call["params"] for call in calls] == [False, True]
    wire.assert_clean()


async def test_the_wire_of_a_task_follows_the_spec() -> None:
    server, wire = checked(Gates())
    async with connect(server) as client:
        created = await client.peer.request(
            "tools/call",
            {"name": "research", "arguments": {"topic": "x"}, "task": {"ttl": 10_000_000}},
        )
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 3_600_000  # capped by the server
        assert {"createdAt", "lastUpdatedAt", "pollInterval"} <= set(task)
        result = await client.peer.request("tasks/result", {"taskId": task["taskId"]})
        assert result["_meta"][RELATED_TASK_META_KEY] == {"taskId": task["taskId"]}
        assert result["content"][0]["text"] == "report on x"
        got = await client.peer.request("tasks/get", {"taskId": task["taskId"]})
        assert got["status"] == "completed" and got["taskId"] == task["taskId"]
        listed = await client.peer.request("tasks/list", {})
        assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]]
        with pytest.raises(InvalidParams, match="terminal status 'completed'"):
            await client.peer.request("tasks/cancel", {"taskId": task["taskId"]})
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(InvalidParams, match="Task not found"):
                await client.peer.request(method, {"taskId": "nope"})
        with pytest.raises(InvalidParams, match="Invalid cursor"):
            await client.peer.request("tasks/list", {"cursor": "nope"})
    statuses = [n["params"]["status"] for n in wire.sent_by("server", "notifications/tasks/status")]
    assert statuses[-1] == "completed"
    wire.assert_clean()


async def test_a_tool_error_fails_the_task_and_its_result_is_the_plain_one() -> None:
    server, wire = checked(Gates())
    async with connect(server) as client:
        statuses: list[str] = []
        result = await client.call_tool(
            "broken", as_task=True, on_task_status=lambda t: statuses.append(t.status)
        )
        assert result.is_error and "bad input" in result.content[0].text  # type: ignore[union-attr]
        assert statuses[-1] == "failed"
        with pytest.raises(InvalidParams, match="no such topic"):
            await client.call_tool("refuses")
        [failed] = [r for r in server.tasks.records.values() if r.error]  # type: ignore[union-attr]
        assert failed.status == "failed"
    wire.assert_clean()


async def test_cancelling_the_caller_cancels_the_task() -> None:
    gates = Gates()
    server, wire = checked(gates)
    async with connect(server) as client:
        following = anyio.Event()
        with anyio.fail_after(10), anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool("waits", on_task_status=lambda task: following.set())

                group.start_soon(call)
                await gates.started.wait()
                await following.wait()  # the client has the task
                scope.cancel()
        with anyio.fail_after(10):
            await gates.cancelled.wait()
        [cancel] = wire.sent_by("client", "tasks/cancel")
        [record] = server.tasks.records.values()  # type: ignore[union-attr]
        assert record.status == "cancelled" and cancel["params"] == {"taskId": record.task_id}
        with pytest.raises(JsonRpcError, match="was cancelled"):
            await client.get_task_result(record.task_id)
    wire.assert_clean()


async def test_tasks_cancel_answers_the_cancelled_task_and_it_stays_cancelled() -> None:
    gates = Gates()
    server, wire = checked(gates)
    with anyio.fail_after(10):
        async with connect(server) as client:
            created = await client.peer.request("tools/call", {"name": "waits", "task": {}})
            task_id = created["task"]["taskId"]
            await gates.started.wait()
            cancelled = await client.cancel_task(task_id)
            assert cancelled is not None and cancelled.status == "cancelled"
            gates.release.set()
            await gates.cancelled.wait()
            got = await client.get_task(task_id)
            assert isinstance(got, Task) and got.status == "cancelled"
    wire.assert_clean()


async def test_a_task_cancelled_by_the_server_raises_for_the_caller() -> None:
    gates = Gates()
    server, _ = checked(gates)
    outcome: list[BaseException] = []
    with anyio.fail_after(10):
        async with connect(server) as client, anyio.create_task_group() as group:

            async def call() -> None:
                try:
                    await client.call_tool("waits")
                except Exception as exc:
                    outcome.append(exc)

            group.start_soon(call)
            await gates.started.wait()
            [record] = server.tasks.records.values()  # type: ignore[union-attr]
            await client.peer.request("tasks/cancel", {"taskId": record.task_id})
    assert isinstance(outcome[0], TaskCancelled) and "cancelled by the server" in str(outcome[0])


async def test_a_question_from_a_task_marks_it_input_required_and_names_the_task() -> None:
    server, wire = checked(Gates())
    statuses: list[str] = []
    seen_meta: list[Any] = []

    def elicitation(params: Any) -> ElicitResult:
        seen_meta.append(params.meta)
        return ElicitResult(action="decline")

    async with connect(server, elicitation=elicitation) as client:
        result = await client.call_tool(
            "asks", on_task_status=lambda task: statuses.append(task.status)
        )
    assert result.content[0].text == "answer: decline"  # type: ignore[union-attr]
    [record] = server.tasks.records.values()  # type: ignore[union-attr]
    assert seen_meta == [{RELATED_TASK_META_KEY: {"taskId": record.task_id}}]
    sent = [n["params"]["status"] for n in wire.sent_by("server", "notifications/tasks/status")]
    assert sent == ["input_required", "working", "completed"]
    assert statuses[-1] == "completed"
    wire.assert_clean()


async def test_a_task_is_unknown_to_another_session() -> None:
    server, _ = checked(Gates())
    async with connect(server) as first, connect(server) as second:
        created = await first.peer.request(
            "tools/call", {"name": "research", "arguments": {"topic": "x"}, "task": {}}
        )
        task_id = created["task"]["taskId"]
        with pytest.raises(InvalidParams, match="Task not found"):
            await second.peer.request("tasks/get", {"taskId": task_id})
        assert (await second.list_tasks()).tasks == []
        assert [t.task_id for t in (await first.list_tasks()).tasks] == [task_id]


async def test_handshake_tasks_are_invisible_to_the_2026_era_and_execution_stays_out() -> None:
    server, _ = checked(Gates())
    async with connect(server) as legacy:
        created = await legacy.peer.request(
            "tools/call", {"name": "research", "arguments": {"topic": "x"}, "task": {}}
        )
    async with connect(server, protocol_version="2026-07-28") as modern:
        tools = await modern.list_all_tools()
        assert all(tool.execution is None for tool in tools)
        with pytest.raises(InvalidParams, match="Task not found"):
            await modern.get_task(created["task"]["taskId"])
        with pytest.raises(MethodNotFound):
            await modern._modern_request("tasks/result", {"taskId": "x"}, timeout=None)


@asynccontextmanager
async def over_http(server: MCPServer, **app_options: Any) -> AsyncIterator[Any]:
    """A client session to ``server`` over in-process Streamable HTTP (no sockets)."""
    app = server.asgi_app(**app_options)
    transport = StreamingASGITransport(app)

    def decline(params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async with httpx.AsyncClient(transport=transport) as http:
        async with connect("http://127.0.0.1/mcp", client=http, elicitation=decline) as client:
            yield client
    app.close()


async def test_a_task_over_stateful_http_with_a_question() -> None:
    server, _ = checked(Gates())
    statuses: list[str] = []
    with anyio.fail_after(20):
        async with over_http(server) as client:
            result = await client.call_tool(
                "asks",
                on_task_status=lambda task: statuses.append(task.status),
            )
            listed = await client.list_tasks()
    assert result.content[0].text == "answer: decline"
    # Status notifications come on the standalone GET stream and the result on the POST's:
    # nothing orders the last notification before the result, so the end state is read back.
    assert statuses[0] == "working" and "input_required" in statuses
    assert len(listed.tasks) == 1 and listed.tasks[0].status == "completed"


async def test_stateless_http_without_a_principal_neither_declares_nor_serves_tasks_list() -> None:
    server, _ = checked(Gates())
    with anyio.fail_after(20):
        async with over_http(server, stateless=True) as client:
            tasks = client.server_capabilities.tasks
            assert tasks is not None and tasks.list is None and tasks.cancel is not None
            result = await client.call_tool("research", {"topic": "sky"})
            assert result.content[0].text == "report on sky"
            with pytest.raises(MethodNotFound):
                await client.list_tasks()
