"""`A2AClient` against rpcweave's server in process: card resolution and interface
choice, both bindings, 0.3, streams that resume after a dropped connection, polling,
push config CRUD, the extended card and pluggable auth.

Tests the private unit `a2a_layer._client.choose_interface` on purpose (the binding choice
for every card shape); `a2a_layer._compat03.card_to_v03` builds the 0.3 card a legacy
server serves.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from a2a_fixtures.harness import BASE, in_process, make_card

from a2a_layer import (
    A2AClient,
    A2AServer,
    BearerToken,
    ExecutionContext,
    NoSupportedInterface,
    TaskNotFound,
    TaskUpdater,
)
from a2a_layer._client import choose_interface
from a2a_layer.types import AgentCard, AgentInterface, Message, StreamResponse, Task, TaskState
from jsonrpc_core import BearerAuth, MethodNotFound, TransportError

pytestmark = pytest.mark.anyio

BINDINGS = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")]


class Agent:
    """``steps``: working, artifact, waits for ``gate``, artifact, completed. ``ask``:
    input-required. ``forever``: working until cancelled. Else: completed with an artifact."""

    def __init__(self) -> None:
        self.gate = anyio.Event()
        self.tenants: list[str | None] = []

    async def __call__(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        self.tenants.append(context.tenant)
        if context.text == "ask" and context.is_new_task:
            await updater.requires_input("which?")
        elif context.text == "forever":
            await updater.start_work()
            await anyio.sleep_forever()
        elif context.text == "steps":
            await updater.start_work()
            await updater.add_artifact("one", artifact_id="a1", name="out")
            await self.gate.wait()
            await updater.add_artifact(" two", artifact_id="a1", append=True, last_chunk=True)
            await updater.complete()
        else:
            await updater.start_work()
            await updater.add_artifact(f"out: {context.text}", name="out")
            await updater.complete("done")


def serve(**options: Any) -> tuple[A2AServer, Agent]:
    agent = Agent()
    card = options.pop("card", make_card(push=True, extended=True))
    options.setdefault("allow_private_webhooks", True)  # push configs here name loopback
    return A2AServer(card, agent, extended_card=card, **options), agent


@dataclass
class Operations:
    """What `every_operation` got from `Agent`."""

    task: Task
    events: list[StreamResponse]
    asked: Task
    answered: Task | Message
    got: Task
    canceled: Task
    extended: AgentCard


async def every_operation(client: A2AClient) -> Operations:
    """SendMessage (a task, a question and its answer), a stream, GetTask, CancelTask,
    the push config calls and the extended card, against `Agent` (see `check_operations`)."""
    task = await client.send("build")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    events = [e async for e in client.stream("stream")]
    asked = await client.send("ask")
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    answered = await client.send("blue", task_id=asked.id)
    got = await client.get_task(asked.id, history_length=2)
    pending = await client.send("forever", return_immediately=True)
    assert isinstance(pending, Task)
    canceled = await client.cancel_task(pending.id)
    config = await client.create_push_config(asked.id, "http://127.0.0.1:9/hook", token="tok")
    assert config.id and config.task_id == asked.id
    assert await client.get_push_config(asked.id, config.id) == config
    assert await client.list_push_configs(asked.id) == [config]
    await client.delete_push_config(asked.id, config.id)
    assert await client.list_push_configs(asked.id) == []
    extended = await client.get_extended_card()
    return Operations(task, events, asked, answered, got, canceled, extended)


def check_operations(done: Operations) -> None:
    """What `every_operation` must have got."""
    assert [next(iter(e.model_dump(exclude_none=True))) for e in done.events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    answered, got = done.answered, done.got
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert got.id == done.asked.id and got.history is not None and len(got.history) == 2
    assert done.canceled.status.state is TaskState.CANCELED
    assert done.extended.name == "test agent"


@pytest.mark.parametrize(("binding", "version"), BINDINGS)
async def test_operations_over_each_interface(binding: str, version: str) -> None:
    server, _ = serve()
    async with in_process(server) as http:
        async with A2AClient.connect(
            BASE, http=http, bindings=(binding,), versions=(version,)
        ) as client:
            assert (client.interface.protocol_binding, client.protocol_version) == (
                binding,
                version,
            )
            done = await every_operation(client)
            with pytest.raises(TaskNotFound):
                await client.get_task("missing")
            if version == "1.0":
                listed = await client.list_tasks(page_size=2)
                assert len(listed.tasks) == 2 and listed.next_page_token
            else:
                with pytest.raises(MethodNotFound):
                    await client.list_tasks()
    check_operations(done)


def _card_with(*interfaces: tuple[str, str, str | None]) -> Any:
    card = make_card()
    return card.model_copy(
        update={
            "supported_interfaces": [
                AgentInterface(url=u, protocol_binding=b, protocol_version=v)
                for b, v, u in ((b, v, f"http://x/{b}/{v}") for b, v, _ in interfaces)
            ]
        }
    )


def test_the_first_supported_interface_is_chosen() -> None:
    card = _card_with(
        ("GRPC", "1.0", None),
        ("HTTP+JSON", "0.3", None),
        ("HTTP+JSON", "1.0", None),
        ("JSONRPC", "1.0", None),
    )
    assert choose_interface(card).url == "http://x/HTTP+JSON/1.0"
    assert choose_interface(card, bindings=("JSONRPC",)).url == "http://x/JSONRPC/1.0"
    assert choose_interface(card, bindings=("GRPC",)).url == "http://x/GRPC/1.0"
    # gRPC is the fallback when a card offers nothing else this client speaks.
    only_grpc = _card_with(("GRPC", "1.0", None), ("JSONRPC", "2.0", None))
    assert choose_interface(only_grpc).url == "http://x/GRPC/1.0"
    with pytest.raises(NoSupportedInterface):
        choose_interface(_card_with(("GRPC", "2.0", None), ("JSONRPC", "2.0", None)))


async def test_card_falls_back_to_agent_json_and_tenant_is_sent() -> None:
    card = make_card().model_copy(
        update={
            "supported_interfaces": [
                AgentInterface(
                    url=BASE, protocol_binding="JSONRPC", protocol_version="1.0", tenant="acme"
                )
            ]
        }
    )
    server, agent = serve(card=card)

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/.well-known/agent-card.json":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await server.asgi_app()(scope, receive, send)

    async with in_process(server, app) as http:
        async with A2AClient.connect(BASE, http=http) as client:
            task = await client.send("build")
            assert isinstance(task, Task)
            assert (await client.get_task(task.id)).id == task.id
    assert client.tenant == "acme" and agent.tenants == ["acme"]


class DropFirstStream:
    """ASGI middleware: cuts the first SendStreamingMessage response after two events."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.dropped = False

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self.dropped:
            await self.app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if b"SendStreamingMessage" not in body and b"message:stream" not in scope["path"].encode():
            await self.app(scope, _replay(body, receive), send)
            return
        self.dropped = True
        events = 0
        cut = False

        async def cutting_send(message: MutableMapping[str, Any]) -> None:
            nonlocal events, cut
            if cut:
                return
            if message["type"] == "http.response.body":
                events += message.get("body", b"").count(b"data:")
                if events >= 2:
                    cut = True
                    await send({**message, "more_body": False})
                    return
            await send(message)

        await self.app(scope, _replay(body, receive), cutting_send)


def _replay(body: bytes, receive: Any) -> Any:
    sent = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_dropped_stream_is_resumed_and_the_gap_filled(binding: str) -> None:
    server, agent = serve()
    middleware = DropFirstStream(server.asgi_app())
    seen: list[StreamResponse] = []
    async with in_process(server, middleware) as http:
        async with A2AClient.connect(BASE, http=http, bindings=(binding,)) as client:
            with anyio.fail_after(10):
                async for event in client.stream("steps", reconnect_delay=0.01):
                    seen.append(event)
                    if event.task is not None and len(seen) > 1:
                        agent.gate.set()  # resumed: let the agent finish
    assert middleware.dropped
    kinds = [next(iter(e.model_dump(exclude_none=True))) for e in seen]
    assert kinds[:2] == ["task", "statusUpdate"]
    assert kinds.count("task") >= 2  # the gap filled with GetTask
    last = seen[-1]
    final_state = (
        last.status_update.status.state if last.status_update else last.task.status.state  # type: ignore[union-attr]
    )
    assert final_state is TaskState.COMPLETED


async def test_polling_has_an_overall_timeout() -> None:
    server, _ = serve()
    async with in_process(server) as http:
        async with A2AClient.connect(BASE, http=http) as client:
            task = await client.send("forever", return_immediately=True)
            assert isinstance(task, Task)
            with pytest.raises(TimeoutError):
                await client.wait(task.id, timeout=0.2, interval=0.01)
            asked = await client.send("ask", return_immediately=True)
            assert isinstance(asked, Task)
            waiting = await client.wait(asked.id, timeout=5, interval=0.01)
            assert waiting.status.state is TaskState.INPUT_REQUIRED
            await client.send("blue", task_id=asked.id, return_immediately=True)
            done = await client.wait(asked.id, timeout=5, interval=0.01, since=waiting)
            assert done.status.state is TaskState.COMPLETED


async def test_pluggable_auth() -> None:
    async def verify(token: str) -> str | None:
        return "alice" if token == "s3cret" else None

    server, _ = serve(auth=BearerAuth(verify))
    async with in_process(server) as http:
        async with A2AClient.connect(BASE, http=http, auth=BearerToken("s3cret")) as client:
            assert isinstance(await client.send("build"), Task)
        http.auth = None  # type: ignore[assignment]
        async with A2AClient.connect(BASE, http=http, headers={"X-Trace": "1"}) as anonymous:
            with pytest.raises(TransportError):
                await anonymous.send("build")
        async with A2AClient.connect(BASE, http=http, bindings=("HTTP+JSON",)) as rest:
            with pytest.raises(TransportError) as caught:
                await rest.send("build")
            assert "401" in str(caught.value)


async def test_a_0_3_card_leads_to_the_0_3_protocol() -> None:
    """A server that only publishes a 0.3 card (``url``, ``protocolVersion: 0.3.0``)."""
    from a2a_layer._compat03 import card_to_v03

    server, _ = serve()
    legacy_card = card_to_v03(server.card_for(BASE).model_copy(update={"supported_interfaces": []}))
    legacy_card.update({"url": BASE, "preferredTransport": "JSONRPC"})

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/.well-known/agent-card.json":
            body = json.dumps(legacy_card).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await server.asgi_app()(scope, receive, send)

    async with in_process(server, app) as http:
        async with A2AClient.connect(BASE, http=http) as client:
            assert client.protocol_version == "0.3"
            task = await client.send("build")
            events = [e async for e in client.stream("stream")]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert events[-1].status_update is not None
    assert events[-1].status_update.status.state is TaskState.COMPLETED
