"""Benchmark fixture: the same 100-tool server on the official SDK's high-level server
(``mcp.server.mcpserver.MCPServer``, formerly FastMCP).

stdio (default):  python bench/servers/mcp_official_server.py
HTTP:             python bench/servers/mcp_official_server.py --http
    binds 127.0.0.1 on a free port, serves Streamable HTTP at /mcp under uvicorn, and
    prints ``LISTENING <port>`` on stdout once it accepts connections.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp_toolset import FILLERS, echo


def build() -> MCPServer:
    server: MCPServer = MCPServer("bench-official", version="1.0.0")
    server.add_tool(echo)
    for name, func in FILLERS:
        server.add_tool(func, name=name)
    return server


def main() -> None:
    server = build()
    if "--http" in sys.argv[1:]:
        from mcp_uvicorn import serve_on_free_port

        serve_on_free_port(server.streamable_http_app(streamable_http_path="/mcp"))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
