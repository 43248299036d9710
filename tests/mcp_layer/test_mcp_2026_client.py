"""`ClientSession` in the 2026-07-28 era: the envelope, multi round-trip requests driven
through the host's handlers, HTTP headers, the cache, subscriptions, tasks, and the
``server/discover`` probe that falls back to ``initialize`` against an older server.

What our client sends (and, where the server is ours, what it gets) over HTTP is
validated against the 2026-07-28 schema.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp2026 import BASE, VERSION, asgi_client
from mcp_schema import SchemaCheckingASGI, WireChecker, requires_schema

from jsonrpc_core import LocalError, TransportError
from mcp_layer import (
    ClientSession,
    Context,
    HeaderMismatch,
    MCPServer,
    MissingRequiredClientCapability,
    connect,
    connect_http,
    connect_memory,
    connect_stdio,
)
from mcp_layer.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitResult,
    Root,
    TextContent,
)

pytestmark = [pytest.mark.anyio, requires_schema]

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "mcp" / "everything_server.py"
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Host:
    """The host's answers, and what the server asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def elicitation(self, params: Any) -> ElicitResult:
        self.asked.append(params)
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def sampling(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.asked.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="m")

    def options(self, **extra: Any) -> dict[str, Any]:
        return {
            "elicitation": self.elicitation,
            "sampling": self.sampling,
            "roots": [Root(uri="file:///work", name="work")],
            **extra,
        }


def build_server(**options: Any) -> MCPServer:
    server = MCPServer("modern-peer", "3.0.0", **options)
    calls = {"list": 0, "runs": 0}
    server.calls = calls  # type: ignore[attr-defined]

    @server.tool()
    async def interview(ctx: Context) -> str:
        """Asks a name, a model and the roots, one round each."""
        name = await ctx.elicit("Name?", NAME)
        sampled = await ctx.sample("Capital of France?", max_tokens=5)
        roots = await ctx.list_roots()
        content = sampled.content
        said = content.text if isinstance(content, TextContent) else "?"
        return f"{(name.content or {}).get('name')}|{said}|{roots[0].uri}"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
        }
    )
    def in_region(region: str) -> str:
        calls["runs"] += 1
        return f"ran in {region}"

    @server.tool(task_support="optional")
    async def long_job(ctx: Context, n: int = 2) -> str:
        """Runs as a task; asks a confirmation halfway."""
        # Ask only once the task was answered as "working" and the client polls it (every
        # other task is blocked then), so that the client learns of the question by tasks/get.
        await anyio.wait_all_tasks_blocked()
        answer = await ctx.elicit("Go on?", NAME)
        return f"{n} done for {(answer.content or {}).get('name')}"

    @server.resource("test://doc", mime_type="text/plain")
    def doc() -> str:
        calls["list"] += 1
        return "a document"

    return server


@pytest.fixture
def wire() -> Iterator[WireChecker]:
    checker = WireChecker(revision=VERSION)
    yield checker
    checker.assert_clean()


@asynccontextmanager
async def http_session(
    server: MCPServer, wire: WireChecker, **options: Any
) -> AsyncIterator[tuple[ClientSession, list[httpx.Request]]]:
    requests: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        requests.append(request)

    async with asgi_client(SchemaCheckingASGI(server.asgi_app(), wire)) as http:
        http.event_hooks["request"] = [record]
        with anyio.fail_after(20):
            async with connect_http(f"{BASE}/mcp", client=http, **options) as client:
                yield client, requests


async def test_the_envelope_and_the_headers_of_every_request(wire: WireChecker) -> None:
    host = Host()
    options = host.options(protocol_version=VERSION, client_info=None)
    async with http_session(build_server(), wire, **options) as (client, requests):
        assert client.modern and client.protocol_version == VERSION
        assert client.server_info is not None and client.server_info.name == "modern-peer"
        assert client.stream.session_id is None  # type: ignore[attr-defined]
        tools = {tool.name for tool in await client.list_all_tools()}
        assert {"interview", "in_region", "long_job"} <= tools
        assert (await client.call_tool("in_region", {"region": "Zürich"})).content[0] == (
            TextContent(text="ran in Zürich")
        )
    posted = [r for r in requests if r.method == "POST"]
    assert [r.headers["mcp-method"] for r in posted] == [
        "server/discover",
        "tools/list",
        "tools/call",
    ]
    assert {r.headers["mcp-protocol-version"] for r in posted} == {VERSION}
    call = posted[-1]
    assert call.headers["mcp-name"] == "in_region"
    assert call.headers["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
    assert "mcp-session-id" not in call.headers
    assert not [r for r in requests if r.method in ("GET", "DELETE")]
    sent = wire.sent_by("client", "tools/call")[0]
    meta = sent["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == VERSION
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "rpcweave"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }


async def test_input_requests_are_answered_by_the_host(wire: WireChecker) -> None:
    host = Host()
    async with http_session(build_server(), wire, **host.options(protocol_version=VERSION)) as (
        client,
        _,
    ):
        result = await client.call_tool("interview", {})
    assert result.content[0] == TextContent(text="Ada|Paris|file:///work")
    assert [type(asked).__name__ for asked in host.asked] == [
        "ElicitRequestFormParams",
        "CreateMessageRequestParams",
    ]
    retries = wire.sent_by("client", "tools/call")
    assert len(retries) == 4  # three rounds of questions, then the answer
    assert len({message["id"] for message in retries}) == 4
    assert "requestState" not in retries[0]["params"]
    assert all("requestState" in message["params"] for message in retries[1:])
    assert wire.checked["InputRequiredResult"] == 3


async def test_a_client_without_the_handler_gets_the_capability_error(wire: WireChecker) -> None:
    async with http_session(build_server(), wire, protocol_version=VERSION) as (client, _):
        with pytest.raises(MissingRequiredClientCapability) as raised:
            await client.call_tool("interview", {})
    assert raised.value.required_capabilities == {"elicitation": {}}


async def test_tools_with_invalid_header_annotations_are_left_out_over_http(
    wire: WireChecker,
) -> None:
    server = build_server()

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"score": {"type": "number", "x-mcp-header": "Score"}},
        }
    )
    def scored(score: float = 0) -> str:
        return str(score)

    async with http_session(server, wire, protocol_version=VERSION) as (client, _):
        names = {tool.name for tool in await client.list_all_tools()}
    assert "scored" not in names and "in_region" in names
    async with connect_memory(server, protocol_version=VERSION) as client:
        assert "scored" in {tool.name for tool in await client.list_all_tools()}


async def test_a_header_mismatch_relists_and_retries_once(wire: WireChecker) -> None:
    async with http_session(build_server(), wire, protocol_version=VERSION) as (client, requests):
        # The client never listed the tools: it cannot know "region" is mirrored.
        result = await client.call_tool("in_region", {"region": "eu"})
        assert result.content[0] == TextContent(text="ran in eu")
    methods = [r.headers["mcp-method"] for r in requests if r.method == "POST"]
    assert methods == ["server/discover", "tools/call", "tools/list", "tools/call"]
    assert wire.errors == []


async def test_results_are_cached_for_their_ttl_and_dropped_on_change(wire: WireChecker) -> None:
    server = build_server(cache_ttl_ms=600_000)
    async with http_session(server, wire, protocol_version=VERSION) as (client, requests):
        assert client.cache is not None
        await client.list_all_tools()
        await client.list_all_tools()
        await client.read_resource("test://doc")
        await client.read_resource("test://doc")
        assert server.calls["list"] == 1  # type: ignore[attr-defined]
        async with client.listen(tools=True, resource_uris=["test://doc"]) as subscription:
            assert subscription.agreed is not None
            assert subscription.agreed.tools_list_changed is True
            await server.notify_tools_changed()
            await server.notify_resource_updated("test://doc")
            seen = []
            async for method, params in subscription:
                seen.append((method, params.meta["io.modelcontextprotocol/subscriptionId"]))
                if len(seen) == 2:
                    break
        await client.list_all_tools()
        await client.read_resource("test://doc")
    assert [m for m, _ in seen] == [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ]
    assert {sub for _, sub in seen} == {subscription.id}
    listed = [r for r in requests if r.method == "POST" and r.headers["mcp-method"] == "tools/list"]
    assert len(listed) == 2
    assert server.calls["list"] == 2  # type: ignore[attr-defined]


async def test_no_cache_without_a_ttl(wire: WireChecker) -> None:
    async with http_session(build_server(), wire, protocol_version=VERSION) as (client, requests):
        await client.list_tools()
        await client.list_tools()
    assert sum(r.headers.get("mcp-method") == "tools/list" for r in requests) == 2


async def test_a_task_is_followed_to_its_end(wire: WireChecker) -> None:
    host = Host()
    server = build_server()
    async with http_session(server, wire, **host.options(protocol_version=VERSION)) as (
        client,
        _,
    ):
        result = await client.call_tool("long_job", {"n": 3})
        assert result.content[0] == TextContent(text="3 done for Ada")
    created = [m for _, m in wire.messages if m.get("result", {}).get("resultType") == "task"]
    assert len(created) == 1
    assert [m["method"] for m in wire.sent_by("client") if m["method"].startswith("tasks/")][
        :1
    ] == ["tasks/get"]
    assert any(m["method"] == "tasks/update" for m in wire.sent_by("client"))
    assert wire.extension_messages > 0


async def test_without_the_extension_a_task_tool_answers_directly() -> None:
    host = Host()
    async with connect_memory(
        build_server(), **host.options(protocol_version=VERSION, tasks=False)
    ) as client:
        result = await client.call_tool("long_job", {"n": 1})
    assert result.content[0] == TextContent(text="1 done for Ada")


async def test_modern_client_over_memory_and_the_removed_methods() -> None:
    async with connect(build_server(), protocol_version=VERSION) as client:
        assert client.modern
        with pytest.raises(LocalError):
            await client.ping()
        with pytest.raises(LocalError):
            await client.subscribe_resource("test://doc")
        await client.set_logging_level("debug")  # carried in every later request's _meta
        assert client.envelope()["io.modelcontextprotocol/logLevel"] == "debug"


# -- the probe --------------------------------------------------------------------------


async def test_auto_finds_a_modern_server(wire: WireChecker) -> None:
    async with http_session(build_server(), wire, protocol_version="auto") as (client, requests):
        assert client.modern and client.protocol_version == VERSION
        await client.list_tools()
    assert requests[0].headers["mcp-method"] == "server/discover"


async def test_auto_falls_back_to_the_handshake_against_an_older_server() -> None:
    server = build_server(modern=False)
    async with connect_memory(server, protocol_version="auto") as client:
        assert not client.modern and client.protocol_version == "2025-11-25"
        assert (await client.call_tool("in_region", {"region": "x"})).content[0] == TextContent(
            text="ran in x"
        )
    async with asgi_client(server.asgi_app()) as http:
        with anyio.fail_after(20):
            async with connect_http(f"{BASE}/mcp", client=http, protocol_version="auto") as client:
                assert client.era == "handshake"
                assert client.stream.session_id  # type: ignore[attr-defined]
                await client.ping()


LEGACY_ONLY_STDIO = """
from mcp_layer import MCPServer
server = MCPServer("old-timer", modern=False)

@server.tool()
def hello() -> str:
    return "hello from the handshake era"

server.run()
"""


async def test_auto_over_stdio_against_both_eras() -> None:
    with anyio.fail_after(30):
        async with connect_stdio(
            [sys.executable, str(EVERYTHING), "--stdio"], protocol_version="auto"
        ) as client:
            assert client.modern
            result = await client.call_tool("test_simple_text", {})
            assert result.content[0] == TextContent(
                text="This is a simple text response for testing."
            )
        async with connect_stdio(
            [sys.executable, "-c", LEGACY_ONLY_STDIO], protocol_version="auto"
        ) as client:
            assert client.era == "handshake"
            assert client.server_info is not None and client.server_info.name == "old-timer"
            result = await client.call_tool("hello", {})
            assert result.content[0] == TextContent(text="hello from the handshake era")


async def test_a_modern_only_client_refuses_an_older_server() -> None:
    server = build_server(modern=False)
    with pytest.raises(Exception) as raised:
        async with connect_memory(server, protocol_version=VERSION):
            pass
    assert not isinstance(raised.value, TransportError)


async def test_header_mismatch_is_a_modern_error_class() -> None:
    assert HeaderMismatch().code == -32020
