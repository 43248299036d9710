"""The declaring decorators of `MCPServer` used bare, as FastMCP users write them."""

from __future__ import annotations

import pytest

from mcp_layer import MCPServer, connect

pytestmark = pytest.mark.anyio


async def test_bare_tool_prompt_and_completion_decorators_register_the_function() -> None:
    server = MCPServer("bare", "1.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.completion
    def complete(ref: object, argument: object, context: object) -> list[str]:
        return ["Bob"]

    # The decorated names stay the functions themselves.
    assert add(1, 2) == 3
    assert greet("Ann") == "Hello Ann"
    assert server.completion_handler is complete
    async with connect(server) as client:
        tools = await client.list_all_tools()
        assert [(tool.name, tool.description) for tool in tools] == [("add", "Add two numbers.")]
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        prompt = await client.get_prompt("greet", {"name": "Bob"})
        assert prompt.messages[0].content.text == "Hello Bob"  # type: ignore[union-attr]


def test_a_bare_resource_decorator_fails_at_once_saying_what_to_write() -> None:
    server = MCPServer("bare", "1.0")
    with pytest.raises(TypeError, match=r'write @server.resource\("resource://readme"\) above'):

        @server.resource  # type: ignore[arg-type]
        def readme() -> str:
            return "hi"

    assert not server.resources and not server.templates
