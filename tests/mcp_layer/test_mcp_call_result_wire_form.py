"""The direct wire form of a plain ``tools/call`` result encodes exactly like the model.

A handshake-era ``tools/call`` whose tool returns a ``str``, ``int``, ``float``,
``bool`` or ``dict`` answers with a dict written directly (`to_call_tool_wire`)
instead of a validated `CallToolResult`; on the wire nothing may differ.

Tests the private unit `mcp_layer._results` on purpose: the direct wire form is compared
with the model's.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from jsonrpc_core import Response, encode
from mcp_layer import MCPServer, connect_memory
from mcp_layer._results import to_call_tool_result, to_call_tool_wire
from mcp_layer.types import CallToolResult, TextContent

WRAPPED = {"type": "object", "properties": {"result": {}}, "required": ["result"]}

PLAIN_VALUES: list[Any] = [
    "hello",
    "",
    'ünïcode \u2028 "quoted"\n',
    0,
    -7,
    2**70,
    1.5,
    math.nan,
    math.inf,
    True,
    False,
    {},
    {"a": None, "b": [1, None, {"c": "d"}], "n": math.nan},
    {1: "int key"},
]


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=repr)
@pytest.mark.parametrize("schema", [None, WRAPPED], ids=["no-schema", "wrapped"])
def test_wire_form_encodes_like_the_model(value: Any, schema: dict[str, Any] | None) -> None:
    wraps = schema is not None
    wire = to_call_tool_wire(value, output_schema=schema, wraps_result=wraps)
    model = to_call_tool_result(value, output_schema=schema, wraps_result=wraps)
    assert wire is not None
    assert encode(Response(7, wire)) == encode(Response(7, model))


class Point:
    pass


@pytest.mark.parametrize(
    "value",
    [None, ["a", "b"], ("a",), TextContent(text="t"), CallToolResult(content=[]), Point()],
    ids=repr,
)
def test_other_values_take_the_model_path(value: Any) -> None:
    assert to_call_tool_wire(value, output_schema=None, wraps_result=False) is None


def test_unwrapped_output_schema_takes_the_model_path() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert to_call_tool_wire({"x": 1}, output_schema=schema, wraps_result=False) is None


@pytest.mark.anyio
async def test_plain_results_over_a_connection() -> None:
    server = MCPServer("plain")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def counts(items: list[str]) -> dict[str, int]:
        return {item: len(item) for item in items}

    @server.tool(structured_output=False)
    def unstructured(n: int) -> int:
        return n * 2

    @server.tool()
    def failing(n: int) -> int:
        raise ValueError("no")

    async with connect_memory(server) as client:
        result = await client.call_tool("echo", {"text": "hi"})
        assert result.content == [TextContent(text="hi")]
        assert result.structured_content == {"result": "hi"}
        assert not result.is_error
        result = await client.call_tool("counts", {"items": ["ab", "c"]})
        assert result.structured_content == {"result": {"ab": 2, "c": 1}}
        assert result.content == [TextContent(text='{\n  "ab": 2,\n  "c": 1\n}')]
        result = await client.call_tool("unstructured", {"n": 4})
        assert result.structured_content is None
        assert result.content == [TextContent(text="8")]
        result = await client.call_tool("failing", {"n": 1})
        assert result.is_error
        assert result.content == [TextContent(text="ValueError: no")]
        result = await client.call_tool("echo", {"text": 5})
        assert result.is_error
        assert "text" in result.content[0].text  # type: ignore[union-attr]
