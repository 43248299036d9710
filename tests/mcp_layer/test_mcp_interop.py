"""Interop with the official MCP Python SDK (PyPI ``mcp``), in both directions.

(a) The official ``mcp.Client`` against rpcweave servers: examples/mcp/file_server.py over
    stdio (run through tests/fixtures/tapped_stdio.py, which records what our server
    sends), and an `MCPServer` over Streamable HTTP and HTTP+SSE on a real uvicorn.
(b) rpcweave's `ClientSession` against a server written with the official SDK's
    high-level API (``mcp.server.mcpserver.MCPServer``, tests/fixtures/official_mcp_server.py)
    over stdio and over Streamable HTTP on uvicorn.

Everything our side emits is validated against the MCP 2025-11-25 schema. What the
official side emits is checked too and kept in ``wire.peer_errors``; where the two SDKs
differ on the wire, the test says which side the spec backs.
"""

from __future__ import annotations

import base64
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp.types as official
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp_schema import SchemaCheckingASGI, WireChecker, requires_schema

from jsonrpc_core import InvalidParams, JsonRpcError, running_server, spawn_stdio
from mcp_layer import ClientSession, Context, MCPServer, connect_http
from mcp_layer.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitResult,
    Root,
    TextContent,
)

pytestmark = [
    pytest.mark.anyio,
    requires_schema,
    # Logging, sampling and roots are deprecated in 2026-07-28; they are 2025-11-25's API.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILE_SERVER = ROOT / "examples" / "mcp" / "file_server.py"
TAPPED_STDIO = FIXTURES / "tapped_stdio.py"
OFFICIAL_SERVER = FIXTURES / "official_mcp_server.py"

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200, 232))


@pytest.fixture
def anyio_backend() -> str:
    # The official SDK targets asyncio (its servers run under uvicorn's asyncio loop and
    # its documentation only shows asyncio); these tests exercise *it*, so they run where
    # it is meant to run. rpcweave's own trio support is covered by test_mcp_server.py.
    return "asyncio"


def _load_official_fixture() -> ModuleType:
    name = "official_mcp_server_fixture"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, OFFICIAL_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ours_serve() -> Iterator[WireChecker]:
    """Checker for tests where rpcweave is the server."""
    checker = WireChecker(ours={"server"})
    yield checker
    checker.assert_clean()


@pytest.fixture
def ours_call() -> Iterator[WireChecker]:
    """Checker for tests where rpcweave is the client."""
    checker = WireChecker(ours={"client"})
    yield checker
    checker.assert_clean()


def only_discover_probes(errors: list[str]) -> bool:
    """The official client's ``mode="auto"`` first sends ``server/discover`` (2026-07-28),
    which the 2025-11-25 schema does not know: the one expected "violation" on its side."""
    return all("'server/discover' is not a client request" in error for error in errors)


# -- (a) the official client against rpcweave servers ----------------------------------


async def test_official_client_with_our_file_server_over_stdio(
    ours_serve: WireChecker, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "note.txt").write_text("hi from rpcweave", encoding="utf-8")
    tap_file = tmp_path / "tap.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(TAPPED_STDIO), str(tap_file), str(FILE_SERVER), str(root)],
    )
    with anyio.fail_after(30):
        # The handshake era, pinned: in mode="auto" the server/discover probe would find a
        # 2026-07-28 server (tests/mcp_layer/test_mcp_2026_interop.py covers that era).
        async with Client(params, mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None
            assert client.server_info.name == "file-server"
            assert root.name in (client.instructions or "")
            assert client.server_capabilities.tools is not None
            (tool,) = (await client.list_tools()).tools
            assert tool.name == "read_file"
            assert tool.annotations is not None and tool.annotations.read_only_hint is True
            assert tool.input_schema["required"] == ["path"]
            assert "relative to the root" in tool.input_schema["properties"]["path"]["description"]

            read = await client.call_tool("read_file", {"path": "note.txt"})
            assert not read.is_error
            assert isinstance(read.content[0], official.TextContent)
            assert read.content[0].text == "hi from rpcweave"
            # The official client checks structuredContent against the outputSchema.
            assert read.structured_content == {"result": "hi from rpcweave"}

            escape = await client.call_tool("read_file", {"path": "../outside.txt"})
            assert escape.is_error
            missing = await client.call_tool("read_file", {})
            assert missing.is_error and "path" in str(missing.content[0])
            await client.send_ping()

    assert ours_serve.check_jsonl(tap_file, role="server", check_received=True) > 10
    assert ours_serve.sent_by("client", "server/discover") == []  # mode="legacy" never probes


def build_our_server() -> MCPServer:
    """An rpcweave server for the official client. It runs on uvicorn's thread, so it
    keeps no anyio objects of the test's event loop."""
    server = MCPServer("rpcweave-interop", "3.1.4", instructions="Served by rpcweave.")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return a + b

    @server.tool()
    def fail(reason: str = "kaboom") -> str:
        """Always raises."""
        raise ValueError(reason)

    @server.tool()
    async def steps(ctx: Context, n: int = 3) -> str:
        """Reports progress and logs each step."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
            await ctx.info(f"step {i} of {n}")
            await ctx.debug("detail")
        return f"{n} steps"

    @server.tool()
    async def ask_model(ctx: Context, question: str) -> str:
        """Sampling through the client."""
        result = await ctx.sample(question, max_tokens=32)
        block = result.blocks[0]
        assert isinstance(block, TextContent)
        return f"{result.model}: {block.text}"

    @server.tool()
    async def signup(ctx: Context) -> str:
        """Form elicitation through the client."""
        result = await ctx.elicit(
            "Who are you?",
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                "required": ["name"],
            },
        )
        content = result.content or {}
        return f"{result.action}: {content.get('name')} {content.get('age')}"

    @server.tool()
    async def list_client_roots(ctx: Context) -> list[str]:
        """The client's roots."""
        return [root.uri for root in await ctx.list_roots()]

    @server.resource("test://static", mime_type="text/plain", description="A greeting.")
    def static() -> str:
        return "hello, world"

    @server.resource("test://logo.png", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("test://items/{item_id}", mime_type="application/json")
    def item(item_id: str) -> dict[str, str]:
        return {"id": item_id}

    @server.prompt()
    def greet(name: str, style: str = "plain") -> str:
        """Greet someone."""
        return f"Say hello to {name} in a {style} way."

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return [v for v in ("formal", "friendly", "plain") if v.startswith(argument.value)]

    return server


class OfficialCallbacks:
    """The official client's callbacks, recording what our server sent them."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, Any]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.sampled: list[official.CreateMessageRequestParams] = []
        self.elicited: list[Any] = []

    async def on_log(self, params: official.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def on_progress(self, value: float, total: float | None, message: str | None) -> None:
        self.progress.append((value, total, message))

    async def sampling(
        self, context: Any, params: official.CreateMessageRequestParams
    ) -> official.CreateMessageResult:
        self.sampled.append(params)
        text = official.TextContent(type="text", text="Paris")
        return official.CreateMessageResult(role="assistant", content=text, model="official-m")

    async def elicitation(self, context: Any, params: Any) -> official.ElicitResult:
        self.elicited.append(params)
        return official.ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    async def roots(self, context: Any) -> official.ListRootsResult:
        return official.ListRootsResult(roots=[official.Root(uri="file:///work/project")])


async def check_official_tools(client: Client, seen: OfficialCallbacks) -> None:
    """tools/list and tools/call: results, errors, progress and logs."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["add"].input_schema["properties"]["a"]["description"] == ("The first addend.")
    added = await client.call_tool("add", {"a": 40, "b": 2})
    assert added.structured_content == {"result": 42} and not added.is_error
    failed = await client.call_tool("fail", {"reason": "nope"})
    assert failed.is_error
    assert isinstance(failed.content[0], official.TextContent)
    assert failed.content[0].text == "ValueError: nope"
    invalid = await client.call_tool("add", {"a": "x", "b": 1})
    assert invalid.is_error  # a tool execution error (SEP-1303), not -32602

    await client.set_logging_level("info")
    stepped = await client.call_tool("steps", {"n": 2}, progress_callback=seen.on_progress)  # type: ignore[arg-type]
    assert stepped.structured_content == {"result": "2 steps"}
    assert seen.progress == [(1, 2, "step 1"), (2, 2, "step 2")]
    assert seen.logs == [("info", "step 1 of 2"), ("info", "step 2 of 2")]


async def check_official_client_requests(client: Client, seen: OfficialCallbacks) -> None:
    """Tools that ask the client: sampling, elicitation, roots."""
    answer = await client.call_tool("ask_model", {"question": "Capital of France?"})
    assert answer.structured_content == {"result": "official-m: Paris"}
    assert seen.sampled[0].max_tokens == 32
    contact = await client.call_tool("signup", {})
    assert contact.structured_content == {"result": "accept: Ada 36"}
    assert isinstance(seen.elicited[0], official.ElicitRequestFormParams)
    rooted = await client.call_tool("list_client_roots", {})
    assert rooted.structured_content == {"result": ["file:///work/project"]}


async def check_official_resources(client: Client) -> None:
    """Resources, templates, text and blob contents, and a missing resource."""
    resources = (await client.list_resources()).resources
    assert {str(r.uri) for r in resources} == {"test://static", "test://logo.png"}
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["test://items/{item_id}"]
    text = (await client.read_resource("test://static")).contents[0]
    assert isinstance(text, official.TextResourceContents)
    assert text.text == "hello, world" and text.mime_type == "text/plain"
    blob = (await client.read_resource("test://logo.png")).contents[0]
    assert isinstance(blob, official.BlobResourceContents)
    assert base64.b64decode(blob.blob) == PNG
    with pytest.raises(Exception, match="Resource not found") as missing:
        await client.read_resource("test://nowhere")
    assert getattr(missing.value, "code", None) == -32002


async def check_official_prompts(client: Client) -> None:
    """Prompts, a rendered prompt and completion."""
    prompts = (await client.list_prompts()).prompts
    assert [(a.name, a.required) for a in prompts[0].arguments or []] == [
        ("name", True),
        ("style", False),
    ]
    prompt = await client.get_prompt("greet", {"name": "Ada"})
    assert isinstance(prompt.messages[0].content, official.TextContent)
    assert prompt.messages[0].content.text == "Say hello to Ada in a plain way."
    completion = await client.complete(
        official.PromptReference(type="ref/prompt", name="greet"),
        {"name": "style", "value": "f"},
    )
    assert completion.completion.values == ["formal", "friendly"]


async def test_official_client_with_our_server_over_streamable_http(
    ours_serve: WireChecker,
) -> None:
    seen = OfficialCallbacks()
    app = SchemaCheckingASGI(build_our_server().asgi_app(), ours_serve)
    with anyio.fail_after(30):
        async with running_server(app) as base:
            async with Client(
                f"{base}/mcp",
                mode="legacy",
                logging_callback=seen.on_log,
                sampling_callback=seen.sampling,
                elicitation_callback=seen.elicitation,
                list_roots_callback=seen.roots,
            ) as client:
                assert client.protocol_version == "2025-11-25"
                assert client.server_info is not None
                assert client.server_info.name == "rpcweave-interop"
                assert client.instructions == "Served by rpcweave."
                capabilities = client.server_capabilities
                assert capabilities.logging is not None and capabilities.completions is not None
                await check_official_tools(client, seen)
                await check_official_client_requests(client, seen)
                await check_official_resources(client)
                await check_official_prompts(client)
                await client.send_ping()

    assert ours_serve.checked["CallToolResult"] == 7
    assert ours_serve.checked["CreateMessageRequest"] == 1
    assert ours_serve.checked["ElicitRequest"] == 1
    assert ours_serve.checked["ListRootsRequest"] == 1
    assert only_discover_probes(ours_serve.peer_errors), ours_serve.peer_errors


async def test_official_client_with_our_server_over_legacy_sse(ours_serve: WireChecker) -> None:
    app = SchemaCheckingASGI(build_our_server().asgi_app(), ours_serve)
    with anyio.fail_after(30):
        async with running_server(app) as base:
            async with Client(sse_client(f"{base}/sse"), mode="legacy") as client:
                assert client.protocol_version == "2025-11-25"
                added = await client.call_tool("add", {"a": 1, "b": 2})
                assert added.structured_content == {"result": 3}
                read = await client.read_resource("test://items/7")
                assert isinstance(read.contents[0], official.TextResourceContents)
                assert '"7"' in read.contents[0].text
    assert ours_serve.checked["InitializeResult"] == 1
    assert ours_serve.peer_errors == []


# -- (b) rpcweave's client against a server built with the official SDK -----------------


class Host:
    """rpcweave client options and what its callbacks saw."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, Any]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.sampled: list[CreateMessageRequestParams] = []
        self.elicited: list[Any] = []

    async def sampling(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.sampled.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="m1")

    async def elicitation(self, params: Any) -> ElicitResult:
        self.elicited.append(params)
        return ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    def options(self) -> dict[str, Any]:
        return {
            "sampling": self.sampling,
            "elicitation": self.elicitation,
            "roots": [Root(uri="file:///work/project", name="project")],
            "on_log": lambda params: self.logs.append((params.level, params.data)),
        }


async def exercise_official_server(client: ClientSession, host: Host) -> None:
    """The same operations against the official fixture server, over any transport."""
    assert client.server_info is not None
    assert client.server_info.name == "official-fixture"
    assert client.server_info.version == "1.2.3"
    assert client.server.instructions == "A server built with the official SDK."  # type: ignore[union-attr]

    tools = {tool.name: tool for tool in await client.list_all_tools()}
    assert {"add", "weather", "fail", "steps", "chatty", "ask_model", "signup"} <= set(tools)
    assert tools["add"].input_schema["required"] == ["a", "b"]

    added = await client.call_tool("add", {"a": 2, "b": 3})
    assert added.structured_content == {"result": 5} and not added.is_error
    weather = await client.call_tool("weather", {"city": "Oslo"})
    assert weather.structured_content == {"city": "Oslo", "temperature": 21.5}
    failed = await client.call_tool("fail", {"reason": "nope"})
    assert failed.is_error is True
    invalid = await client.call_tool("add", {"a": "x"})
    assert invalid.is_error is True
    # Interop difference: the official SDK answers an unknown tool with an isError result;
    # the spec lists unknown tools under protocol errors (rpcweave answers -32602).
    unknown = await client.call_tool("no_such_tool")
    assert unknown.is_error is True and "Unknown tool" in str(unknown.content[0])

    stepped = await client.call_tool(
        "steps", {"n": 2}, progress=lambda p, t, m: host.progress.append((p, t, m))
    )
    assert stepped.structured_content == {"result": "2 steps"}
    assert host.progress == [(1, 2, "step 1"), (2, 2, "step 2")]
    await client.call_tool("chatty")
    assert [level for level, _ in host.logs] == ["debug", "info", "warning", "error"]

    answer = await client.call_tool("ask_model", {"question": "Capital of France?"})
    assert answer.structured_content == {"result": "m1: Paris"}
    assert host.sampled[0].max_tokens == 64 and host.sampled[0].system_prompt == "Answer briefly."
    contact = await client.call_tool("signup")
    assert contact.structured_content == {"result": "Ada is 36"}
    form = host.elicited[0]
    assert isinstance(form, ElicitRequestFormParams)
    assert set(form.requested_schema.properties) == {"name", "age"}
    rooted = await client.call_tool("list_client_roots")
    assert rooted.structured_content == {"result": ["file:///work/project"]}

    assert {r.uri for r in await client.list_all_resources()} == {
        "test://static",
        "test://logo.png",
    }
    templates = await client.list_all_resource_templates()
    assert [t.uri_template for t in templates] == ["test://items/{item_id}"]
    static = (await client.read_resource("test://static")).contents[0]
    assert static.text == "hello, world" and static.mime_type == "text/plain"  # type: ignore[union-attr]
    logo = (await client.read_resource("test://logo.png")).contents[0]
    assert base64.b64decode(logo.blob) == PNG  # type: ignore[union-attr]
    item = (await client.read_resource("test://items/42")).contents[0]
    assert item.text == '{"id": "42"}'  # type: ignore[union-attr]
    # Interop difference: the official SDK answers an unknown resource with -32602 (the
    # 2026-07-28 code) on a 2025-11-25 session, where the spec says -32002.
    with pytest.raises(InvalidParams) as missing:
        await client.read_resource("test://nowhere")
    assert missing.value.data == {"uri": "test://nowhere"}

    (prompt,) = await client.list_all_prompts()
    assert prompt.name == "greet" and prompt.title == "Greeting"
    rendered = await client.get_prompt("greet", {"name": "Ada", "style": "formal"})
    assert rendered.messages[0].content.text == "Say hello to Ada in a formal way."  # type: ignore[union-attr]
    # Interop difference: for an unknown prompt the official SDK sends error code 0; the
    # spec asks for -32602 ("Invalid prompt name").
    with pytest.raises(JsonRpcError, match="Unknown prompt"):
        await client.get_prompt("nope")
    completion = await client.complete(
        {"type": "ref/prompt", "name": "greet"}, {"name": "style", "value": "f"}
    )
    assert completion.completion.values == ["formal", "friendly"]
    await client.ping()


async def test_our_client_with_official_server_over_stdio(ours_call: WireChecker) -> None:
    host = Host()
    with anyio.fail_after(30):
        async with spawn_stdio([sys.executable, str(OFFICIAL_SERVER)]) as process:
            stream = ours_call.wrap(process, role="client", check_received=True)
            async with ClientSession(stream, **host.options()) as client:
                assert client.protocol_version == "2025-11-25"
                await exercise_official_server(client, host)
    assert ours_call.peer_errors == []  # the official server's messages fit the schema too
    assert ours_call.checked["CreateMessageResult"] == 1
    assert ours_call.checked["ElicitResult"] == 1
    assert ours_call.checked["ListRootsResult"] == 1


async def test_our_client_with_official_server_over_streamable_http(
    ours_call: WireChecker,
) -> None:
    fixture = _load_official_fixture()
    app = SchemaCheckingASGI(fixture.build().streamable_http_app(), ours_call)
    host = Host()
    with anyio.fail_after(30):
        async with running_server(app) as base:
            async with connect_http(f"{base}/mcp", **host.options()) as client:
                assert client.protocol_version == "2025-11-25"
                assert client.stream.session_id  # type: ignore[attr-defined]
                # The official server declares no logging capability, yet logs (see below).
                assert client.server_capabilities.logging is None
                await exercise_official_server(client, host)
            # An older revision, negotiated as requested; the official server checks the
            # MCP-Protocol-Version header of every later request against it.
            async with connect_http(f"{base}/mcp", protocol_version="2025-03-26") as client:
                assert client.protocol_version == "2025-03-26"
                added = await client.call_tool("add", {"a": 1, "b": 1})
                assert added.structured_content == {"result": 2}
    assert ours_call.peer_errors == []
    assert ours_call.checked["InitializeRequest"] == 2
