"""Tools that talk to the client during a call (logs, progress, sampling, a dropped SSE
stream) and tools that send list-changed and resource-updated notifications."""

from __future__ import annotations

import anyio

from mcp_layer import Context, MCPServer
from mcp_layer.types import TextContent

__all__ = ["declare_interactive_tools", "declare_notification_tools"]


def declare_interactive_tools(server: MCPServer) -> None:
    """Logging, progress, a dropped SSE stream and sampling during a call."""

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution"""
        await ctx.info("Tool execution started")
        await anyio.sleep(0.05)
        await ctx.info("Tool processing data")
        await anyio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications"""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            if step < 100:
                await anyio.sleep(0.05)
        return str(ctx.progress_token)

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Tests SSE stream disconnection and client reconnection (SEP-1699). Server will
        close the stream mid-call and send the result after client reconnects."""
        ctx.close_sse_stream()
        await anyio.sleep(0.1)
        return (
            "Reconnection test completed successfully. If you received this, the client "
            "properly reconnected after stream closure."
        )

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Tests server-initiated sampling (LLM completion request)

        Args:
            prompt: The prompt to send to the LLM
        """
        result = await ctx.sample(prompt, max_tokens=100)
        content = result.content
        text = content.text if isinstance(content, TextContent) else "No response"
        return f"LLM response: {text}"


def declare_notification_tools(server: MCPServer) -> None:
    """Tools that send list-changed and resource-updated notifications."""

    @server.tool()
    async def test_trigger_tool_change() -> str:
        """Sends notifications/tools/list_changed to every client"""
        await server.notify_tools_changed()
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_prompt_change() -> str:
        """Sends notifications/prompts/list_changed to every client"""
        await server.notify_prompts_changed()
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_resource_change() -> str:
        """Sends notifications/resources/list_changed to every client"""
        await server.notify_resources_changed()
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_resource_update(uri: str = "test://watched-resource") -> str:
        """Sends notifications/resources/updated to the clients subscribed to ``uri``

        Args:
            uri: The resource that changed.
        """
        await server.notify_resource_updated(uri)
        return f"Update sent for {uri}"
