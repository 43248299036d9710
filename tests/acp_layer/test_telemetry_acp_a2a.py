"""OpenTelemetry spans of ACP and A2A: ``{method}`` names, ``acp.session.id``,
``a2a.task.id`` / ``a2a.context.id``, ``invoke_agent`` for a prompt turn and a
SendMessage, errors, streamed chunks as span events, and the trace context carried
in ``params._meta`` (ACP, both ways) and in the HTTP headers (A2A)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _otel import Recorded, child_of, otel
from _otel_apps import ReadingAgent, Steps, run_acp
from a2a_fixtures.harness import BASE, in_process, make_card
from opentelemetry.trace import SpanKind, StatusCode

from a2a_layer import A2AClient, A2AServer, TaskNotFound
from acp_layer import ResourceNotFound

pytestmark = pytest.mark.anyio

__all__ = ["otel"]

CLIENT, SERVER = SpanKind.CLIENT, SpanKind.SERVER


async def test_acp_prompt_turn_spans_updates_and_the_agents_request(
    otel: Recorded, tmp_path: Path
) -> None:
    agent = ReadingAgent()
    agent.root = tmp_path
    sid, response = await run_acp(tmp_path, agent)
    assert response.stop_reason == "end_turn"
    for name in ("initialize", "session/new"):
        assert child_of(otel.span(name, SERVER), otel.span(name, CLIENT))
    assert otel.span("initialize", CLIENT).attributes["acp.protocol.version"] == 1  # type: ignore[index]
    created = otel.span("session/new", CLIENT)
    assert created.attributes is not None and created.attributes["acp.session.id"] == sid
    prompts = [
        span
        for span in otel.named("session/prompt")
        if span.attributes and span.attributes["acp.session.id"] == sid
    ]
    client_turn = next(span for span in prompts if span.kind is CLIENT)
    agent_turn = next(span for span in prompts if span.kind is SERVER)
    assert child_of(agent_turn, client_turn)
    for span in (client_turn, agent_turn):
        assert span.attributes is not None
        assert span.attributes["acp.method.name"] == "session/prompt"
        assert span.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert span.attributes["acp.stop_reason"] == "end_turn"
        assert isinstance(span.attributes["jsonrpc.request.id"], str)
        # Each session/update is an event on the turn's span, on both ends.
        updates = [e for e in span.events if e.name == "session/update"]
        assert [e.attributes["acp.session.update"] for e in updates if e.attributes] == [
            "agent_message_chunk",
            "agent_message_chunk",
        ]
    assert otel.named("session/update") == []
    # The agent's request to the client is a CLIENT span under its turn, continued
    # by the client's SERVER span.
    read = otel.span("fs/read_text_file", CLIENT)
    assert child_of(read, agent_turn)
    assert child_of(otel.span("fs/read_text_file", SERVER), read)
    # An error answer: error.type and rpc.response.status_code are the JSON-RPC code.
    failed = [
        span
        for span in otel.named("session/prompt")
        if span.attributes and span.attributes.get("acp.session.id") == "no-such-session"
    ]
    assert {span.kind for span in failed} == {CLIENT, SERVER}
    for span in failed:
        assert span.attributes is not None
        assert span.attributes["error.type"] == str(ResourceNotFound.code)
        assert span.attributes["rpc.response.status_code"] == str(ResourceNotFound.code)
        assert span.status.status_code is StatusCode.ERROR


@pytest.mark.parametrize(
    ("binding", "version"), [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")]
)
async def test_a2a_send_stream_and_get_spans(otel: Recorded, binding: str, version: str) -> None:
    server = A2AServer(make_card(), Steps())
    async with in_process(server) as http:
        async with A2AClient.connect(
            BASE, http=http, bindings=(binding,), versions=(version,)
        ) as client:
            task = await client.send("build")
            events = [e async for e in client.stream("stream")]
            await client.get_task(task.id)  # type: ignore[union-attr]
            with pytest.raises(TaskNotFound):
                await client.get_task("missing")
    send = "SendMessage" if version == "1.0" else "message/send"
    stream = "SendStreamingMessage" if version == "1.0" else "message/stream"
    get = "GetTask" if version == "1.0" else "tasks/get"
    client_send, server_send = otel.span(send, CLIENT), otel.span(send, SERVER)
    # The trace context crosses in the HTTP headers of the POST.
    assert child_of(server_send, client_send)
    for span in (client_send, server_send):
        assert span.attributes is not None
        assert span.attributes["a2a.method.name"] == send
        assert span.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert span.attributes["a2a.task.id"] == task.id  # type: ignore[union-attr]
        assert span.attributes["a2a.context.id"] == task.context_id
        assert span.attributes["network.transport"] == "tcp"
    assert server_send.attributes["a2a.protocol.version"] == version  # type: ignore[index]
    client_stream, server_stream = otel.span(stream, CLIENT), otel.span(stream, SERVER)
    assert child_of(server_stream, client_stream)
    for span in (client_stream, server_stream):
        kinds = [e.attributes["a2a.event.kind"] for e in span.events if e.attributes]
        assert len(kinds) == len(events) and kinds[0] == "task" and "artifactUpdate" in kinds
    got = [s for s in otel.named(get) if s.attributes and s.attributes["a2a.task.id"] == task.id]  # type: ignore[union-attr]
    assert {span.kind for span in got} == {CLIENT, SERVER}
    missing = [
        s for s in otel.named(get) if s.attributes and s.attributes["a2a.task.id"] == "missing"
    ]
    assert {span.kind for span in missing} == {CLIENT, SERVER}
    for span in missing:
        assert span.attributes is not None
        assert span.attributes["error.type"] == str(TaskNotFound.code)
        assert span.status.status_code is StatusCode.ERROR
