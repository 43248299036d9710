"""`PostgresTaskStore`: the `TaskStore` contract (the same tests as the in-memory and
SQLite stores), versioned migrations, compare-and-set changes, message id claims and
change notifications between two store instances (as two replicas would have).

Uses the private `a2a_layer._postgres.MIGRATIONS`, `_shared.StaleTask`, `_state` builders
and `jsonrpc_core._pg.open_pool` on purpose: the store's migrations and compare-and-set
contract are under test.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import anyio
import pytest

# Deduplication by content and the TaskStore contract, run here against PostgreSQL
# (collected again in this module).
from test_a2a_dedup import (  # noqa: F401
    test_a_resend_once_its_task_moved_on_is_a_new_message,
    test_a_resend_with_a_push_config_adds_it_to_the_task,
    test_a_reused_id_on_a_task_continues_it_again,
    test_a_reused_id_with_other_content_is_a_new_message,
    test_true_duplicates_get_the_first_outcome_and_never_rerun,
)
from test_a2a_store import (  # noqa: F401
    test_listing_orders_pages_and_filters,
    test_message_ids_and_push_configs,
    test_tasks_round_trip_whole,
    user,
)

from a2a_layer import PostgresTaskStore
from a2a_layer._postgres import MIGRATIONS
from a2a_layer._shared import StaleTask
from a2a_layer._state import apply_status, new_task, utc_now
from a2a_layer.types import (
    StreamResponse,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from jsonrpc_core._pg import open_pool
from jsonrpc_core.postgres import Migration, SchemaTooNew, migrate

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    # psycopg's async connections run on asyncio only (see jsonrpc_core._pg, rule 1).
    return "asyncio"


@pytest.fixture
async def store(pg_dsn: str) -> AsyncIterator[PostgresTaskStore]:
    opened = await PostgresTaskStore.open(pg_dsn)
    try:
        yield opened
    finally:
        await opened.aclose()


def status(task_id: str, state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id="c",
        status=TaskStatus(state=state, timestamp=utc_now()),
    )


async def test_migrations_are_versioned_and_run_once(pg_dsn: str) -> None:
    stores = [PostgresTaskStore(pg_dsn, pool_size=2) for _ in range(3)]
    try:
        async with anyio.create_task_group() as tg:  # three replicas starting together
            for s in stores:
                tg.start_soon(s._connect)
        pool = await open_pool(pg_dsn)
        try:
            async with pool.connection() as conn:
                cursor = await conn.execute(
                    "SELECT component, version FROM rpcweave_migrations ORDER BY version"
                )
                assert await cursor.fetchall() == [("a2a", m.version) for m in MIGRATIONS]
            newer = [*MIGRATIONS, Migration(99, "from the future", "SELECT 1")]
            assert await migrate(pool, "a2a", newer) == 99
            with pytest.raises(SchemaTooNew, match="a2a schema version 99"):
                await migrate(pool, "a2a", MIGRATIONS)
        finally:
            await pool.close()
    finally:
        for s in stores:
            await s.aclose()


async def test_changes_are_compare_and_set_with_ordered_events(
    store: PostgresTaskStore,
) -> None:
    task = new_task("t1", "c", user("hi"))
    assert await store.append(task, StreamResponse(task=task), after=0, message_id="m1") == 1
    with pytest.raises(StaleTask):
        await store.append(task, StreamResponse(task=task), after=0)  # created already
    working = apply_status(task, status("t1", TaskState.WORKING))
    assert (
        await store.append(
            working, StreamResponse(status_update=status("t1", TaskState.WORKING)), after=1
        )
        == 2
    )
    with pytest.raises(StaleTask):  # another replica wrote change 2 first
        await store.append(working, None, after=1)
    assert await store.append(working, None, after=2) == 3  # a history-only change
    snapshot, events = await store.changes_after("t1", after=1)
    assert snapshot is not None and snapshot.seq == 3
    assert snapshot.task.status.state is TaskState.WORKING
    assert [e.seq for e in events] == [2, 3]
    assert events[0].event is not None and events[0].event.status_update is not None
    assert events[1].event is None
    claim = await store.get_claim("m1")
    assert claim is not None and claim.task_id == "t1" and claim.seq == 1 and not claim.pending
    record = await store.get_message("m1")
    assert record is not None and record.task_id == "t1"
    assert await store.changes_after("nope", after=0) == (None, [])


async def test_a_message_id_is_claimed_once(pg_dsn: str) -> None:
    stores = [await PostgresTaskStore.open(pg_dsn, pool_size=2) for _ in range(2)]
    try:
        results: list[object] = []

        async def claim(index: int) -> None:
            s = stores[index % 2]
            results.append(await s.claim_message("m", task_id=f"task-{index}", stale_after=60))

        async with anyio.create_task_group() as tg:
            for index in range(8):
                tg.start_soon(claim, index)
        assert results.count(None) == 1  # exactly one winner
        losers = [r for r in results if r is not None]
        assert all(getattr(r, "pending", False) for r in losers)
        assert await stores[0].get_message("m") is None  # pending: not a record yet
        winner = await stores[0].get_claim("m")
        assert winner is not None and winner.task_id is not None
        await stores[1].fail_claim(
            "m", task_id=winner.task_id, error={"code": -32603, "message": "Internal error"}
        )
        failed = await stores[0].get_claim("m")
        assert failed is not None and failed.error == {"code": -32603, "message": "Internal error"}
        # A later send with that id runs again; a stale pending claim is taken over.
        assert await stores[0].claim_message("m", task_id="again", stale_after=60) is None
        assert await stores[1].claim_message("m", task_id="late", stale_after=60) is not None
        assert await stores[1].claim_message("m", task_id="late", stale_after=0) is None
    finally:
        for s in stores:
            await s.aclose()


async def test_changes_are_announced_to_other_instances(pg_dsn: str) -> None:
    writer = await PostgresTaskStore.open(pg_dsn)
    reader = await PostgresTaskStore.open(pg_dsn)
    seen: list[tuple[str, str, int]] = []
    got = anyio.Event()
    resynced = anyio.Event()

    def on_change(tenant: str, task_id: str, seq: int) -> None:
        seen.append((tenant, task_id, seq))
        if len(seen) == 3:
            got.set()

    try:
        async with anyio.create_task_group() as tg:
            started = anyio.Event()
            tg.start_soon(reader.listen, on_change, resynced.set, started)
            await started.wait()
            task = new_task("t1", "c", user("hi"))
            await writer.append(task, StreamResponse(task=task), tenant="acme", after=0)
            await writer.append(task, None, tenant="acme", after=1)
            await writer.save_task(task, tenant="acme")
            with anyio.fail_after(10):
                await got.wait()
            assert seen == [("acme", "t1", 1), ("acme", "t1", 2), ("acme", "t1", 3)]
            # Ids too long for a NOTIFY payload: listeners are told to re-read everything.
            long_task = new_task("x" * 7500, "c", user("hi"))
            await writer.append(long_task, None, after=0)
            with anyio.fail_after(10):
                await resynced.wait()
            tg.cancel_scope.cancel()
    finally:
        await writer.aclose()
        await reader.aclose()


async def test_old_events_are_pruned(store: PostgresTaskStore) -> None:
    task = new_task("t1", "c", user("hi"))
    await store.append(task, StreamResponse(task=task), after=0)
    store.event_retention = 0
    assert await store.prune() == 1
    snapshot, events = await store.changes_after("t1", after=0)
    assert snapshot is not None and snapshot.seq == 1 and events == []


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_trio_is_refused_with_a_reason(anyio_backend: str) -> None:
    with pytest.raises(RuntimeError, match="needs asyncio"):
        await PostgresTaskStore("postgresql://127.0.0.1:1/none")._connect()


def test_importing_the_packages_does_not_load_the_driver() -> None:
    code = (
        "import sys, jsonrpc_core, a2a_layer, mcp_layer; a2a_layer.A2AServer; "
        "print('psycopg' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert out.stdout.decode().strip() == "False"
