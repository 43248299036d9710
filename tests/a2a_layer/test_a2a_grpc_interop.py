"""gRPC interop with the official a2a-sdk 1.3.0, both ways, in process on 127.0.0.1:
a2a-sdk's gRPC client (``ClientFactory`` with the ``GRPC`` binding, as its docs build it)
against rpcweave's server, and rpcweave's `A2AClient` against a2a-sdk's gRPC server
(``GrpcHandler`` over ``DefaultRequestHandler``, added with the generated
``add_A2AServiceServicer_to_server``): every method, streaming, errors and auth.

Both SDKs' gRPC code is grpc.aio, so these tests run on asyncio only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import a2a.server.request_handlers.grpc_handler  # noqa: F401  (dev dependency)
import anyio
import grpc
import pytest
from a2a_fixtures.harness import BASE, in_process
from a2a_fixtures.sdk_grpc import (
    call_the_echo_agent,
    check_the_echo_agent,
    sdk_grpc_server,
    sdk_send,
)
from test_a2a_client import serve

from a2a_layer import (
    A2AClient,
    BearerToken,
    PushNotificationNotSupported,
    UnsupportedOperation,
)
from a2a_layer.types import TaskState
from jsonrpc_core import BearerAuth

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpc.aio's only loop


# -- a2a-sdk's client against rpcweave's server ------------------------------------------


async def _sdk_client(http: Any, *, streaming: bool = True) -> Any:
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory

    card = await A2ACardResolver(http, BASE).get_agent_card()
    config = ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=["GRPC"],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    return ClientFactory(config).create(card)


def _ctx(token: str | None) -> Any:
    from a2a.client.client import ClientCallContext

    if token is None:
        return None
    return ClientCallContext(service_parameters={"authorization": f"Bearer {token}"})


async def _sdk_every_method(
    client: Any, token: str | None = None, *, streaming: bool = True
) -> dict[str, Any]:
    from a2a.types import a2a_pb2 as pb
    from google.protobuf.json_format import MessageToDict

    ctx = _ctx(token)
    out: dict[str, Any] = {"transport": type(client._transport).__name__}

    async def send(text: str, task_id: str = "") -> list[dict[str, Any]]:
        return await sdk_send(client, text, task_id, context=ctx)

    out["stream"] = await send("stream")
    out["ask"] = await send("ask")
    asked = out["ask"][0]["task"]["id"]
    out["answer"] = await send("blue", asked)
    get = pb.GetTaskRequest(id=asked, history_length=2)
    out["get"] = MessageToDict(await client.get_task(get, context=ctx))
    listed = await client.list_tasks(pb.ListTasksRequest(page_size=1), context=ctx)
    out["list"] = (len(listed.tasks), bool(listed.next_page_token))
    from a2a.utils.errors import (
        TaskNotCancelableError,
        TaskNotFoundError,
        UnsupportedOperationError,
    )

    try:
        await client.get_task(pb.GetTaskRequest(id="no-such-task"), context=ctx)
    except TaskNotFoundError as exc:
        out["not_found"] = str(exc)
    try:
        await client.cancel_task(pb.CancelTaskRequest(id=asked), context=ctx)
    except TaskNotCancelableError:
        out["not_cancelable"] = True
    try:
        if streaming:  # the a2a-sdk client refuses to subscribe when not streaming
            async for _ in client.subscribe(pb.SubscribeToTaskRequest(id=asked), context=ctx):
                pass
    except UnsupportedOperationError:
        out["subscribe_terminal"] = True
    config = pb.TaskPushNotificationConfig(
        task_id=asked, url="http://127.0.0.1:9/hook", token="tok"
    )
    created = await client.create_task_push_notification_config(config, context=ctx)
    out["push_created"] = MessageToDict(created)
    got = await client.get_task_push_notification_config(
        pb.GetTaskPushNotificationConfigRequest(task_id=asked, id=created.id), context=ctx
    )
    out["push_got"] = MessageToDict(got)
    configs = await client.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=asked), context=ctx
    )
    out["push_listed"] = [c.id for c in configs.configs]
    await client.delete_task_push_notification_config(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=asked, id=created.id), context=ctx
    )
    card = await client.get_extended_agent_card(pb.GetExtendedAgentCardRequest(), context=ctx)
    out["extended"] = card.name
    return out


def last_state(events: list[dict[str, Any]]) -> str:
    last = events[-1]
    state: str = (last.get("task") or last["statusUpdate"])["status"]["state"]
    return state


async def test_a2a_sdk_grpc_client_against_rpcweave(anyio_backend: str) -> None:
    server, _ = serve(grpc_port=0)
    async with in_process(server) as http:
        client = await _sdk_client(http)
        unary = await _sdk_client(http, streaming=False)  # SendMessage, not the stream
        with anyio.fail_after(30):
            out = await _sdk_every_method(client)
            blocking = await _sdk_every_method(unary, streaming=False)
        await client.close()
        await unary.close()
    assert out["transport"] == "GrpcTransport"
    assert [next(iter(e)) for e in blocking["stream"]] == ["task"]  # one SendMessage answer
    assert last_state(blocking["stream"]) == "TASK_STATE_COMPLETED"
    assert last_state(blocking["ask"]) == "TASK_STATE_INPUT_REQUIRED"
    assert [next(iter(e)) for e in out["stream"]] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert last_state(out["stream"]) == "TASK_STATE_COMPLETED"
    assert last_state(out["ask"]) == "TASK_STATE_INPUT_REQUIRED"
    assert last_state(out["answer"]) == "TASK_STATE_COMPLETED"
    assert len(out["get"]["history"]) == 2
    assert out["list"] == (1, True)
    assert out["not_found"] == "Task no-such-task not found"
    assert out["not_cancelable"] and out["subscribe_terminal"]
    assert out["push_created"]["url"] == "http://127.0.0.1:9/hook"
    assert out["push_got"] == out["push_created"]
    assert out["push_listed"] == [out["push_created"]["id"]]
    assert out["extended"] == "test agent"


async def test_a2a_sdk_grpc_client_with_bearer_auth_sees_only_its_tasks(
    anyio_backend: str,
) -> None:
    from a2a.client.errors import A2AClientError
    from a2a.types import a2a_pb2 as pb
    from a2a.utils.errors import TaskNotFoundError

    async def verify(token: str) -> dict[str, str] | None:
        return {"sub": token} if token in ("alice", "bob") else None

    server, _ = serve(grpc_port=0, auth=BearerAuth(verify))
    async with in_process(server) as http:
        client = await _sdk_client(http)
        with anyio.fail_after(30):
            out = await _sdk_every_method(client, token="alice")
            task_id = out["ask"][0]["task"]["id"]
            with pytest.raises(TaskNotFoundError):  # bob cannot see alice's task
                await client.get_task(pb.GetTaskRequest(id=task_id), context=_ctx("bob"))
            with pytest.raises(A2AClientError, match="UNAUTHENTICATED"):
                await client.get_task(pb.GetTaskRequest(id=task_id))
        await client.close()
    assert out["get"]["id"] == task_id and out["extended"] == "test agent"


# -- rpcweave's client against a2a-sdk's server ------------------------------------------


def recording_grpc_handler(seen_tokens: list[str]) -> Callable[[Any, grpc.aio.Server], None]:
    """Adds a2a-sdk's 1.0 ``GrpcHandler``, noting each call's authorization metadata."""
    from a2a.server.request_handlers.grpc_handler import (
        DefaultGrpcServerCallContextBuilder,
        GrpcHandler,
    )
    from a2a.types import a2a_pb2_grpc

    class RecordingContext(DefaultGrpcServerCallContextBuilder):
        def build_user(self, context: Any) -> Any:
            for key, value in context.invocation_metadata() or ():
                if key == "authorization":
                    seen_tokens.append(value)
            return super().build_user(context)

    def add(handler: Any, server: grpc.aio.Server) -> None:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(
            GrpcHandler(handler, context_builder=RecordingContext()), server
        )

    return add


async def test_rpcweave_grpc_client_against_a2a_sdk_server(anyio_backend: str) -> None:
    tokens: list[str] = []
    async with sdk_grpc_server(recording_grpc_handler(tokens), "1.0") as card:
        async with A2AClient(card, auth=BearerToken("s3cret")) as client:
            assert client.interface.protocol_binding == "GRPC"  # the card's only interface
            with anyio.fail_after(30):
                calls = await call_the_echo_agent(client)
                listed = await client.list_tasks()
                with pytest.raises(UnsupportedOperation):
                    async for _ in client.subscribe(calls.asked.id):
                        pass  # pragma: no cover - refused: the task is terminal
                with pytest.raises(PushNotificationNotSupported):
                    await client.create_push_config(calls.asked.id, "http://127.0.0.1:9/hook")
    check_the_echo_agent(calls)
    events = calls.events
    assert events[-1].status_update is not None or events[-1].task is not None
    assert calls.got.status.state is TaskState.COMPLETED
    assert {t.id for t in listed.tasks} >= {calls.task.id, calls.asked.id}  # type: ignore[union-attr]
    assert tokens and set(tokens) == {"Bearer s3cret"}
