"""The MCP client that the official conformance suite drives in client mode.

``conformance client --command "python examples/mcp/conformance_client.py"`` starts a
mock server per scenario, then runs this program with the server's URL as its last
argument and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``. Each scenario is a
short, ordinary use of `mcp_layer.connect` and `mcp_layer.ClientSession`; the suite
judges what reaches the wire. Authorization scenarios (``auth/*``) are not handled.

    MCP_CONFORMANCE_SCENARIO=tools_call python examples/mcp/conformance_client.py URL
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from mcp_layer import ClientSession, connect
from mcp_layer.types import ElicitRequestFormParams, ElicitResult, Implementation

__all__ = ["SCENARIOS", "main", "run_scenario"]

logger = logging.getLogger("conformance-client")

CLIENT_INFO = Implementation(name="rpcweave-conformance-client", version="1.0.0")
TIMEOUT = 20.0
"""Seconds any one request may take before the scenario gives up."""

Scenario = Callable[[str], Awaitable[None]]


def _session(url: str, **options: Any) -> AbstractAsyncContextManager[ClientSession]:
    return connect(url, client_info=CLIENT_INFO, request_timeout=TIMEOUT, **options)


async def initialize(url: str) -> None:
    """Handshake, list the tools, close."""
    async with _session(url) as client:
        tools = await client.list_all_tools()
        logger.info("server %s offers %d tool(s)", client.server_info, len(tools))


async def tools_call(url: str) -> None:
    """List the tools and call ``add_numbers`` (or the first tool) with two numbers."""
    async with _session(url) as client:
        tools = await client.list_all_tools()
        if not tools:
            raise RuntimeError("the server offers no tool to call")
        tool = next((t for t in tools if t.name == "add_numbers"), tools[0])
        result = await client.call_tool(tool.name, {"a": 2, "b": 3})
        if result.is_error:
            raise RuntimeError(f"tool {tool.name!r} failed: {result.content}")
        logger.info("%s -> %s", tool.name, result.content)


async def elicitation_defaults(url: str) -> None:
    """Accept a form elicitation without typing anything: the schema's defaults apply."""

    def accept_empty(params: ElicitRequestFormParams) -> ElicitResult:
        logger.info("elicitation: %s", params.message)
        return ElicitResult(action="accept", content={})

    async with _session(url, elicitation=accept_empty, elicitation_defaults=True) as client:
        tools = await client.list_all_tools()
        names = [t.name for t in tools]
        if "test_client_elicitation_defaults" not in names:
            raise RuntimeError(f"test_client_elicitation_defaults is not offered: {names}")
        result = await client.call_tool("test_client_elicitation_defaults", {})
        logger.info("result: %s", result.content)


async def sse_retry(url: str) -> None:
    """Call a tool whose SSE stream the server closes: the transport waits the ``retry``
    delay and resumes it with ``Last-Event-ID``."""
    async with _session(url) as client:
        tools = await client.list_all_tools()
        name = next((t.name for t in tools if t.name == "test_reconnection"), None)
        if name is None:
            raise RuntimeError("test_reconnection is not offered")
        result = await client.call_tool(name, {})
        logger.info("result after reconnection: %s", result.content)


async def json_schema_preservation(url: str) -> None:
    """Echo a JSON Schema 2020-12 input schema back exactly as listed (SEP-1613)."""
    async with _session(url) as client:
        tools = {t.name: t for t in await client.list_all_tools()}
        focal = tools.get("json_schema_2020_12_tool")
        if focal is None:
            raise RuntimeError("json_schema_2020_12_tool is not offered")
        await client.call_tool("json_schema_echo", {"schema": focal.input_schema})


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "tools-call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "elicitation-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
}
"""Scenario name -> what the client does for it."""


async def run_scenario(name: str, url: str) -> None:
    """Run the client side of scenario ``name`` against the server at ``url``."""
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise LookupError(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
    await scenario(url)


def main(argv: list[str] | None = None) -> int:
    """Entry point: the URL is the last argument, the scenario is in the environment."""
    args = sys.argv[1:] if argv is None else argv
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    if not args or not scenario:
        print(
            "usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance_client.py <server-url>",
            file=sys.stderr,
        )
        return 2
    try:
        anyio.run(run_scenario, scenario, args[-1])
    except Exception as exc:
        logger.error("scenario %s failed: %r", scenario, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
