"""The tasks extension's fixtures (``io.modelcontextprotocol/tasks``, SEP-2663)."""

from __future__ import annotations

import anyio

from jsonrpc_core import InternalError
from mcp_layer import Context, InputRequest, MCPServer

from ._fixtures import NAME_SCHEMA, text_of

__all__ = ["declare_task_tools"]


def declare_task_tools(server: MCPServer) -> None:
    """Tasks extension fixtures (``io.modelcontextprotocol/tasks``, SEP-2663)."""

    @server.tool()
    def greet(name: str = "World") -> str:
        """Greets someone (never a task)

        Args:
            name: Who to greet.
        """
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
        """Sleeps, then answers; a task for clients of the tasks extension

        Args:
            seconds: How long to work.
            label: A name for the computation.
        """
        await anyio.sleep(seconds)
        return f"Computed {label or 'something'} in {seconds:g} s"

    @server.tool(task_support="required")
    async def failing_job() -> str:
        """Always fails (a tool error) after about a second; only runs as a task"""
        await anyio.sleep(1)
        raise RuntimeError("the job failed on purpose")

    @server.tool(task_support="optional")
    async def protocol_error_job() -> str:
        """Fails with a protocol error (the task ends failed)"""
        await anyio.sleep(0.1)
        raise InternalError("the job broke down on purpose")

    confirm_schema = {
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"],
    }

    @server.tool(task_support="optional")
    async def confirm_delete(ctx: Context, filename: str = "file.txt") -> str:
        """Asks for a confirmation (a task waits for tasks/update), then deletes nothing

        Args:
            filename: The file to pretend to delete.
        """
        answer = await ctx.elicit(f"Delete {filename}?", confirm_schema, key="confirm")
        confirmed = answer.action == "accept" and text_of(answer, "confirm", "false") == "True"
        return f"{filename}: {'deleted' if confirmed else 'kept'}"

    @server.tool(task_support="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once"""
        answers = await ctx.ask(
            {
                "first": InputRequest.elicit("First name?", NAME_SCHEMA),
                "second": InputRequest.elicit("Second name?", NAME_SCHEMA),
            }
        )
        names = [text_of(answers[key], "name", "?") for key in ("first", "second")]
        return "Got " + " and ".join(names)

    @server.tool(task_support="required", task_start="explicit")
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks a name (multi round-trip), then goes on as a task to greet"""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        await ctx.start_task()
        await anyio.sleep(0.2)
        return f"Hello, {text_of(answer, 'name', 'stranger')}, from a task!"
