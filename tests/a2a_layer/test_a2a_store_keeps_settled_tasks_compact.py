"""`InMemoryTaskStore` keeps settled tasks compactly and reads them back unchanged.

A task saved in a terminal or interrupted state is kept as its JSON; every read must
still give a `Task` equal to the one saved (history, artifacts, every kind of part,
metadata, timestamps), ListTasks must filter, order and page as over the models, and a
stored task must cost a fraction of what its model does.

Tests the private units `a2a_layer._store.page_of` and `a2a_layer._state` on purpose: the
compact form is checked against the plain paging and the state machine's own tasks.
"""

from __future__ import annotations

import gc
import tracemalloc
from datetime import datetime, timedelta, timezone

import pytest

from a2a_layer import InMemoryTaskStore, MessageRecord, TaskQuery
from a2a_layer._state import apply_artifact, apply_status, new_task, utc_now
from a2a_layer._store import page_of
from a2a_layer.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

pytestmark = pytest.mark.anyio

BASE = datetime(2026, 11, 30, 8, 0, 0, 123456, tzinfo=timezone.utc)


def rich_task(task_id: str, state: TaskState, *, context: str = "ctx", seconds: int = 0) -> Task:
    """A task with every kind of part, metadata at each level and a status message."""
    parts = [
        Part(text="héllo ✓", metadata={"n": 1, "f": 1.5, "nested": {"l": [1, "a", None]}}),
        Part(raw=b"\x00\xff\x10", filename="f.bin", media_type="application/octet-stream"),
        Part(url="https://example.com/a?b=c", filename="a"),
        Part(data={"k": [True, False, None], "z": 0}),
        Part(data=None),
    ]
    history = [
        Message(message_id=f"{task_id}-u", role=Role.USER, parts=parts[:3], context_id=context),
        Message(
            message_id=f"{task_id}-a",
            role=Role.AGENT,
            parts=parts[3:],
            metadata={"m": "x"},
            reference_task_ids=["other"],
        ),
    ]
    artifacts = [
        Artifact(artifact_id="a1", name="result", description="d", parts=parts),
        Artifact(artifact_id="a2", parts=[Part(text="x")], metadata={"a": {"b": []}}),
    ]
    status_message = Message(message_id=f"{task_id}-s", role=Role.AGENT, parts=[Part(text="s")])
    return Task(
        id=task_id,
        context_id=context,
        status=TaskStatus(
            state=state, message=status_message, timestamp=BASE + timedelta(seconds=seconds)
        ),
        history=history,
        artifacts=artifacts,
        metadata={"top": {"deep": [1, 2.25, "s"]}},
    )


@pytest.mark.parametrize(
    "state",
    [
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.INPUT_REQUIRED,
        TaskState.AUTH_REQUIRED,
        TaskState.WORKING,
        TaskState.SUBMITTED,
    ],
)
async def test_every_read_gives_an_equal_task(state: TaskState) -> None:
    store = InMemoryTaskStore()
    await store.save_task(rich_task("t1", state), tenant="acme")  # no reference kept
    gc.collect()
    expected = rich_task("t1", state)
    first = await store.get_task("t1", tenant="acme")
    second = await store.get_task("t1", tenant="acme")
    assert first == expected and second == expected
    assert first is not None and first.model_dump_json() == expected.model_dump_json()
    assert await store.get_task("t1") is None
    page = await store.list_tasks(TaskQuery(tenant="acme"))
    assert page.tasks == [expected]


async def test_a_task_built_by_the_state_machine_reads_back_equal() -> None:
    store = InMemoryTaskStore()
    message = Message(message_id="m", role=Role.USER, parts=[Part(text="1")])
    task = new_task("t", "c", message)
    await store.save_task(task)
    assert await store.get_task("t") is task  # running: the model itself is kept
    for index in range(3):
        chunk = Artifact(artifact_id="a", parts=[Part(text=f"chunk {index}")])
        event = TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=chunk, append=index > 0, last_chunk=index == 2
        )
        task = apply_artifact(task, event)
        await store.save_task(task)
    done = TaskStatus(state=TaskState.COMPLETED, timestamp=utc_now())
    task = apply_status(task, TaskStatusUpdateEvent(task_id="t", context_id="c", status=done))
    await store.save_task(task)
    # While the runtime still holds the settled model, a read returns it as it is.
    assert await store.get_task("t") is task
    expected = task.model_copy(deep=True)
    del task
    gc.collect()
    read = await store.get_task("t")
    assert read == expected and read is not expected
    assert read is not None and read.artifacts is not None
    assert [p.text for p in read.artifacts[0].parts] == ["chunk 0", "chunk 1", "chunk 2"]


async def test_only_the_newest_settled_tasks_keep_their_model() -> None:
    store = InMemoryTaskStore()
    kept = [rich_task(f"t{index:03d}", TaskState.COMPLETED) for index in range(100)]
    for task in kept:
        await store.save_task(task)
    held = [task for task in kept if await store.get_task(task.id) is task]
    assert [t.id for t in held] == [f"t{index:03d}" for index in range(36, 100)]
    assert await store.get_task("t000") == kept[0]
    del kept, held, task
    gc.collect()
    await store.save_task(rich_task("last", TaskState.FAILED))
    assert len(store._recent) == 1  # the references of the dead models are dropped


async def test_listing_settled_and_running_tasks_matches_listing_the_models() -> None:
    store = InMemoryTaskStore()
    states = [TaskState.WORKING, TaskState.COMPLETED, TaskState.INPUT_REQUIRED, TaskState.FAILED]
    models: list[Task] = []
    for index in range(24):
        state = states[index % 4]

        # Equal timestamps in pairs: the id breaks the tie.
        task_id, context, seconds = f"t{index:02d}", f"c{index % 3}", index // 2
        models.append(rich_task(task_id, state, context=context, seconds=seconds))
        # An equal copy, not kept: the settled ones are read back from their JSON.
        await store.save_task(rich_task(task_id, state, context=context, seconds=seconds))
    await store.save_task(rich_task("t99", TaskState.COMPLETED, seconds=99), tenant="other")
    queries = [
        TaskQuery(),
        TaskQuery(page_size=5),
        TaskQuery(context_id="c1", page_size=2),
        TaskQuery(status=TaskState.COMPLETED),
        TaskQuery(status=TaskState.WORKING, page_size=1),
        TaskQuery(status_timestamp_after=BASE + timedelta(seconds=5), page_size=4),
        TaskQuery(context_id="c2", status=TaskState.INPUT_REQUIRED),
    ]
    for query in queries:
        token: str | None = None
        while True:
            current = TaskQuery(
                context_id=query.context_id,
                status=query.status,
                status_timestamp_after=query.status_timestamp_after,
                page_size=query.page_size,
                page_token=token,
            )
            got = await store.list_tasks(current)
            expected = page_of(list(models), current)
            assert got == expected
            token = got.next_page_token or None
            if token is None:
                break


async def test_saving_again_replaces_a_settled_task() -> None:
    store = InMemoryTaskStore()
    waiting = rich_task("t", TaskState.INPUT_REQUIRED)
    await store.save_task(waiting)
    working = waiting.model_copy(update={"status": TaskStatus(state=TaskState.WORKING)})
    await store.save_task(working)
    assert await store.get_task("t") is working
    done = working.model_copy(update={"status": TaskStatus(state=TaskState.COMPLETED)})
    await store.save_task(done)
    assert await store.get_task("t") == done
    page = await store.list_tasks(TaskQuery(status=TaskState.COMPLETED))
    assert page.tasks == [done]


async def test_a_task_json_cannot_hold_is_kept_as_its_model() -> None:
    store = InMemoryTaskStore()
    opaque = object()
    task = Task(
        id="t",
        status=TaskStatus(state=TaskState.COMPLETED, timestamp=BASE),
        metadata={"handle": opaque},
    )
    await store.save_task(task)
    del task
    gc.collect()
    read = await store.get_task("t")
    assert read is not None and read.metadata == {"handle": opaque}
    page = await store.list_tasks(TaskQuery(status=TaskState.COMPLETED))
    assert page.tasks == [read]


async def test_message_records_read_back_equal() -> None:
    store = InMemoryTaskStore(max_messages=2)
    reply = Message(message_id="r", role=Role.AGENT, parts=[Part(text="hi")], context_id="c")
    await store.save_message("m1", MessageRecord(task_id="t1"))
    await store.save_message("m2", MessageRecord(reply=reply))
    assert await store.get_message("m1") == MessageRecord(task_id="t1")
    assert await store.get_message("m2") == MessageRecord(reply=reply)
    await store.save_message("m3", MessageRecord())
    assert await store.get_message("m3") == MessageRecord()
    assert await store.get_message("m1") is None  # the oldest is forgotten


async def _fill(store: InMemoryTaskStore, state: TaskState, chunks: int, count: int) -> None:
    """Build ``count`` tasks as the runtime does (a message, an artifact of ``chunks``
    parts, then ``state``) and save each with its message record."""
    for index in range(count):
        message = Message(message_id=f"m{index:06d}", role=Role.USER, parts=[Part(text="1")])
        task = new_task(f"task-{index:06d}-0000-0000-000000000000", "context-0000", message)
        parts = [Part(text=f"chunk {i}") for i in range(chunks)]
        artifact = Artifact(artifact_id="a", name="result", parts=parts)
        event = TaskArtifactUpdateEvent(task_id=task.id, context_id="c", artifact=artifact)
        task = apply_artifact(task, event)
        status = TaskStatus(state=state, timestamp=utc_now())
        update = TaskStatusUpdateEvent(task_id=task.id, context_id="c", status=status)
        task = apply_status(task, update)
        await store.save_task(task)
        await store.save_message(message.message_id, MessageRecord(task_id=task.id))


async def _bytes_per_task(state: TaskState, chunks: int) -> float:
    """Memory the store keeps per task (after a warm-up that builds the validators)."""
    await _fill(InMemoryTaskStore(), state, chunks, 5)
    store = InMemoryTaskStore()
    count = 200
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        await _fill(store, state, chunks, count)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (after - before) / count


async def test_a_settled_task_costs_a_fraction_of_its_model() -> None:
    # Kept as models, these cost ~4.3 KiB and ~65 KiB per task (with the message record);
    # packed, ~0.9 KiB and ~2.8 KiB.
    assert await _bytes_per_task(TaskState.COMPLETED, 1) < 1_200
    assert await _bytes_per_task(TaskState.INPUT_REQUIRED, 100) < 4_000
