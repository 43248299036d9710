"""An MCP tool server with one tool, ``read_file``, confined to a root directory.

Run over stdio (what MCP hosts do):  python -m rpcweave.examples.mcp.file_server ROOT
Or over Streamable HTTP:   python -m rpcweave.examples.mcp.file_server ROOT --http --port 8000
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_layer import MCPServer
from mcp_layer.types import ToolAnnotations

MAX_BYTES = 1_000_000


def build_server(root: Path) -> MCPServer:
    """The file server for ``root``."""
    root = root.resolve()
    server = MCPServer(
        "file-server",
        "1.0.0",
        instructions=f"Reads UTF-8 text files under {root}. Paths are relative to it.",
    )

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def read_file(path: str) -> str:
        """Read a text file under the server's root directory.

        Args:
            path: The file's path, relative to the root directory.
        """
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            raise PermissionError(f"{path!r} is outside the root directory")
        if not target.is_file():
            raise FileNotFoundError(f"{path!r} is not a file under the root directory")
        if target.stat().st_size > MAX_BYTES:
            raise ValueError(f"{path!r} is larger than {MAX_BYTES} bytes")
        return target.read_text(encoding="utf-8")

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description="MCP server exposing read_file under ROOT")
    parser.add_argument("root", type=Path)
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP at /mcp")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    server = build_server(args.root)
    if args.http:
        server.run("http", host=args.host, port=args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
