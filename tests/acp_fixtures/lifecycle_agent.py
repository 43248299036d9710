"""An ACP agent written with the official Python SDK (PyPI ``agent-client-protocol``), for
the process lifecycle and Ctrl-C tests of ``rpcweave acp run``.

Prompts it understands (anything else is echoed):

    pid       answer ``pid=N``, its process id
    slow      say ``working``, then wait for ``session/cancel`` (stop reason ``cancelled``;
              ``end_turn`` after 60 s)
    stubborn  say ``working``, then take no notice of ``session/cancel`` for 60 s
    stderr    write ``stderr-line-1`` and ``stderr-line-2`` on stderr, then answer ``done``

SIGUSR1 makes it send an ``available_commands_update`` (``/alpha``, ``/beta``) to its
latest session, at a moment the test chooses (while the client shows its prompt).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

import acp
from acp import schema


class LifecycleAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.session_id: str | None = None
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, lambda: loop.create_task(self.commands()))

    async def commands(self) -> None:
        if self.session_id is None:
            return
        update = schema.AvailableCommandsUpdate(
            session_update="available_commands_update",
            available_commands=[
                schema.AvailableCommand(name="alpha", description="the first"),
                schema.AvailableCommand(name="beta", description="the second"),
            ],
        )
        await self.conn.session_update(self.session_id, update)

    async def initialize(self, protocol_version: int, **kw: Any) -> Any:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="lifecycle-agent", version="1"),
        )

    async def new_session(self, cwd: str, **kw: Any) -> Any:
        self.session_id = f"sess_life_{len(self.cancelled) + 1}"
        return schema.NewSessionResponse(session_id=self.session_id)

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, acp.update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> Any:
        self.cancelled[session_id] = cancelled = asyncio.Event()
        text = "".join(getattr(block, "text", "") for block in prompt).strip()
        if text == "pid":
            await self.say(session_id, f"pid={os.getpid()}")
        elif text == "slow":
            await self.say(session_id, "working")
            try:
                await asyncio.wait_for(cancelled.wait(), 60)
            except asyncio.TimeoutError:
                return schema.PromptResponse(stop_reason="end_turn")
            return schema.PromptResponse(stop_reason="cancelled")
        elif text == "stubborn":
            await self.say(session_id, "working")
            await asyncio.sleep(60)  # a turn that ignores session/cancel: it outlives the test
        elif text == "stderr":
            print("stderr-line-1", file=sys.stderr, flush=True)
            print("stderr-line-2", file=sys.stderr, flush=True)
            await self.say(session_id, "done")
        else:
            await self.say(session_id, text)
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kw: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()


if __name__ == "__main__":
    asyncio.run(acp.run_agent(LifecycleAgent()))  # type: ignore[arg-type]
