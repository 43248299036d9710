"""The A2A server's fast paths behave exactly like the plain ones.

Models the server builds itself skip validation (`trusted`, `replaced`), tasks are
locked by anyio's ``Lock(fast_acquire=True)`` (FIFO), runs are executed by reused
runner tasks, ids and timestamps are made without `uuid`/`strftime`, and the
A2A-Version check is cached per header value: each is checked here against what it
stands for.

Tests the private units `a2a_layer._runtime`, `_state.utc_now` and `_types._base`
(`trusted`, `replaced`) on purpose: the shortcuts are what is compared with the plain path.
"""

from __future__ import annotations

import contextvars
import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from a2a_fixtures.harness import in_process, make_card, message, rpc, rpc_stream

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater, new_id
from a2a_layer._runtime import _Active
from a2a_layer._state import utc_now
from a2a_layer._types._base import replaced, trusted
from a2a_layer.types import (
    AgentExtension,
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    format_timestamp,
)

pytestmark = pytest.mark.anyio


def _same(a: Any, b: Any) -> None:
    assert a == b
    assert a.model_fields_set == b.model_fields_set
    assert list(a.__dict__) == list(b.__dict__)
    for options in ({}, {"exclude_none": True}, {"exclude_unset": True}):
        assert a.model_dump_json(**options) == b.model_dump_json(**options)


# -- trusted models ---------------------------------------------------------------------


def test_trusted_models_equal_validated_ones() -> None:
    part = Part(text="hi")
    _same(trusted(Part, text="hi"), part)
    msg = Message(message_id="m", role=Role.USER, parts=[part])
    _same(trusted(Message, message_id="m", role=Role.USER, parts=[part]), msg)
    stamp = utc_now()
    status = TaskStatus(state=TaskState.WORKING, timestamp=stamp)
    _same(trusted(TaskStatus, state=TaskState.WORKING, timestamp=stamp), status)
    # Keyword order does not matter: the fields keep their declared order.
    task = Task(id="t", context_id="c", status=status, history=[msg])
    _same(trusted(Task, history=[msg], status=status, context_id="c", id="t"), task)
    artifact = Artifact(artifact_id="a", name=None, parts=[part], metadata=None)
    _same(trusted(Artifact, artifact_id="a", name=None, parts=[part], metadata=None), artifact)
    event = TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=artifact, append=True, last_chunk=False
    )
    _same(
        trusted(
            TaskArtifactUpdateEvent,
            task_id="t",
            context_id="c",
            artifact=artifact,
            append=True,
            last_chunk=False,
        ),
        event,
    )
    _same(trusted(StreamResponse, artifact_update=event), StreamResponse(artifact_update=event))


def test_trusted_makes_fresh_factory_defaults() -> None:
    first = trusted(Message, message_id="1", role=Role.USER, parts=[Part(text="x")])
    second = trusted(Message, message_id="2", role=Role.USER, parts=[Part(text="x")])
    assert first.parts is not second.parts
    task = trusted(Task, id="t", status=TaskStatus(state=TaskState.SUBMITTED))
    assert task.artifacts is None and task.history is None


def test_replaced_equals_model_copy() -> None:
    status = TaskStatus(state=TaskState.WORKING, timestamp=utc_now())
    task = Task(id="t", context_id="c", status=status)
    for update in ({"artifacts": []}, {"history": None}, {"status": status, "history": []}):  # type: ignore[var-annotated]
        copy = replaced(task, **update)
        _same(copy, task.model_copy(update=update))
        assert copy is not task and task.artifacts is None  # the original is untouched


# -- ids and timestamps -------------------------------------------------------------------


def test_new_id_is_a_uuid4_string() -> None:
    ids = {new_id() for _ in range(500)}
    assert len(ids) == 500
    for value in ids:
        parsed = uuid.UUID(value)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == value


def test_utc_now_has_millisecond_precision() -> None:
    now = utc_now()
    assert now.tzinfo is timezone.utc and now.microsecond % 1000 == 0
    assert abs(datetime.now(timezone.utc) - now) < timedelta(seconds=5)


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 11, 30, 8, 1, 2, 345000, tzinfo=timezone.utc),
        datetime(2026, 11, 30, 8, 1, 2, 345678, tzinfo=timezone.utc),
        datetime(2026, 11, 30, 8, 1, 2, tzinfo=timezone(timedelta(hours=-5))),
        datetime(2026, 1, 1, 23, 59, 59, 999000),
        datetime(1000, 1, 1, tzinfo=timezone.utc),
        datetime(999, 12, 31, 1, 2, 3, 4000, tzinfo=timezone.utc),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
    ],
)
def test_format_timestamp_is_what_strftime_writes(value: datetime) -> None:
    utc = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value
    utc = utc.astimezone(timezone.utc)
    micros = utc.microsecond
    frac = f"{micros // 1000:03d}" if micros % 1000 == 0 else f"{micros:06d}"
    assert format_timestamp(value) == utc.strftime("%Y-%m-%dT%H:%M:%S") + f".{frac}Z"


# -- the task lock ------------------------------------------------------------------------


def _task_lock() -> anyio.Lock:
    """The lock of an active task record, as the runtime makes it."""
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    return _Active(task, "").lock


async def test_task_lock_is_fifo_and_free_when_released() -> None:
    lock = _task_lock()
    order: list[int] = []

    async def take(i: int) -> None:
        async with lock:
            order.append(i)
            await anyio.lowlevel.checkpoint()

    await lock.acquire()
    async with anyio.create_task_group() as task_group:
        for i in range(5):
            task_group.start_soon(take, i)
            await anyio.lowlevel.checkpoint()  # queue them in this order
        lock.release()
    assert order == [0, 1, 2, 3, 4]
    assert not lock.locked()
    lock.acquire_nowait()
    refused: list[bool] = []

    async def try_take() -> None:
        with pytest.raises(anyio.WouldBlock):
            lock.acquire_nowait()
        refused.append(True)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(try_take)
    assert refused == [True]
    lock.release()


class HeldTaskLock:
    """A task record's lock, held by the test, and the names of the tasks that took it."""

    def __init__(self) -> None:
        self.lock = _task_lock()
        self.got: list[str] = []

    async def acquire(self) -> HeldTaskLock:
        await self.lock.acquire()
        return self

    async def take(self, name: str) -> None:
        """Take the lock as ``name``, note it, and give it back."""
        async with self.lock:
            self.got.append(name)


async def test_task_lock_waiter_cancelled_before_its_turn_is_skipped() -> None:
    held = await HeldTaskLock().acquire()
    lock, got, take = held.lock, held.got, held.take
    with anyio.fail_after(10):  # a lock handed to the cancelled waiter would hang "next"
        async with anyio.create_task_group() as task_group:
            inner = anyio.CancelScope()

            async def cancelled_waiter() -> None:
                with inner:
                    await take("cancelled")

            task_group.start_soon(cancelled_waiter)
            await anyio.wait_all_tasks_blocked()  # "cancelled" waits for the lock...
            task_group.start_soon(take, "next")
            await anyio.wait_all_tasks_blocked()  # ...and "next" behind it
            inner.cancel()
            await anyio.wait_all_tasks_blocked()  # "cancelled" has left the queue
            lock.release()
    assert "cancelled" not in got and got[-1] == "next"
    assert not lock.locked()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_task_lock_handed_to_a_cancelled_waiter_is_passed_on() -> None:
    import asyncio

    held = await HeldTaskLock().acquire()
    lock, got, take = held.lock, held.got, held.take
    first = asyncio.ensure_future(take("first"))
    second = asyncio.ensure_future(take("second"))
    await anyio.wait_all_tasks_blocked()  # both wait for the lock, "first" ahead
    lock.release()  # hands the lock to "first"...
    first.cancel()  # ...which is cancelled before it runs
    with anyio.fail_after(10):  # a lock kept by the cancelled "first" would hang "second"
        await asyncio.gather(first, return_exceptions=True)
        await second
    assert got == ["second"]
    assert not lock.locked()


# -- runs ----------------------------------------------------------------------------------

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="runtime")


async def test_runs_in_progress_each_have_their_own_runner() -> None:
    first_waiting = anyio.Event()
    release = anyio.Event()

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        if context.text == "wait":
            first_waiting.set()
            await release.wait()  # only the second run can set it
        else:
            release.set()
        await updater.complete(context.text)

    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        async with anyio.create_task_group() as task_group:

            async def send_wait() -> None:
                reply = await rpc(http, "SendMessage", {"message": message("wait", "m1")})
                assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

            task_group.start_soon(send_wait)
            with anyio.fail_after(5):
                await first_waiting.wait()
                reply = await rpc(http, "SendMessage", {"message": message("go", "m2")})
            assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        # Both runners are idle now, kept for the next runs; sequential sends reuse one.
        idle = len(server.runtime._idle_runners)
        assert idle == 2
        for i in range(5):
            await rpc(http, "SendMessage", {"message": message("go", f"s{i}")})
        assert len(server.runtime._idle_runners) == idle


async def test_the_agent_runs_in_the_runtime_context_not_the_senders() -> None:
    seen: list[str] = []

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        seen.append(MARK.get())
        await updater.complete()

    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        for i in range(3):
            token = MARK.set(f"request {i}")
            try:
                await rpc(http, "SendMessage", {"message": message("x", f"c{i}")})
            finally:
                MARK.reset(token)
    assert seen == ["runtime", "runtime", "runtime"]


async def test_text_chunks_and_other_artifacts_give_the_same_events() -> None:
    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        first = await updater.add_artifact("a", name="n", description="d")  # fast path
        await updater.add_artifact([Part(text="b")], artifact_id=first, append=True)
        await updater.add_artifact(
            "c",
            artifact_id=first,
            append=True,
            last_chunk=True,
            metadata={"k": 1},
            extensions=["urn:x"],
        )
        await updater.complete()

    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        events = await rpc_stream(http, "SendStreamingMessage", {"message": message("x", "art")})
    results = [e["result"] for e in events]
    chunks = [r["artifactUpdate"] for r in results if "artifactUpdate" in r]
    assert [c["artifact"]["parts"] for c in chunks] == [
        [{"text": "a"}],
        [{"text": "b"}],
        [{"text": "c"}],
    ]
    assert chunks[0]["artifact"]["name"] == "n" and chunks[0]["artifact"]["description"] == "d"
    assert "append" in chunks[0] and chunks[0]["append"] is False
    assert chunks[1]["append"] is True and chunks[2]["lastChunk"] is True
    assert chunks[2]["artifact"]["metadata"] == {"k": 1}
    assert chunks[2]["artifact"]["extensions"] == ["urn:x"]
    final = results[-1]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_COMPLETED"
    stamp = final["timestamp"]
    assert stamp.endswith("Z") and len(stamp) == len("2026-01-01T00:00:00.000Z")
    assert json.loads(json.dumps(results)) == results


# -- the A2A-Version check -----------------------------------------------------------------


async def test_version_check_is_the_same_for_repeated_header_values() -> None:
    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.complete()

    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        for i in range(3):
            ok = await rpc(http, "SendMessage", {"message": message("x", f"v{i}")})
            assert "result" in ok
            old = await rpc(http, "SendMessage", {"message": message("x", f"o{i}")}, version="0.3")
            assert old["error"]["code"] == -32009
            bad = await rpc(http, "SendMessage", {"message": message("x", f"b{i}")}, version="2.0")
            assert bad["error"]["code"] == -32009


async def test_a_required_extension_is_checked_on_every_request() -> None:
    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.complete()

    card = make_card(extensions=[AgentExtension(uri="urn:need", required=True)])
    server = A2AServer(card, agent)
    async with in_process(server) as http:
        for i in range(3):
            refused = await rpc(http, "SendMessage", {"message": message("x", f"r{i}")})
            assert refused["error"]["code"] == -32008
            accepted = await rpc(
                http,
                "SendMessage",
                {"message": message("x", f"a{i}")},
                headers={"A2A-Extensions": "urn:need"},
            )
            assert "result" in accepted


async def test_a_burst_of_chunks_streams_whole_and_in_order() -> None:
    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        first = await updater.add_artifact("0")
        for i in range(1, 100):
            await updater.add_artifact(str(i), artifact_id=first, append=True)
        await updater.complete()

    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        events = await rpc_stream(http, "SendStreamingMessage", {"message": message("x", "burst")})
    results = [e["result"] for e in events]
    assert "task" in results[0] and "statusUpdate" in results[-1]
    texts = [r["artifactUpdate"]["artifact"]["parts"][0]["text"] for r in results[1:-1]]
    assert texts == [str(i) for i in range(100)]
