"""An MCP server that requires OAuth access tokens (MCP authorization, resource server).

Tokens are JWTs from ``--issuer`` (keys from its published JWKS) for this server's
resource URI; ``list_notes`` needs scope ``notes:read``, ``add_note`` also
``notes:write`` (a client without it is asked to step up, 403 insufficient_scope).

    python -m rpcweave.examples.mcp.protected_server --issuer https://auth.example.com --port 8000

Needs PyJWT: pip install 'rpcweave[auth]'.
"""

from __future__ import annotations

import argparse

from mcp_layer import MCPServer
from mcp_layer.auth import JWTVerifier, ProtectedResource


def build_server() -> MCPServer:
    """A tiny notes server."""
    server = MCPServer("protected-notes", "1.0.0")
    notes: list[str] = []

    @server.tool()
    def list_notes() -> list[str]:
        """The notes so far."""
        return list(notes)

    @server.tool()
    def add_note(text: str) -> str:
        """Add a note."""
        notes.append(text)
        return f"{len(notes)} note(s)"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--issuer", required=True, help="the authorization server's issuer")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--resource", help="this server's public URL (default: from host/port)")
    args = parser.parse_args()
    resource = args.resource or f"http://{args.host}:{args.port}/mcp"
    auth = ProtectedResource(
        JWTVerifier(issuer=args.issuer, audience=resource),
        resource=resource,
        authorization_servers=[args.issuer],
        scopes=["notes:read"],
        tool_scopes={"add_note": ["notes:write"]},
        resource_name="protected notes",
    )
    build_server().run("http", host=args.host, port=args.port, auth=auth)


if __name__ == "__main__":
    main()
