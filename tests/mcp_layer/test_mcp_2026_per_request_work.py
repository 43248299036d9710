"""What a 2026-07-28 request does once, counted: its era is read once, its client's
capabilities and info are found with one encoding, and the client makes its envelope
once per session (not per request), while a change to what they are made of still shows
up; the server's ``serverInfo`` follows every change, one made in place included.

Tests the private units `mcp_layer._era`, `_client_era` and `_server` on purpose: the
counts are of their internal steps, which no public API shows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import anyio.lowlevel
import pydantic_core
import pytest

import mcp_layer._client_era as client_era
import mcp_layer._era as era
import mcp_layer._session as session_module
from jsonrpc_core import memory_pair
from mcp_layer import ClientSession, MCPServer
from mcp_layer.types import Icon, Implementation

MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


class Counter:
    """Counts the calls of a wrapped function."""

    def __init__(self) -> None:
        self.calls = 0

    def wrap(self, func: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return func(*args, **kwargs)

        return counted


def echo_server() -> MCPServer:
    server = MCPServer("counted", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


@asynccontextmanager
async def modern_client(server: MCPServer) -> AsyncIterator[ClientSession]:
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(server.serve, server_end)
        try:
            with anyio.fail_after(10):
                async with ClientSession(client_end, protocol_version=MODERN) as client:
                    assert client.modern
                    yield client
        finally:
            task_group.cancel_scope.cancel()


@pytest.fixture
def era_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    counter = Counter()
    monkeypatch.setattr(session_module, "is_modern", counter.wrap(session_module.is_modern))
    yield counter


@pytest.mark.anyio
async def test_a_2026_request_has_its_era_read_once(era_reads: Counter) -> None:
    async with modern_client(echo_server()) as client:
        era_reads.calls = 0
        for text in ("a", "b", "c"):
            result = await client.call_tool("echo", {"text": text})
            assert result.structured_content == {"result": text}
    assert era_reads.calls == 3  # the gate's; the handler's scope reuses its answer


@pytest.mark.anyio
async def test_a_2026_request_finds_its_client_models_with_one_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encodings = Counter()
    shim = SimpleNamespace(
        to_json=encodings.wrap(pydantic_core.to_json),
        PydanticSerializationError=pydantic_core.PydanticSerializationError,
    )
    monkeypatch.setattr(era, "pydantic_core", shim)
    params = {"_meta": _meta({"sampling": {}}, {"name": "c", "version": "1"})}
    first = era.RequestScope.from_envelope(params)
    encodings.calls = 0
    again = era.RequestScope.from_envelope(params)
    assert encodings.calls == 1
    assert again.client_capabilities is first.client_capabilities
    assert again.client_info is first.client_info
    assert again.client_info == Implementation(name="c", version="1")


def test_a_pair_is_told_apart_by_each_member() -> None:
    base = era.RequestScope.from_envelope({"_meta": _meta({}, {"name": "c", "version": "1"})})
    other_info = era.RequestScope.from_envelope({"_meta": _meta({}, {"name": "d", "version": "1"})})
    no_info = era.RequestScope.from_envelope({"_meta": _meta({}, None)})
    bad_info = era.RequestScope.from_envelope({"_meta": _meta({}, {"name": 5})})
    assert base.client_info is not None and base.client_info.name == "c"
    assert other_info.client_info is not None and other_info.client_info.name == "d"
    assert no_info.client_info is None and bad_info.client_info is None
    for _ in range(2):  # refused each time, never kept
        with pytest.raises(Exception, match="is not a ClientCapabilities"):
            era.RequestScope.from_envelope({"_meta": _meta({"sampling": 5}, None)})


def _meta(capabilities: Any, info: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    if info is not None:
        meta["io.modelcontextprotocol/clientInfo"] = info
    return meta


@pytest.mark.anyio
async def test_server_info_follows_every_change_even_one_made_in_place() -> None:
    server = echo_server()
    async with modern_client(server) as client:
        first = await client.call_tool("echo", {"text": "a"})
        server.implementation.version = "2.0.0"
        changed = await client.call_tool("echo", {"text": "b"})
        server.implementation.icons = [Icon(src="https://example.com/a.png")]
        with_icon = await client.call_tool("echo", {"text": "c"})
        assert server.implementation.icons is not None
        server.implementation.icons.append(Icon(src="https://example.com/b.png"))
        appended = await client.call_tool("echo", {"text": "d"})
        server.implementation = Implementation(name="renamed", version="3")
        renamed = await client.call_tool("echo", {"text": "e"})
    infos = [(r.meta or {})[SERVER_INFO] for r in (first, changed, with_icon, appended, renamed)]
    assert [info["version"] for info in infos] == ["1.0.0", "2.0.0", "2.0.0", "2.0.0", "3"]
    assert [len(info.get("icons", [])) for info in infos] == [0, 0, 1, 2, 0]
    assert infos[3]["icons"][1] == {"src": "https://example.com/b.png"}


@pytest.mark.anyio
async def test_the_client_makes_its_envelope_once_until_its_parts_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dumps = Counter()
    monkeypatch.setattr(client_era, "dump", dumps.wrap(client_era.dump))
    async with modern_client(echo_server()) as client:  # server/discover makes it first
        for text in ("a", "b", "c"):
            await client.call_tool("echo", {"text": text})
        assert dumps.calls == 2  # client info and capabilities, once
        first = client.envelope()
        assert first is not client.envelope()  # a new dict each time
        client.client_info = Implementation(name="renamed", version="9")
        client.capabilities.experimental = {"x": {}}
        client.log_level = "debug"
        meta = client.envelope()
        await client.call_tool("echo", {"text": "d"})
    assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "renamed", "version": "9"}
    assert meta["io.modelcontextprotocol/clientCapabilities"]["experimental"] == {"x": {}}
    assert meta["io.modelcontextprotocol/logLevel"] == "debug"
    assert "io.modelcontextprotocol/logLevel" not in first
    assert dumps.calls == 4


@pytest.mark.anyio
async def test_a_tool_call_does_not_ask_again_whether_its_function_is_async(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import mcp_layer._session_features as features

    generic_calls = Counter()
    monkeypatch.setattr(features, "call", generic_calls.wrap(features.call))
    server = echo_server()

    @server.tool()
    async def shout(text: str) -> str:
        await anyio.lowlevel.checkpoint()
        return text.upper()

    @server.tool()
    def later(text: str) -> Any:
        async def answer() -> str:
            return text * 2

        return answer()  # a plain function handing back an awaitable

    @server.tool(run_in_thread=True)
    def threaded(text: str) -> str:
        return f"[{text}]"

    async with modern_client(server) as client:
        echoed = await client.call_tool("echo", {"text": "a"})
        shouted = await client.call_tool("shout", {"text": "b"})
        doubled = await client.call_tool("later", {"text": "c"})
        assert generic_calls.calls == 0  # each function's kind is known from its declaration
        bracketed = await client.call_tool("threaded", {"text": "d"})
    assert [echoed.structured_content, shouted.structured_content] == [
        {"result": "a"},
        {"result": "B"},
    ]
    assert doubled.model_dump()["content"][0]["text"] == "cc"
    assert bracketed.structured_content == {"result": "[d]"}
    assert generic_calls.calls == 1  # a function run in a worker thread still goes through it
