"""The MCP client that the official conformance suite drives in client mode.

``conformance client --command "python -m rpcweave.examples.mcp.conformance_client"`` starts a
mock server per scenario, then runs this program with the server's URL as its last
argument and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``. Each scenario is a
short, ordinary use of `mcp_layer.connect` and `mcp_layer.ClientSession`; the suite
judges what reaches the wire. Authorization scenarios (``auth/*``) run the same session
with `mcp_layer.auth.OAuthAuth` (or `ClientCredentialsAuth`) as its ``auth``.

With ``--spec-version`` the suite names the revision in ``MCP_CONFORMANCE_PROTOCOL_VERSION``:
a 2026-07-28 run uses the per-request era (no handshake), any other the handshake.
Scenario data (tool calls to make) comes in ``MCP_CONFORMANCE_CONTEXT`` as JSON.

    MCP_CONFORMANCE_SCENARIO=tools_call python -m rpcweave.examples.mcp.conformance_client URL
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx

from mcp_layer import ClientSession, connect
from mcp_layer.auth import (
    ClientCredentialsAuth,
    ClientInformation,
    ClientMetadata,
    OAuthAuth,
    SigningKey,
)
from mcp_layer.types import (
    MODERN_PROTOCOL_VERSIONS,
    ElicitRequestFormParams,
    ElicitResult,
    Implementation,
    Tool,
)

__all__ = ["SCENARIOS", "main", "run_scenario"]

logger = logging.getLogger("conformance-client")

CLIENT_INFO = Implementation(name="rpcweave-conformance-client", version="1.0.0")
TIMEOUT = 20.0
"""Seconds any one request may take before the scenario gives up."""

Scenario = Callable[[str], Awaitable[None]]


def _protocol_version() -> str | None:
    """The revision the suite asked for, if it is one we speak per request."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    return version if version in MODERN_PROTOCOL_VERSIONS else None


def _context() -> dict[str, Any]:
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
    except ValueError:
        return {}
    return context if isinstance(context, dict) else {}


def _session(url: str, **options: Any) -> AbstractAsyncContextManager[ClientSession]:
    version = _protocol_version()
    if version is not None:
        options.setdefault("protocol_version", version)
    return connect(url, client_info=CLIENT_INFO, request_timeout=TIMEOUT, **options)


def _arguments_for(tool: Tool) -> dict[str, Any]:
    """Placeholder arguments for a tool's required parameters."""
    schema = tool.input_schema
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        kind = str((properties.get(name) or {}).get("type"))
        arguments[name] = {"integer": 1, "number": 1.5, "boolean": True}.get(kind, "x")
    return arguments


def _accept(params: Any) -> ElicitResult:
    logger.info("elicitation: %s", getattr(params, "message", params))
    return ElicitResult(action="accept", content={"confirmed": True})


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


async def request_metadata(url: str) -> None:
    """Open a 2026-era session (the server first refuses its version once), list and
    call the tools."""
    async with _session(url) as client:
        for tool in await client.list_all_tools():
            await client.call_tool(tool.name, _arguments_for(tool))


async def client_request_state(url: str) -> None:
    """Multi round-trip requests: answer each tool's input requests and retry."""
    async with _session(url, elicitation=_accept) as client:
        await client.list_all_tools()
        for name in (
            "test_mrtr_echo_state",
            "test_mrtr_no_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_result_type",
        ):
            result = await client.call_tool(name, {})
            logger.info("%s -> %s", name, result.content)


async def standard_headers(url: str) -> None:
    """Use every method whose HTTP headers the suite checks."""
    async with _session(url) as client:
        for tool in await client.list_all_tools():
            await client.call_tool(tool.name, _arguments_for(tool))
        for resource in await client.list_all_resources():
            await client.read_resource(resource.uri)
        for prompt in await client.list_all_prompts():
            arguments = {a.name: "x" for a in prompt.arguments or [] if a.required}
            await client.get_prompt(prompt.name, arguments or None)


async def custom_headers(url: str) -> None:
    """Make the tool calls the scenario names (their x-mcp-header arguments become
    Mcp-Param-* headers)."""
    calls = _context().get("toolCalls") or []
    async with _session(url) as client:
        await client.list_all_tools()
        for call in calls:
            await client.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(url: str) -> None:
    """Call every tool the client kept (those with invalid x-mcp-header are left out)."""
    async with _session(url) as client:
        for tool in await client.list_all_tools():
            await client.call_tool(tool.name, _arguments_for(tool))


async def list_tools_only(url: str) -> None:
    """List the tools (a network ``$ref`` in a schema is never fetched)."""
    async with _session(url) as client:
        tools = await client.list_all_tools()
        logger.info("%d tool(s)", len(tools))


# -- authorization -----------------------------------------------------------------

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""Our Client ID Metadata Document URL, as the suite expects it (never fetched)."""
REDIRECT_URI = "http://localhost:3000/callback"


async def _user_agent(authorization_url: str) -> str:
    """The browser step: the suite's authorization server consents at once, so the
    user agent only follows the link and reports where it was sent back to."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        response = await http.get(authorization_url, follow_redirects=False)
    location: str | None = response.headers.get("location")
    if not response.is_redirect or not location:
        raise RuntimeError(f"the authorization endpoint answered HTTP {response.status_code}")
    return location


async def authorized(url: str) -> None:
    """Authorize as the server asks (discovery, registration, PKCE, step-up), then list
    the tools and call each one."""
    context = _context()
    clients = []
    if context.get("client_id") and context.get("client_secret"):  # pre-registered
        client_id, secret = context["client_id"], context["client_secret"]
        clients.append(ClientInformation(client_id=client_id, client_secret=secret))
    auth = OAuthAuth(
        _user_agent,
        redirect_uri=REDIRECT_URI,
        client_metadata=ClientMetadata(client_name=CLIENT_INFO.name),
        client_metadata_url=CLIENT_METADATA_URL,
        clients=clients,
        timeout=TIMEOUT,
    )
    async with _session(url, auth=auth) as client:
        for tool in await client.list_all_tools():
            result = await client.call_tool(tool.name, _arguments_for(tool))
            logger.info("%s -> %s", tool.name, result.content)


async def client_credentials(url: str) -> None:
    """A machine client: the client_credentials grant with the scenario's secret or
    private key (private_key_jwt), then list the tools."""
    context = _context()
    key = context.get("private_key_pem")
    auth = ClientCredentialsAuth(
        context["client_id"],
        client_secret=context.get("client_secret"),
        signing_key=SigningKey(key, context.get("signing_algorithm") or "ES256") if key else None,
        timeout=TIMEOUT,
    )
    async with _session(url, auth=auth) as client:
        tools = await client.list_all_tools()
        logger.info("%d tool(s)", len(tools))


AUTH_SCENARIOS: dict[str, Scenario] = {
    name: authorized
    for name in (
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/basic-dcr",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    )
}
AUTH_SCENARIOS["auth/client-credentials-basic"] = client_credentials
AUTH_SCENARIOS["auth/client-credentials-jwt"] = client_credentials


SCENARIOS: dict[str, Scenario] = {
    **AUTH_SCENARIOS,
    "initialize": initialize,
    "tools_call": tools_call,
    "tools-call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "elicitation-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": client_request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": list_tools_only,
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
