"""MCP server and client basics, in memory and over stdio.

Tests the private unit `mcp_layer._uri_template.UriTemplate` on purpose: its matching
rules, case by case.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from jsonrpc_core import InvalidParams
from mcp_layer import Context, MCPServer, ResourceNotFound, connect

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


class Sum(BaseModel):
    total: int


def build() -> MCPServer:
    server = MCPServer("basics", "1.0")

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two numbers.

        Args:
            a: the first number
            b: the second number
        """
        return Sum(total=a + b)

    @server.tool()
    async def steps(ctx: Context, n: int = 2) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n, "step")
            await ctx.info(f"step {i}")
        return "done"

    @server.tool()
    def boom() -> str:
        raise ValueError("nope")

    @server.resource("test://static", mime_type="text/plain")
    def static() -> str:
        return "hello"

    @server.resource("test://item/{item_id}")
    def item(item_id: str) -> dict[str, str]:
        return {"id": item_id}

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


async def test_tools_resources_prompts_in_memory() -> None:
    logs: list[object] = []
    progress: list[tuple[float, float | None, str | None]] = []
    async with connect(build(), on_log=lambda params: logs.append(params.data)) as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}
        assert tools["add"].input_schema["properties"]["a"]["description"] == "the first number"
        assert tools["add"].output_schema is not None
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert added.structured_content == {"total": 3}
        wrong = await client.call_tool("add", {"a": "x"})
        assert wrong.is_error
        assert "a:" in wrong.content[0].text and "b:" in wrong.content[0].text  # type: ignore[union-attr]
        stepped = await client.call_tool(
            "steps", {"n": 2}, progress=lambda p, t, m: progress.append((p, t, m))
        )
        assert stepped.content[0].text == "done"  # type: ignore[union-attr]
        assert progress == [(1, 2, "step"), (2, 2, "step")]
        assert logs == ["step 0", "step 1"]
        failed = await client.call_tool("boom")
        assert failed.is_error and "nope" in failed.content[0].text  # type: ignore[union-attr]
        with pytest.raises(InvalidParams, match="Unknown tool"):
            await client.call_tool("missing")
        static = await client.read_resource("test://static")
        assert static.contents[0].text == "hello"  # type: ignore[union-attr]
        templated = await client.read_resource("test://item/42")
        assert '"42"' in templated.contents[0].text  # type: ignore[union-attr]
        with pytest.raises(ResourceNotFound):
            await client.read_resource("test://item/4/2")
        prompt = await client.get_prompt("greet", {"name": "Bob"})
        assert prompt.messages[0].content.text == "Hello Bob"  # type: ignore[union-attr]


async def test_file_server_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_text("hi there")
    command = [sys.executable, str(ROOT / "examples/mcp/file_server.py"), str(tmp_path)]
    with anyio.fail_after(30):
        async with connect(command) as client:
            read = await client.call_tool("read_file", {"path": "note.txt"})
            assert read.content[0].text == "hi there"  # type: ignore[union-attr]
            escape = await client.call_tool("read_file", {"path": "../../etc/passwd"})
            assert escape.is_error
            assert "outside the root" in escape.content[0].text  # type: ignore[union-attr]


async def test_a_client_refusal_inside_a_tool_is_a_tool_error() -> None:
    server = MCPServer("refusals", "1.0")

    @server.tool()
    async def ask_model(ctx: Context) -> str:
        result = await ctx.sample("hello")
        return str(result)

    def refuse(params: object) -> None:
        raise InvalidParams("sampling refused by the user")

    async with connect(server, sampling=refuse) as client:
        outcome = await client.call_tool("ask_model")
    assert outcome.is_error
    assert "sampling refused by the user" in outcome.content[0].text  # type: ignore[union-attr]


def test_uri_templates_never_let_a_value_escape_its_segment() -> None:
    from mcp_layer._uri_template import UriTemplate

    simple = UriTemplate("file:///{name}")
    assert simple.match("file:///notes.txt") == {"name": "notes.txt"}
    assert simple.match("file:///a/b") is None
    assert simple.match("file:///%2Fetc%2Fpasswd") is None
    assert simple.match("file:///..") is None
    reserved = UriTemplate("file:///{+path}")
    assert reserved.match("file:///docs/a.txt") == {"path": "docs/a.txt"}
    assert reserved.match("file:///docs/../../etc/passwd") is None


async def test_resource_templates_refuse_encoded_paths() -> None:
    server = MCPServer("confined", "1.0")

    @server.resource("files:///{name}")
    def read(name: str) -> str:
        return f"contents of {name}"

    async with connect(server) as client:
        ok = await client.read_resource("files:///a.txt")
        assert ok.contents[0].text == "contents of a.txt"  # type: ignore[union-attr]
        for hostile in ("files:///%2Fetc%2Fpasswd", "files:///../secret", "files:///a/b"):
            with pytest.raises(ResourceNotFound):
                await client.read_resource(hostile)
