"""The MCP "everything" server: every fixture the official conformance suite expects.

The suite (npm ``@modelcontextprotocol/conformance``) connects as a client and calls
tools, resources and prompts by fixed names (``test_simple_text``,
``test://static-text``, ``test_simple_prompt``, ...). This server declares each of them
with `mcp_layer`'s public API only, plus a few more that exercise the rest of the
protocol (structured output, resource links, roots, URL elicitation, list-changed and
resource-updated notifications).

Streamable HTTP at http://127.0.0.1:PORT/mcp:
    python -m rpcweave.examples.mcp.everything_server --port 3001
stdio:
    python -m rpcweave.examples.mcp.everything_server --stdio

Over HTTP the server keeps an event store, so SSE streams can be resumed with
``Last-Event-ID`` (``test_reconnection`` closes its stream on purpose to show it).

The server speaks both protocol eras. The 2026-07-28 fixtures (multi round-trip
requests: ``test_input_required_result_*``; ``test_missing_capability``,
``test_x_mcp_header``, ...) use the same `Context` API as the handshake-era ones: in
the 2026 era a question to the client becomes an input request of an
``InputRequiredResult``, and the tool runs again once the client answered.

The fixtures are declared by group in the modules of the `everything` package beside
this file (content, interactive, elicitation, input-required, tasks, resources and
prompts); this module puts them together and serves them.
"""

from __future__ import annotations

import argparse

from jsonrpc_core import InMemoryEventStore
from mcp_layer import MCPServer, ServerSession
from rpcweave.examples.mcp.everything import (
    JSON_SCHEMA_2020_12_INPUT_SCHEMA,
    SEP1034_DEFAULTS_SCHEMA,
    TEST_AUDIO_BASE64,
    TEST_IMAGE_BASE64,
    declare_completions,
    declare_content_tools,
    declare_elicitation_tools,
    declare_era_2026_tools,
    declare_input_required_tools,
    declare_interactive_tools,
    declare_notification_tools,
    declare_prompts,
    declare_resources,
    declare_task_tools,
)

__all__ = [
    "JSON_SCHEMA_2020_12_INPUT_SCHEMA",
    "RETRY_INTERVAL_MS",
    "SEP1034_DEFAULTS_SCHEMA",
    "TEST_AUDIO_BASE64",
    "TEST_IMAGE_BASE64",
    "build_server",
    "main",
]

RETRY_INTERVAL_MS = 500
"""The ``retry`` the server asks SSE clients to wait before they resume a closed stream."""


def build_server() -> MCPServer:
    """The everything server, with every fixture declared."""
    server = MCPServer(
        "mcp-conformance-test-server",
        "1.0.0",
        title="rpcweave everything server",
        instructions="Fixtures for the MCP conformance suite; every tool is safe to call.",
    )
    declare_content_tools(server)
    declare_interactive_tools(server)
    declare_elicitation_tools(server)
    declare_notification_tools(server)
    declare_input_required_tools(server)
    declare_era_2026_tools(server)
    declare_task_tools(server)
    declare_resources(server)
    declare_prompts(server)
    declare_completions(server)

    async def roots_changed(session: ServerSession) -> None:
        await session.send_log("info", "Client roots changed", logger="everything-server")

    server.on_roots_changed = roots_changed
    return server


def main(argv: list[str] | None = None) -> None:
    """Serve the everything server over Streamable HTTP (default) or stdio."""
    parser = argparse.ArgumentParser(description="MCP everything server (conformance fixtures)")
    parser.add_argument("--stdio", action="store_true", help="serve on stdin/stdout")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    args = parser.parse_args(argv)
    server = build_server()
    if args.stdio:
        server.run("stdio")
        return
    server.run(
        "http",
        host=args.host,
        port=args.port,
        event_store=InMemoryEventStore(),
        retry_interval_ms=RETRY_INTERVAL_MS,
    )


if __name__ == "__main__":
    main()
