"""A2A runtime costs that are behaviour: what a finished run leaves behind.

A run (its `TaskUpdater`, context, flags and task record) is freed by reference counting
as soon as it is done: nothing of it waits for the cycle collector, whose passes over a
large task store would otherwise cost every later call.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from _garbage import cyclic_garbage
from a2a_fixtures.harness import make_card, message

from a2a_layer import A2AServer, CallInfo, ExecutionContext, TaskUpdater
from a2a_layer.types import SendMessageRequest

pytestmark = pytest.mark.anyio

RUN_TYPES = {"_Run", "_Active", "Event", "_Subscriber", "TaskUpdater", "ExecutionContext"}


async def chunks(context: ExecutionContext, updater: TaskUpdater) -> None:
    artifact_id = await updater.add_artifact("0")
    for i in range(1, int(context.text)):
        await updater.add_artifact(str(i), artifact_id=artifact_id, append=True)
    await updater.complete()


def _params(text: str) -> dict[str, Any]:
    return {"message": message(text, str(uuid.uuid4()))}


async def test_finished_runs_leave_no_reference_cycles() -> None:
    server = A2AServer(make_card(), chunks)
    service = server.service
    async with server.running():
        for _ in range(3):  # warm up: lazily built validators and the like
            await service.send_message(SendMessageRequest.model_validate(_params("2")), CallInfo())
        with cyclic_garbage() as garbage:
            for _ in range(5):
                sent = await service.send_message(
                    SendMessageRequest.model_validate(_params("2")), CallInfo()
                )
                assert sent.task is not None
            stream = await service.send_streaming_message(
                SendMessageRequest.model_validate(_params("5")), CallInfo()
            )
            events = [event async for event in stream]
            assert len(events) == 7
            del sent, stream, events
    leaked = sorted({type(o).__name__ for o in garbage} & RUN_TYPES)
    assert leaked == [], f"left for the cycle collector: {leaked}"
