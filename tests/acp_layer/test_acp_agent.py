"""acp_layer's agent side against its client side, in memory, every message schema-checked.

The demo agent (examples/acp/demo_agent.py) runs every command; the rest covers the
protocol rules: the initialize gate, unknown sessions, ``session/cancel`` (stop reason
``cancelled``, pending permission requests answered ``cancelled``), ``$/cancel_request``
(-32800), extension and unstable methods, and capability derivation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_fixtures.wire import (
    SchemaCheck,
    connected,
    load_demo_agent,
    requires_acp_schema,
    schema_errors,
)

from acp_layer import (
    Agent,
    AgentConnection,
    CapabilityError,
    Client,
    LocalClient,
    ResourceNotFound,
    connect_agent,
    serve_agent,
)
from acp_layer import schema as s
from jsonrpc_core import (
    ConnectionClosed,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    memory_pair,
)

pytestmark = [
    pytest.mark.anyio,
    requires_acp_schema,
]

demo = load_demo_agent()


def updates_of(client: LocalClient, sid: str, kind: type[Any]) -> list[Any]:
    return [u for u in client.updates.get(sid, []) if isinstance(u, kind)]


def texts(client: LocalClient, sid: str) -> str:
    return "".join(
        u.content.text
        for u in updates_of(client, sid, s.AgentMessageChunk)
        if isinstance(u.content, s.TextContent)
    )


def tool_updates(client: LocalClient, sid: str) -> list[s.ToolCallProgress]:
    return updates_of(client, sid, s.ToolCallProgress)


async def test_demo_agent_runs_every_command(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("old\n")
    client = LocalClient(permission="allow", commands="allow")
    with anyio.fail_after(20):
        async with connected(demo.DemoAgent(), client) as (conn, agent_check, client_check):
            assert conn.agent_info is not None and conn.agent_info.name == "rpcweave-demo-agent"
            assert conn.agent_capabilities.prompt_capabilities.image
            sid = (await conn.new_session(str(tmp_path))).session_id
            prompt = "\n".join(
                [
                    "Hello there",
                    "/read notes.txt",
                    "/write notes.txt new text",
                    "/run --timeout 30 sh -c 'echo out; echo err >&2; exit 3'",
                    "/plan",
                    "/sleep 0.1",
                    "bye",
                ]
            )
            response = await conn.prompt(sid, prompt)
    assert response.stop_reason == "end_turn"
    assert (tmp_path / "notes.txt").read_text() == "new text"
    commands = updates_of(client, sid, s.AvailableCommandsUpdate)
    assert [c.name for c in commands[0].available_commands] == [
        "read",
        "write",
        "run",
        "plan",
        "sleep",
    ]
    assert texts(client, sid) == "Hello there\nbye"
    calls = {c.tool_call_id: c for c in updates_of(client, sid, s.ToolCall)}
    assert [c.kind for c in calls.values()] == ["read", "edit", "execute", "think"]
    final = {u.tool_call_id: u for u in tool_updates(client, sid) if u.status != "in_progress"}
    read, write, run, sleep = (final[i] for i in calls)
    assert read.status == "completed" and read.content is not None
    assert read.content[0] == s.Content(content=s.TextContent(text="old\n"))
    assert write.status == "completed" and write.content is not None
    diff = write.content[0]
    assert isinstance(diff, s.Diff)
    assert (diff.old_text, diff.new_text) == ("old\n", "new text")
    assert diff.path == str(tmp_path / "notes.txt")
    assert run.status == "failed" and run.raw_output["exitCode"] == 3
    assert run.content is not None and isinstance(run.content[0], s.Terminal)
    assert "out\nerr\n" in run.content[1].content.text  # type: ignore[union-attr]
    exec_call = list(calls.values())[2]
    assert isinstance(exec_call.content[0], s.Terminal)
    assert sleep.status == "completed"
    plan = updates_of(client, sid, s.Plan)
    assert [e.status for e in plan[0].entries] == ["completed", "in_progress", "pending"]
    assert len(client.permission_requests) == 1
    # The commands were advertised after the session/new answer, not before it.
    sent = agent_check.sent()
    new_answer = next(i for i, m in enumerate(sent) if m.get("result", {}).get("sessionId"))
    first_update = next(i for i, m in enumerate(sent) if m.get("method") == "session/update")
    assert new_answer < first_update
    # Each terminal was released.
    assert not client.terminals
    assert len(agent_check.sent("terminal/release")) == 1
    agent_check.assert_valid()
    client_check.assert_valid()


async def test_request_before_initialize_is_refused() -> None:
    with anyio.fail_after(10):
        async with connected(demo.DemoAgent(), LocalClient(), initialize=False) as (conn, ag, _):
            with pytest.raises(InvalidRequest, match="initialized before 'session/new'"):
                await conn.peer.request("session/new", {"cwd": "/tmp", "mcpServers": []})
            with pytest.raises(CapabilityError):
                await conn.new_session("/tmp")
            await conn.initialize()
            assert (await conn.new_session("/tmp")).session_id
    ag.assert_valid()


async def test_unknown_session_id_is_resource_not_found() -> None:
    with anyio.fail_after(10):
        async with connected(demo.DemoAgent(), LocalClient()) as (conn, agent_check, _):
            with pytest.raises(ResourceNotFound) as info:
                await conn.prompt("sess_nope", "hi")
            assert info.value.code == -32002 and "sess_nope" in info.value.message
            with pytest.raises(ResourceNotFound):
                await conn.set_session_mode("sess_nope", "code")
            await conn.cancel("sess_nope")  # a notification: ignored
            sid = (await conn.new_session("/tmp")).session_id
            assert (await conn.prompt(sid, "still alive")).stop_reason == "end_turn"
    agent_check.assert_valid()


async def test_session_cancel_ends_the_turn_with_stop_reason_cancelled() -> None:
    started = anyio.Event()

    def on_update(note: s.SessionNotification) -> None:
        if isinstance(note.update, s.ToolCallProgress):
            started.set()

    client = LocalClient(on_update=on_update)
    with anyio.fail_after(10):
        async with connected(demo.DemoAgent(), client) as (conn, agent_check, client_check):
            sid = (await conn.new_session("/tmp")).session_id
            result: list[s.PromptResponse] = []

            async def run() -> None:
                result.append(await conn.prompt(sid, "/sleep 600"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await started.wait()
                await conn.cancel(sid)
            assert result[0].stop_reason == "cancelled"
            # The agent reported the tool call's end before answering.
            last = tool_updates(client, sid)[-1]
            assert last.status == "failed"
            # The session still works.
            assert (await conn.prompt(sid, "again")).stop_reason == "end_turn"
    agent_check.assert_valid()
    client_check.assert_valid()


class _AskingAgent(Agent):
    """Asks permission in every turn and reports what it got."""

    def __init__(self) -> None:
        self.outcomes: list[Any] = []
        self.asked = anyio.Event()

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        self.asked.set()
        try:
            outcome = await self.client.request_permission(
                params.session_id,
                s.ToolCallUpdate(tool_call_id="call_1", title="Do it"),
                [s.PermissionOption(option_id="ok", name="OK", kind="allow_once")],
            )
        except BaseException as exc:
            self.outcomes.append(type(exc).__name__)
            raise
        self.outcomes.append(outcome)
        return "end_turn"


async def test_cancel_answers_pending_permission_requests_cancelled() -> None:
    never = anyio.Event()

    async def dialog(request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome:
        await never.wait()
        raise AssertionError("unreachable")

    agent = _AskingAgent()
    with anyio.fail_after(10):
        async with connected(agent, LocalClient(permission=dialog)) as (conn, ag, cl):
            sid = (await conn.new_session("/tmp")).session_id
            result: list[s.PromptResponse] = []

            async def run() -> None:
                result.append(await conn.prompt(sid, "go"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await cl.wait_for(lambda c: c.received("session/request_permission"))
                await conn.cancel(sid)
            asked = cl.received("session/request_permission")[0]
            await cl.wait_for(lambda c: c.answer_to(asked["id"]) is not None)
    assert result[0].stop_reason == "cancelled"
    answer = cl.answer_to(asked["id"])
    assert answer == {
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"outcome": {"outcome": "cancelled"}},
    }
    # Unless the client's answer arrived first, the agent abandoned its request and said so.
    assert ag.sent("$/cancel_request") in (
        [],
        [{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": asked["id"]}}],
    )
    ag.assert_valid()
    cl.assert_valid()


async def test_cancel_request_ends_a_prompt_with_32800() -> None:
    agent = _AskingAgent()
    never = anyio.Event()

    async def dialog(request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome:
        await never.wait()
        raise AssertionError("unreachable")

    with anyio.fail_after(10):
        async with connected(agent, LocalClient(permission=dialog)) as (conn, ag, cl):
            sid = (await conn.new_session("/tmp")).session_id
            async with anyio.create_task_group() as tg:
                tg.start_soon(conn.prompt, sid, "go")
                await agent.asked.wait()
                tg.cancel_scope.cancel()  # abandons the request: $/cancel_request
            prompt_id = cl.sent("session/prompt")[0]["id"]
            await ag.wait_for(lambda c: c.answer_to(prompt_id) is not None)
            answer = ag.answer_to(prompt_id)
            assert answer is not None and answer["error"]["code"] == -32800
            assert cl.sent("$/cancel_request")[0]["params"] == {"requestId": prompt_id}
            assert (await conn.new_session("/tmp")).session_id  # alive
    ag.assert_valid()
    cl.assert_valid()


class _ExtAgent(Agent):
    def __init__(self) -> None:
        self.notes: list[tuple[str, Any]] = []

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_demo/add":
            return {"sum": params["a"] + params["b"]}
        return await super().ext_method(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))

    async def fork_session(self, params: Any) -> dict[str, Any]:
        return {"sessionId": "sess_fork"}


async def test_extension_methods_and_unknown_methods() -> None:
    agent = _ExtAgent()
    with anyio.fail_after(10):
        async with connected(agent, Client()) as (conn, agent_check, _):
            assert await conn.ext_method("_demo/add", {"a": 2, "b": 3}) == {"sum": 5}
            with pytest.raises(MethodNotFound):
                await conn.ext_method("_demo/nope")
            with pytest.raises(MethodNotFound):
                await conn.peer.request("demo/not-a-method", {})
            await conn.ext_notification("_demo/note", {"x": 1})
            await conn.peer.notify("unknown/notification", {})
            # Notifications are handled in order: this answer comes after the note.
            assert await conn.ext_method("_demo/add", {"a": 0, "b": 0}) == {"sum": 0}
            assert agent.notes == [("_demo/note", {"x": 1})]
            # Unstable methods need the opt-in.
            with pytest.raises(MethodNotFound):
                await conn.peer.request("session/fork", {"sessionId": "s", "cwd": "/tmp"})
    agent_check.assert_valid()


async def test_unstable_methods_are_served_when_opted_in() -> None:
    with anyio.fail_after(10):
        async with connected(_ExtAgent(), Client(), unstable=True) as (conn, _, _):
            result = await conn.peer.request(
                "session/fork", {"sessionId": "s", "cwd": "/tmp", "mcpServers": []}
            )
            assert result == {"sessionId": "sess_fork"}
            with pytest.raises(MethodNotFound):  # not implemented by the agent
                await conn.peer.request("providers/list", {})


class _FullAgent(Agent):
    async def load_session(self, params: s.LoadSessionRequest) -> None:
        await self.client.send_text(params.session_id, "replayed")

    async def list_sessions(self, params: s.ListSessionsRequest) -> s.ListSessionsResponse:
        return s.ListSessionsResponse(sessions=[s.SessionInfo(session_id="sess_1", cwd="/tmp")])

    async def close_session(self, params: s.CloseSessionRequest) -> None:
        return None

    async def set_session_mode(self, params: s.SetSessionModeRequest) -> None:
        await self.client.session_update(
            params.session_id, s.CurrentModeUpdate(current_mode_id=params.mode_id)
        )

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        return "max_tokens"


async def test_capabilities_follow_overrides_and_sessions_are_tracked() -> None:
    client = LocalClient()
    with anyio.fail_after(10):
        async with connected(_FullAgent(), client) as (conn, agent_check, client_check):
            caps = conn.agent_capabilities
            assert caps.load_session
            assert caps.session_capabilities.list is not None
            assert caps.session_capabilities.close is not None
            assert caps.session_capabilities.delete is None
            assert caps.session_capabilities.resume is None
            with pytest.raises(CapabilityError):
                await conn.resume_session("sess_1", "/tmp")
            with pytest.raises(CapabilityError):
                await conn.prompt("x", s.ImageContent(data="aGk=", mime_type="image/png"))
            listed = await conn.list_sessions()
            assert [i.session_id for i in listed.sessions] == ["sess_1"]
            await conn.load_session("sess_1", "/tmp")
            assert texts(client, "sess_1") == "replayed"
            await conn.set_session_mode("sess_1", "code")
            assert updates_of(client, "sess_1", s.CurrentModeUpdate)[0].current_mode_id == "code"
            assert (await conn.prompt("sess_1", "x")).stop_reason == "max_tokens"
            await conn.close_session("sess_1")
            with pytest.raises(ResourceNotFound):
                await conn.prompt("sess_1", "x")
    init = client_check.sent("initialize")[0]["params"]
    assert init["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert init["clientCapabilities"]["terminal"] is True
    agent_check.assert_valid()
    client_check.assert_valid()


class _StrictAgent(Agent):
    """Calls the client without checking its capabilities."""

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        try:
            await self.client.read_text_file(params.session_id, "/tmp/x")
        except CapabilityError as exc:
            await self.client.send_text(params.session_id, f"refused: {exc}")
        return "end_turn"


async def test_agent_refuses_calls_the_client_did_not_offer() -> None:
    client = LocalClient()
    client.client_capabilities = lambda: s.ClientCapabilities()  # type: ignore[method-assign]
    with anyio.fail_after(10):
        async with connected(_StrictAgent(), client) as (conn, agent_check, _):
            sid = (await conn.new_session("/tmp")).session_id
            await conn.prompt(sid, "go")
    assert texts(client, sid) == "refused: the client does not offer fs/read_text_file"
    assert not agent_check.sent("fs/read_text_file")


async def test_agent_connection_helpers(tmp_path: Path) -> None:
    seen: list[AgentConnection] = []

    class _Helper(Agent):
        async def prompt(self, params: s.PromptRequest) -> s.PromptResponse:
            seen.append(self.client)
            sid = params.session_id
            await self.client.send_thought(sid, "hmm")
            with pytest.raises(ValueError):
                await self.client.ext_method("no-underscore")
            async with await self.client.create_terminal(sid, "echo", ["hi"]) as term:
                status = await term.wait_for_exit()
                assert status.exit_code == 0
                assert (await term.output()).output == "hi\n"
            assert term.released
            return s.PromptResponse(stop_reason="end_turn")

    client = LocalClient(commands="allow")
    with anyio.fail_after(10):
        async with connected(_Helper(), client) as (conn, agent_check, _):
            sid = (await conn.new_session(str(tmp_path))).session_id
            await conn.prompt(sid, "go")
    assert seen[0].client_info is not None and seen[0].client_info.name == "rpcweave-local-client"
    assert sid in seen[0].sessions
    assert isinstance(updates_of(client, sid, s.AgentThoughtChunk)[0].content, s.TextContent)
    agent_check.assert_valid()


async def test_handler_errors_become_clean_json_rpc_errors() -> None:
    class _Broken(Agent):
        async def prompt(self, params: s.PromptRequest) -> s.StopReason:
            if params.prompt[0] == s.TextContent(text="invalid"):
                raise InvalidParams("Invalid params: nope")
            raise RuntimeError("secret internals")

    with anyio.fail_after(10):
        async with connected(_Broken(), Client()) as (conn, agent_check, _):
            sid = (await conn.new_session("/tmp")).session_id
            with pytest.raises(InvalidParams, match="nope"):
                await conn.prompt(sid, "invalid")
            with pytest.raises(Exception) as info:
                await conn.prompt(sid, "boom")
            assert "secret" not in str(info.value) and getattr(info.value, "code", 0) == -32603
            # Malformed params name the field.
            with pytest.raises(InvalidParams, match=r"params\.prompt"):
                await conn.peer.request("session/prompt", {"sessionId": sid})
    agent_check.assert_valid()


def test_schema_check_catches_bad_output() -> None:
    check = SchemaCheck()
    check._check({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 1}})
    assert check.problems
    assert schema_errors("Error", {"code": "x"})  # the schema was loaded, and it checks


class _AskingForInput(Agent):
    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        form = s.FormElicitationRequest(
            session_id=sid,
            message="Your name?",
            requested_schema=s.ElicitationSchema(
                properties={"name": s.StringPropertySchema(title="Name")}, required=["name"]
            ),
        )
        answer = await self.client.create_elicitation(form)
        assert isinstance(answer, s.ElicitationAcceptAction) and answer.content is not None
        await self.client.send_text(sid, f"hello {answer.content['name']}")
        url = s.UrlElicitationRequest(
            session_id=sid, message="Log in", elicitation_id="el_1", url="https://example.test"
        )
        try:
            await self.client.create_elicitation(url)
        except CapabilityError:
            await self.client.complete_elicitation("el_1")
        return "end_turn"


class _FormClient(LocalClient):
    elicitation_capabilities = s.ElicitationCapabilities(form=s.ElicitationFormCapabilities())

    def __init__(self) -> None:
        super().__init__()
        self.completed: list[str] = []

    async def create_elicitation(
        self, params: s.CreateElicitationRequest
    ) -> s.CreateElicitationResponse:
        assert isinstance(params, s.FormElicitationRequest)
        return s.ElicitationAcceptAction(content={"name": "Ada"})

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        self.completed.append(params.elicitation_id)


async def test_elicitation_form_and_url_capability_gate() -> None:
    client = _FormClient()
    with anyio.fail_after(10):
        async with connected(_AskingForInput(), client) as (conn, agent_check, client_check):
            init = client_check.sent("initialize")[0]["params"]["clientCapabilities"]
            assert init["elicitation"] == {"form": {}}
            sid = (await conn.new_session("/tmp")).session_id
            assert (await conn.prompt(sid, "go")).stop_reason == "end_turn"
    assert texts(client, sid) == "hello Ada"
    assert client.completed == ["el_1"]
    assert len(agent_check.sent("elicitation/create")) == 1  # the URL one was refused locally
    agent_check.assert_valid()
    client_check.assert_valid()


async def test_agent_stops_its_turns_when_the_client_goes_away() -> None:
    started = anyio.Event()
    stopped: list[str] = []

    class _Forever(Agent):
        async def prompt(self, params: s.PromptRequest) -> s.StopReason:
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                stopped.append(params.session_id)
            raise AssertionError("unreachable")

    client_end, agent_end = memory_pair()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_agent, _Forever(), agent_end)
            async with connect_agent(Client(), client_end) as conn:
                sid = (await conn.new_session("/tmp")).session_id
                errors: list[Exception] = []

                async def prompt() -> None:
                    try:
                        await conn.prompt(sid, "go")
                    except ConnectionClosed as exc:
                        errors.append(exc)

                tg.start_soon(prompt)
                await started.wait()
                await client_end.aclose()  # the client is gone; serve_agent must return
    assert stopped == [sid]
    assert len(errors) == 1  # and the pending call failed at once, without a hang
