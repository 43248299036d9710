"""Connect to an OAuth-protected MCP server on behalf of the user (MCP authorization).

Discovers the authorization server, registers (or uses ``--client-id``), opens the
browser for consent, catches the redirect on a loopback port, then lists the tools.
Tokens live in memory only: the next run asks again.

    python -m rpcweave.examples.mcp.oauth_client https://mcp.example.com/mcp
"""

from __future__ import annotations

import argparse

import anyio

from mcp_layer import connect_http
from mcp_layer.auth import ClientInformation, ClientMetadata, LoopbackRedirectHandler, OAuthAuth


async def run(url: str, client_id: str | None, port: int) -> None:
    """Authorize, list the tools, print them."""
    handler = LoopbackRedirectHandler(port=port)
    auth = OAuthAuth(
        handler,
        client_metadata=ClientMetadata(client_name="rpcweave example client"),
        clients=[ClientInformation(client_id=client_id)] if client_id else [],
    )
    async with connect_http(url, auth=auth) as session:
        for tool in await session.list_all_tools():
            print(f"{tool.name}: {tool.description or ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url", help="the MCP server's URL")
    parser.add_argument("--client-id", help="a pre-registered client id")
    parser.add_argument("--port", type=int, default=0, help="loopback port for the redirect")
    args = parser.parse_args()
    anyio.run(run, args.url, args.client_id, args.port)


if __name__ == "__main__":
    main()
