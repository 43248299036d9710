"""A2A benchmark agent on rpcweave's `a2a_layer` (`A2AServer`), under uvicorn.

The executor reads the user's text as a chunk count N (default 1). It creates the task
with one text artifact sent in N chunks (the first ``chunk 0``, the rest appended, the
last one marked ``lastChunk``), then completes the task. N = 1 is the blocking
SendMessage workload, N = 100 the streamed artifact. ``a2a_official_server.py`` and
``a2a_floor_server.py`` answer the same way.

JSON-RPC (A2A 1.0 only) at ``/``, the card at ``/.well-known/agent-card.json``, tasks in
memory. Run: python bench/servers/a2a_rpcweave_server.py  (prints ``LISTENING <port>``)
"""

from __future__ import annotations

from typing import Any

from a2a_uvicorn import serve_app

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater
from a2a_layer.types import AgentCapabilities, AgentCard, AgentSkill


async def chunk_agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    """One artifact in N chunks, then completed (see the module docstring)."""
    text = context.text
    chunks = int(text) if text.isdigit() else 1
    artifact_id = await updater.add_artifact("chunk 0", name="result")
    for i in range(1, chunks):
        await updater.add_artifact(
            f"chunk {i}", artifact_id=artifact_id, append=True, last_chunk=i == chunks - 1
        )
    await updater.complete()


def build(base_url: str) -> Any:
    card = AgentCard(
        name="rpcweave bench agent",
        description="One text artifact in N chunks, then completed.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="chunks", name="Chunks", description="Chunks", tags=["bench"])],
    )
    server = A2AServer(card, chunk_agent, url=base_url, rest_path=None, compat_v03=False)
    return server.asgi_app()


if __name__ == "__main__":
    serve_app(build)
