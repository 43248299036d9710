"""The everything server's fixtures (examples/mcp/everything_server.py), through mcp_layer's
client: what the official conformance suite checks, without npm.

Most tests run in memory; SSE polling and concurrent streams run over Streamable HTTP in
process (no sockets); one test spawns the server over stdio.

Tests the private unit `mcp_layer._client.with_elicitation_defaults` on purpose: which
fields of an accept it fills.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from _connect import ROOT, load_example

from jsonrpc_core import InMemoryEventStore
from jsonrpc_core.http import SSEDecoder, SSEEvent
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import ClientSession, Context, Image, MCPServer, ResourceNotFound, connect
from mcp_layer._client import with_elicitation_defaults
from mcp_layer.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    LegacyTitledEnumSchema,
    ResourceLink,
    Root,
    TextContent,
    TextResourceContents,
    TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema,
    UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
)

pytestmark = pytest.mark.anyio

EVERYTHING = ROOT / "examples" / "mcp" / "everything_server.py"
everything = load_example(EVERYTHING)

FIXTURE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_reconnection",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
}
"""The tools the conformance suite calls by name."""


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


# -- handlers a host would supply ---------------------------------------------------


def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
    prompt = params.messages[0].content
    assert isinstance(prompt, TextContent)
    return CreateMessageResult(
        role="assistant", content=TextContent(text=f"echo: {prompt.text}"), model="test-model"
    )


def elicit(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    if isinstance(params, ElicitRequestURLParams):
        return ElicitResult(action="accept")
    if "response" in params.requested_schema.properties:
        return ElicitResult(action="accept", content={"response": "yes"})
    return ElicitResult(action="accept", content={})


ROOTS = [Root(uri="file:///work/project", name="project")]


@asynccontextmanager
async def session(**options: Any) -> AsyncIterator[ClientSession]:
    options.setdefault("sampling", sample)
    options.setdefault("elicitation", elicit)
    options.setdefault("roots", ROOTS)
    async with connect(everything.build_server(), request_timeout=10, **options) as client:
        yield client


# -- tools --------------------------------------------------------------------------


async def test_every_fixture_tool_is_listed_with_a_description_and_schema() -> None:
    async with session() as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}
    assert FIXTURE_TOOLS <= set(tools)
    for tool in tools.values():
        assert tool.description, tool.name
        assert tool.input_schema["type"] == "object", tool.name
    # content is not data: content-returning tools get no output schema ...
    for name in ("test_image_content", "test_embedded_resource", "test_multiple_content_types"):
        assert tools[name].output_schema is None, name
    # ... a model-returning one does
    assert tools["test_structured_output"].output_schema is not None


async def test_json_schema_2020_12_input_schema_is_listed_verbatim() -> None:
    async with session() as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}
    schema = tools["json_schema_2020_12_tool"].input_schema
    assert schema == everything.JSON_SCHEMA_2020_12_INPUT_SCHEMA
    for keyword in ("$schema", "$defs", "allOf", "if", "then", "else", "additionalProperties"):
        assert keyword in schema


async def test_content_tools() -> None:
    async with session() as client:
        simple = await client.call_tool("test_simple_text")
        assert text_of(simple) == "This is a simple text response for testing."

        image = (await client.call_tool("test_image_content")).content
        assert image == [ImageContent(data=everything.TEST_IMAGE_BASE64, mime_type="image/png")]

        audio = (await client.call_tool("test_audio_content")).content
        assert audio == [AudioContent(data=everything.TEST_AUDIO_BASE64, mime_type="audio/wav")]

        (embedded,) = (await client.call_tool("test_embedded_resource")).content
        assert isinstance(embedded, EmbeddedResource)
        assert embedded.resource == TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )

        mixed = (await client.call_tool("test_multiple_content_types")).content
        assert [block.type for block in mixed] == ["text", "image", "resource"]
        resource = mixed[2]
        assert isinstance(resource, EmbeddedResource)
        assert isinstance(resource.resource, TextResourceContents)
        assert json.loads(resource.resource.text) == {"test": "data", "value": 123}

        link = (await client.call_tool("test_resource_link")).content[1]
        assert isinstance(link, ResourceLink)
        assert link.uri == "test://static-text"

        structured = await client.call_tool("test_structured_output", {"city": "Lisbon"})
        assert structured.structured_content == {
            "city": "Lisbon",
            "temperature_celsius": 21.5,
            "conditions": "sunny",
        }


async def test_error_tool_returns_an_error_result() -> None:
    async with session() as client:
        result = await client.call_tool("test_error_handling")
    assert result.is_error
    assert "This tool intentionally returns an error for testing" in text_of(result)


async def test_logging_tool_honours_the_log_level() -> None:
    logs: list[Any] = []
    async with session(on_log=lambda params: logs.append((params.level, params.data))) as client:
        result = await client.call_tool("test_tool_with_logging")
        assert text_of(result) == "Tool with logging executed successfully"
        assert logs == [
            ("info", "Tool execution started"),
            ("info", "Tool processing data"),
            ("info", "Tool execution completed"),
        ]
        logs.clear()
        await client.set_logging_level("warning")
        await client.call_tool("test_tool_with_logging")
        assert logs == []


async def test_progress_tool_reports_increasing_progress() -> None:
    updates: list[tuple[float, float | None, str | None]] = []
    async with session() as client:
        result = await client.call_tool(
            "test_tool_with_progress", progress=lambda p, t, m: updates.append((p, t, m))
        )
        without = await client.call_tool("test_tool_with_progress")
    assert updates == [
        (0, 100, "Completed step 0 of 100"),
        (50, 100, "Completed step 50 of 100"),
        (100, 100, "Completed step 100 of 100"),
    ]
    assert text_of(result) == "1"  # the progress token the client chose
    assert text_of(without) == "None"


async def test_sampling_tool() -> None:
    async with session() as client:
        result = await client.call_tool("test_sampling", {"prompt": "What is 2+2?"})
    assert text_of(result) == "LLM response: echo: What is 2+2?"


async def test_elicitation_tool() -> None:
    async with session() as client:
        result = await client.call_tool("test_elicitation", {"message": "Ready?"})
    assert text_of(result) == 'User response: action=accept, content={"response":"yes"}'


async def test_elicitation_defaults_fill_an_empty_answer() -> None:
    async with session(elicitation_defaults=True) as client:
        result = await client.call_tool("test_elicitation_sep1034_defaults")
    prefix = "Elicitation completed: action=accept, content="
    assert text_of(result).startswith(prefix)
    assert json.loads(text_of(result)[len(prefix) :]) == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }


async def test_elicitation_without_defaults_keeps_the_answer_as_given() -> None:
    async with session() as client:
        result = await client.call_tool("test_elicitation_sep1034_defaults")
    assert text_of(result) == "Elicitation completed: action=accept, content={}"


async def test_elicitation_enum_variants_reach_the_client_as_their_models() -> None:
    seen: list[ElicitRequestFormParams] = []

    def record(params: ElicitRequestFormParams) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="decline")

    async with session(elicitation=record) as client:
        result = await client.call_tool("test_elicitation_sep1330_enums")
    assert text_of(result) == "Elicitation completed: action=decline, content={}"
    fields = seen[0].requested_schema.properties
    assert isinstance(fields["untitledSingle"], UntitledSingleSelectEnumSchema)
    assert isinstance(fields["titledSingle"], TitledSingleSelectEnumSchema)
    assert isinstance(fields["legacyEnum"], LegacyTitledEnumSchema)
    assert isinstance(fields["untitledMulti"], UntitledMultiSelectEnumSchema)
    assert isinstance(fields["titledMulti"], TitledMultiSelectEnumSchema)
    assert fields["legacyEnum"].enum_names == ["Option One", "Option Two", "Option Three"]


async def test_url_elicitation_and_roots_tools() -> None:
    async with session() as client:
        url = await client.call_tool("test_url_elicitation")
        roots = await client.call_tool("test_list_roots")
    assert text_of(url) == "URL elicitation: action=accept"
    assert json.loads(text_of(roots)) == [{"uri": "file:///work/project", "name": "project"}]


async def test_json_schema_tool_validates_against_its_raw_schema() -> None:
    async with session() as client:
        ok = await client.call_tool(
            "json_schema_2020_12_tool", {"name": "Ada", "contactMethod": "email", "email": "a@b"}
        )
        bad = await client.call_tool("json_schema_2020_12_tool", {"name": "Ada", "extra": 1})
    assert text_of(ok).startswith("JSON Schema 2020-12 tool called with: ")
    assert bad.is_error


async def test_trigger_tools_send_list_changed_and_resource_updates() -> None:
    changed: list[str] = []
    updated: list[str] = []
    roots_logged: list[Any] = []
    got_update, got_log = anyio.Event(), anyio.Event()

    def on_updated(params: Any) -> None:
        updated.append(params.uri)
        got_update.set()

    def on_log(params: Any) -> None:
        roots_logged.append(params.data)
        got_log.set()

    async with session(
        on_list_changed=changed.append, on_resource_updated=on_updated, on_log=on_log
    ) as client:
        for name in (
            "test_trigger_tool_change",
            "test_trigger_prompt_change",
            "test_trigger_resource_change",
        ):
            assert text_of(await client.call_tool(name)) == "Mutation triggered"
        await client.call_tool("test_trigger_resource_update")  # not subscribed: nothing
        await client.subscribe_resource("test://watched-resource")
        await client.call_tool("test_trigger_resource_update")
        await client.unsubscribe_resource("test://watched-resource")
        await client.call_tool("test_trigger_resource_update")
        await client.send_roots_list_changed()
        with anyio.fail_after(5):
            await got_update.wait()
            await got_log.wait()
        await client.ping()
    assert changed == ["tools", "prompts", "resources"]
    assert updated == ["test://watched-resource"]
    assert roots_logged == ["Client roots changed"]


# -- resources ----------------------------------------------------------------------


async def test_resources() -> None:
    async with session() as client:
        listed = {r.uri: r for r in await client.list_all_resources()}
        assert set(listed) == {
            "test://static-text",
            "test://static-binary",
            "test://watched-resource",
        }
        assert listed["test://static-text"].name == "static-text"
        assert listed["test://static-binary"].mime_type == "image/png"
        (template,) = await client.list_all_resource_templates()
        assert template.uri_template == "test://template/{id}/data"

        (text,) = (await client.read_resource("test://static-text")).contents
        assert text == TextResourceContents(
            uri="test://static-text",
            mime_type="text/plain",
            text="This is the content of the static text resource.",
        )
        (blob,) = (await client.read_resource("test://static-binary")).contents
        assert isinstance(blob, BlobResourceContents)
        assert blob.blob == everything.TEST_IMAGE_BASE64
        assert base64.b64decode(blob.blob).startswith(b"\x89PNG")

        (data,) = (await client.read_resource("test://template/123/data")).contents
        assert isinstance(data, TextResourceContents)
        assert data.uri == "test://template/123/data"
        assert data.mime_type == "application/json"
        assert json.loads(data.text) == {
            "id": "123",
            "templateTest": True,
            "data": "Data for ID: 123",
        }
        with pytest.raises(ResourceNotFound) as caught:
            await client.read_resource("test://nowhere")
        assert caught.value.uri == "test://nowhere"


# -- prompts and completion ---------------------------------------------------------


async def test_prompts() -> None:
    async with session() as client:
        prompts = {p.name: p for p in await client.list_all_prompts()}
        assert set(prompts) == {
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",  # 2026-07-28 (test_mcp_2026_everything.py)
        }
        arguments = prompts["test_prompt_with_arguments"].arguments or []
        assert [(a.name, a.description, a.required) for a in arguments] == [
            ("arg1", "First test argument", True),
            ("arg2", "Second test argument", True),
        ]

        simple = await client.get_prompt("test_simple_prompt")
        assert [(m.role, m.content) for m in simple.messages] == [
            ("user", TextContent(text="This is a simple prompt for testing."))
        ]
        with_args = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
        )
        assert with_args.messages[0].content == TextContent(
            text="Prompt with arguments: arg1='a', arg2='b'"
        )
        embedded = await client.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example"}
        )
        first = embedded.messages[0].content
        assert isinstance(first, EmbeddedResource)
        assert first.resource.uri == "test://example"
        assert [m.content.type for m in embedded.messages] == ["resource", "text"]
        image = await client.get_prompt("test_prompt_with_image")
        assert [m.content.type for m in image.messages] == ["image", "text"]


async def test_completion() -> None:
    async with session() as client:
        assert client.server_capabilities.completions is not None
        cities = await client.complete(
            {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            {"name": "arg1", "value": "pa"},
        )
        assert cities.completion.values == ["paris", "park", "party"]
        assert cities.completion.total == 3
        ids = await client.complete(
            {"type": "ref/resource", "uri": "test://template/{id}/data"},
            {"name": "id", "value": ""},
        )
        assert ids.completion.values == ["1", "2", "3", "4", "5"]
        nothing = await client.complete(
            {"type": "ref/prompt", "name": "test_simple_prompt"}, {"name": "x", "value": ""}
        )
        assert nothing.completion.values == []


# -- mcp_layer pieces the fixtures rely on, on their own -----------------------------


async def test_close_sse_stream_is_refused_where_there_is_no_stream() -> None:
    server = MCPServer("close")

    @server.tool()
    def close(ctx: Context) -> bool:
        return ctx.close_sse_stream()

    async with connect(server) as client:
        result = await client.call_tool("close")
    assert result.structured_content == {"result": False}


def test_content_return_types_get_no_output_schema() -> None:
    server = MCPServer("schemas")

    @server.tool()
    def image() -> Image:
        return Image(data=b"x")

    @server.tool()
    def blocks() -> list[TextContent | ImageContent]:
        return [TextContent(text="x")]

    @server.tool()
    def optional_block() -> EmbeddedResource | None:
        return None

    @server.tool()
    def whole_result() -> CallToolResult:
        return CallToolResult(content=[])

    @server.tool()
    def text() -> str:
        return "x"

    @server.tool()
    def numbers() -> list[int]:
        return [1]

    schemas = {name: entry.tool.output_schema for name, entry in server.tools.items()}
    for name in ("image", "blocks", "optional_block", "whole_result"):
        assert schemas[name] is None, name
    assert schemas["text"] == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
    }
    assert schemas["numbers"] is not None


def test_with_elicitation_defaults_fills_only_missing_fields_of_an_accept() -> None:
    params = ElicitRequestFormParams.model_validate(
        {"message": "m", "requestedSchema": everything.SEP1034_DEFAULTS_SCHEMA}
    )
    filled = with_elicitation_defaults(params, {"action": "accept", "content": {"age": 41}})
    assert filled.content == {
        "name": "John Doe",
        "age": 41,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    declined = with_elicitation_defaults(params, ElicitResult(action="decline"))
    assert declined == ElicitResult(action="decline")


# -- Streamable HTTP in process ------------------------------------------------------

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@asynccontextmanager
async def http_client(server: MCPServer) -> AsyncIterator[httpx.AsyncClient]:
    app = server.asgi_app(
        event_store=InMemoryEventStore(), retry_interval_ms=everything.RETRY_INTERVAL_MS
    )
    async with app.running():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


async def open_session(client: httpx.AsyncClient) -> dict[str, str]:
    """Initialize over raw HTTP; the headers later requests of the session need."""
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    response = await client.post("/mcp", json=body, headers=HEADERS)
    assert response.status_code == 200
    headers = {
        **HEADERS,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post("/mcp", json=note, headers=headers)).status_code == 202
    return headers


async def read_events(response: httpx.Response) -> tuple[list[SSEEvent], SSEDecoder]:
    """The events of an SSE response (the decoder keeps ``last_event_id`` and ``retry``)."""
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    async for chunk in response.aiter_bytes():
        events.extend(decoder.feed(chunk))
    return events, decoder


def call(request_id: int, tool: str) -> dict[str, Any]:
    params = {"name": tool, "arguments": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_reconnection_tool_closes_its_stream_and_the_result_is_resumed() -> None:
    """SEP-1699 polling: a primed stream, closed before the result, resumed by GET."""
    async with http_client(everything.build_server()) as client:
        headers = await open_session(client)
        with anyio.fail_after(10):
            async with client.stream(
                "POST", "/mcp", json=call(1, "test_reconnection"), headers=headers
            ) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                raw = (await response.aread()).decode()
            # primed: an id and a retry delay before anything else, then closed early
            assert raw.startswith("id: ")
            assert f"retry: {everything.RETRY_INTERVAL_MS}" in raw.split("\n\n")[0]
            decoder = SSEDecoder()
            events = decoder.feed(raw.encode())
            assert all('"id":1' not in event.data for event in events)
            assert decoder.last_event_id is not None
            resume = {
                **headers,
                "accept": "text/event-stream",
                "last-event-id": decoder.last_event_id,
            }
            async with client.stream("GET", "/mcp", headers=resume) as resumed:
                replayed, _ = await read_events(resumed)
            answers = [json.loads(event.data) for event in replayed if event.data]
    assert [answer["id"] for answer in answers] == [1]
    assert "properly reconnected" in answers[0]["result"]["content"][0]["text"]


async def test_reconnection_tool_through_the_client_transport() -> None:
    """The client transport resumes the closed stream by itself after ``retry``."""
    server = everything.build_server()
    app = server.asgi_app(event_store=InMemoryEventStore(), retry_interval_ms=50)
    async with app.running():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport) as http:
            async with connect("http://127.0.0.1/mcp", client=http, request_timeout=10) as client:
                result = await client.call_tool("test_reconnection")
                again = await client.call_tool("test_simple_text")
    assert "properly reconnected" in text_of(result)
    assert text_of(again) == "This is a simple text response for testing."


async def test_reconnection_tool_without_an_event_store_keeps_its_stream() -> None:
    """Without an event store nothing could be resumed: closing is refused, not lossy."""
    server = everything.build_server()
    app = server.asgi_app(retry_interval_ms=50)
    async with app.running():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport) as http:
            async with connect("http://127.0.0.1/mcp", client=http, request_timeout=5) as client:
                result = await client.call_tool("test_reconnection")
    assert "properly reconnected" in text_of(result)


async def test_several_concurrent_post_streams() -> None:
    async with http_client(everything.build_server()) as client:
        headers = await open_session(client)
        answers: dict[int, Any] = {}

        async def list_tools(request_id: int) -> None:
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
            async with client.stream("POST", "/mcp", json=body, headers=headers) as response:
                assert response.status_code == 200
                for event in (await read_events(response))[0]:
                    if event.data:
                        answers[request_id] = json.loads(event.data)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for request_id in (1000, 1001, 1002):
                    group.start_soon(list_tools, request_id)
    assert sorted(answers) == [1000, 1001, 1002]
    assert all(FIXTURE_TOOLS <= {t["name"] for t in a["result"]["tools"]} for a in answers.values())


async def test_dns_rebinding_is_refused() -> None:
    async with http_client(everything.build_server()) as client:
        evil = {**HEADERS, "host": "evil.example.com", "origin": "http://evil.example.com"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        refused = await client.post("/mcp", json=body, headers=evil)
    assert refused.status_code == 403


# -- stdio ---------------------------------------------------------------------------


async def test_stdio() -> None:
    command = [sys.executable, str(EVERYTHING), "--stdio"]
    with anyio.fail_after(30):
        async with connect(command, sampling=sample) as client:
            simple = await client.call_tool("test_simple_text")
            sampled = await client.call_tool("test_sampling", {"prompt": "over stdio"})
    assert text_of(simple) == "This is a simple text response for testing."
    assert text_of(sampled) == "LLM response: echo: over stdio"
