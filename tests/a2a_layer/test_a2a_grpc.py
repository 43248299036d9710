"""The A2A gRPC binding (spec 10) end to end: rpcweave's client against rpcweave's server
on 127.0.0.1, every method, streaming, the error mapping of spec 5.4 with google.rpc
details, service parameters in metadata, bearer auth and owner-scoped tasks.

grpc.aio runs on asyncio only, so these tests run on asyncio; on trio, serving gRPC
fails at once with a clear error (checked below).

Tests the private unit `a2a_layer._grpc._proto.V1` (the binding's method table) on purpose
for raw gRPC calls, and calls the transport with `a2a_layer._methods.GET_TASK` and a
request the client would refuse.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import grpc
import pytest
from a2a_fixtures.harness import BASE, in_process
from test_a2a_client import Agent, check_operations, every_operation, serve

from a2a_layer import (
    A2AClient,
    A2AServer,
    BearerToken,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
    text_of,
)
from a2a_layer._grpc._proto import V1
from a2a_layer._methods import GET_TASK
from a2a_layer.types import (
    AgentCard,
    GetTaskRequest,
    ProtocolBinding,
    Task,
    TaskState,
)
from jsonrpc_core import HTTPStatusError, InvalidParams

pytestmark = pytest.mark.anyio

GRPC = (ProtocolBinding.GRPC,)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpc.aio's only loop


@asynccontextmanager
async def grpc_served(
    anyio_backend: str, **options: Any
) -> AsyncIterator[tuple[A2AServer, Agent, Any]]:
    server, agent = serve(grpc_port=0, **options)
    async with in_process(server) as http:
        yield server, agent, http


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_serving_grpc_on_trio_is_refused_clearly(anyio_backend: str) -> None:
    server, _ = serve(grpc_port=0)
    with pytest.raises(RuntimeError, match="needs asyncio"):
        async with server.running():
            pass  # pragma: no cover - refused before it yields


async def test_the_card_lists_the_grpc_interface_while_it_is_served(anyio_backend: str) -> None:
    async with grpc_served(anyio_backend) as (server, _, http):
        card = (await http.get("/.well-known/agent-card.json")).json()
        grpc_interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
        assert grpc_interfaces == [
            {"url": server.grpc_target, "protocolBinding": "GRPC", "protocolVersion": version}
            for version in ("1.0", "0.3")  # both services, one port
        ]
        assert server.grpc_target and server.grpc_target.startswith("127.0.0.1:")
    assert server.grpc_target is None


async def test_every_method_over_grpc(anyio_backend: str) -> None:
    async with grpc_served(anyio_backend) as (_, _agent, http):
        async with A2AClient.connect(BASE, http=http, bindings=GRPC) as client:
            assert client.interface.protocol_binding == "GRPC"
            done = await every_operation(client)
            listed = await client.list_tasks(page_size=2)
            assert len(listed.tasks) == 2 and listed.next_page_token
    check_operations(done)
    assert done.task.artifacts and done.task.artifacts[0].parts[0].text == "out: build"


async def test_subscribe_follows_a_running_task_over_grpc(anyio_backend: str) -> None:
    async with grpc_served(anyio_backend) as (_, agent, http):
        async with A2AClient.connect(BASE, http=http, bindings=GRPC) as client:
            task = await client.send("steps", return_immediately=True)
            assert isinstance(task, Task)
            seen: list[Any] = []
            with anyio.fail_after(10):
                async for event in client.subscribe(task.id):
                    seen.append(event)
                    agent.gate.set()  # subscribed: let the agent finish
            assert seen[0].task is not None and seen[0].task.id == task.id
            last = seen[-1].status_update
            assert last is not None and last.status.state is TaskState.COMPLETED
            with pytest.raises(UnsupportedOperation):  # terminal now
                async for _ in client.subscribe(task.id):
                    pass  # pragma: no cover - refused before any event


async def raw_call(
    target: str, method: str, request: Any, metadata: tuple[tuple[str, str], ...] = ()
) -> Any:
    """One unary rpc with a bare grpc channel: the status error, or the response."""
    from google.protobuf import json_format

    rpc = V1.methods[method]
    async with grpc.aio.insecure_channel(target) as channel:
        stub: Any = channel.unary_unary(
            rpc.path,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=rpc.response.FromString,
        )
        message = json_format.ParseDict(request, rpc.request())
        try:
            return await stub(message, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            return exc


def error_details(exc: Any) -> list[dict[str, Any]]:
    from google.protobuf import json_format
    from google.rpc import error_details_pb2, status_pb2

    assert error_details_pb2.ErrorInfo  # registers the type for the Any below
    (blob,) = [v for k, v in exc.trailing_metadata() if k == "grpc-status-details-bin"]
    status = status_pb2.Status.FromString(blob)
    assert status.code == exc.code().value[0] and status.message == exc.details()
    return [json_format.MessageToDict(d) for d in status.details]


async def test_errors_are_grpc_statuses_with_error_info(anyio_backend: str) -> None:
    async with grpc_served(anyio_backend) as (server, _, _http):
        target = server.grpc_target
        assert target is not None
        v10 = (("a2a-version", "1.0"),)
        missing = await raw_call(target, "GetTask", {"id": "nope"}, v10)
        assert missing.code() == grpc.StatusCode.NOT_FOUND
        assert missing.details() == "Task nope not found"
        (info,) = error_details(missing)
        assert info == {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "nope"},
        }
        bad = await raw_call(target, "GetTask", {}, v10)  # id is REQUIRED
        assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "id" in bad.details()
        assert error_details(bad)[0]["reason"] == "INVALID_PARAMS"
        version = await raw_call(target, "GetTask", {"id": "x"}, (("a2a-version", "2.0"),))
        assert version.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_details(version)[0]["reason"] == "VERSION_NOT_SUPPORTED"
        old = await raw_call(target, "GetTask", {"id": "x"}, (("a2a-version", "0.3"),))
        assert error_details(old)[0]["reason"] == "VERSION_NOT_SUPPORTED"
        # The lf.a2a.v1 package is 1.0: a call without a2a-version is a 1.0 call.
        assert (await raw_call(target, "GetTask", {"id": "nope"})).code() == (
            grpc.StatusCode.NOT_FOUND
        )


async def test_the_client_raises_the_a2a_error_classes(anyio_backend: str) -> None:
    async with grpc_served(anyio_backend) as (_, _agent, http):
        async with A2AClient.connect(BASE, http=http, bindings=GRPC) as client:
            with pytest.raises(TaskNotFound) as caught:
                await client.get_task("missing")
            assert caught.value.data[0]["reason"] == "TASK_NOT_FOUND"
            with pytest.raises(InvalidParams):
                await client.transport.call(GET_TASK, GetTaskRequest.model_construct(id=""))
            with pytest.raises(VersionNotSupported):
                client.transport.metadata = (("a2a-version", "9.9"),)  # type: ignore[attr-defined]
                await client.get_task("missing")


async def test_bearer_auth_and_owner_scoped_tasks_over_grpc(anyio_backend: str) -> None:
    from jsonrpc_core import BearerAuth

    async def verify(token: str) -> dict[str, str] | None:
        return {"sub": token} if token in ("alice", "bob") else None

    async with grpc_served(anyio_backend, auth=BearerAuth(verify)) as (server, _, http):
        async with A2AClient.connect(BASE, http=http, auth=BearerToken("alice")) as alice:
            pass
        card = alice.card  # as served: lists the gRPC interface
        async with A2AClient(card, auth=BearerToken("alice"), bindings=GRPC) as alice:
            task = await alice.send("build")
            assert isinstance(task, Task)
            assert (await alice.get_task(task.id)).id == task.id
        async with A2AClient(card, auth=BearerToken("bob"), bindings=GRPC) as bob:
            with pytest.raises(TaskNotFound):
                await bob.get_task(task.id)
            assert task.id not in {t.id for t in (await bob.list_tasks()).tasks}
        async with A2AClient(card, bindings=GRPC) as anonymous:
            with pytest.raises(HTTPStatusError) as caught:
                await anonymous.get_task(task.id)
            assert caught.value.status == 401
        async with A2AClient(card, auth=BearerToken("mallory"), bindings=GRPC) as mallory:
            with pytest.raises(HTTPStatusError):
                await mallory.send("build")
        target = server.grpc_target
        assert target is not None
        denied = await raw_call(target, "GetTask", {"id": task.id})
        assert denied.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_card_offering_only_grpc_is_used_over_grpc(anyio_backend: str) -> None:
    async with grpc_served(anyio_backend) as (server, _, http):
        async with A2AClient.connect(BASE, http=http) as client:
            only_grpc = client.card.model_copy(
                update={
                    "supported_interfaces": [
                        i for i in client.card.supported_interfaces if i.protocol_binding == "GRPC"
                    ]
                }
            )
            assert client.interface.protocol_binding == "JSONRPC"  # preferred when offered
        async with A2AClient(only_grpc) as chosen:
            assert chosen.interface.url == server.grpc_target
            assert isinstance(await chosen.send("build"), Task)


async def test_extensions_travel_as_metadata(anyio_backend: str) -> None:
    from a2a_fixtures.harness import make_card

    from a2a_layer.types import AgentExtension

    uri = "https://example.com/ext/geo/v1"
    card = make_card(extensions=[AgentExtension(uri=uri, required=True)])
    async with grpc_served(anyio_backend, card=card) as (server, _, _http):
        target = server.grpc_target
        assert target is not None
        v10 = (("a2a-version", "1.0"),)
        refused = await raw_call(target, "GetTask", {"id": "nope"}, v10)
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_details(refused)[0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
        accepted = await raw_call(
            target, "GetTask", {"id": "nope"}, (*v10, ("a2a-extensions", uri))
        )
        assert accepted.code() == grpc.StatusCode.NOT_FOUND
        assert ("a2a-extensions", uri) in tuple(accepted.initial_metadata())


async def test_the_tck_agent_serves_grpc_with_its_grpc_port(anyio_backend: str) -> None:
    from rpcweave.examples.a2a import tck_agent

    server = tck_agent.build_server(push=True, grpc_port=0)
    async with in_process(server) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        assert server.grpc_target and server.grpc_target.startswith("127.0.0.1:")
        bindings = [i["protocolBinding"] for i in card["supportedInterfaces"]]
        assert bindings.count("GRPC") == 2  # 1.0 and 0.3 (the TCK takes the first)
        async with A2AClient(AgentCard.model_validate(card), bindings=["GRPC"]) as client:
            task = await client.send("hi", message_id="tck-complete-task-grpc")
            assert isinstance(task, Task) and text_of(task.status.message) == "Hello from TCK"
