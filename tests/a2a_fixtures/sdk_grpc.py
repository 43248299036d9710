"""The a2a-sdk side of the gRPC interop tests (1.0 and 0.3) and the checks both share.

* `sdk_grpc_server`: a2a-sdk's echo agent (tests/a2a_fixtures/sdk_server.py) served over
  gRPC on 127.0.0.1 by the servicer the test adds (1.0 ``GrpcHandler`` or 0.3
  ``CompatGrpcHandler``), its card rewritten to that one interface;
* `sdk_send`: a user message sent with a2a-sdk's client, its events as dicts;
* `call_the_echo_agent` / `check_the_echo_agent`: what rpcweave's client does against that
  agent, and what it must get, on either version.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from a2a_layer import A2AClient, TaskNotCancelable, TaskNotFound
from a2a_layer.types import AgentCard, Message, StreamResponse, Task, TaskState


@asynccontextmanager
async def sdk_grpc_server(
    add_servicer: Callable[[Any, grpc.aio.Server], None], protocol_version: str
) -> AsyncIterator[AgentCard]:
    """a2a-sdk's echo agent over gRPC on 127.0.0.1: ``add_servicer(handler, server)`` puts
    a2a-sdk's request handler on the server; yields the card (rpcweave's model) with the
    one gRPC interface, at ``protocol_version``."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.tasks import InMemoryTaskStore
    from google.protobuf.json_format import MessageToDict

    from a2a_fixtures.sdk_server import EchoExecutor, build_app

    _, card = build_app()
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    server = grpc.aio.server()
    add_servicer(handler, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        del card.supported_interfaces[:]
        card.supported_interfaces.add(
            url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version=protocol_version
        )
        yield AgentCard.model_validate(MessageToDict(card))
    finally:
        await server.stop(None)


async def sdk_send(
    client: Any, text: str, task_id: str = "", *, context: Any = None
) -> list[dict[str, Any]]:
    """Send ``text`` as a user message with a2a-sdk's ``client``: its events, as dicts."""
    from a2a.types import a2a_pb2 as pb
    from google.protobuf.json_format import MessageToDict

    message = pb.Message(
        message_id=uuid.uuid4().hex,
        role=pb.Role.ROLE_USER,
        parts=[pb.Part(text=text)],
        task_id=task_id,
    )
    request = pb.SendMessageRequest(message=message)
    return [MessageToDict(e) async for e in client.send_message(request, context=context)]


@dataclass
class EchoAgentCalls:
    """What rpcweave's client got from the echo agent (see `call_the_echo_agent`)."""

    task: Task | Message
    reply: Task | Message
    events: list[StreamResponse]
    asked: Task
    answered: Task | Message
    got: Task


async def call_the_echo_agent(client: A2AClient) -> EchoAgentCalls:
    """A task, a direct reply, a stream, a question and its answer, GetTask, and the
    refusals both versions share (an unknown task, canceling a finished one)."""
    task = await client.send("build")
    reply = await client.send("hello")
    events = [e async for e in client.stream("streamed")]
    asked = await client.send("ask me")
    assert isinstance(asked, Task), asked
    answered = await client.send("python", task_id=asked.id)
    got = await client.get_task(asked.id)
    with pytest.raises(TaskNotFound):
        await client.get_task("no-such-task")
    with pytest.raises(TaskNotCancelable):
        await client.cancel_task(asked.id)
    return EchoAgentCalls(task, reply, events, asked, answered, got)


def check_the_echo_agent(calls: EchoAgentCalls) -> None:
    """What `call_the_echo_agent` must have got (the events are checked by the caller)."""
    task, asked, answered = calls.task, calls.asked, calls.answered
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.artifacts and task.artifacts[0].parts[0].text == "echo: build"
    assert isinstance(calls.reply, Message) and calls.reply.parts[0].text == "hello back"
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert calls.got.id == asked.id
