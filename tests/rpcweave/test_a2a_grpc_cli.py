"""``rpcweave a2a serve --grpc-port``: the coding agent over gRPC beside HTTP."""

from __future__ import annotations

import signal

import grpc  # noqa: F401  (the grpc extra is a dev dependency: missing fails, not skips)
import pytest
from fixtures.cli_helpers import EXAMPLES, CLIServer

from a2a_layer import A2AClient
from a2a_layer.types import Task

pytestmark = pytest.mark.anyio

CODING_AGENT = f"{EXAMPLES / 'a2a' / 'coding_agent.py'}:CodingAgent"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpc.aio's only loop


async def test_serve_with_a_grpc_port_lists_and_answers_grpc() -> None:
    server = CLIServer("a2a", "serve", CODING_AGENT, "--port", "0", "--grpc-port", "0")
    try:
        async with A2AClient.connect(server.url) as http_client:
            card = http_client.card
        grpc_interfaces = [i for i in card.supported_interfaces if i.protocol_binding == "GRPC"]
        assert [i.protocol_version for i in grpc_interfaces] == ["1.0", "0.3"]
        assert grpc_interfaces[0].url.startswith("127.0.0.1:")
        async with A2AClient(card, bindings=["GRPC"]) as client:
            task = await client.send("Write a function that reverses a string")
            assert isinstance(task, Task) and task.status.state.value == "TASK_STATE_INPUT_REQUIRED"
            assert (await client.get_task(task.id)).id == task.id
    finally:
        status, err = server.stop(signal.SIGTERM)
    assert status == 0, err
