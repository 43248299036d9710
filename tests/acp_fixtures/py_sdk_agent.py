"""An ACP agent written with the official Python SDK (PyPI ``agent-client-protocol``).

Prompts it understands (anything else is echoed):

    fs PATH        read PATH, ask permission, then write PATH + ".copy" if allowed
    term           run ``echo from-terminal`` in a client terminal
    sleep          send updates until ``session/cancel``, then stop with ``cancelled``
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp import schema


class SdkAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities=None, client_info=None, **kw: Any
    ):
        self.client_capabilities = client_capabilities
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                prompt_capabilities=schema.PromptCapabilities(image=True)
            ),
            agent_info=schema.Implementation(name="py-sdk-agent", version="1"),
        )

    async def new_session(self, cwd: str, mcp_servers=None, additional_directories=None, **kw: Any):
        return schema.NewSessionResponse(session_id=f"sess_py_{len(self.cancelled) + 1}")

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, acp.update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any):
        self.cancelled[session_id] = cancelled = asyncio.Event()
        text = "".join(getattr(block, "text", "") for block in prompt)
        if text.startswith("fs "):
            path = text[3:]
            content = (await self.conn.read_text_file(session_id=session_id, path=path)).content
            await self.conn.session_update(
                session_id,
                acp.start_tool_call("call_1", f"Copy {path}", kind="edit", status="pending"),
            )
            permission = await self.conn.request_permission(
                session_id=session_id,
                tool_call=schema.ToolCallUpdate(tool_call_id="call_1", title=f"Copy {path}"),
                options=[
                    schema.PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                    schema.PermissionOption(option_id="no", name="No", kind="reject_once"),
                ],
            )
            allowed = getattr(permission.outcome, "option_id", None) == "yes"
            if allowed:
                await self.conn.write_text_file(
                    session_id=session_id, path=path + ".copy", content=content.upper()
                )
            await self.say(session_id, f"read {content!r}, allowed={allowed}")
        elif text == "term":
            terminal = await self.conn.create_terminal(
                session_id=session_id, command="echo", args=["from-terminal"]
            )
            status = await self.conn.wait_for_terminal_exit(
                session_id=session_id, terminal_id=terminal.terminal_id
            )
            output = await self.conn.terminal_output(
                session_id=session_id, terminal_id=terminal.terminal_id
            )
            await self.conn.release_terminal(
                session_id=session_id, terminal_id=terminal.terminal_id
            )
            await self.say(session_id, f"exit={status.exit_code} output={output.output!r}")
        elif text == "sleep":
            while not cancelled.is_set():
                await self.say(session_id, "working")
                try:
                    await asyncio.wait_for(cancelled.wait(), 0.05)
                except asyncio.TimeoutError:
                    pass
            return schema.PromptResponse(stop_reason="cancelled")
        else:
            for block in prompt:
                if getattr(block, "type", None) == "image":
                    await self.say(session_id, f"image of {len(block.data)} chars")
                else:
                    await self.say(session_id, block.text)
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kw: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()


if __name__ == "__main__":
    asyncio.run(acp.run_agent(SdkAgent()))  # type: ignore[arg-type]
