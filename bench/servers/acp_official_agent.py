"""ACP benchmark agent built on the official Python SDK (PyPI ``agent-client-protocol``).

Each ``session/prompt`` is answered with ``--chunks`` ``session/update`` notifications
(``agent_message_chunk`` with the text ``chunk <i> ``), then stop reason ``end_turn`` —
the same messages as ``acp_rpcweave_agent.py``.

Run: python bench/servers/acp_official_agent.py [--chunks 10]
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from typing import Any

import acp
from acp import schema


class ChunkAgent:
    """Streams a fixed number of message chunks per prompt, then ends the turn."""

    def __init__(self, chunks: int) -> None:
        self.texts = [f"chunk {i} " for i in range(chunks)]
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="official-bench-agent", version="1"),
        )

    async def new_session(
        self,
        cwd: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        **kwargs: Any,
    ) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id=f"sess_{uuid.uuid4().hex}")

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> schema.PromptResponse:
        for text in self.texts:
            await self.conn.session_update(session_id, acp.update_agent_message_text(text))
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(acp.run_agent(ChunkAgent(args.chunks)))


if __name__ == "__main__":
    main()
