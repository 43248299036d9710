"""ACP benchmark agent built on rpcweave's `acp_layer` (stdio).

Each ``session/prompt`` is answered with ``--chunks`` ``session/update`` notifications
(``agent_message_chunk`` with the text ``chunk <i> ``), then stop reason ``end_turn``.
The official-SDK agent (``acp_official_agent.py``) and the floor (``acp_floor_agent.py``)
send the same messages.

Run: python bench/servers/acp_rpcweave_agent.py [--chunks 10]
"""

from __future__ import annotations

import argparse

import anyio

from acp_layer import Agent, run_agent_stdio
from acp_layer import schema as s


class ChunkAgent(Agent):
    """Streams a fixed number of message chunks per prompt, then ends the turn."""

    agent_info = s.Implementation(name="rpcweave-bench-agent", version="1")

    def __init__(self, chunks: int) -> None:
        self.texts = [f"chunk {i} " for i in range(chunks)]

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        for text in self.texts:
            await self.client.send_text(sid, text)
        return "end_turn"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10)
    args = parser.parse_args()
    agent = ChunkAgent(args.chunks)
    anyio.run(lambda: run_agent_stdio(agent))


if __name__ == "__main__":
    main()
