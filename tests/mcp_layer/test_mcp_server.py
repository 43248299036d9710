"""MCPServer and ClientSession, proven on the wire.

Every message either side emits is validated against the MCP 2025-11-25 JSON schema
(`mcp_schema.WireChecker`; the ``wire`` fixture fails the test on any violation). In
memory both ends are tapped (each checks what it sends); over stdio the client's tap
checks both directions; over HTTP the ASGI app is wrapped and the bytes of every POST
body, JSON answer and SSE event are checked.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import jsonschema
import pytest
from mcp_schema import SchemaCheckingASGI, WireChecker, requires_schema, tap_server
from pydantic import BaseModel, Field

from jsonrpc_core import (
    ErrorResponse,
    InvalidParams,
    Notification,
    Request,
    RequestTimeout,
    Response,
    memory_pair,
    spawn_stdio,
)
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import (
    Audio,
    ClientSession,
    Context,
    Image,
    MCPServer,
    ProtocolVersionError,
    ResourceNotFound,
    ServerSession,
    connect_http,
    connect_sse,
)
from mcp_layer.types import (
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    Implementation,
    LoggingMessageNotificationParams,
    PromptMessage,
    ResourceUpdatedNotificationParams,
    Root,
    TextContent,
    Tool,
    ToolAnnotations,
)

pytestmark = [pytest.mark.anyio, requires_schema]

ROOT = Path(__file__).resolve().parents[2]
FILE_SERVER = ROOT / "examples" / "mcp" / "file_server.py"
BASE = "http://127.0.0.1"

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200, 232))
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(range(16))

COUNT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0},
        "label": {"type": "string"},
    },
    "required": ["n"],
    "additionalProperties": False,
}


class Weather(BaseModel):
    city: str
    temperature: float
    units: Literal["celsius", "fahrenheit"]


class Contact(BaseModel):
    name: str
    age: int = Field(ge=0)


class Probe:
    """What the server's functions saw, for the tests to assert on."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.roots_changed = anyio.Event()
        self.thread_ids: dict[str, int] = {}
        self.completions: list[tuple[Any, Any, Any]] = []


def build_server(probe: Probe, **options: Any) -> MCPServer:
    """A server declaring one of everything."""
    server = MCPServer(
        "wire-test",
        "2.0.0",
        title="Wire test server",
        instructions="Call add for sums; read test://static for a greeting.",
        **options,
    )

    _add_value_tools(server, probe)
    _add_progress_and_logging_tools(server, probe)
    _add_client_request_tools(server)
    _add_resources_prompts_and_completion(server, probe)
    return server


def _add_value_tools(server: MCPServer, probe: Probe) -> None:
    """Tools that compute a value: plain results, content blocks, errors, threads."""

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return a + b

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> Weather:
        """Current weather in a city.

        :param city: Name of the city.
        :param units: Temperature units.
        """
        return Weather(city=city, temperature=21.5, units=units)

    @server.tool(input_schema=COUNT_SCHEMA)
    def count(n: int, label: str = "item") -> str:
        """Count things (arguments checked against a raw JSON Schema)."""
        return f"{n} {label}s"

    @server.tool()
    def picture() -> Image:
        """A tiny PNG."""
        return Image(data=PNG, mime_type="image/png")

    @server.tool()
    def sound() -> Audio:
        """A tiny WAV."""
        return Audio(data=WAV, mime_type="audio/wav")

    @server.tool()
    def mixed() -> list[str | Image]:
        """Text and an image in one result."""
        return ["caption", Image(data=PNG)]

    @server.tool()
    def fail(reason: str = "kaboom") -> str:
        """Always raises."""
        raise ValueError(reason)

    @server.tool()
    def fail_silently() -> str:
        """Raises an exception without a message."""
        raise RuntimeError

    @server.tool(run_in_thread=True)
    def blocking(x: int) -> int:
        """A sync tool run in a worker thread."""
        probe.thread_ids["blocking"] = threading.get_ident()
        return x * 2

    @server.tool()
    def inline(x: int) -> int:
        """A sync tool run on the event loop."""
        probe.thread_ids["inline"] = threading.get_ident()
        return x * 3


def _add_progress_and_logging_tools(server: MCPServer, probe: Probe) -> None:
    """Tools that use the request context: cancellation, progress, logging."""

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        """Never returns on its own; records that it was cancelled."""
        probe.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            assert ctx.cancelled
            probe.cancelled.set()
            raise
        return "unreachable"

    @server.tool()
    async def steps(ctx: Context, n: int = 3) -> str:
        """Reports progress ``n`` times."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
        return f"{n} steps"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs at four levels."""
        await ctx.debug("debug line")
        await ctx.info({"event": "info line"}, logger="app")
        await ctx.warning("warning line")
        await ctx.error("error line")
        return "logged"


def _add_client_request_tools(server: MCPServer) -> None:
    """Tools that ask the client: sampling, elicitation, roots, its identity."""

    @server.tool()
    async def ask_model(ctx: Context, question: str) -> str:
        """Asks the client's model (sampling)."""
        result = await ctx.sample(question, max_tokens=64, system_prompt="Answer briefly.")
        block = result.blocks[0]
        assert isinstance(block, TextContent)
        return f"{result.model}: {block.text}"

    @server.tool()
    async def ask_with_tools(ctx: Context) -> str:
        """Sampling that offers the model a tool."""
        calculator = Tool(name="calculator", input_schema={"type": "object"})
        result = await ctx.sample(
            "2 + 2?", max_tokens=16, tools=[calculator], tool_choice={"mode": "auto"}
        )
        block = result.blocks[0]
        assert isinstance(block, TextContent)
        return block.text

    @server.tool()
    async def signup(ctx: Context) -> str:
        """Asks the user for a contact (form elicitation)."""
        result = await ctx.elicit("Who are you?", Contact)
        if result.action != "accept" or result.content is None:
            return f"no contact ({result.action})"
        return f"{result.content['name']} is {result.content['age']}"

    @server.tool()
    async def authorize(ctx: Context) -> str:
        """Sends the user to a URL (URL elicitation)."""
        result = await ctx.elicit_url(
            "Authorize access to the calendar", "https://auth.example.com/start?s=1", "elic-1"
        )
        return f"url elicitation: {result.action}"

    @server.tool()
    async def list_client_roots(ctx: Context) -> list[str]:
        """The client's roots (roots/list)."""
        return [root.uri for root in await ctx.list_roots()]

    @server.tool()
    async def whoami(ctx: Context) -> dict[str, Any]:
        """What the server knows about its client."""
        capabilities = ctx.client_capabilities.model_dump(by_alias=True, exclude_none=True)
        info = ctx.client_info
        return {
            "client": info.name if info else None,
            "version": ctx.protocol_version,
            "capabilities": sorted(capabilities),
        }


def _add_resources_prompts_and_completion(server: MCPServer, probe: Probe) -> None:
    """The resources, prompts and completion handler, and the roots-changed hook."""

    @server.resource("test://static", mime_type="text/plain", description="A greeting.")
    def static() -> str:
        return "hello, world"

    @server.resource("test://logo.png", mime_type="image/png")
    def logo() -> bytes:
        """The logo."""
        return PNG

    @server.resource("test://items/{item_id}", mime_type="application/json")
    def item(item_id: str) -> dict[str, str]:
        """One item by id."""
        return {"id": item_id}

    @server.prompt(title="Greeting")
    def greet(name: str, style: str = "plain") -> str:
        """Greet someone.

        Args:
            name: Who to greet.
            style: How to greet.
        """
        return f"Say hello to {name} in a {style} way."

    @server.prompt()
    def review(code: str) -> list[PromptMessage]:
        """A two-message conversation."""
        return [
            PromptMessage(role="user", content=TextContent(text=f"Review:\n{code}")),
            PromptMessage(role="assistant", content=TextContent(text="Looking at it.")),
        ]

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        probe.completions.append((ref, argument, context))
        if argument.name == "many":
            return [f"v{i}" for i in range(150)]
        options = ["formal", "friendly", "plain"]
        return [o for o in options if o.startswith(argument.value)]

    def roots_changed(session: ServerSession) -> None:
        probe.roots_changed.set()

    server.on_roots_changed = roots_changed


@pytest.fixture
def wire() -> Iterator[WireChecker]:
    """The schema checker of this test; any violation by our side fails it."""
    checker = WireChecker()
    yield checker
    checker.assert_clean()


@asynccontextmanager
async def open_memory(
    server: MCPServer, wire: WireChecker, **options: Any
) -> AsyncIterator[ClientSession]:
    """An initialized session to ``server`` in memory, both ends tapped."""
    tap_server(server, wire)
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(server.serve, server_end)
        try:
            with anyio.fail_after(10):
                async with ClientSession(wire.wrap(client_end, role="client"), **options) as client:
                    yield client
        finally:
            task_group.cancel_scope.cancel()


def text_of(result: Any, index: int = 0) -> str:
    block = result.content[index]
    assert isinstance(block, TextContent), block
    return block.text


# -- lifecycle --------------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
async def test_server_answers_each_supported_version_as_requested(
    wire: WireChecker, version: str
) -> None:
    server = build_server(Probe())
    async with open_memory(server, wire, protocol_version=version) as client:
        assert client.protocol_version == version
        assert (await client.call_tool("whoami")).structured_content == {
            "result": {
                "client": "rpcweave",
                "version": version,
                "capabilities": [],
            }
        }
    initialize = wire.sent_by("client", "initialize")[0]
    assert initialize["params"]["protocolVersion"] == version


async def test_unknown_version_is_answered_with_the_latest(wire: WireChecker) -> None:
    server = build_server(Probe())
    async with open_memory(server, wire, protocol_version="2099-12-31") as client:
        assert client.protocol_version == LATEST_PROTOCOL_VERSION
    answer = next(m for sender, m in wire.messages if sender == "server" and "result" in m)
    assert answer["result"]["protocolVersion"] == LATEST_PROTOCOL_VERSION


async def test_client_refuses_a_server_version_it_does_not_speak(wire: WireChecker) -> None:
    client_end, server_end = memory_pair()
    fake = wire.wrap(server_end, role="server")
    after_answer: list[Any] = []

    async def future_server() -> None:
        request = (await fake.receive()).payload
        assert isinstance(request, Request) and request.method == "initialize"
        result = {
            "protocolVersion": "2099-01-01",
            "capabilities": {},
            "serverInfo": {"name": "from-the-future", "version": "9"},
        }
        await fake.send(Response(request.id, result))
        try:
            while True:
                after_answer.append((await fake.receive()).payload)
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass

    with anyio.fail_after(10):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(future_server)
            with pytest.raises(ProtocolVersionError, match="2099-01-01"):
                async with ClientSession(wire.wrap(client_end, role="client")):
                    pass
    # The client hung up without confirming the handshake.
    assert not any(isinstance(m, Notification) for m in after_answer), after_answer


async def test_initialize_is_never_cancelled(wire: WireChecker) -> None:
    client_end, server_end = memory_pair()
    fake = wire.wrap(server_end, role="server")
    seen: list[Any] = []

    async def silent_server() -> None:
        try:
            while True:
                seen.append((await fake.receive()).payload)
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass

    with anyio.fail_after(10):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(silent_server)
            with pytest.raises(RequestTimeout):
                async with ClientSession(
                    wire.wrap(client_end, role="client"), request_timeout=0.05
                ):
                    pass
    assert [type(m).__name__ for m in seen] == ["Request"]  # initialize, and no cancel


async def test_capabilities_follow_declarations(wire: WireChecker) -> None:
    bare = MCPServer("bare")
    async with open_memory(bare, wire) as client:
        caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        assert caps == {"logging": {}}
        assert client.server.instructions is None  # type: ignore[union-attr]

    only_templates = MCPServer("templates")
    only_templates.resource("test://t/{x}")(lambda x: x)
    async with open_memory(only_templates, wire) as client:
        caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        assert caps == {"logging": {}, "resources": {"subscribe": True, "listChanged": True}}

    full = build_server(Probe())
    async with open_memory(full, wire) as client:
        caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        assert caps == {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "logging": {},
            "completions": {},
        }
        assert client.server_info == Implementation(
            name="wire-test", version="2.0.0", title="Wire test server"
        )
        assert client.server.instructions == full.instructions  # type: ignore[union-attr]


async def test_client_capabilities_follow_its_handlers(wire: WireChecker) -> None:
    server = build_server(Probe())
    async with open_memory(
        server,
        wire,
        client_info=Implementation(name="host", version="1"),
        sampling=lambda params: None,
        elicitation=lambda params: None,
        roots=[],
    ) as client:
        result = await client.call_tool("whoami")
    assert result.structured_content == {
        "result": {
            "client": "host",
            "version": LATEST_PROTOCOL_VERSION,
            "capabilities": ["elicitation", "roots", "sampling"],
        }
    }
    capabilities = wire.sent_by("client", "initialize")[0]["params"]["capabilities"]
    assert capabilities == {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }


async def test_raw_stream_lifecycle_and_protocol_errors(wire: WireChecker) -> None:
    server = tap_server(build_server(Probe()), wire)
    client_end, server_end = memory_pair()

    async def ask(request: Request) -> Response | ErrorResponse:
        await client_end.send(request)
        reply = (await client_end.receive()).payload
        assert isinstance(reply, (Response, ErrorResponse)), reply
        assert reply.id == request.id
        return reply

    with anyio.fail_after(10):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.serve, server_end)

            refused = await ask(Request(1, "tools/list", {}))
            assert isinstance(refused, ErrorResponse) and refused.error.code == -32600
            assert "initializ" in refused.error.message
            assert isinstance(await ask(Request(2, "ping")), Response)

            initialize = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            }
            answer = await ask(Request(3, "initialize", initialize))
            assert isinstance(answer, Response)
            assert answer.result["protocolVersion"] == "2025-06-18"
            await client_end.send(Notification("notifications/initialized", {}))

            listed = await ask(Request(4, "tools/list"))
            assert isinstance(listed, Response) and len(listed.result["tools"]) > 5

            no_name = await ask(Request(5, "tools/call", {"arguments": {}}))
            assert isinstance(no_name, ErrorResponse) and no_name.error.code == -32602
            assert "name" in no_name.error.message
            bad_arguments = await ask(Request(6, "tools/call", {"name": "add", "arguments": 7}))
            assert isinstance(bad_arguments, ErrorResponse) and bad_arguments.error.code == -32602
            assert "arguments" in bad_arguments.error.message
            unknown = await ask(Request(7, "tools/call", {"name": "nope", "arguments": {}}))
            assert isinstance(unknown, ErrorResponse) and unknown.error.code == -32602
            assert "nope" in unknown.error.message
            no_method = await ask(Request(8, "tools/frobnicate", {}))
            assert isinstance(no_method, ErrorResponse) and no_method.error.code == -32601
            bad_level = await ask(Request(9, "logging/setLevel", {"level": "loud"}))
            assert isinstance(bad_level, ErrorResponse) and bad_level.error.code == -32602
            task_group.cancel_scope.cancel()


# -- tools ------------------------------------------------------------------------------


async def test_tool_schemas_from_hints_docstrings_and_raw_schema(wire: WireChecker) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}

    add = tools["add"]
    assert add.description == "Add two integers."
    assert add.input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "title": "A", "description": "The first addend."},
            "b": {"type": "integer", "title": "B", "description": "The second addend."},
        },
        "required": ["a", "b"],
    }
    assert add.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    weather = tools["weather"]
    units = weather.input_schema["properties"]["units"]
    assert units["enum"] == ["celsius", "fahrenheit"] and units["default"] == "celsius"
    assert units["description"] == "Temperature units."
    assert weather.input_schema["required"] == ["city"]
    assert weather.annotations is not None and weather.annotations.read_only_hint is True
    assert weather.output_schema is not None
    assert set(weather.output_schema["properties"]) == {"city", "temperature", "units"}
    assert tools["count"].input_schema == COUNT_SCHEMA
    for name in ("picture", "sound", "mixed"):
        assert tools[name].output_schema is None, name
    assert "ctx" not in tools["steps"].input_schema["properties"]
    # Every advertised schema is itself a valid JSON Schema.
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)


async def test_tool_results_structured_primitive_and_media(wire: WireChecker) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        assert text_of(added) == "5" and not added.is_error

        weather = await client.call_tool("weather", {"city": "Oslo", "units": "fahrenheit"})
        expected = {"city": "Oslo", "temperature": 21.5, "units": "fahrenheit"}
        assert weather.structured_content == expected
        assert '"Oslo"' in text_of(weather)
        jsonschema.validate(weather.structured_content, tools["weather"].output_schema or {})

        picture = await client.call_tool("picture")
        assert picture.structured_content is None
        image = picture.content[0]
        assert image.type == "image" and image.mime_type == "image/png"  # type: ignore[union-attr]
        assert base64.b64decode(image.data) == PNG  # type: ignore[union-attr]

        sound = await client.call_tool("sound")
        audio = sound.content[0]
        assert audio.type == "audio" and audio.mime_type == "audio/wav"  # type: ignore[union-attr]
        assert base64.b64decode(audio.data) == WAV  # type: ignore[union-attr]

        mixed = await client.call_tool("mixed")
        assert [block.type for block in mixed.content] == ["text", "image"]


async def test_raw_input_schema_is_enforced(wire: WireChecker) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        ok = await client.call_tool("count", {"n": 3, "label": "apple"})
        assert text_of(ok) == "3 apples" and not ok.is_error

        negative = await client.call_tool("count", {"n": -1})
        assert negative.is_error
        assert "n:" in text_of(negative) and "minimum" in text_of(negative)

        extra = await client.call_tool("count", {"n": 1, "colour": "red"})
        assert extra.is_error and "colour" in text_of(extra)

        missing = await client.call_tool("count", {})
        assert missing.is_error and "'n' is a required property" in text_of(missing)


async def test_tool_failures_are_results_and_protocol_errors_are_errors(
    wire: WireChecker,
) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        failed = await client.call_tool("fail", {"reason": "disk on fire"})
        assert failed.is_error is True
        assert text_of(failed) == "ValueError: disk on fire"

        silent = await client.call_tool("fail_silently")
        assert silent.is_error is True and text_of(silent) == "RuntimeError"

        # SEP-1303: input validation errors are tool execution errors, naming the field.
        wrong = await client.call_tool("add", {"a": "three"})
        assert wrong.is_error is True
        message = text_of(wrong)
        assert "'add'" in message and "a:" in message and "b:" in message
        assert wrong.structured_content is None

        with pytest.raises(InvalidParams, match="Unknown tool: missing") as caught:
            await client.call_tool("missing")
        assert caught.value.code == -32602
    errors = [m for sender, m in wire.messages if sender == "server" and "error" in m]
    assert [m["error"]["code"] for m in errors] == [-32602]


async def test_sync_tools_in_thread_and_on_loop(wire: WireChecker) -> None:
    probe = Probe()
    async with open_memory(build_server(probe), wire) as client:
        loop_thread = threading.get_ident()
        assert (await client.call_tool("blocking", {"x": 21})).structured_content == {"result": 42}
        assert (await client.call_tool("inline", {"x": 2})).structured_content == {"result": 6}
    assert probe.thread_ids["blocking"] != loop_thread
    assert probe.thread_ids["inline"] == loop_thread


# -- logging, progress, cancellation ----------------------------------------------------


async def test_logging_respects_set_level(wire: WireChecker) -> None:
    received: list[LoggingMessageNotificationParams] = []
    async with open_memory(build_server(Probe()), wire, on_log=received.append) as client:
        await client.call_tool("chatty")
        assert [p.level for p in received] == ["debug", "info", "warning", "error"]
        assert received[1].logger == "app" and received[1].data == {"event": "info line"}

        received.clear()
        await client.set_logging_level("warning")
        await client.call_tool("chatty")
        assert [(p.level, p.data) for p in received] == [
            ("warning", "warning line"),
            ("error", "error line"),
        ]

        received.clear()
        await client.set_logging_level("critical")
        await client.call_tool("chatty")
        assert received == []
    assert [m["params"]["level"] for m in wire.sent_by("client", "logging/setLevel")] == [
        "warning",
        "critical",
    ]


async def test_progress_only_when_asked(wire: WireChecker) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with open_memory(build_server(Probe()), wire) as client:
        result = await client.call_tool("steps", {"n": 3}, progress=on_progress)
        assert text_of(result) == "3 steps"
        assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        await client.call_tool("steps", {"n": 2})
    call = wire.sent_by("client", "tools/call")[0]
    token = call["params"]["_meta"]["progressToken"]
    notes = wire.sent_by("server", "notifications/progress")
    assert len(notes) == 3 and {n["params"]["progressToken"] for n in notes} == {token}
    assert "_meta" not in wire.sent_by("client", "tools/call")[1]["params"]


async def test_abandoned_call_cancels_the_handler_and_gets_no_response(
    wire: WireChecker,
) -> None:
    probe = Probe()
    async with open_memory(build_server(probe), wire) as client:
        async with anyio.create_task_group() as task_group:

            async def call() -> None:
                await client.call_tool("wait_forever")

            task_group.start_soon(call)
            await probe.started.wait()
            task_group.cancel_scope.cancel()
        await probe.cancelled.wait()
        # The connection is still fine, and the next answer arrives after any stray one.
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}
    call_id = next(
        m["id"]
        for m in wire.sent_by("client", "tools/call")
        if m["params"]["name"] == "wait_forever"
    )
    cancels = wire.sent_by("client", "notifications/cancelled")
    assert [c["params"]["requestId"] for c in cancels] == [call_id]
    answers = [
        m
        for sender, m in wire.messages
        if sender == "server" and "method" not in m and m.get("id") == call_id
    ]
    assert answers == []


async def test_cancellation_reaches_the_servers_own_request_to_the_client(
    wire: WireChecker,
) -> None:
    sampling_started = anyio.Event()
    sampling_cancelled = anyio.Event()

    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        sampling_started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            sampling_cancelled.set()
            raise
        raise AssertionError("unreachable")

    async with open_memory(build_server(Probe()), wire, sampling=sampling) as client:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(client.call_tool, "ask_model", {"question": "?"})
            await sampling_started.wait()
            task_group.cancel_scope.cancel()
        # tools/call cancelled -> the tool is cancelled -> its sampling request is
        # abandoned -> the server cancels it -> the client's handler is cancelled.
        await sampling_cancelled.wait()
        await client.ping()
    (request,) = wire.sent_by("server", "sampling/createMessage")
    cancels = wire.sent_by("server", "notifications/cancelled")
    assert [c["params"]["requestId"] for c in cancels] == [request["id"]]
    answers = [
        m
        for role, m in wire.messages
        if role == "client" and "method" not in m and m.get("id") == request["id"]
    ]
    assert answers == []


async def test_timed_out_call_cancels_the_handler(wire: WireChecker) -> None:
    probe = Probe()
    async with open_memory(build_server(probe), wire) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("wait_forever", timeout=0.3)
        await probe.cancelled.wait()
        await client.ping()
    reasons = [c["params"]["reason"] for c in wire.sent_by("client", "notifications/cancelled")]
    assert reasons == ["timeout"]


# -- sampling, elicitation, roots -------------------------------------------------------


async def test_sampling_request_answered_by_the_client(wire: WireChecker) -> None:
    seen: list[CreateMessageRequestParams] = []

    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(text="Paris"),
            model="test-model-1",
            stop_reason="endTurn",
        )

    async with open_memory(build_server(Probe()), wire, sampling=sampling) as client:
        result = await client.call_tool("ask_model", {"question": "Capital of France?"})
        assert text_of(result) == "test-model-1: Paris"
    assert len(seen) == 1
    assert seen[0].max_tokens == 64 and seen[0].system_prompt == "Answer briefly."
    assert seen[0].messages[0].role == "user"
    request = wire.sent_by("server", "sampling/createMessage")[0]
    assert request["params"]["messages"][0]["content"] == {
        "type": "text",
        "text": "Capital of France?",
    }


async def test_requests_back_only_use_declared_client_capabilities(wire: WireChecker) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        for tool, feature in (("ask_model", "sampling"), ("list_client_roots", "roots")):
            refused = await client.call_tool(tool, {"question": "?"} if tool == "ask_model" else {})
            assert refused.is_error and f"does not support {feature}" in text_of(refused)
    assert wire.sent_by("server", "sampling/createMessage") == []
    assert wire.sent_by("server", "roots/list") == []


async def test_sampling_with_tools_needs_the_tools_capability(wire: WireChecker) -> None:
    seen: list[CreateMessageRequestParams] = []

    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="4"), model="m")

    async with open_memory(build_server(Probe()), wire, sampling=sampling) as client:
        refused = await client.call_tool("ask_with_tools")
        assert refused.is_error and "sampling with tools" in text_of(refused)
    with_tools = ClientCapabilities.model_validate({"sampling": {"tools": {}}})
    async with open_memory(
        build_server(Probe()), wire, sampling=sampling, capabilities=with_tools
    ) as client:
        assert text_of(await client.call_tool("ask_with_tools")) == "4"
    assert seen[0].tools is not None and seen[0].tools[0].name == "calculator"
    (request,) = wire.sent_by("server", "sampling/createMessage")
    assert request["params"]["toolChoice"] == {"mode": "auto"}


async def test_client_without_a_handler_refuses_with_method_not_found(
    wire: WireChecker,
) -> None:
    # The client claims sampling but has no handler: its refusal (-32601) reaches the
    # tool, and the tool fails (a tool error, not a protocol error: the refusal came
    # from the client).
    claims_sampling = ClientCapabilities.model_validate({"sampling": {}})
    async with open_memory(build_server(Probe()), wire, capabilities=claims_sampling) as client:
        result = await client.call_tool("ask_model", {"question": "?"})
        assert result.is_error
        assert "Sampling is not supported by this client" in str(result.content[0])
    refusal = next(m for sender, m in wire.messages if sender == "client" and "error" in m)
    assert refusal["error"]["code"] == -32601


async def test_form_and_url_elicitation(wire: WireChecker) -> None:
    seen: list[Any] = []
    decline = False

    async def elicitation(params: Any) -> ElicitResult:
        seen.append(params)
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")
        if decline:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    async with open_memory(build_server(Probe()), wire, elicitation=elicitation) as client:
        assert text_of(await client.call_tool("signup")) == "Ada is 36"
        decline = True
        assert text_of(await client.call_tool("signup")) == "no contact (decline)"
        assert text_of(await client.call_tool("authorize")) == "url elicitation: accept"

    form = seen[0]
    assert isinstance(form, ElicitRequestFormParams)
    assert form.message == "Who are you?"
    schema = form.requested_schema.model_dump(by_alias=True, exclude_none=True)
    assert set(schema["properties"]) == {"name", "age"} and schema["required"] == ["name", "age"]
    url = seen[2]
    assert isinstance(url, ElicitRequestURLParams)
    assert url.url == "https://auth.example.com/start?s=1" and url.elicitation_id == "elic-1"
    modes = [m["params"].get("mode") for m in wire.sent_by("server", "elicitation/create")]
    assert modes == ["form", "form", "url"]


async def test_elicitation_only_in_modes_the_client_declared(wire: WireChecker) -> None:
    async def elicitation(params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    form_only = ClientCapabilities.model_validate({"elicitation": {}})  # 2025-06-18 style
    async with open_memory(
        build_server(Probe()), wire, elicitation=elicitation, capabilities=form_only
    ) as client:
        assert text_of(await client.call_tool("signup")) == "Ada is 36"
        refused = await client.call_tool("authorize")
        assert refused.is_error
        assert "does not support url-mode elicitation" in text_of(refused)
    async with open_memory(build_server(Probe()), wire) as client:
        refused = await client.call_tool("signup")
        assert refused.is_error and "form-mode" in text_of(refused)
    assert [m["params"]["mode"] for m in wire.sent_by("server", "elicitation/create")] == ["form"]


async def test_roots_listed_and_changes_announced(wire: WireChecker) -> None:
    probe = Probe()
    roots = [Root(uri="file:///work/project", name="project")]

    async def current_roots() -> list[Root]:
        return roots

    server = build_server(probe)
    async with open_memory(server, wire, roots=current_roots) as client:
        result = await client.call_tool("list_client_roots")
        assert result.structured_content == {"result": ["file:///work/project"]}
        roots.append(Root(uri="file:///work/other"))
        await client.send_roots_list_changed()
        await probe.roots_changed.wait()
        result = await client.call_tool("list_client_roots")
        assert result.structured_content == {
            "result": ["file:///work/project", "file:///work/other"]
        }
    assert len(wire.sent_by("server", "roots/list")) == 2


# -- resources ----------------------------------------------------------------------------


async def test_resources_static_binary_template_and_not_found(wire: WireChecker) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        resources = {r.uri: r for r in await client.list_all_resources()}
        assert set(resources) == {"test://static", "test://logo.png"}
        assert resources["test://static"].description == "A greeting."
        assert resources["test://logo.png"].mime_type == "image/png"
        templates = await client.list_all_resource_templates()
        assert [t.uri_template for t in templates] == ["test://items/{item_id}"]

        static = (await client.read_resource("test://static")).contents[0]
        assert static.uri == "test://static" and static.mime_type == "text/plain"
        assert static.text == "hello, world"  # type: ignore[union-attr]

        logo = (await client.read_resource("test://logo.png")).contents[0]
        assert logo.mime_type == "image/png"
        assert base64.b64decode(logo.blob) == PNG  # type: ignore[union-attr]

        item = (await client.read_resource("test://items/a%20b")).contents[0]
        assert item.uri == "test://items/a%20b" and item.mime_type == "application/json"
        assert '"a b"' in item.text  # type: ignore[union-attr]

        with pytest.raises(ResourceNotFound) as caught:
            await client.read_resource("test://nowhere")
        assert caught.value.code == -32002 and caught.value.uri == "test://nowhere"
        with pytest.raises(ResourceNotFound):
            await client.read_resource("test://items/a/b")
    error = next(m for sender, m in wire.messages if sender == "server" and "error" in m)
    assert error["error"]["data"] == {"uri": "test://nowhere"}


async def test_subscriptions_and_list_changed_notifications(wire: WireChecker) -> None:
    updated: list[ResourceUpdatedNotificationParams] = []
    changed: list[str] = []
    server = build_server(Probe())
    async with open_memory(
        server, wire, on_resource_updated=updated.append, on_list_changed=changed.append
    ) as client:
        await client.subscribe_resource("test://static")
        await server.notify_resource_updated("test://static")
        await server.notify_resource_updated("test://logo.png")  # not subscribed
        await client.ping()  # notifications are handled in order, before this answer
        assert [p.uri for p in updated] == ["test://static"]

        await client.unsubscribe_resource("test://static")
        await server.notify_resource_updated("test://static")
        await server.notify_tools_changed()
        await server.notify_resources_changed()
        await server.notify_prompts_changed()
        await client.ping()
        assert [p.uri for p in updated] == ["test://static"]
        assert changed == ["tools", "resources", "prompts"]
    methods = [m["method"] for m in wire.sent_by("server") if "method" in m]
    assert methods == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    ]


# -- prompts, completion, pagination, ping ------------------------------------------------


async def test_prompts_with_arguments(wire: WireChecker) -> None:
    async with open_memory(build_server(Probe()), wire) as client:
        prompts = {p.name: p for p in await client.list_all_prompts()}
        greet = prompts["greet"]
        assert greet.title == "Greeting" and greet.description == "Greet someone."
        arguments = [(a.name, a.required, a.description) for a in greet.arguments or []]
        assert arguments == [("name", True, "Who to greet."), ("style", False, "How to greet.")]

        rendered = await client.get_prompt("greet", {"name": "Ada", "style": "formal"})
        assert rendered.description == "Greet someone."
        assert [m.role for m in rendered.messages] == ["user"]
        assert rendered.messages[0].content.text == (  # type: ignore[union-attr]
            "Say hello to Ada in a formal way."
        )
        review = await client.get_prompt("review", {"code": "x = 1"})
        assert [m.role for m in review.messages] == ["user", "assistant"]

        with pytest.raises(InvalidParams, match="Unknown prompt: nope"):
            await client.get_prompt("nope")
        with pytest.raises(InvalidParams, match="name"):
            await client.get_prompt("greet", {"style": "formal"})


async def test_completion(wire: WireChecker) -> None:
    probe = Probe()
    async with open_memory(build_server(probe), wire) as client:
        found = await client.complete(
            {"type": "ref/prompt", "name": "greet"},
            {"name": "style", "value": "f"},
            {"arguments": {"name": "Ada"}},
        )
        assert found.completion.values == ["formal", "friendly"]
        assert found.completion.total == 2 and found.completion.has_more is False

        many = await client.complete(
            {"type": "ref/resource", "uri": "test://items/{item_id}"},
            {"name": "many", "value": ""},
        )
        assert len(many.completion.values) == 100
        assert many.completion.total == 150 and many.completion.has_more is True
    ref, argument, context = probe.completions[0]
    assert (ref.type, ref.name, argument.value) == ("ref/prompt", "greet", "f")
    assert context.arguments == {"name": "Ada"}
    assert probe.completions[1][0].uri == "test://items/{item_id}"


async def test_pagination(wire: WireChecker) -> None:
    server = MCPServer("paged", page_size=2)
    for i in range(5):
        server.add_tool(lambda i=i: i, name=f"tool_{i}", description=f"Tool {i}")
    for i in range(3):
        server.resource(f"test://r/{i}")(lambda i=i: str(i))
        server.resource(f"test://t{i}/{{x}}")(lambda x: x)
        server.prompt(name=f"prompt_{i}")(lambda: "hi")

    async with open_memory(server, wire) as client:
        first = await client.list_tools()
        assert [t.name for t in first.tools] == ["tool_0", "tool_1"]
        assert first.next_cursor
        second = await client.list_tools(first.next_cursor)
        assert [t.name for t in second.tools] == ["tool_2", "tool_3"]
        assert [t.name for t in await client.list_all_tools()] == [f"tool_{i}" for i in range(5)]
        assert len(await client.list_all_resources()) == 3
        assert len(await client.list_all_resource_templates()) == 3
        assert [p.name for p in await client.list_all_prompts()] == [
            "prompt_0",
            "prompt_1",
            "prompt_2",
        ]
        for bad in ("not-a-cursor", base64.urlsafe_b64encode(b"page:1").decode()):
            with pytest.raises(InvalidParams, match="Invalid cursor"):
                await client.list_tools(bad)
        with pytest.raises(InvalidParams):
            await client.list_prompts("%%%")
    cursors = [m["params"].get("cursor") for m in wire.sent_by("client", "tools/list")]
    assert cursors[:4] == [None, first.next_cursor, None, first.next_cursor]


async def test_ping_both_directions(wire: WireChecker) -> None:
    server = build_server(Probe())
    async with open_memory(server, wire) as client:
        await client.ping(timeout=5)
        (session,) = server.sessions
        assert session.peer is not None
        assert await session.peer.request("ping", {}, timeout=5) == {}
    assert len(wire.sent_by("client", "ping")) == 1
    assert len(wire.sent_by("server", "ping")) == 1


# -- stdio --------------------------------------------------------------------------------


async def test_file_server_over_stdio(wire: WireChecker, tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_text("hi there", encoding="utf-8")
    command = [sys.executable, str(FILE_SERVER), str(tmp_path)]
    with anyio.fail_after(30):
        async with spawn_stdio(command) as process:
            stream = wire.wrap(process, role="client", check_received=True)
            async with ClientSession(stream, protocol_version="2025-03-26") as client:
                assert client.protocol_version == "2025-03-26"
                assert client.server_info is not None
                assert client.server_info.name == "file-server"
                assert tmp_path.name in (client.server.instructions or "")  # type: ignore[union-attr]
                (tool,) = await client.list_all_tools()
                assert tool.name == "read_file" and tool.annotations is not None
                assert tool.annotations.read_only_hint is True
                read = await client.call_tool("read_file", {"path": "note.txt"})
                assert text_of(read) == "hi there"
                assert read.structured_content == {"result": "hi there"}
                escape = await client.call_tool("read_file", {"path": "../../etc/passwd"})
                assert escape.is_error and "outside the root" in text_of(escape)
                missing = await client.call_tool("read_file", {})
                assert missing.is_error and "path" in text_of(missing)
                await client.ping()
    assert wire.checked["CallToolResult"] == 3


# -- Streamable HTTP and HTTP+SSE, in process ---------------------------------------------


@asynccontextmanager
async def http_client(
    app: Any, wire: WireChecker
) -> AsyncIterator[tuple[httpx.AsyncClient, list[httpx.Request], list[httpx.Response]]]:
    """An httpx client on ``app`` (wrapped in the schema check), recording the exchanges."""
    requests: list[httpx.Request] = []
    responses: list[httpx.Response] = []

    async def on_request(request: httpx.Request) -> None:
        requests.append(request)

    async def on_response(response: httpx.Response) -> None:
        responses.append(response)

    checked = SchemaCheckingASGI(app, wire)
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(checked),
        base_url=BASE,
        event_hooks={"request": [on_request], "response": [on_response]},
    ) as http:
        yield http, requests, responses


def _posts(requests: list[httpx.Request]) -> list[tuple[str, dict[str, Any]]]:
    """(method, headers) of the JSON-RPC POSTs in order, method taken from the body."""
    found = []
    for request in requests:
        if request.method == "POST":
            body = json.loads(request.content)
            found.append((body.get("method", "(response)"), dict(request.headers)))
    return found


async def test_http_sessions_headers_and_server_requests(wire: WireChecker) -> None:
    probe = Probe()
    server = build_server(probe)
    logs: list[Any] = []
    changed: list[str] = []
    updates: list[float] = []
    tools_changed = anyio.Event()

    def on_list_changed(kind: str) -> None:
        changed.append(kind)
        tools_changed.set()

    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")

    async with http_client(server.asgi_app(), wire) as (http, requests, responses):
        with anyio.fail_after(20):
            async with connect_http(
                f"{BASE}/mcp",
                client=http,
                protocol_version="2025-06-18",
                sampling=sampling,
                on_log=lambda p: logs.append(p.data),
                on_list_changed=on_list_changed,
            ) as client:
                session_id = client.stream.session_id  # type: ignore[attr-defined]
                assert session_id
                assert client.protocol_version == "2025-06-18"
                added = await client.call_tool("add", {"a": 20, "b": 22})
                assert added.structured_content == {"result": 42}
                stepped = await client.call_tool(
                    "steps", {"n": 2}, progress=lambda p, t, m: updates.append(p)
                )
                assert text_of(stepped) == "2 steps" and updates == [1, 2]
                await client.call_tool("chatty")
                assert logs == ["debug line", {"event": "info line"}, "warning line", "error line"]
                sampled = await client.call_tool("ask_model", {"question": "?"})
                assert text_of(sampled) == "m: ok"
                # Unsolicited server messages travel on the standalone GET stream.
                await server.notify_tools_changed()
                (session,) = server.sessions
                assert session.peer is not None
                assert await session.peer.request("ping", {}, timeout=10) == {}
                await tools_changed.wait()
                assert changed == ["tools"]

    initialize_response = next(r for r in responses if r.request.method == "POST")
    assert initialize_response.headers["mcp-session-id"] == session_id
    posts = _posts(requests)
    assert posts[0][0] == "initialize" and "mcp-session-id" not in posts[0][1]
    assert [method for method, _ in posts].count("(response)") == 2  # sampling and ping answers
    # Every request after the handshake (POSTs, the standalone GET, the closing DELETE)
    # carries the session id and the negotiated protocol version.
    assert requests[0].method == "POST"
    methods = {r.method for r in requests[1:]}
    assert methods == {"POST", "GET", "DELETE"} and requests[-1].method == "DELETE"
    for request in requests[1:]:
        assert request.headers.get("mcp-protocol-version") == "2025-06-18", request
        assert request.headers.get("mcp-session-id") == session_id, request
    assert wire.checked["CreateMessageRequest"] == 1 and wire.checked["CreateMessageResult"] == 1


async def test_http_rejects_unsupported_protocol_version_header(wire: WireChecker) -> None:
    server = build_server(Probe())
    headers = {"accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-http", "version": "0"},
        },
    }
    list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with http_client(server.asgi_app(json_response=True), wire) as (http, _, _):
        with anyio.fail_after(10):
            opened = await http.post("/mcp", json=initialize, headers=headers)
            assert opened.status_code == 200
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            await http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers={**session, "mcp-protocol-version": "2025-11-25"},
            )
            bad = await http.post(
                "/mcp", json=list_tools, headers={**session, "mcp-protocol-version": "1999-01-01"}
            )
            assert bad.status_code == 400
            assert "1999-01-01" in bad.json()["error"]["message"]
            for version in ("2025-11-25", "2025-03-26"):
                good = await http.post(
                    "/mcp", json=list_tools, headers={**session, "mcp-protocol-version": version}
                )
                assert good.status_code == 200 and good.json()["result"]["tools"]
            # No header at all: the server assumes 2025-03-26 and serves the request.
            assert (await http.post("/mcp", json=list_tools, headers=session)).status_code == 200
            # A request without a session id is refused too (it is not initialize).
            assert (await http.post("/mcp", json=list_tools, headers=headers)).status_code == 400
    assert wire.null_id_errors == 2  # the two HTTP 400 bodies (see mcp_schema's docs)


async def test_http_stateless_mode(wire: WireChecker) -> None:
    server = build_server(Probe())
    logs: list[str] = []
    async with http_client(server.asgi_app(stateless=True), wire) as (http, requests, responses):
        with anyio.fail_after(20):
            async with connect_http(
                f"{BASE}/mcp", client=http, on_log=lambda p: logs.append(p.level)
            ) as client:
                assert client.stream.session_id is None  # type: ignore[attr-defined]
                # Each request is self-contained: its version comes from its header.
                whoami = await client.call_tool("whoami")
                assert whoami.structured_content["result"]["version"] == "2025-11-25"  # type: ignore[index]
                assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                    "result": 3
                }
                await client.call_tool("chatty")
                assert logs == ["debug", "info", "warning", "error"]
                assert len(await client.list_all_tools()) > 5
                text = (await client.read_resource("test://static")).contents[0]
                assert text.text == "hello, world"  # type: ignore[union-attr]
            probe_get = await http.get("/mcp", headers={"accept": "text/event-stream"})
            assert probe_get.status_code == 405
    assert all("mcp-session-id" not in r.headers for r in responses)
    assert all(r.method == "POST" for r in requests[:-1])


async def test_http_json_response_mode(wire: WireChecker) -> None:
    server = build_server(Probe())
    async with http_client(server.asgi_app(json_response=True), wire) as (http, _, responses):
        with anyio.fail_after(20):
            async with connect_http(f"{BASE}/mcp", client=http) as client:
                weather = await client.call_tool("weather", {"city": "Rome"})
                assert weather.structured_content == {
                    "city": "Rome",
                    "temperature": 21.5,
                    "units": "celsius",
                }
                with pytest.raises(InvalidParams):
                    await client.call_tool("missing")
                with pytest.raises(ResourceNotFound):
                    await client.read_resource("test://nowhere")
                prompt = await client.get_prompt("greet", {"name": "Bo"})
                assert prompt.messages
    answered = [
        r
        for r in responses
        if r.request.method == "POST" and r.status_code == 200 and b'"id"' in r.request.content
    ]
    assert answered
    assert all(r.headers["content-type"].startswith("application/json") for r in answered)


async def test_legacy_http_sse(wire: WireChecker) -> None:
    server = build_server(Probe())
    logs: list[str] = []
    updates: list[float] = []

    async def elicitation(params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Lin", "age": 7})

    async with http_client(server.asgi_app(), wire) as (http, requests, _):
        with anyio.fail_after(20):
            async with connect_sse(
                f"{BASE}/sse",
                client=http,
                protocol_version="2024-11-05",
                elicitation=elicitation,
                on_log=lambda p: logs.append(p.level),
            ) as client:
                assert client.protocol_version == "2024-11-05"
                assert (await client.call_tool("add", {"a": 5, "b": 5})).structured_content == {
                    "result": 10
                }
                await client.call_tool(
                    "steps", {"n": 2}, progress=lambda p, t, m: updates.append(p)
                )
                await client.call_tool("chatty")
                assert text_of(await client.call_tool("signup")) == "Lin is 7"
                await client.ping()
    assert updates == [1, 2] and logs == ["debug", "info", "warning", "error"]
    assert requests[0].method == "GET" and requests[0].url.path == "/sse"
    assert {r.url.path for r in requests[1:]} == {"/messages"}
    assert wire.checked["ElicitRequest"] == 1 and wire.checked["ElicitResult"] == 1
