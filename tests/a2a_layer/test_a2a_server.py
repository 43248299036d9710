"""`A2AServer` over JSON-RPC, in process: the executor API, the task state machine,
deduplication, history, listing, cancel, subscribers, versions, extensions, tenants and
the error answers. Every object the server emits is checked against the 1.0 schema."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from a2a_fixtures import schemas
from a2a_fixtures.harness import in_process, make_card, message, rpc, rpc_stream

from a2a_layer import (
    A2AClient,
    A2AServer,
    AgentExecutor,
    ContentTypeNotSupported,
    ExecutionContext,
    InvalidTransition,
    TaskUpdater,
)
from a2a_layer.types import AgentCard, AgentExtension

pytestmark = pytest.mark.anyio


class ScriptedAgent(AgentExecutor):
    """Behaves by the text it gets (see each branch)."""

    def __init__(self) -> None:
        self.runs = 0
        self.gate = anyio.Event()
        self.steps = [anyio.Event(), anyio.Event()]
        self.cancelled = False
        self.refused: list[str] = []
        self.extensions: list[frozenset[str]] = []

    async def execute(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        self.runs += 1
        self.extensions.append(context.extensions)
        text = context.text
        if not context.is_new_task:
            await updater.start_work()
            await updater.add_artifact(f"got {text}", name="answer")
            await updater.complete()
        elif text == "reply":
            await updater.reply("a direct answer")
        elif text == "ask":
            await updater.requires_input("which one?")
        elif text == "slow":
            await updater.start_work()
            try:
                await self.gate.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled = True
                raise
            await updater.complete()
        elif text == "steps":
            await updater.start_work()
            await self.steps[0].wait()
            await updater.add_artifact("step one", name="steps")
            await self.steps[1].wait()
            await updater.complete("all steps done")
        elif text == "fail":
            await updater.start_work()
            raise RuntimeError("secret internals")
        elif text == "refuse":
            raise ContentTypeNotSupported("images only")
        elif text == "nothing":
            return
        elif text == "twice":
            await updater.complete()
            try:
                await updater.start_work()
            except InvalidTransition as exc:
                self.refused.append(str(exc))
        else:
            await updater.start_work()
            await updater.add_artifact(f"result for {text}", name="result")
            await updater.complete("done")


def new_server(card: AgentCard | None = None, **options: Any) -> tuple[A2AServer, ScriptedAgent]:
    agent = ScriptedAgent()
    return A2AServer(card or make_card(), agent, **options), agent


async def send(http: Any, text: str, mid: str, **params: Any) -> dict[str, Any]:
    extra = params.pop("message_extra", {})
    body = {"message": message(text, mid, **extra), **params}
    return await rpc(http, "SendMessage", body)


# -- card ---------------------------------------------------------------------------------


async def test_card_has_cache_headers_etag_and_304() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        first = await http.get("/.well-known/agent-card.json")
        assert first.status_code == 200
        assert "max-age=" in first.headers["cache-control"]
        etag = first.headers["etag"]
        again = await http.get("/.well-known/agent-card.json", headers={"if-none-match": etag})
        assert again.status_code == 304 and again.content == b""
        other = await http.get("/.well-known/agent-card.json", headers={"if-none-match": '"x"'})
        assert other.status_code == 200
        legacy = await http.get("/.well-known/agent.json")
        assert legacy.json() == first.json()
    card = first.json()
    interfaces = [
        (i["protocolBinding"], i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]
    ]
    assert interfaces == [
        ("JSONRPC", "1.0", "http://127.0.0.1"),
        ("HTTP+JSON", "1.0", "http://127.0.0.1/rest"),
        ("JSONRPC", "0.3", "http://127.0.0.1"),
    ]
    assert card["url"] == "http://127.0.0.1" and card["protocolVersion"] == "0.3.0"  # 0.3 members
    one_dot_oh = {k: v for k, v in card.items() if k not in _V03_CARD_MEMBERS}
    schemas.v10()("AgentCard", one_dot_oh)


_V03_CARD_MEMBERS = {
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "protocolVersion",
    "supportsAuthenticatedExtendedCard",
}


# -- sending ------------------------------------------------------------------------------


async def test_blocking_send_returns_the_finished_task() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        answer = await send(http, "build", "m-1")
    result = answer["result"]
    schemas.v10()("SendMessageResponse", result)
    task = result["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "result for build"}]
    assert [m["role"] for m in task["history"]] == ["ROLE_USER", "ROLE_AGENT"]
    assert task["history"][0]["taskId"] == task["id"]
    assert task["history"][0]["contextId"] == task["contextId"]


async def test_return_immediately_answers_before_the_agent_finishes() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        answer = await send(http, "slow", "m-1", configuration={"returnImmediately": True})
        task = answer["result"]["task"]
        assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
        agent.gate.set()
        async with A2AClient.connect("http://127.0.0.1", http=http) as client:
            done = await client.wait(task["id"], timeout=5, interval=0.01)
    assert done.status.state.name == "COMPLETED"


async def test_direct_message_reply() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        answer = await send(http, "reply", "m-1")
    schemas.v10()("SendMessageResponse", answer["result"])
    reply = answer["result"]["message"]
    assert reply["role"] == "ROLE_AGENT" and reply["parts"] == [{"text": "a direct answer"}]
    assert reply["contextId"] and "taskId" not in reply


async def test_a_retried_send_never_runs_the_agent_twice() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        results: list[dict[str, Any]] = []

        async def one() -> None:
            results.append(await send(http, "build", "same-id"))

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(one)
        later = await send(http, "build", "same-id")
        streamed = await rpc_stream(
            http, "SendStreamingMessage", {"message": message("build", "same-id")}
        )
        reply_1 = await send(http, "reply", "reply-id")
        reply_2 = await send(http, "reply", "reply-id")
    assert agent.runs == 2  # "build" once, "reply" once
    ids = {r["result"]["task"]["id"] for r in [*results, later]}
    assert len(ids) == 1
    assert streamed[0]["result"]["task"]["id"] in ids
    assert reply_1["result"] == reply_2["result"]


async def test_failed_agent_before_a_task_may_be_retried() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        first = await send(http, "refuse", "r-1")
        second = await send(http, "refuse", "r-1")
    assert first["error"]["code"] == second["error"]["code"] == -32005
    assert agent.runs == 2


async def test_context_id_is_inferred_and_a_mismatch_is_refused() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        asked = (await send(http, "ask", "m-1"))["result"]["task"]
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert asked["status"]["message"]["parts"] == [{"text": "which one?"}]
        wrong = await send(
            http, "blue", "m-2", message_extra={"taskId": asked["id"], "contextId": "other"}
        )
        unchanged = (await rpc(http, "GetTask", {"id": asked["id"]}))["result"]
        answered = await send(http, "blue", "m-3", message_extra={"taskId": asked["id"]})
    assert wrong["error"]["code"] == -32602 and "contextId" in wrong["error"]["message"]
    assert len(unchanged["history"]) == len(asked["history"])
    task = answered["result"]["task"]
    assert task["id"] == asked["id"] and task["contextId"] == asked["contextId"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["history"][-2]["contextId"] == asked["contextId"]  # the inferred context
    assert task["artifacts"][0]["parts"] == [{"text": "got blue"}]


async def test_terminal_tasks_never_change_and_follow_ups_make_new_tasks() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        done = (await send(http, "build", "m-1"))["result"]["task"]
        again = await send(http, "more", "m-2", message_extra={"taskId": done["id"]})
        follow = await send(http, "more", "m-3", message_extra={"contextId": done["contextId"]})
        still = (await rpc(http, "GetTask", {"id": done["id"]}))["result"]
        twice = await send(http, "twice", "m-4")
    assert again["error"]["code"] == -32004
    assert again["error"]["data"][0]["reason"] == "UNSUPPORTED_OPERATION"
    new = follow["result"]["task"]
    assert new["id"] != done["id"] and new["contextId"] == done["contextId"]
    assert still == done
    assert twice["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert agent.refused and "terminal" in agent.refused[0]


async def test_agent_failures_do_not_leak_internals() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        failed = (await send(http, "fail", "m-1"))["result"]["task"]
        nothing = await send(http, "nothing", "m-2")
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert "secret" not in str(failed)
    assert nothing["error"]["code"] == -32006


async def test_history_length() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        task = (await send(http, "build", "m-1", configuration={"historyLength": 1}))["result"]
        tid = task["task"]["id"]
        none = (await rpc(http, "GetTask", {"id": tid, "historyLength": 0}))["result"]
        one = (await rpc(http, "GetTask", {"id": tid, "historyLength": 1}))["result"]
        full = (await rpc(http, "GetTask", {"id": tid}))["result"]
    assert len(task["task"]["history"]) == 1
    assert "history" not in none
    assert one["history"] == full["history"][-1:]
    assert len(full["history"]) == 2


async def test_list_tasks_pages_filters_and_orders() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        first = (await send(http, "build", "m-0"))["result"]["task"]
        ctx = first["contextId"]
        for i in range(1, 5):
            await send(http, "build", f"m-{i}", message_extra={"contextId": ctx})
        await send(http, "ask", "m-ask")
        pages: list[dict[str, Any]] = []
        token = ""
        while True:
            page = (await rpc(http, "ListTasks", {"pageSize": 2, "pageToken": token}))["result"]
            schemas.v10()("ListTasksResponse", page)
            pages.append(page)
            token = page["nextPageToken"]
            if not token:
                break
        in_ctx = await rpc(http, "ListTasks", {"contextId": ctx, "includeArtifacts": True})
        waiting = await rpc(http, "ListTasks", {"status": "TASK_STATE_INPUT_REQUIRED"})
        bad = await rpc(http, "ListTasks", {"pageToken": "not-a-token"})
        after = await rpc(http, "ListTasks", {"statusTimestampAfter": first["status"]["timestamp"]})
    tasks = [t for p in pages for t in p["tasks"]]
    assert [len(p["tasks"]) for p in pages] == [2, 2, 2]
    assert all(p["totalSize"] == 6 and p["pageSize"] == 2 for p in pages)
    assert len({t["id"] for t in tasks}) == 6
    stamps = [t["status"]["timestamp"] for t in tasks]
    assert stamps == sorted(stamps, reverse=True)
    assert all("artifacts" not in t for t in tasks)
    assert in_ctx["result"]["totalSize"] == 5
    assert all(t["artifacts"] for t in in_ctx["result"]["tasks"])
    assert [t["status"]["state"] for t in waiting["result"]["tasks"]] == [
        "TASK_STATE_INPUT_REQUIRED"
    ]
    assert bad["error"]["code"] == -32602
    assert first["id"] not in {t["id"] for t in after["result"]["tasks"]}


async def test_cancel_semantics() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        slow = await send(http, "slow", "m-1", configuration={"returnImmediately": True})
        tid = slow["result"]["task"]["id"]
        canceled = await rpc(http, "CancelTask", {"id": tid})
        again = await rpc(http, "CancelTask", {"id": tid})
        unknown = await rpc(http, "CancelTask", {"id": "nope"})
        asked = (await send(http, "ask", "m-2"))["result"]["task"]
        canceled_waiting = await rpc(http, "CancelTask", {"id": asked["id"]})
    assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert agent.cancelled
    assert again["error"]["code"] == -32002
    assert again["error"]["data"][0]["reason"] == "TASK_NOT_CANCELABLE"
    assert unknown["error"]["code"] == -32001
    assert canceled_waiting["result"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_streaming_send_starts_with_the_task_and_ends_at_completion() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        events = await rpc_stream(http, "SendStreamingMessage", {"message": message("x", "s-1")})
    results = [e["result"] for e in events]
    for result in results:
        schemas.v10()("StreamResponse", result)
    assert [next(iter(r)) for r in results] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert {e["id"] for e in events} == {1}


async def test_concurrent_subscribers_see_the_same_ordered_events() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        tid = (await send(http, "steps", "m-1", configuration={"returnImmediately": True}))[
            "result"
        ]["task"]["id"]
        async with A2AClient.connect("http://127.0.0.1", http=http) as client:
            seen: list[list[Any]] = [[], [], []]
            opened = [anyio.Event() for _ in seen]

            async def watch(index: int) -> None:
                async for event in client.subscribe(tid):
                    seen[index].append(event)
                    opened[index].set()

            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:
                    for index in range(len(seen)):
                        tg.start_soon(watch, index)
                    for event in opened:
                        await event.wait()
                    agent.steps[0].set()
                    agent.steps[1].set()
    first = seen[0]
    assert first[0].task is not None and first[0].task.id == tid
    assert [e.payload.__class__.__name__ for e in first[1:]] == [
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    for other in seen[1:]:
        assert [e.model_dump() for e in other[1:]] == [e.model_dump() for e in first[1:]]


async def test_subscribing_to_a_terminal_task_is_refused() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        tid = (await send(http, "build", "m-1"))["result"]["task"]["id"]
        events = await rpc_stream(http, "SubscribeToTask", {"id": tid})
        unknown = await rpc_stream(http, "SubscribeToTask", {"id": "nope"})
    assert events[0]["error"]["code"] == -32004
    assert unknown[0]["error"]["code"] == -32001


# -- bad input ----------------------------------------------------------------------------


async def test_bad_input_gets_clear_errors_and_nothing_is_lost() -> None:
    server, agent = new_server()
    async with in_process(server) as http:
        unknown = await rpc(http, "GetTask", {"id": "missing"})
        push = await rpc(
            http, "CreateTaskPushNotificationConfig", {"taskId": "t", "url": "http://x"}
        )
        version = await rpc(http, "GetTask", {"id": "missing"}, version="2.0")
        no_version = await rpc(http, "SendMessage", {"message": message("x", "v")}, version=None)
        bad_part = await rpc(
            http,
            "SendMessage",
            {"message": {"messageId": "b", "role": "ROLE_USER", "parts": [{"metadata": {}}]}},
        )
        bad_stream = await rpc_stream(
            http,
            "SendStreamingMessage",
            {"message": {"messageId": "b2", "role": "ROLE_USER", "parts": []}},
        )
        good = await send(http, "build", "after-errors")
    assert unknown["error"]["code"] == -32001
    assert unknown["error"]["data"][0]["reason"] == "TASK_NOT_FOUND"
    assert unknown["error"]["data"][0]["metadata"] == {"taskId": "missing"}
    assert push["error"]["code"] == -32003
    assert version["error"]["code"] == -32009
    assert no_version["error"]["code"] == -32009 and "A2A-Version" in no_version["error"]["message"]
    assert bad_part["error"]["code"] == -32602 and "parts" in bad_part["error"]["message"]
    assert bad_stream[0]["error"]["code"] == -32602
    assert good["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert agent.runs == 1


async def test_streaming_is_refused_without_the_capability() -> None:
    server, _ = new_server(make_card(streaming=False))
    async with in_process(server) as http:
        events = await rpc_stream(http, "SendStreamingMessage", {"message": message("x", "s")})
    assert events[0]["error"]["code"] == -32004


async def test_extensions_required_activated_and_echoed() -> None:
    card = make_card(
        extensions=[
            AgentExtension(uri="urn:ext:required", required=True),
            AgentExtension(uri="urn:ext:optional"),
        ]
    )
    server, agent = new_server(card)
    async with in_process(server) as http:
        missing = await send(http, "build", "m-1")
        header = {"A2A-Extensions": "urn:ext:required, urn:ext:optional, urn:ext:unknown"}
        response = await http.post(
            "/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": message("build", "m-2")},
            },
            headers={"A2A-Version": "1.0", **header},
        )
    assert missing["error"]["code"] == -32008
    assert missing["error"]["data"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
    assert response.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert response.headers["a2a-extensions"] == "urn:ext:optional,urn:ext:required"
    assert agent.extensions == [frozenset({"urn:ext:required", "urn:ext:optional"})]


async def test_tenant_is_carried_through() -> None:
    server, _ = new_server()
    async with in_process(server) as http:
        task = (await send(http, "build", "m-1", tenant="acme"))["result"]["task"]
        without = await rpc(http, "GetTask", {"id": task["id"]})
        within = await rpc(http, "GetTask", {"id": task["id"], "tenant": "acme"})
        listed = await rpc(http, "ListTasks", {"tenant": "acme"})
        others = await rpc(http, "ListTasks", {})
        rest = await http.get(f"/rest/acme/tasks/{task['id']}", headers={"A2A-Version": "1.0"})
    assert without["error"]["code"] == -32001
    assert within["result"]["id"] == task["id"]
    assert listed["result"]["totalSize"] == 1 and others["result"]["totalSize"] == 0
    assert rest.status_code == 200 and rest.json()["id"] == task["id"]


async def test_extended_card_rules() -> None:
    plain, _ = new_server()
    declared, _ = new_server(make_card(extended=True))
    extended = make_card(extended=True).model_copy(update={"name": "extended agent"})
    configured, _ = new_server(make_card(extended=True), extended_card=extended)
    answers = []
    for server in (plain, declared, configured):
        async with in_process(server) as http:
            answers.append(await rpc(http, "GetExtendedAgentCard", {}))
    assert answers[0]["error"]["code"] == -32004
    assert answers[1]["error"]["code"] == -32007
    assert answers[2]["result"]["name"] == "extended agent"


async def test_endpoint_path_accepts_a_trailing_slash() -> None:
    server, _ = new_server(rpc_path="/a2a")
    async with in_process(server) as http:
        plain = await rpc(http, "GetTask", {"id": "x"}, path="/a2a")
        slash = await rpc(http, "GetTask", {"id": "x"}, path="/a2a/")
        card = (await http.get("/.well-known/agent-card.json")).json()
    assert plain["error"]["code"] == slash["error"]["code"] == -32001
    assert card["supportedInterfaces"][0]["url"] == "http://127.0.0.1/a2a"
