"""A stdio MCP server with 2025-11-25 task tools, for the CLI tests of ``mcp call``."""

from __future__ import annotations

from mcp_layer import Context, MCPServer

server = MCPServer("task-fixture", "1.0")


@server.tool(task_support="optional")
async def double(ctx: Context, x: int) -> int:
    """Double a number, reporting one progress step."""
    await ctx.report_progress(1, 1, "doubling")
    return 2 * x


@server.tool(task_support="required")
def shout(text: str) -> str:
    """Upper-case a text (runs only as a task)."""
    return text.upper()


if __name__ == "__main__":
    server.run()
