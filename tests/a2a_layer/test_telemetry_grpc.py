"""OpenTelemetry over A2A's gRPC binding: the trace context crosses in the call's metadata
(``traceparent``), so the server's SERVER span continues the client's CLIENT span, for
unary and server-streaming rpcs, with the same A2A attributes as on the HTTP bindings.
grpc.aio runs on asyncio only."""

from __future__ import annotations

import grpc  # noqa: F401  (the grpc extra is a dev dependency: missing fails, not skips)
import pytest
from _otel import Recorded, child_of, otel
from a2a_fixtures.harness import BASE, in_process
from opentelemetry.trace import SpanKind
from test_a2a_client import serve

from a2a_layer import A2AClient, TaskNotFound
from a2a_layer.types import ProtocolBinding, Task

pytestmark = pytest.mark.anyio

__all__ = ["otel"]

CLIENT, SERVER = SpanKind.CLIENT, SpanKind.SERVER


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpc.aio's only loop


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_grpc_calls_carry_the_trace_context_in_their_metadata(
    otel: Recorded, version: str
) -> None:
    server, _agent = serve(grpc_port=0)
    async with in_process(server) as http:
        async with A2AClient.connect(
            BASE, http=http, bindings=(ProtocolBinding.GRPC,), versions=(version,)
        ) as client:
            assert client.interface.protocol_binding == "GRPC"
            task = await client.send("build")
            assert isinstance(task, Task)
            events = [event async for event in client.stream("stream")]
            with pytest.raises(TaskNotFound):
                await client.get_task("missing")
    client_send, server_send = otel.span("SendMessage", CLIENT), otel.span("SendMessage", SERVER)
    assert child_of(server_send, client_send)
    for span in (client_send, server_send):
        assert span.attributes is not None
        assert span.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert span.attributes["a2a.task.id"] == task.id
        assert span.attributes["a2a.context.id"] == task.context_id
    client_stream = otel.span("SendStreamingMessage", CLIENT)
    server_stream = otel.span("SendStreamingMessage", SERVER)
    assert child_of(server_stream, client_stream)
    for span in (client_stream, server_stream):
        kinds = [e.attributes["a2a.event.kind"] for e in span.events if e.attributes]
        assert len(kinds) == len(events) and kinds[0] == "task"
    failed_client, failed_server = otel.span("GetTask", CLIENT), otel.span("GetTask", SERVER)
    assert child_of(failed_server, failed_client)
    for span in (failed_client, failed_server):
        assert span.attributes is not None and span.attributes["error.type"] == "-32001"
