"""Tools that ask the user (elicitation in form and URL modes) or the client (roots)."""

from __future__ import annotations

import json

from mcp_layer import Context, MCPServer

from ._fixtures import SEP1034_DEFAULTS_SCHEMA, SEP1330_ENUMS_SCHEMA, elicitation_summary

__all__ = ["declare_elicitation_tools"]


def declare_elicitation_tools(server: MCPServer) -> None:
    """Elicitation (form and URL modes) and roots, asked of the client during a call."""

    @server.tool()
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Tests server-initiated elicitation (user input request)

        Args:
            message: The message to show the user
        """
        schema = {
            "type": "object",
            "properties": {"response": {"type": "string", "description": "User's response"}},
            "required": ["response"],
        }
        result = await ctx.elicit(message, schema)
        return elicitation_summary("User response", result.action, result.content)

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values per SEP-1034"""
        result = await ctx.elicit(
            "Please review and update the form fields with defaults", SEP1034_DEFAULTS_SCHEMA
        )
        return elicitation_summary("Elicitation completed", result.action, result.content)

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with enum schema improvements per SEP-1330"""
        result = await ctx.elicit(
            "Please select options from the enum fields", SEP1330_ENUMS_SCHEMA
        )
        return elicitation_summary("Elicitation completed", result.action, result.content)

    @server.tool()
    async def test_url_elicitation(ctx: Context) -> str:
        """Tests URL-mode elicitation: asks the user to visit a page"""
        result = await ctx.elicit_url(
            "Please authorize the conformance test", "https://example.com/authorize", "auth-1"
        )
        return f"URL elicitation: action={result.action}"

    @server.tool()
    async def test_list_roots(ctx: Context) -> str:
        """Tests roots/list: returns the client's roots as JSON text"""
        roots = await ctx.list_roots()
        return json.dumps([{"uri": r.uri, "name": r.name} for r in roots])
