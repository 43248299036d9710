"""A2A reliability: deep JSON values, push delivery at shutdown, subscriber queues.

* A JSON value (a data part, any metadata ``Struct``) nested deeper than
  `MAX_NESTING` levels is refused as invalid params by every entry point (JSON-RPC
  1.0 and 0.3, HTTP+JSON, the Python models), and the server keeps serving.
* An event published while push delivery shuts down is dropped quietly: no exception
  reaches the agent's runtime and no delivery coroutine is left un-awaited.
* Events are applied without a scheduling point each, yet an agent that emits many
  events without awaiting anything else does not get a reading subscriber cut off;
  one that does not read is cut off at its buffer and the task is still complete.

Tests private units on purpose: the method descriptors' `validate_params` (`a2a_layer._methods`),
the 0.3 bridge `_compat03.params_from_v03` and `_client_transport._json_or_none`, each an
entry point that must refuse deep values.
"""

from __future__ import annotations

import gc
import json
import sys
import uuid
import warnings
from typing import Any

import anyio
import anyio.lowlevel
import pydantic
import pytest
from a2a_fixtures.harness import in_process, make_card, message, rpc, rpc_stream
from soak.kit import FIELD_ERROR, deep, eventually

from a2a_layer import (
    A2AServer,
    CallInfo,
    ExecutionContext,
    InMemoryTaskStore,
    PushDispatcher,
    TaskUpdater,
)
from a2a_layer._compat03 import params_from_v03
from a2a_layer._methods import METHODS_V10, SEND_MESSAGE, SEND_STREAMING_MESSAGE
from a2a_layer.types import (
    MAX_NESTING,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from jsonrpc_core import InvalidParams

pytestmark = pytest.mark.anyio

TOO_DEEP = 1500
JSON = "application/json"


async def echo_agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.complete(context.text or "data")


def _deep_json(value: Any) -> str:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10 * TOO_DEEP)
    try:
        return json.dumps(value)
    finally:
        sys.setrecursionlimit(limit)


def _deep_params() -> list[dict[str, Any]]:
    """SendMessage params carrying a too-deep value in each place one can go."""
    base = message("x", "m-deep")
    return [
        {"message": {**base, "parts": [{"data": deep(TOO_DEEP)}]}},
        {"message": {**base, "parts": [{"text": "x", "metadata": {"k": deep(TOO_DEEP)}}]}},
        {"message": {**base, "metadata": {"k": deep(TOO_DEEP)}}},
        {"message": base, "metadata": {"k": deep(TOO_DEEP)}},
    ]


# -- deep JSON values ------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
async def test_deep_values_are_invalid_params_in_process(method: str) -> None:
    descriptor = METHODS_V10[method]
    for params in _deep_params():
        with pytest.raises(InvalidParams) as caught:
            descriptor.validate_params(params)
        assert FIELD_ERROR.match(caught.value.message), caught.value.message
        assert f"nested deeper than {MAX_NESTING} levels" in caught.value.message


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_deep_values_are_invalid_params_over_the_v03_bridge() -> None:
    msg = {"kind": "message", "messageId": "m", "role": "user"}
    for params in (
        {"message": {**msg, "parts": [{"kind": "data", "data": deep(TOO_DEEP)}]}},
        {"message": {**msg, "parts": [{"kind": "text", "text": "x"}], "metadata": deep(TOO_DEEP)}},
    ):
        with pytest.raises(InvalidParams) as caught:
            params_from_v03("message/send", params)
        assert FIELD_ERROR.match(caught.value.message), caught.value.message


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_deep_values_are_refused_by_the_python_models() -> None:
    with pytest.raises(pydantic.ValidationError, match="nested deeper"):
        Part(data=deep(TOO_DEEP))
    with pytest.raises(pydantic.ValidationError, match="nested deeper"):
        Message(
            message_id="m", role=Role.USER, parts=[Part(text="x")], metadata={"k": deep(TOO_DEEP)}
        )
    # The limit itself is allowed: a whole JSON-RPC request that nests that deep is
    # already refused by the parser, so the wire sees no change.
    assert Part(data=deep(MAX_NESTING)).data == deep(MAX_NESTING)


async def test_every_entry_point_refuses_deep_input_and_keeps_serving() -> None:
    server = A2AServer(make_card(), echo_agent)
    async with in_process(server) as http:
        for params in _deep_params():
            for method in ("SendMessage", "SendStreamingMessage"):
                body = _deep_json({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
                headers = {"content-type": "application/json", "A2A-Version": "1.0"}
                answer = await http.post("/", content=body, headers=headers)
                assert answer.json()["error"]["code"] in (-32700, -32600, -32602), answer.text
            answer = await http.post(
                "/rest/message:send",
                content=_deep_json(params),
                headers={"content-type": "application/json", "A2A-Version": "1.0"},
            )
            assert answer.status_code == 400, answer.text
            v03 = {
                "message": {
                    "kind": "message",
                    "messageId": "m-v03",
                    "role": "user",
                    "parts": [{"kind": "data", "data": deep(TOO_DEEP)}],
                }
            }
            body = _deep_json({"jsonrpc": "2.0", "id": 2, "method": "message/send", "params": v03})
            answer = await http.post(
                "/", content=body, headers={"content-type": "application/json"}
            )
            assert answer.json()["error"]["code"] in (-32700, -32600, -32602), answer.text
        # A value as deep as the wire allows still goes through, and the server still serves.
        nested = {"message": {**message("x", "m-ok"), "parts": [{"data": deep(150)}]}}
        sent = await rpc(http, "SendMessage", nested)
        task = sent["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["history"][0]["parts"][0]["data"] == deep(150)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_http_json_client_reads_a_deep_error_body_as_no_body() -> None:
    """An HTTP+JSON error answer too deep to read is treated like an unreadable one."""
    from a2a_layer._client_transport import _json_or_none

    assert _json_or_none(_deep_json(deep(TOO_DEEP)).encode()) is None
    assert _json_or_none(b'{"error": {"code": 404}}') == {"error": {"code": 404}}


# -- push delivery at shutdown ---------------------------------------------------------


async def test_push_published_while_delivery_shuts_down_is_dropped_quietly() -> None:
    """An agent finishing during shutdown publishes while the dispatcher is stopping."""
    store = InMemoryTaskStore()
    push = PushDispatcher(store, max_attempts=1)
    for i in range(10):
        await store.save_push_config(
            TaskPushNotificationConfig(task_id=f"t{i}", id="c", url="http://127.0.0.1:9/")
        )
    event = StreamResponse(
        task=Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    )
    failures: list[BaseException] = []

    async def finishing_agent() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            # Publish at once, then at every following step of the shutdown, whatever
            # order the backend runs the cancelled tasks in.
            with anyio.CancelScope(shield=True):
                for i in range(10):
                    try:
                        push.publish("", f"t{i}", event)
                    except RuntimeError as exc:
                        failures.append(exc)
                    await anyio.lowlevel.checkpoint()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with anyio.create_task_group() as task_group:
            started = anyio.Event()
            task_group.start_soon(push.run_until_cancelled, started)
            await started.wait()
            task_group.start_soon(finishing_agent)
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            task_group.cancel_scope.cancel()
        failures_seen = [str(exc) for exc in failures]
        failures.clear()  # their tracebacks hold the coroutines the warning is about
        gc.collect()
    assert failures_seen == []
    assert not [w for w in caught if "never awaited" in str(w.message)]


# -- subscriber queues -----------------------------------------------------------------


def _request(descriptor: Any, text: str) -> Any:
    return descriptor.validate_params({"message": message(text, str(uuid.uuid4()))})


async def burst_agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    """N artifact chunks in a loop that awaits nothing but the updater."""
    count = int(context.text)
    artifact_id = await updater.add_artifact("0")
    for i in range(1, count):
        await updater.add_artifact(str(i), artifact_id=artifact_id, append=True)
    await updater.complete()


async def test_a_reading_subscriber_keeps_up_with_an_agent_that_never_yields() -> None:
    buffer = 8
    server = A2AServer(make_card(), burst_agent, subscriber_buffer=buffer)
    async with server.running():
        count = 10 * buffer
        events = [
            event
            async for event in await server.service.send_streaming_message(
                _request(SEND_STREAMING_MESSAGE, str(count)), CallInfo()
            )
        ]
    assert len(events) == count + 2
    assert events[0].task is not None
    assert [e.artifact_update.artifact.parts[0].text for e in events[1:-1]] == [  # type: ignore[union-attr]
        str(i) for i in range(count)
    ]
    assert events[-1].status_update is not None
    assert events[-1].status_update.status.state is TaskState.COMPLETED


async def test_a_subscriber_that_does_not_read_is_cut_off_and_the_task_completes() -> None:
    buffer = 8
    done = anyio.Event()

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        await burst_agent(context, updater)
        done.set()

    server = A2AServer(make_card(), agent, subscriber_buffer=buffer)
    async with server.running():
        count = 5 * buffer
        stream = await server.service.send_streaming_message(
            _request(SEND_STREAMING_MESSAGE, str(count)), CallInfo()
        )
        with anyio.fail_after(10):
            await done.wait()
        events = [event async for event in stream]
        assert len(events) == buffer  # the task, then chunks until the queue was full
        task_id = events[0].task.id if events[0].task else ""
        sent = await server.service.send_message(_request(SEND_MESSAGE, "1"), CallInfo())
        assert sent.task is not None and sent.task.status.state is TaskState.COMPLETED
        stored = await server.store.get_task(task_id)
    assert stored is not None and stored.status.state is TaskState.COMPLETED
    assert stored.artifacts is not None and len(stored.artifacts[0].parts) == count


async def test_subscribers_of_one_task_see_the_same_events_in_order() -> None:
    gate = anyio.Event()

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await gate.wait()
        await burst_agent(context, updater)

    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        sent = await rpc(
            http,
            "SendMessage",
            {"message": message("20", "m-order"), "configuration": {"returnImmediately": True}},
        )
        task_id = sent["result"]["task"]["id"]
        results: list[list[dict[str, Any]]] = []

        async def subscribe() -> None:
            results.append(await rpc_stream(http, "SubscribeToTask", {"id": task_id}))

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(subscribe)
            task_group.start_soon(subscribe)
            await eventually(lambda: len(_subscribers(server, task_id)) == 2)
            gate.set()
    first, second = ([event["result"] for event in events] for events in results)
    assert first[1:] == second[1:]
    chunks = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in first[1:-1]]
    assert chunks == [str(i) for i in range(20)]
    assert first[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def _subscribers(server: A2AServer, task_id: str) -> list[Any]:
    active = server.runtime._active.get(("", task_id))
    return active.subscribers if active is not None else []
