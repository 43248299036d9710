"""``rpcweave demo --otel``: one OpenTelemetry trace across ACP, MCP and A2A.

An editor asks an ACP agent (``session/prompt``); to answer, the agent looks the topic up
with an MCP tool (``tools/call lookup``) and delegates the write-up to another agent over
A2A (``SendMessage``). Each hop carries the W3C trace context (``params._meta`` for ACP
and MCP, HTTP headers for A2A), so the whole turn is one trace, printed as a tree. With
``--trace FILE`` the three hops' wire messages are recorded too, and the trace page shows
the spans beside them, each MCP and ACP message linked to the span that sent it.

The pieces (`PlannerAgent`, `lookup_server`, `writer_server`) are also what the
cross-protocol tests run, in process and across real processes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio

from a2a_layer import A2AClient, A2AServer, ExecutionContext, TaskUpdater
from a2a_layer.types import AgentCapabilities, AgentCard, AgentSkill, Task
from acp_layer import Agent, LocalClient, connect_agent, serve_agent
from acp_layer import schema as s
from jsonrpc_core import TapRecord, WireTap, memory_pair
from mcp_layer import ClientSession, Context, MCPServer

from ._trace import Trace

__all__ = [
    "PlannerAgent",
    "lookup_server",
    "render_tree",
    "run_otel_demo",
    "run_turn",
    "writer_server",
]

WRITER_URL = "http://127.0.0.1"
LABELS = {
    "editor": "editor (ACP client)",
    "planner": "planner (ACP agent, MCP and A2A client)",
    "lookup": "lookup (MCP server)",
    "writer": "writer (A2A agent)",
}


def lookup_server() -> MCPServer:
    """The MCP tool server: ``lookup(topic)`` reports progress and answers a fact."""
    server = MCPServer("lookup", "1.0")

    @server.tool()
    async def lookup(ctx: Context, topic: str) -> str:
        """Look a topic up."""
        await ctx.report_progress(1, 2, "searching")
        await ctx.report_progress(2, 2, "found")
        return f"{topic}: one JSON-RPC core carries MCP, ACP and A2A"

    return server


async def _write_up(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.start_work()
    await updater.add_artifact(f"summary of {context.text!r}", name="summary")
    await updater.complete("written")


def writer_server() -> A2AServer:
    """The A2A agent the planner delegates the write-up to."""
    card = AgentCard(
        name="writer",
        description="Writes summaries",
        version="1.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="summarise", name="summarise", description="", tags=["text"])],
        supported_interfaces=[],
    )
    return A2AServer(card, _write_up)


ToolsOpener = Callable[[], AbstractAsyncContextManager[ClientSession]]
DelegateOpener = Callable[[], AbstractAsyncContextManager[A2AClient]]


class PlannerAgent(Agent):
    """An ACP agent whose prompt turn calls an MCP tool, then sends an A2A message."""

    def __init__(self, tools: ToolsOpener, delegate: DelegateOpener) -> None:
        self._tools = tools
        self._delegate = delegate

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        topic = "".join(b.text for b in params.prompt if isinstance(b, s.TextContent))
        await self.client.send_text(sid, "looking it up... ")
        async with self._tools() as tools:
            found = await tools.call_tool("lookup", {"topic": topic}, progress=_ignore)
        fact = "".join(getattr(block, "text", "") for block in found.content)
        async with self._delegate() as delegate:
            task = await delegate.send(fact)
        state = task.status.state.name if isinstance(task, Task) else "message"
        await self.client.send_text(sid, f"the writer answered ({state})")
        return "end_turn"


def _ignore(progress: float, total: float | None, message: str | None) -> None:
    pass


async def run_turn(
    agent: Agent, topic: str, cwd: str, trace: Trace | None = None
) -> s.PromptResponse:
    """An editor (`LocalClient`) asks ``agent`` about ``topic`` in one prompt turn
    (recorded in ``trace``, if given)."""
    client_end, agent_end = memory_pair()
    editor_end: Any = client_end
    if trace is not None:
        editor_end = trace.wrap(client_end, local="editor", remote="planner", transport="memory")
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(serve_agent, agent, agent_end)
        async with connect_agent(LocalClient(permission="reject"), editor_end) as conn:
            session = await conn.new_session(cwd)
            response = await conn.prompt(session.session_id, topic)
        task_group.cancel_scope.cancel()
    return response


@asynccontextmanager
async def _tools_in_memory(trace: Trace | None) -> AsyncIterator[ClientSession]:
    """A session to a fresh `lookup_server` in memory (its messages recorded in ``trace``)."""
    client_end, server_end = memory_pair()
    planner_end: Any = client_end
    if trace is not None:
        planner_end = trace.wrap(client_end, local="planner", remote="lookup", transport="memory")
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(lookup_server().serve, server_end)
        try:
            async with ClientSession(planner_end) as session:
                yield session
        finally:
            task_group.cancel_scope.cancel()


def _a2a_tap(trace: Trace | None) -> WireTap | None:
    """A tap recording the A2A client's JSON-RPC messages in ``trace`` as planner's and
    writer's (the A2A client names its ends ``client`` and ``agent``)."""
    if trace is None or not trace.active:
        return None
    names = {"client": "planner", "agent": "writer"}
    record = trace.tap.record

    def renamed(item: TapRecord) -> None:
        record(
            replace(
                item,
                local=names.get(item.local, item.local),
                remote=names.get(item.remote, item.remote),
            )
        )

    return WireTap(renamed)


@asynccontextmanager
async def in_process_planner(trace: Trace | None = None) -> AsyncIterator[PlannerAgent]:
    """A planner whose MCP server runs in memory and whose A2A writer runs in process
    (the messages of both hops recorded in ``trace``, if given)."""
    import httpx

    from jsonrpc_core.testing import StreamingASGITransport

    writer = writer_server()
    tap = _a2a_tap(trace)
    async with writer.running():
        transport = StreamingASGITransport(writer.asgi_app())
        async with httpx.AsyncClient(transport=transport, base_url=WRITER_URL) as http:

            def delegate() -> AbstractAsyncContextManager[A2AClient]:
                return A2AClient.connect(WRITER_URL, http=http, bindings=("JSONRPC",), tap=tap)

            yield PlannerAgent(lambda: _tools_in_memory(trace), delegate)


# -- the printed tree ---------------------------------------------------------------------


def render_tree(spans: Sequence[Any]) -> str:
    """Finished SDK spans as an indented tree: name, kind, duration, protocol; a
    span's events (streamed chunks) as ``·`` lines under it."""
    by_id = {span.context.span_id: span for span in spans}
    children: dict[int | None, list[Any]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in by_id else None, []).append(span)
    lines: list[str] = []

    def draw(span: Any, depth: int) -> None:
        indent = "  " * depth
        kind = span.kind.name.lower()
        millis = (span.end_time - span.start_time) / 1e6
        protocol = (span.attributes or {}).get("rpcweave.protocol", "-")
        failed = "  ERROR" if span.status.status_code.name == "ERROR" else ""
        lines.append(f"{indent}{span.name}  [{kind}] {millis:.1f} ms  {protocol}{failed}")
        for event in span.events:
            lines.append(f"{indent}  · {event.name}")
        for child in sorted(children.get(span.context.span_id, []), key=lambda c: c.start_time):
            draw(child, depth + 1)

    for root in sorted(children.get(None, []), key=lambda r: r.start_time):
        draw(root, 0)
    return "\n".join(lines)


async def _traced_turn(tracer: Any, cwd: str, trace: Trace | None) -> s.PromptResponse:
    async with in_process_planner(trace) as planner:
        with tracer.start_as_current_span("editor: explain rpcweave"):
            return await run_turn(planner, "rpcweave", cwd, trace)


def run_otel_demo(cwd: str = ".", trace: str | None = None) -> int:
    """Run the traced three-protocol turn with the SDK's in-memory exporter and print
    the trace tree; the exit status (1 without the OpenTelemetry SDK). With ``trace``
    (a path), the wire messages are recorded there and drawn with the spans (see the
    module docstring)."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
    except ImportError:
        print("rpcweave demo --otel needs opentelemetry-sdk (pip install opentelemetry-sdk)")
        return 1
    from opentelemetry import trace as otel_trace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_trace.set_tracer_provider(provider)
    tracer = provider.get_tracer("rpcweave.demo")
    title = "rpcweave demo --otel: one trace across ACP, MCP and A2A"
    recording = Trace(trace, title=title, labels=LABELS) if trace else None
    try:
        response = anyio.run(_traced_turn, tracer, os.path.abspath(cwd), recording)
    finally:
        if recording is not None:
            recording.close()  # the page shows the spans the recording collected
    spans = exporter.get_finished_spans()
    print(render_tree(spans))
    traces = {span.context.trace_id for span in spans}
    print()
    print(f"{len(spans)} spans in {len(traces)} trace(s); stop reason: {response.stop_reason}")
    sys.stdout.flush()
    return 0 if len(traces) == 1 and response.stop_reason == "end_turn" else 1
