"""The demo's flows: MCP, ACP, A2A and the bare JSON-RPC core, each with real processes.

Each flow takes a `DemoContext`, prints what happens as it happens, records the wire
through ``ctx.trace`` and returns one line saying what passed; it raises on any failure.
"""

from __future__ import annotations

import importlib.util
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import anyio.abc

from jsonrpc_core import TapRecord

from ._cli_a2a import describe_event, state_name
from ._render import AcpView, indent
from ._trace import Trace

if TYPE_CHECKING:
    from a2a_layer.types import StreamResponse

__all__ = ["EXAMPLES", "DemoContext", "a2a_flow", "acp_flow", "jsonrpc_flow", "mcp_flow"]

# Installed with the package (rpcweave/examples/; ``examples/`` in a checkout links here).
EXAMPLES = Path(__file__).resolve().parent / "examples"
STEP_TIMEOUT = 20.0

NOTES = (
    "rpcweave demo notes\n"
    "MCP: a host reads this file through a tool server over stdio.\n"
    "ACP: an agent writes greeting.txt next to it, with permission.\n"
)


class DemoFailure(AssertionError):
    """A check of the demo did not hold."""


def check(condition: bool, what: str) -> None:
    """Raise `DemoFailure` saying ``what`` was expected, unless ``condition``."""
    if not condition:
        raise DemoFailure(what)


@dataclass
class DemoContext:
    """What a flow gets: where to write, the trace, and how to speak."""

    out: Path
    trace: Trace
    say: Callable[[str], None]
    stream: TextIO
    records: list[TapRecord] = field(default_factory=list)

    @property
    def workspace(self) -> Path:
        """The directory the MCP server reads from and the ACP agent writes to."""
        path = self.out / "workspace"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def messages(self) -> list[tuple[str, dict[str, Any]]]:
        """(sender, message) for each recorded JSON-RPC message, in order."""
        seen: list[tuple[str, dict[str, Any]]] = []
        for record in self.records:
            sender = record.local if record.direction == "send" else record.remote
            if isinstance(record.message, dict):
                seen.append((sender, record.message))
        return seen


def _example(*parts: str) -> Path:
    path = EXAMPLES.joinpath(*parts)
    if not path.is_file():
        raise DemoFailure(f"{path} is missing (an rpcweave installed without its examples?)")
    return path


# -- MCP -----------------------------------------------------------------------------------


async def mcp_flow(ctx: DemoContext) -> str:
    """A host's client starts the file server over stdio and reads a file with its tool."""
    from jsonrpc_core import spawn_stdio
    from mcp_layer import ClientSession

    from ._cli_mcp import content_text

    workspace = ctx.workspace
    (workspace / "notes.txt").write_text(NOTES, encoding="utf-8")
    command = [sys.executable, str(_example("mcp", "file_server.py")), str(workspace)]
    ctx.say(f"host starts: file_server.py {workspace}")
    async with spawn_stdio(command) as process:
        stream = ctx.trace.wrap(process, local="client", remote="server", transport="stdio")
        async with ClientSession(stream, request_timeout=STEP_TIMEOUT) as session:
            info = session.server_info
            ctx.say(f"» initialized: {info.name if info else '?'}, MCP {session.protocol_version}")
            tools = await session.list_all_tools()
            names = [tool.name for tool in tools]
            ctx.say(f"» tools: {', '.join(names)}")
            check("read_file" in names, "the file server offers read_file")
            result = await session.call_tool("read_file", {"path": "notes.txt"})
            text = content_text(list(result.content))
            check(not result.is_error and text == NOTES, "read_file returns notes.txt")
            ctx.say("» read_file notes.txt:\n" + indent(text))
            refused = await session.call_tool("read_file", {"path": "../outside.txt"})
            check(refused.is_error is True, "a path outside the root is refused")
            ctx.say(f"» read_file ../outside.txt refused: {content_text(list(refused.content))}")
    return (
        f"stdio: initialize (MCP {session.protocol_version}), tools/list ({len(names)} tool), "
        f"tools/call read_file → {len(text)} chars, outside path refused"
    )


# -- ACP -----------------------------------------------------------------------------------

ACP_PROMPT = "/write greeting.txt Hello from the ACP demo agent\nThat is all, thank you."


async def acp_flow(ctx: DemoContext) -> str:
    """An editor spawns the demo agent; a prompt makes it write a file, with permission."""
    from acp_layer import LocalClient, spawn_agent
    from acp_layer import schema as s

    workspace = ctx.workspace
    target = workspace / "greeting.txt"
    target.unlink(missing_ok=True)
    view = AcpView(ctx.stream, chunks_as_lines=True)
    asked: list[str] = []

    def grant(request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome:
        asked.append(request.tool_call.title or "")
        ctx.say(view.permission(request) + "\n  → the user allows once")
        return s.SelectedPermissionOutcome(option_id="allow")

    client = LocalClient(permission=grant, on_update=view.update)
    view.client = client
    command = [sys.executable, str(_example("acp", "demo_agent.py"))]
    ctx.say("editor starts: demo_agent.py")
    async with spawn_agent(
        command, client, tap=ctx.trace.tap, request_timeout=STEP_TIMEOUT
    ) as conn:
        info = conn.agent_info
        ctx.say(f"» initialized: {info.name if info else '?'}, ACP v{conn.protocol_version}")
        session = await conn.new_session(str(workspace))
        ctx.say(f"» session {session.session_id} in {workspace}")
        ctx.say("» prompt:\n" + indent(ACP_PROMPT))
        response = await conn.prompt(session.session_id, ACP_PROMPT)
        view.end_turn(response.stop_reason)
    check(response.stop_reason == "end_turn", "the turn ends with end_turn")
    written = target.read_text(encoding="utf-8") if target.is_file() else None
    check(written == "Hello from the ACP demo agent", "the agent wrote greeting.txt")
    check(len(asked) == 1, "the agent asked permission once")
    messages = ctx.messages()

    def first(sender: str, method: str) -> int:
        return next(
            n for n, (who, m) in enumerate(messages) if who == sender and m.get("method") == method
        )

    updates = sum(1 for _, m in messages if m.get("method") == "session/update")
    prompt_id = messages[first("client", "session/prompt")][1]["id"]
    answered_at = next(
        n
        for n, (who, m) in enumerate(messages)
        if who == "agent" and "method" not in m and m.get("id") == prompt_id
    )
    write_at = first("agent", "fs/write_text_file")
    check(first("agent", "session/request_permission") < write_at, "permission before the write")
    check(write_at < answered_at, "the file is written before the prompt's answer")
    return (
        f"stdio: initialize, session/new, session/prompt → {updates} session/update, "
        "session/request_permission → allow, fs/write_text_file before the prompt's answer "
        f"({response.stop_reason})"
    )


# -- A2A -----------------------------------------------------------------------------------

REQUEST = "Write a function that reverses a string"
ANSWER = "python"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DemoFailure(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@asynccontextmanager
async def coding_agent_process() -> AsyncIterator[str]:
    """Start the example coding agent on a free port of 127.0.0.1; yield its URL."""
    script = _example("a2a", "coding_agent.py")
    process = await anyio.open_process(
        # The demo's webhook receiver listens on 127.0.0.1: private targets are opt-in.
        [sys.executable, str(script), "--port", "0", "--delay", "0.02", "--allow-private-webhooks"],
        stdout=subprocess.PIPE,
        stderr=None,
    )
    try:
        assert process.stdout is not None
        buffer = b""
        with anyio.fail_after(STEP_TIMEOUT):
            while b"\n" not in buffer:
                buffer += await process.stdout.receive()
        line = buffer.decode().splitlines()[0]
        check(" on http://" in line, f"the coding agent says where it listens (got {line!r})")
        yield line.rsplit(" ", 1)[-1]
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)


async def _stop(process: anyio.abc.Process) -> None:
    if process.returncode is None:
        process.terminate()
        with anyio.move_on_after(5):
            await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
    await process.aclose()


def _wire(model: Any) -> Any:
    import json

    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True))


async def a2a_flow(ctx: DemoContext) -> str:
    """The research agent finds the coding agent by its card and follows two tasks: by
    polling (with webhook push) and by SSE."""
    from a2a_layer import CARD_PATH, A2AClient, PushReceiver, resolve_card
    from a2a_layer.types import Task, TaskPushNotificationConfig, TaskState
    from jsonrpc_core import running_server
    from jsonrpc_core.http import new_async_client

    research = _load("research_agent", _example("a2a", "research_agent.py"))
    ctx.say("research agent (rpcweave.examples.a2a.research_agent, in this process) starts:")
    ctx.say("  coding_agent.py --port 0 --allow-private-webhooks")
    ctx.say("  push: private webhook targets allowed (loopback receivers)")
    async with coding_agent_process() as url, new_async_client(timeout=STEP_TIMEOUT) as http:
        ctx.trace.record("client", "agent", {"http": f"GET {CARD_PATH}"})
        card = await resolve_card(http, url)
        ctx.trace.record("agent", "client", {"http": "200 OK", "status": 200, "body": _wire(card)})
        ctx.say(f"» discovered {card.name!r} {card.version} at {url}: {card.description}")
        check(bool(card.capabilities.streaming and card.capabilities.push_notifications), "card")
        token = secrets.token_urlsafe(16)
        receiver = PushReceiver(token=token)
        pushed: list[StreamResponse] = []
        finished = anyio.Event()

        async def collect_pushes() -> None:
            async for event in receiver.events():
                body = {"http": "POST /a2a/webhook", "body": _wire(event)}
                ctx.trace.record("agent", "client", body, transport="webhook")
                ctx.say("  pushed: " + describe_event(event))
                pushed.append(event)
                update = event.status_update
                if update is not None and update.status.state.is_terminal:
                    finished.set()

        async with (
            A2AClient(card, http=http, tap=ctx.trace.tap) as client,
            running_server(receiver.asgi_app()) as webhook,
            anyio.create_task_group() as task_group,
        ):
            task_group.start_soon(collect_pushes)
            # 1. Polling, with the task's events pushed to our webhook as well.
            ctx.say(f"» [poll + push] {REQUEST!r}, webhook {webhook}/a2a/webhook")
            push = TaskPushNotificationConfig(url=f"{webhook}/a2a/webhook", token=token)
            first = await client.send(REQUEST, push=push, return_immediately=True)
            check(isinstance(first, Task), "SendMessage returns a task")
            assert isinstance(first, Task)
            asked = await client.wait(first.id, timeout=STEP_TIMEOUT)
            check(asked.status.state is TaskState.INPUT_REQUIRED, "the agent asks for input")
            ctx.say(f"» polled: {state_name(asked.status.state)}; answering {ANSWER!r}")
            await client.send(ANSWER, task_id=asked.id, return_immediately=True)
            polled = await client.wait(asked.id, timeout=STEP_TIMEOUT, since=asked)
            check(polled.status.state is TaskState.COMPLETED, "the polled task completes")
            ctx.say(f"» polled: {state_name(polled.status.state)}")
            with anyio.fail_after(STEP_TIMEOUT):
                await finished.wait()
            # 2. The same work followed by SSE, with the research agent's own code.
            ctx.say(f"» [SSE] {REQUEST!r}")
            streamed = await research.follow_by_streaming(client, lambda text: ctx.say(text))
            check(streamed.status.state is TaskState.COMPLETED, "the streamed task completes")
            ctx.say(f"» streamed: {state_name(streamed.status.state)}")
            research.print_artifacts(streamed, ctx.say)
            task_group.cancel_scope.cancel()
    names = [artifact.name for artifact in streamed.artifacts or []]
    check("reverse.py" in names, "the coding agent delivers reverse.py")
    final_push = pushed[-1].status_update
    assert final_push is not None
    return (
        "HTTP on 127.0.0.1: agent card, polling working → input-required → completed, "
        f"SSE → completed ({', '.join(str(n) for n in names)}), {len(pushed)} webhook pushes "
        f"ending {state_name(final_push.status.state)}"
    )


# -- the bare core -------------------------------------------------------------------------


async def jsonrpc_flow(ctx: DemoContext) -> str:
    """Two processes calling each other over stdio with nothing but jsonrpc_core."""
    from jsonrpc_core import (
        InternalError,
        InvalidParams,
        MethodRegistry,
        Notification,
        Peer,
        RequestContext,
        RequestId,
        RequestType,
        spawn_stdio,
    )

    passed: list[str] = []
    registry = MethodRegistry()

    async def answer(params: Any, context: RequestContext) -> str:
        # The client calls the server back while the server's own call to us is in flight.
        total = await context.peer.request("add", {"a": 40, "b": 2})
        return f"{params['question']} -> {total:g}"

    def cancel_hook(request_id: RequestId, reason: str) -> Notification:
        return Notification("$/cancel_request", {"requestId": request_id})

    registry.on(RequestType("client/answer"), answer)
    command = [sys.executable, str(_example("jsonrpc", "echo_server.py"))]
    async with spawn_stdio(command) as process:
        stream = ctx.trace.wrap(process, local="client", remote="server", transport="stdio")
        async with Peer(stream, registry, name="client", on_outgoing_cancel=cancel_hook) as peer:
            ctx.say("» echo")
            check(await peer.request("echo", {"text": "hello"}) == {"text": "hello"}, "echo")
            passed.append("echo")
            ctx.say("» ask: the server calls the client, which calls the server, mid-call")
            result = await peer.request("ask", {"question": "the answer"})
            check(result == {"question": "the answer", "answer": "the answer -> 42"}, "ask")
            passed.append("nested calls both ways")
            ctx.say("» bad input: wrong params, then a failing handler")
            try:
                await peer.request("add", {"a": "one"})
            except InvalidParams:
                passed.append("invalid params refused")
            try:
                await peer.request("fail")
            except InternalError:
                passed.append("handler failure reported")
            ctx.say("» cancel: a long sleep is abandoned and the server is told")
            with anyio.move_on_after(0.3):
                await peer.request("sleep", {"seconds": 30})
            check(await peer.request("echo", ["still alive"]) == ["still alive"], "alive")
            passed.append("cancellation")
    check(len(passed) == 5, "every core check passed")
    return "stdio, both directions: " + ", ".join(passed)
