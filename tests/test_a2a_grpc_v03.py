"""The 0.3 gRPC service (package ``a2a.v1``): rpcweave's client and server, and interop
with a2a-sdk 1.3.0's 0.3 compatibility (``a2a.compat.v0_3``: ``CompatGrpcTransport``
and ``CompatGrpcHandler``), in process on 127.0.0.1. asyncio only (grpc.aio)."""

from __future__ import annotations

import anyio
import pytest
from a2a_fixtures.harness import BASE, in_process
from test_a2a_client import serve

from a2a_layer import A2AClient, TaskNotCancelable, TaskNotFound
from a2a_layer.types import Task, TaskState

pytest.importorskip("grpc")

pytestmark = pytest.mark.anyio

GRPC_03 = {"bindings": ("GRPC",), "versions": ("0.3",)}


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
                answered = await client.send("blue", task_id=asked.id)
                got = await client.get_task(asked.id, history_length=2)
                pending = await client.send("forever", return_immediately=True)
                canceled = await client.cancel_task(pending.id)
                with pytest.raises(TaskNotFound):
                    await client.get_task("missing")
                with pytest.raises(TaskNotCancelable):
                    await client.cancel_task(task.id)
                config = await client.create_push_config(
                    asked.id, "http://127.0.0.1:9/hook", token="tok"
                )
                assert await client.get_push_config(asked.id, config.id or "") == config
                assert await client.list_push_configs(asked.id) == [config]
                await client.delete_push_config(asked.id, config.id or "")
                assert await client.list_push_configs(asked.id) == []
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
