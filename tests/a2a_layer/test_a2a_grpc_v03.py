"""The 0.3 gRPC service (package ``a2a.v1``): rpcweave's client and server, and interop
with a2a-sdk 1.3.0's 0.3 compatibility (``a2a.compat.v0_3``: ``CompatGrpcTransport``
and ``CompatGrpcHandler``), in process on 127.0.0.1. asyncio only (grpc.aio)."""

from __future__ import annotations

from typing import Any

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
    PushNotificationNotSupported,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from a2a_layer.types import Task, TaskState

pytestmark = pytest.mark.anyio

GRPC_03: dict[str, Any] = {"bindings": ("GRPC",), "versions": ("0.3",)}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpc.aio's only loop


async def test_every_0_3_method_over_grpc(anyio_backend: str) -> None:
    server, _ = serve(grpc_port=0)
    async with in_process(server) as http:
        async with A2AClient.connect(BASE, http=http, **GRPC_03) as client:
            assert (client.interface.protocol_binding, client.protocol_version) == ("GRPC", "0.3")
            with anyio.fail_after(30):
                task = await client.send("build")
                events = [e async for e in client.stream("stream")]
                asked = await client.send("ask")
                answered = await client.send("blue", task_id=asked.id)  # type: ignore[union-attr]
                got = await client.get_task(asked.id, history_length=2)  # type: ignore[union-attr]
                pending = await client.send("forever", return_immediately=True)
                canceled = await client.cancel_task(pending.id)  # type: ignore[union-attr]
                with pytest.raises(TaskNotFound):
                    await client.get_task("missing")
                with pytest.raises(TaskNotCancelable):
                    await client.cancel_task(task.id)  # type: ignore[union-attr]
                config = await client.create_push_config(
                    asked.id,  # type: ignore[union-attr]
                    "http://127.0.0.1:9/hook",
                    token="tok",
                )
                assert await client.get_push_config(asked.id, config.id or "") == config  # type: ignore[union-attr]
                assert await client.list_push_configs(asked.id) == [config]  # type: ignore[union-attr]
                await client.delete_push_config(asked.id, config.id or "")  # type: ignore[union-attr]
                assert await client.list_push_configs(asked.id) == []  # type: ignore[union-attr]
                extended = await client.get_extended_card()
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.artifacts and task.artifacts[0].parts[0].text == "out: build"
    assert [next(iter(e.model_dump(exclude_none=True))) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert got.history is not None and len(got.history) == 2
    assert canceled.status.state is TaskState.CANCELED
    assert config.url == "http://127.0.0.1:9/hook" and config.token == "tok"
    assert extended.name == "test agent"


# -- a2a-sdk's 0.3 compat client against rpcweave ------------------------------------------


def _sdk_0_3_client(card: Any) -> Any:
    """a2a-sdk's client for the card's GRPC 0.3 interface only."""
    from a2a.client import ClientConfig, ClientFactory
    from a2a.compat.v0_3.grpc_transport import CompatGrpcTransport

    kept = [
        i
        for i in card.supported_interfaces
        if i.protocol_binding == "GRPC" and i.protocol_version == "0.3"
    ]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(kept)
    config = ClientConfig(
        streaming=True,
        supported_protocol_bindings=["GRPC"],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    factory = ClientFactory(config)
    # a2a-sdk's factory picks CompatGrpcTransport for a 0.3 interface, unless an import
    # cycle inside a2a-sdk (hit when a2a.server was imported first) left it None:
    # register the compat transport by the factory's public API either way.
    factory.register("GRPC", CompatGrpcTransport.create)
    return factory.create(card)


async def test_a2a_sdk_0_3_grpc_client_against_rpcweave(anyio_backend: str) -> None:
    from a2a.client import A2ACardResolver
    from a2a.types import a2a_pb2 as pb
    from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

    server, _ = serve(grpc_port=0)
    async with in_process(server) as http:
        card = await A2ACardResolver(http, BASE).get_agent_card()
        client = _sdk_0_3_client(card)

        async def send(text: str, task_id: str = "") -> list[dict[str, Any]]:
            return await sdk_send(client, text, task_id)

        with anyio.fail_after(30):
            streamed = await send("stream")
            asked = await send("ask")
            asked_id = (asked[0].get("task") or asked[0]["statusUpdate"])[
                "id" if "task" in asked[0] else "taskId"
            ]
            answered = await send("blue", asked_id)
            got = await client.get_task(pb.GetTaskRequest(id=asked_id, history_length=2))
            with pytest.raises(TaskNotFoundError):
                await client.get_task(pb.GetTaskRequest(id="no-such-task"))
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(pb.CancelTaskRequest(id=asked_id))
            created = await client.create_task_push_notification_config(
                pb.TaskPushNotificationConfig(
                    task_id=asked_id, id="c1", url="http://127.0.0.1:9/hook", token="tok"
                )
            )
            fetched = await client.get_task_push_notification_config(
                pb.GetTaskPushNotificationConfigRequest(task_id=asked_id, id="c1")
            )
            listed = await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=asked_id)
            )
            await client.delete_task_push_notification_config(
                pb.DeleteTaskPushNotificationConfigRequest(task_id=asked_id, id="c1")
            )
            extended = await client.get_extended_agent_card(pb.GetExtendedAgentCardRequest())
        transport = type(client._transport).__name__
        await client.close()
    assert transport == "CompatGrpcTransport"
    kinds = [next(iter(e)) for e in streamed]
    assert kinds[0] == "task" and "artifactUpdate" in kinds
    last = streamed[-1]
    assert (last.get("task") or last["statusUpdate"])["status"]["state"] == "TASK_STATE_COMPLETED"
    last = answered[-1]
    assert (last.get("task") or last["statusUpdate"])["status"]["state"] == "TASK_STATE_COMPLETED"
    assert got.id == asked_id and len(got.history) == 2
    assert created.url == fetched.url == "http://127.0.0.1:9/hook" and fetched.id == "c1"
    assert [c.id for c in listed.configs] == ["c1"]
    assert extended.name == "test agent"


# -- rpcweave's 0.3 client against a2a-sdk's 0.3 compat server -----------------------------


async def test_rpcweave_0_3_grpc_client_against_a2a_sdk_compat_server(anyio_backend: str) -> None:
    from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
    from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler

    def add_compat_handler(handler: Any, server: grpc.aio.Server) -> None:
        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)

    async with sdk_grpc_server(add_compat_handler, "0.3") as card:
        async with A2AClient(card) as client:
            assert (client.interface.protocol_binding, client.protocol_version) == ("GRPC", "0.3")
            with anyio.fail_after(30):
                calls = await call_the_echo_agent(client)
                with pytest.raises(PushNotificationNotSupported):
                    await client.create_push_config(calls.asked.id, "http://127.0.0.1:9/hook")
                with pytest.raises(UnsupportedOperation):  # a2a-sdk: no extended card
                    await client.get_extended_card()
    check_the_echo_agent(calls)
    assert calls.events and calls.events[0].task is not None


async def test_0_3_get_agent_card_answers_the_public_card_without_an_extended_one(
    anyio_backend: str,
) -> None:
    from a2a_fixtures.harness import make_card

    server, _ = serve(grpc_port=0, card=make_card())
    async with in_process(server) as http:
        async with A2AClient.connect(BASE, http=http, **GRPC_03) as client:
            assert (await client.get_extended_card()).name == "test agent"
        async with A2AClient.connect(BASE, http=http, bindings=("GRPC",)) as v10:
            with pytest.raises(UnsupportedOperation):  # 1.0 keeps the spec's error
                await v10.get_extended_card()
