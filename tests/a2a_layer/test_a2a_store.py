"""The `TaskStore` contract, for the in-memory store and the SQLite store alike, and the
task state machine's pure functions.

Tests the private unit `a2a_layer._state` (the state machine's pure functions) and
`_store.InvalidPageToken` on purpose.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from a2a_fixtures.harness import STORE_KINDS, empty_store

from a2a_layer import (
    InvalidTransition,
    MessageRecord,
    SQLiteTaskStore,
    TaskQuery,
    TaskStore,
)
from a2a_layer._state import apply_artifact, apply_status, new_task, trim_history, utc_now
from a2a_layer._store import InvalidPageToken
from a2a_layer.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    async with empty_store(request.param, tmp_path) as opened:
        yield opened


def user(text: str, mid: str = "m") -> Message:
    return Message(message_id=mid, role=Role.USER, parts=[Part(text=text)])


def task(task_id: str, context: str, state: TaskState, seconds: int) -> Task:
    ts = utc_now().replace(microsecond=0) + timedelta(seconds=seconds)
    return Task(
        id=task_id,
        context_id=context,
        status=TaskStatus(state=state, timestamp=ts),
        history=[user(f"for {task_id}")],
        artifacts=[Artifact(artifact_id="a", parts=[Part(raw=b"\x00\x01", filename="f.bin")])],
    )


async def test_tasks_round_trip_whole(store: TaskStore) -> None:
    original = task("t1", "c1", TaskState.WORKING, 0)
    await store.save_task(original)
    assert await store.get_task("t1") == original
    assert await store.get_task("t1", tenant="other") is None
    updated = original.model_copy(update={"status": TaskStatus(state=TaskState.COMPLETED)})
    await store.save_task(updated)
    assert await store.get_task("t1") == updated


async def test_listing_orders_pages_and_filters(store: TaskStore) -> None:
    states = [TaskState.WORKING, TaskState.COMPLETED, TaskState.COMPLETED, TaskState.FAILED]
    for index, state in enumerate(states * 2):
        context = "even" if index % 2 == 0 else "odd"
        await store.save_task(task(f"t{index}", context, state, index))
    await store.save_task(task("other", "even", TaskState.WORKING, 99), tenant="acme")
    ids: list[str] = []
    token: str | None = None
    while True:
        page = await store.list_tasks(TaskQuery(page_size=3, page_token=token))
        assert page.total_size == 8
        ids.extend(t.id for t in page.tasks)
        token = page.next_page_token or None
        if token is None:
            break
    assert ids == [f"t{i}" for i in range(7, -1, -1)]
    even = await store.list_tasks(TaskQuery(context_id="even"))
    assert [t.id for t in even.tasks] == ["t6", "t4", "t2", "t0"]
    done = await store.list_tasks(TaskQuery(status=TaskState.COMPLETED))
    assert {t.id for t in done.tasks} == {"t1", "t2", "t5", "t6"}
    cutoff = await store.get_task("t5")
    assert cutoff is not None and cutoff.status.timestamp is not None
    recent = await store.list_tasks(TaskQuery(status_timestamp_after=cutoff.status.timestamp))
    assert [t.id for t in recent.tasks] == ["t7", "t6"]
    acme = await store.list_tasks(TaskQuery(tenant="acme"))
    assert [t.id for t in acme.tasks] == ["other"]
    with pytest.raises(InvalidPageToken):
        await store.list_tasks(TaskQuery(page_token="garbage!"))


async def test_message_ids_and_push_configs(store: TaskStore) -> None:
    reply = Message(message_id="r", role=Role.AGENT, parts=[Part(text="hi")], context_id="c")
    await store.save_message("m1", MessageRecord(task_id="t1"))
    await store.save_message("m2", MessageRecord(reply=reply))
    assert await store.get_message("m1") == MessageRecord(task_id="t1")
    assert await store.get_message("m2") == MessageRecord(reply=reply)
    assert await store.get_message("m1", tenant="acme") is None
    first = TaskPushNotificationConfig(id="p1", task_id="t1", url="http://a", token="x")
    second = TaskPushNotificationConfig(id="p2", task_id="t1", url="http://b")
    await store.save_push_config(first)
    await store.save_push_config(second)
    await store.save_push_config(first.model_copy(update={"token": "y"}))
    configs = await store.list_push_configs("t1")
    assert [c.id for c in configs] == ["p1", "p2"] and configs[0].token == "y"
    assert await store.get_push_config("t1", "p2") == second
    assert await store.delete_push_config("t1", "p2")
    assert not await store.delete_push_config("t1", "p2")
    assert await store.get_push_config("t1", "p2") is None


async def test_sqlite_keeps_everything_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    first = await SQLiteTaskStore.open(path)
    saved = task("t1", "c1", TaskState.INPUT_REQUIRED, 0)
    await first.save_task(saved, tenant="acme")
    await first.save_message("m1", MessageRecord(task_id="t1"), tenant="acme")
    config = TaskPushNotificationConfig(id="p", task_id="t1", url="http://a", token="tok")
    await first.save_push_config(config, tenant="acme")
    await first.aclose()
    second = await SQLiteTaskStore.open(path)
    try:
        assert await second.get_task("t1", tenant="acme") == saved
        assert await second.get_message("m1", tenant="acme") == MessageRecord(task_id="t1")
        assert await second.list_push_configs("t1", tenant="acme") == [config]
    finally:
        await second.aclose()


def _status(state: TaskState, text: str | None = None) -> TaskStatusUpdateEvent:
    msg = Message(message_id="s", role=Role.AGENT, parts=[Part(text=text)]) if text else None
    return TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=state, message=msg)
    )


def _chunk(text: str, append: bool) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=Artifact(artifact_id="a", parts=[Part(text=text)]),
        append=append,
    )


def test_state_machine() -> None:
    t = new_task("t", "c", user("hi"))
    assert t.status.state is TaskState.SUBMITTED
    t = apply_status(t, _status(TaskState.WORKING))
    t = apply_status(t, _status(TaskState.WORKING, "progress"))
    t = apply_artifact(t, _chunk("a", append=False))
    t = apply_artifact(t, _chunk("b", append=True))
    assert [p.text for p in (t.artifacts or [])[0].parts] == ["a", "b"]
    t = apply_artifact(t, _chunk("c", append=False))
    assert [p.text for p in (t.artifacts or [])[0].parts] == ["c"]
    t = apply_status(t, _status(TaskState.INPUT_REQUIRED, "which?"))
    assert [m.role for m in t.history or []] == [Role.USER, Role.AGENT, Role.AGENT]
    with pytest.raises(InvalidTransition):
        apply_status(t, _status(TaskState.SUBMITTED))
    done = apply_status(t, _status(TaskState.COMPLETED))
    for event in (_status(TaskState.WORKING), _status(TaskState.COMPLETED)):
        with pytest.raises(InvalidTransition):
            apply_status(done, event)
    with pytest.raises(InvalidTransition):
        apply_artifact(done, _chunk("d", append=True))
    assert trim_history(done, 0).history is None
    assert trim_history(done, 1).history == (done.history or [])[-1:]
    assert trim_history(done, None) is done


def test_importing_the_package_stays_cheap() -> None:
    """``import a2a_layer`` loads the models only: no JSON-RPC core module (the core's
    package itself holds only the lazy-export helper), HTTP stack or anyio."""
    import subprocess
    import sys

    code = (
        "import sys, a2a_layer; "
        "print(sorted(m for m in sys.modules if m.startswith('jsonrpc_core.') "
        "or m in ('httpx', 'anyio', 'uvicorn', 'sqlite3')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert loaded.stdout.decode().strip() == "[]"
