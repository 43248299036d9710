"""An A2A agent built with the official ``a2a-sdk`` (PyPI), for interop tests.

It serves its card, JSON-RPC 1.0 (with 0.3 compatibility on the same endpoint) at
``/`` and HTTP+JSON at ``/rest``. Behaviour by the text of the user's message:

* ``ask ...``: input-required with the question "Which language?"; the next message
  in the same task completes it with an artifact naming the answer.
* ``hello``: a direct message reply "hello back".
* anything else: working, a text artifact "echo: <text>", completed.
"""

from __future__ import annotations

from typing import Any

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Role,
)
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    """The behaviour of the module docstring."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        message = context.message
        assert message is not None
        if text == "hello" and context.current_task is None:
            await event_queue.enqueue_event(
                new_text_message("hello back", context_id=context.context_id, role=Role.ROLE_AGENT)
            )
            return
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            task.id = context.task_id or task.id
            task.context_id = context.context_id or task.context_id
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if text.startswith("ask") and context.current_task is None:
            await updater.requires_input(
                new_text_message("Which language?", context_id=task.context_id, task_id=task.id)
            )
            return
        await updater.start_work()
        answer = f"answer: {text}" if context.current_task is not None else f"echo: {text}"
        await updater.add_artifact([new_text_part(answer)], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_app(
    base_url: str = "http://127.0.0.1:0", *, interface_versions: bool = True
) -> tuple[Any, AgentCard]:
    """The Starlette app and its card (mutate the card's URLs once the port is known).

    Without ``interface_versions`` the card is built the way a2a-sdk's own examples
    build theirs: interfaces with no ``protocol_version`` (JSON-RPC and HTTP+JSON, 1.0).
    """
    interfaces = [
        AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(
            url=base_url + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
        ),
        AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="0.3"),
    ]
    if not interface_versions:
        interfaces = [
            AgentInterface(url=base_url, protocol_binding="JSONRPC"),
            AgentInterface(url=base_url + "/rest", protocol_binding="HTTP+JSON"),
        ]
    card = AgentCard(
        name="a2a-sdk echo agent",
        description="Built with the official a2a-sdk, for interop tests.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
        supported_interfaces=interfaces,
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    return Starlette(routes=routes), card


def set_base_url(card: AgentCard, base_url: str) -> None:
    """Point every interface of ``card`` at ``base_url`` (REST keeps its ``/rest``)."""
    for interface in card.supported_interfaces:
        suffix = "/rest" if interface.protocol_binding == "HTTP+JSON" else ""
        interface.url = base_url + suffix
