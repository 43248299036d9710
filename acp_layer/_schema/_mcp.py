"""MCP server configurations the client passes to ``session/new``, ``load`` and ``resume``.

`McpServer` is stdio when ``type`` is absent (or ``"stdio"``), ``http`` or ``sse`` otherwise
(the latter two need `McpCapabilities`). Another ``type`` (e.g. unstable ``acp``) parses as
`UnknownMcpServer` with its raw fields kept: an agent skips servers it cannot connect to, and
``acp_layer.schema_unstable.UnstableMcpServer`` can re-read them. An entry that is invalid
for its own type is dropped from ``mcpServers`` (``x-deserialize-skip-invalid-items``).
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from ._base import ACPModel
from ._lenient import tagged_union

__all__ = [
    "EnvVariable",
    "HttpHeader",
    "McpServer",
    "McpServerHttp",
    "McpServerSse",
    "McpServerStdio",
    "UnknownMcpServer",
]


class EnvVariable(ACPModel):
    """An environment variable to set when launching an MCP server."""

    name: str
    value: str


class HttpHeader(ACPModel):
    """An HTTP header to set when making requests to the MCP server."""

    name: str
    value: str


class McpServerStdio(ACPModel):
    """Stdio transport configuration for MCP (no ``type`` on the wire)."""

    name: str
    command: str
    """Absolute path to the MCP server executable."""
    args: list[str]
    env: list[EnvVariable]


class McpServerHttp(ACPModel):
    """HTTP transport configuration for MCP."""

    type: Literal["http"] = "http"
    name: str
    url: str
    headers: list[HttpHeader]


class McpServerSse(ACPModel):
    """SSE transport configuration for MCP."""

    type: Literal["sse"] = "sse"
    name: str
    url: str
    headers: list[HttpHeader]


class UnknownMcpServer(ACPModel):
    """An MCP server of a transport type this package does not know; the raw data is kept."""

    type: str


if TYPE_CHECKING:
    McpServer: TypeAlias = McpServerHttp | McpServerSse | McpServerStdio | UnknownMcpServer
else:
    McpServer = tagged_union(
        "type",
        McpServerHttp,
        McpServerSse,
        untagged=McpServerStdio,
        aliases={"stdio": McpServerStdio},
        unknown=UnknownMcpServer,
    )
"""Configuration for connecting to an MCP (Model Context Protocol) server."""
