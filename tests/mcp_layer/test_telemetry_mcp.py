"""OpenTelemetry spans of MCP: names, kinds, attributes and links per the GenAI semantic
conventions for MCP, errors, progress as span events, and the trace context carried in
``params._meta`` both ways (client to server, and a server's request to the client).

Uses the private `mcp_layer._telemetry.MCP_CLIENT_TELEMETRY` on purpose: one test puts
the layer's client conventions on a bare core `Peer` to see what it injects.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from _otel import Recorded, child_of, otel
from _otel_apps import build
from opentelemetry.trace import SpanKind, StatusCode

from jsonrpc_core import ConnectionClosed, InvalidParams, MethodRegistry, Peer, memory_pair
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import ClientSession, Context, MCPServer, connect

pytestmark = pytest.mark.anyio

__all__ = ["otel"]

CLIENT, SERVER = SpanKind.CLIENT, SpanKind.SERVER


def sampled(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


async def test_each_method_family_has_a_client_and_a_server_span(otel: Recorded) -> None:
    async with connect(build()) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.get_prompt("greet", {"name": "Bob"})
        await client.read_resource("test://static")
    for name, method, extra in [
        ("initialize", "initialize", {"mcp.protocol.version": "2025-11-25"}),
        ("tools/list", "tools/list", {}),
        (
            "tools/call add",
            "tools/call",
            {"gen_ai.tool.name": "add", "gen_ai.operation.name": "execute_tool"},
        ),
        ("prompts/get greet", "prompts/get", {"gen_ai.prompt.name": "greet"}),
        ("resources/read", "resources/read", {"mcp.resource.uri": "test://static"}),
    ]:
        client_span, server_span = otel.span(name, CLIENT), otel.span(name, SERVER)
        for span in (client_span, server_span):
            assert span.attributes is not None
            assert span.attributes["mcp.method.name"] == method
            assert span.attributes["mcp.protocol.version"] == "2025-11-25"
            assert span.attributes["rpcweave.protocol"] == "mcp"
            assert isinstance(span.attributes["jsonrpc.request.id"], str)
            assert {k: span.attributes[k] for k in extra} == extra
            assert span.status.status_code is StatusCode.UNSET
        # The server's span continues the client's trace (traceparent in params._meta).
        assert child_of(server_span, client_span)
    # Notifications have spans too, without a request id.
    initialized = otel.span("notifications/initialized", SERVER)
    assert initialized.attributes is not None and "jsonrpc.request.id" not in initialized.attributes
    assert child_of(initialized, otel.span("notifications/initialized", CLIENT))


async def test_a_trace_started_by_the_caller_continues_in_the_server(otel: Recorded) -> None:
    tracer = otel.tracer_provider.get_tracer("test")
    async with connect(build()) as client:
        with tracer.start_as_current_span("user work"):
            await client.call_tool("add", {"a": 1, "b": 2})
    user = otel.span("user work")
    call = otel.span("tools/call add", CLIENT)
    assert child_of(call, user)
    assert child_of(otel.span("tools/call add", SERVER), call)


async def test_a_peer_without_conventions_adds_nothing_to_params(otel: Recorded) -> None:
    received: list[Any] = []
    registry = MethodRegistry()
    registry.fallback = lambda params, ctx: received.append(params) or {}  # type: ignore[func-returns-value]
    client_stream, server_stream = memory_pair()
    async with Peer(server_stream, registry), Peer(client_stream) as client:
        await client.request("tools/list", None)
    assert received == [None]
    assert otel.spans() == ()


async def test_the_client_injects_traceparent_and_tracestate_into_meta(otel: Recorded) -> None:
    received: list[Any] = []
    registry = MethodRegistry()
    registry.fallback = lambda params, ctx: received.append(params) or {}  # type: ignore[func-returns-value]
    client_stream, server_stream = memory_pair()
    from mcp_layer._telemetry import MCP_CLIENT_TELEMETRY

    async with (
        Peer(server_stream, registry),
        Peer(client_stream, telemetry=MCP_CLIENT_TELEMETRY) as client,
    ):
        await client.request("tools/call", {"name": "add", "_meta": {"progressToken": 7}})
        await client.request("tools/list", None)
    span = otel.span("tools/call add", CLIENT)
    assert span.context is not None
    ids = f"{span.context.trace_id:032x}-{span.context.span_id:016x}"
    traceparent = f"00-{ids}-{span.context.trace_flags:02x}"
    assert received[0] == {"name": "add", "_meta": {"progressToken": 7, "traceparent": traceparent}}
    # A request without params gets params holding only _meta (every MCP params has one).
    assert set(received[1]) == {"_meta"} and "traceparent" in received[1]["_meta"]


async def test_errors_are_recorded_with_error_type_and_status_code(otel: Recorded) -> None:
    async with connect(build()) as client:
        with pytest.raises(InvalidParams):
            await client.call_tool("missing")
        failed = await client.call_tool("boom")
    assert failed.is_error
    for kind in (CLIENT, SERVER):
        unknown = otel.span("tools/call missing", kind)
        assert unknown.attributes is not None
        assert unknown.attributes["error.type"] == "-32602"
        assert unknown.attributes["rpc.response.status_code"] == "-32602"
        assert unknown.status.status_code is StatusCode.ERROR
        # A tool result with isError is an error of the operation, not of JSON-RPC.
        boom = otel.span("tools/call boom", kind)
        assert boom.attributes is not None and boom.attributes["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in boom.attributes
        assert boom.status.status_code is StatusCode.ERROR


async def test_progress_is_events_on_the_call_span_not_spans(otel: Recorded) -> None:
    async with connect(build()) as client:
        await client.call_tool("steps", {"n": 3}, progress=lambda p, t, m: None)
    assert otel.named("notifications/progress") == []
    for kind in (CLIENT, SERVER):
        events = otel.span("tools/call steps", kind).events
        assert [e.name for e in events] == ["notifications/progress"] * 3
        assert [e.attributes["mcp.progress"] for e in events if e.attributes] == [1, 2, 3]


async def test_a_server_to_client_request_continues_the_server_span(otel: Recorded) -> None:
    async with connect(build(), sampling=sampled) as client:
        assert (await client.call_tool("ask_model")).content[0].text == "hi"  # type: ignore[union-attr]
    handler = otel.span("tools/call ask_model", SERVER)
    # On the server's side the request it sends is a CLIENT span under its handler's...
    asked = otel.span("sampling/createMessage", CLIENT)
    assert child_of(asked, handler)
    # ... and the client's handling of it continues that span.
    assert child_of(otel.span("sampling/createMessage", SERVER), asked)


async def test_an_elicitation_continues_the_tool_call_that_asked(otel: Recorded) -> None:
    server = MCPServer("asking", "1.0")

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {}})
        return answer.action

    def accept(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async with connect(server, elicitation=accept) as client:
        assert (await client.call_tool("ask_user")).content[0].text == "accept"  # type: ignore[union-attr]
    asked = otel.span("elicitation/create", CLIENT)
    assert child_of(asked, otel.span("tools/call ask_user", SERVER))
    assert child_of(otel.span("elicitation/create", SERVER), asked)


async def test_over_http_spans_carry_the_session_and_tcp(otel: Recorded) -> None:
    app = build().asgi_app()
    async with app.running(), httpx.AsyncClient(transport=StreamingASGITransport(app)) as http:
        async with connect("http://127.0.0.1/mcp", client=http) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
    client_span = otel.span("tools/call add", CLIENT)
    server_span = otel.span("tools/call add", SERVER)
    assert child_of(server_span, client_span)
    for span in (client_span, server_span):
        assert span.attributes is not None
        assert span.attributes["network.transport"] == "tcp"
        assert isinstance(span.attributes["mcp.session.id"], str)
    assert client_span.attributes["mcp.session.id"] == server_span.attributes["mcp.session.id"]  # type: ignore[index]


async def test_a_handler_span_ends_when_its_peer_disconnects_mid_request(otel: Recorded) -> None:
    server = MCPServer("stuck", "1.0")
    started = anyio.Event()

    @server.tool()
    async def hang() -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    client_stream, server_stream = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_stream)
        async with ClientSession(client_stream) as client:

            async def call() -> None:
                with pytest.raises(ConnectionClosed):
                    await client.call_tool("hang")

            tg.start_soon(call)
            await started.wait()
            await client_stream.aclose()  # the client goes away mid-request
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()
    span = otel.span("tools/call hang", SERVER)
    assert span.end_time is not None
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None and "Cancel" in str(span.attributes["error.type"])
    client_span = otel.span("tools/call hang", CLIENT)
    assert client_span.attributes is not None
    assert client_span.attributes["error.type"] == "ConnectionClosed"
