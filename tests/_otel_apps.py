"""The servers and agents the telemetry tests trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_layer import ExecutionContext, TaskUpdater
from acp_layer import Agent, LocalClient, ResourceNotFound, connect_agent, serve_agent
from acp_layer import schema as s
from jsonrpc_core import memory_pair
from mcp_layer import Context, MCPServer

__all__ = ["ReadingAgent", "Steps", "build", "run_acp"]


def build() -> MCPServer:
    server = MCPServer("traced", "1.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def steps(ctx: Context, n: int = 2) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n, "step")
        return "done"

    @server.tool()
    def boom() -> str:
        raise ValueError("nope")

    @server.tool()
    async def ask_model(ctx: Context) -> str:
        result = await ctx.sample("hello")
        return str(result.content.text)  # type: ignore[union-attr]

    @server.resource("test://static", mime_type="text/plain")
    def static() -> str:
        return "hello"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


class ReadingAgent(Agent):
    """Answers a prompt with two text chunks around a read of ``notes.txt``."""

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        await self.client.send_text(sid, "reading ")
        text = await self.client.read_text_file(sid, str(self.root / "notes.txt"))
        await self.client.send_text(sid, text)
        return "end_turn"

    root = Path(".")


async def run_acp(tmp_path: Path, agent: Agent) -> tuple[str, Any]:
    (tmp_path / "notes.txt").write_text("hello")
    client = LocalClient(permission="allow")
    client_end, agent_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_agent, agent, agent_end)
        async with connect_agent(client, client_end) as conn:
            sid = (await conn.new_session(str(tmp_path))).session_id
            response = await conn.prompt(sid, "hi")
            with pytest.raises(ResourceNotFound):
                await conn.prompt("no-such-session", "hi")
        tg.cancel_scope.cancel()
    return sid, response


class Steps:
    """Working, an artifact, completed."""

    async def __call__(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await updater.add_artifact(f"out: {context.text}", name="out")
        await updater.complete("done")
