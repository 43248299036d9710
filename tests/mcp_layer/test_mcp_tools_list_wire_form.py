"""A handshake-era ``tools/list`` is written without building `ListToolsResult`.

The session answers with a dict that must encode byte for byte as the model would:
same members, same order, every kind of tool, every page. Building the model would
cost its own validator and serializer (each with a copy of `Tool`'s) for nothing; that
a serving process never builds it is checked in ``test_http_server_loads_features_on_use.py``.

Tests the private unit `mcp_layer._era.RequestScope` on purpose: the direct ``tools/list``
answer is built in a request scope and compared with the model's.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from jsonrpc_core import Response, encode
from mcp_layer import MCPServer, ServerSession
from mcp_layer._era import RequestScope
from mcp_layer.types import (
    ClientCapabilities,
    Icon,
    ListToolsResult,
    PaginatedRequestParams,
    ToolAnnotations,
)


class Point(pydantic.BaseModel):
    x: int
    y: float = 0.5


def _server(page_size: int | None) -> MCPServer:
    server = MCPServer("s", page_size=page_size)

    @server.tool()
    def echo(text: str) -> str:
        """Say it back.

        Args:
            text: What to say.
        """
        return text

    @server.tool(
        title="Où",
        annotations=ToolAnnotations(read_only_hint=True, title="t"),
        icons=[Icon(src="https://example.com/i.png", mime_type="image/png")],
        meta={"k": [1, None, "é"]},
    )
    def point(x: int, tags: list[str] | None = None) -> Point:
        return Point(x=x)

    @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "number"}}})
    def raw(n: float = 1.0) -> dict[str, int]:
        return {"n": int(n)}

    server.add_tool(lambda: None, name="nothing", structured_output=False, description="")
    return server


def _pages(server: MCPServer) -> list[tuple[Any, ListToolsResult]]:
    """Each page as the session answers it, and as the model says it should be."""
    session = ServerSession(server)
    scope = RequestScope(
        modern=False, protocol_version="2025-11-25", client_capabilities=ClientCapabilities()
    )
    pages = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor)
        answer = session._list_tools(params, None, scope)  # type: ignore[arg-type]
        tools, cursor = server.page([e.tool for e in server.tools.values()], params.cursor)
        pages.append((answer, ListToolsResult(tools=tools, next_cursor=cursor)))
        if cursor is None:
            return pages


@pytest.mark.parametrize("page_size", [None, 1, 3, 10])
def test_the_answer_encodes_as_the_model(page_size: int | None) -> None:
    pages = _pages(_server(page_size))
    assert len(pages) == (1 if page_size is None else -(-4 // page_size))
    for answer, model in pages:
        assert isinstance(answer, dict)
        assert encode(Response(7, answer)) == encode(Response(7, model))
    assert json.loads(encode(Response(7, pages[0][0])))["result"]["tools"][0]["name"] == "echo"


def test_an_empty_server_lists_no_tools_as_the_model_does() -> None:
    ((answer, model),) = _pages(MCPServer("s"))
    assert (
        encode(Response(1, answer))
        == encode(Response(1, model))
        == (b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}')
    )
