"""The 2026-07-28 fixtures: multi round-trip requests (``InputRequiredResult``),
capabilities per request, ``x-mcp-header`` and logging.

In the 2026 era a question to the client becomes an input request of an
``InputRequiredResult``, and the tool runs again once the client answered; in the
handshake era the same `Context` calls are requests to the client.
"""

from __future__ import annotations

from mcp_layer import Context, InputRequest, MCPServer

from ._fixtures import NAME_SCHEMA, X_MCP_HEADER_SCHEMA, sampled_text, text_of

__all__ = ["declare_era_2026_tools", "declare_input_required_tools"]


def declare_input_required_tools(server: MCPServer) -> None:
    """2026-07-28 fixtures: multi round-trip requests (``InputRequiredResult``)."""

    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name (MRTR elicitation), then greets them"""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {text_of(answer, 'name', 'stranger')}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question (MRTR sampling)"""
        result = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"Sampling response: {sampled_text(result)}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks the client for its roots (MRTR roots/list)"""
        roots = await ctx.list_roots(key="client_roots")
        return "Client roots: " + ", ".join(root.uri for root in roots)

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation, carrying its state in a sealed requestState"""
        schema = {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        }
        answer = await ctx.elicit("Please confirm", schema, key="confirm")
        verdict = "state-ok" if ctx.resumed else "state-missing"
        return f"{verdict}: confirmed={text_of(answer, 'ok', 'false')}"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for a name, a greeting and the roots at once"""
        answers = await ctx.ask(
            {
                "user_name": InputRequest.elicit("What is your name?", NAME_SCHEMA),
                "greeting": InputRequest.sample("Generate a greeting", max_tokens=50),
                "client_roots": InputRequest.roots(),
            }
        )
        name = text_of(answers["user_name"], "name", "stranger")
        greeting = sampled_text(answers["greeting"])
        roots = ", ".join(root.uri for root in answers["client_roots"].roots)
        return f"{greeting} {name} (roots: {roots})"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks two questions, one round each"""
        first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
        color_schema = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        second = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
        name = text_of(first, "name", "stranger")
        return f"{name} likes {text_of(second, 'color', 'no color')}"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for a confirmation; a tampered requestState is refused (-32602)"""
        answer = await ctx.elicit("Please confirm", NAME_SCHEMA, key="confirm")
        return f"Confirmed by {text_of(answer, 'name', 'nobody')}"


def declare_era_2026_tools(server: MCPServer) -> None:
    """2026-07-28 fixtures: capabilities per request, headers, logging."""

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only what the client's capabilities allow"""
        declared = ctx.client_capabilities
        requests: dict[str, InputRequest] = {}
        if declared.elicitation is not None:
            requests["user_name"] = InputRequest.elicit("What is your name?", NAME_SCHEMA)
        if declared.sampling is not None:
            requests["greeting"] = InputRequest.sample("Generate a greeting", max_tokens=50)
        if declared.roots is not None:
            requests["client_roots"] = InputRequest.roots()
        if not requests:
            return "The client declared no capability to ask with"
        answers = await ctx.ask(requests)
        return "Answered: " + ", ".join(sorted(answers))

    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs sampling: a client that does not declare it gets -32021"""
        result = await ctx.sample("Say hello", max_tokens=20)
        return f"Sampled: {sampled_text(result)}"

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Asks the user a question, in the 2026 era as an InputRequiredResult"""
        await ctx.info("About to ask the user")
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {text_of(answer, 'name', 'stranger')}!"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at info level (only to clients that asked for log messages)"""
        await ctx.info("Logging tool started")
        await ctx.debug("Logging tool details")
        return "Logging tool executed"

    @server.tool(
        description="Runs a query in a region mirrored into an Mcp-Param-Region header",
        input_schema=X_MCP_HEADER_SCHEMA,
    )
    def test_x_mcp_header(region: str, query: str = "") -> str:
        return f"Ran {query or 'nothing'!r} in {region}"
