"""A2A benchmark agent on the official ``a2a-sdk`` (PyPI), under uvicorn (Starlette app).

The executor reads the user's text as a chunk count N (default 1). It creates the task
with one text artifact sent in N chunks (the first ``chunk 0``, the rest appended, the
last one marked ``lastChunk``), then completes the task — as ``a2a_rpcweave_server.py``.

JSON-RPC (A2A 1.0 only) at ``/``, the card at ``/.well-known/agent-card.json``, tasks in
memory (``InMemoryTaskStore``, ``DefaultRequestHandler``). Run:
python bench/servers/a2a_official_server.py  (prints ``LISTENING <port>``)
"""

from __future__ import annotations

import uuid
from typing import Any

from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a_uvicorn import serve_app
from starlette.applications import Starlette


class ChunkExecutor(AgentExecutor):
    """One artifact in N chunks, then completed (see the module docstring)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        chunks = int(text) if text.isdigit() else 1
        message = context.message
        assert message is not None
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            task.id = context.task_id or task.id
            task.context_id = context.context_id or task.context_id
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        artifact_id = str(uuid.uuid4())
        await updater.add_artifact(
            [new_text_part("chunk 0")],
            artifact_id=artifact_id,
            name="result",
        )
        for i in range(1, chunks):
            await updater.add_artifact(
                [new_text_part(f"chunk {i}")],
                artifact_id=artifact_id,
                name="result",
                append=True,
                last_chunk=i == chunks - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build(base_url: str) -> Any:
    card = AgentCard(
        name="a2a-sdk bench agent",
        description="One text artifact in N chunks, then completed.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="chunks", name="Chunks", description="Chunks", tags=["bench"])],
        supported_interfaces=[
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=ChunkExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


if __name__ == "__main__":
    serve_app(build)
