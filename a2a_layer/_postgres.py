"""`PostgresTaskStore`: the A2A `TaskStore` on PostgreSQL, shared by several replicas.

Needs the ``postgres`` extra (psycopg 3, asyncio only). Rules, beside those of
``_store`` and ``_shared``:

1. The schema is versioned (``rpcweave_migrations``, component ``a2a``); `open`
   migrates it, under an advisory lock, so replicas may start together.
2. A task row holds the whole task as JSON (as SQLite does) and ``seq``, the number
   of its last change. Every change is one statement (data-modifying CTEs): the task
   row (compare-and-set on ``seq``), the event row, the message id's claim and a
   ``pg_notify`` all commit together or not at all, in one round trip.
3. A notification carries only ``[tenant, task id, seq]`` (never the event: NOTIFY
   payloads stop at 8000 bytes); readers fetch the events from ``a2a_task_events``.
   Ids too long for a payload send ``"*"``: every listener re-reads all it follows.
4. Events are kept ``event_retention`` seconds (pruned by `listen`); a reader that
   comes back after longer finds a gap and starts again from the task.
5. Orders and comparisons on text use the "C" collation, so ListTasks pages the same
   way whatever the database's locale.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio

from jsonrpc_core.postgres import Listener, Migration, PooledStore

from ._shared import Claim, SharedTaskStore, StaleTask, StoredEvent, TaskSnapshot
from ._store import (
    MessageRecord,
    TaskPage,
    TaskQuery,
    _timestamp_key,
    decode_page_token,
    encode_page_token,
    sort_key,
)
from .types import Message, StreamResponse, Task, TaskPushNotificationConfig

__all__ = ["MIGRATIONS", "PostgresTaskStore"]

MIGRATIONS = [
    Migration(
        1,
        "tasks, task events, message ids, push configs",
        """
        CREATE TABLE a2a_tasks (
            tenant TEXT COLLATE "C" NOT NULL,
            id TEXT COLLATE "C" NOT NULL,
            context_id TEXT COLLATE "C",
            state TEXT NOT NULL,
            status_ts TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (tenant, id)
        );
        CREATE INDEX a2a_tasks_by_time ON a2a_tasks (tenant, status_ts DESC, id DESC);
        CREATE INDEX a2a_tasks_by_context
            ON a2a_tasks (tenant, context_id, status_ts DESC, id DESC);
        CREATE TABLE a2a_task_events (
            tenant TEXT COLLATE "C" NOT NULL,
            task_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            body TEXT,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant, task_id, seq)
        );
        CREATE INDEX a2a_task_events_by_age ON a2a_task_events (created_at);
        CREATE TABLE a2a_messages (
            tenant TEXT COLLATE "C" NOT NULL,
            message_id TEXT COLLATE "C" NOT NULL,
            task_id TEXT COLLATE "C",
            reply TEXT,
            pending BOOLEAN NOT NULL DEFAULT false,
            seq BIGINT NOT NULL DEFAULT 0,
            error TEXT,
            claimed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant, message_id)
        );
        CREATE TABLE a2a_push_configs (
            tenant TEXT COLLATE "C" NOT NULL,
            task_id TEXT COLLATE "C" NOT NULL,
            id TEXT COLLATE "C" NOT NULL,
            created BIGINT GENERATED ALWAYS AS IDENTITY,
            body TEXT NOT NULL,
            PRIMARY KEY (tenant, task_id, id)
        );
        """,
    ),
]
"""The ``a2a`` component's schema, one step per version (never edit a released step)."""

_DEFAULT_CHANNEL = "rpcweave_a2a"

# One change of a task (rule 2). `t` is the compare-and-set write of the task row
# (filled in per case below); the rest only happens when `t` wrote a row.
_CHANGE = """
WITH t AS ({task_write}),
e AS (
    INSERT INTO a2a_task_events (tenant, task_id, seq, body)
    SELECT %(tenant)s, %(id)s, t.seq, %(event)s FROM t
),
m AS (
    INSERT INTO a2a_messages (tenant, message_id, task_id, seq, pending)
    SELECT %(tenant)s, %(mid)s, %(id)s, t.seq, false FROM t WHERE %(mid)s::text IS NOT NULL
    ON CONFLICT (tenant, message_id) DO UPDATE
    SET task_id = EXCLUDED.task_id, seq = EXCLUDED.seq, pending = false,
        error = NULL, reply = NULL
)
SELECT t.seq, pg_notify(
    %(channel)s,
    CASE WHEN %(short)s THEN json_build_array(%(tenant)s::text, %(id)s::text, t.seq)::text
         ELSE '*' END
) FROM t
"""

_INSERT_TASK = """
INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, seq, body)
VALUES (%(tenant)s, %(id)s, %(context)s, %(state)s, %(ts)s, 1, %(body)s)
ON CONFLICT (tenant, id) DO NOTHING
RETURNING seq
"""

_UPDATE_TASK = """
UPDATE a2a_tasks
SET context_id = %(context)s, state = %(state)s, status_ts = %(ts)s, body = %(body)s,
    seq = seq + 1
WHERE tenant = %(tenant)s AND id = %(id)s AND seq = %(after)s
RETURNING seq
"""

_UPSERT_TASK = """
INSERT INTO a2a_tasks (tenant, id, context_id, state, status_ts, seq, body)
VALUES (%(tenant)s, %(id)s, %(context)s, %(state)s, %(ts)s, 1, %(body)s)
ON CONFLICT (tenant, id) DO UPDATE
SET context_id = EXCLUDED.context_id, state = EXCLUDED.state,
    status_ts = EXCLUDED.status_ts, body = EXCLUDED.body, seq = a2a_tasks.seq + 1
RETURNING seq
"""

_CHANGES_AFTER = """
WITH t AS (SELECT seq, body FROM a2a_tasks WHERE tenant = %(tenant)s AND id = %(id)s)
SELECT t.seq, t.body, 0 AS k FROM t
UNION ALL
SELECT e.seq, e.body, 1 AS k FROM a2a_task_events e, t
WHERE e.tenant = %(tenant)s AND e.task_id = %(id)s AND e.seq > %(after)s AND e.seq <= t.seq
ORDER BY k, seq
"""

_CLAIM = """
INSERT INTO a2a_messages (tenant, message_id, task_id, pending, claimed_at)
VALUES (%(tenant)s, %(mid)s, %(id)s, true, now())
ON CONFLICT (tenant, message_id) DO UPDATE
SET task_id = EXCLUDED.task_id, pending = true, error = NULL, reply = NULL, seq = 0,
    claimed_at = now()
WHERE a2a_messages.error IS NOT NULL
   OR (a2a_messages.pending
       AND a2a_messages.claimed_at < now() - make_interval(secs => %(stale)s))
RETURNING task_id
"""


def _dump(model: Task | Message | StreamResponse | TaskPushNotificationConfig) -> str:
    return model.model_dump_json(by_alias=True, exclude_none=True)


class PostgresTaskStore(PooledStore, SharedTaskStore):
    """A `TaskStore` in PostgreSQL that several `A2AServer` processes share.

    ``await PostgresTaskStore.open(dsn)`` connects and migrates (or let the server do
    it on first use); `aclose` closes the pool. ``channel`` names the NOTIFY channel
    (one per database by default); ``pool_size`` bounds this process's connections
    (plus one for listening).
    """

    _pool_name = "rpcweave-a2a"
    _component = "a2a"
    _migrations = MIGRATIONS

    def __init__(
        self,
        dsn: str,
        *,
        pool_size: int = 10,
        channel: str = _DEFAULT_CHANNEL,
        event_retention: float = 3600.0,
        prune_interval: float = 300.0,
    ) -> None:
        super().__init__(dsn, pool_size=pool_size)
        self.channel = channel
        self.event_retention = event_retention
        self.prune_interval = prune_interval

    # -- plumbing ------------------------------------------------------------------

    def _notify_params(self, tenant: str, task_id: str) -> dict[str, Any]:
        short = len(tenant.encode()) + len(task_id.encode()) < 7000
        return {"channel": self.channel, "short": short}

    # -- tasks ---------------------------------------------------------------------

    async def get_task(self, task_id: str, *, tenant: str = "") -> Task | None:
        snapshot = await self.load_task(task_id, tenant=tenant)
        return None if snapshot is None else snapshot.task

    async def load_task(self, task_id: str, *, tenant: str = "") -> TaskSnapshot | None:
        rows = await self._fetch(
            "SELECT seq, body FROM a2a_tasks WHERE tenant = %(tenant)s AND id = %(id)s",
            {"tenant": tenant, "id": task_id},
        )
        if not rows:
            return None
        return TaskSnapshot(Task.model_validate_json(rows[0][1]), int(rows[0][0]))

    def _task_params(self, task: Task, tenant: str) -> dict[str, Any]:
        return {
            "tenant": tenant,
            "id": task.id,
            "context": task.context_id,
            "state": task.status.state.value,
            "ts": _timestamp_key(task),
            "body": _dump(task),
            **self._notify_params(tenant, task.id),
        }

    async def save_task(self, task: Task, *, tenant: str = "") -> None:
        params = {**self._task_params(task, tenant), "event": None, "mid": None}
        await self._fetch(_CHANGE.format(task_write=_UPSERT_TASK), params)

    async def append(
        self,
        task: Task,
        event: StreamResponse | None,
        *,
        tenant: str = "",
        after: int,
        message_id: str | None = None,
    ) -> int:
        params = {
            **self._task_params(task, tenant),
            "after": after,
            "event": None if event is None else _dump(event),
            "mid": message_id,
        }
        write = _INSERT_TASK if after == 0 else _UPDATE_TASK
        rows = await self._fetch(_CHANGE.format(task_write=write), params)
        if not rows:
            raise StaleTask(f"task {task.id} changed after {after}")
        return int(rows[0][0])

    async def changes_after(
        self, task_id: str, *, tenant: str = "", after: int
    ) -> tuple[TaskSnapshot | None, list[StoredEvent]]:
        rows = await self._fetch(_CHANGES_AFTER, {"tenant": tenant, "id": task_id, "after": after})
        if not rows:
            return None, []
        snapshot = TaskSnapshot(Task.model_validate_json(rows[0][1]), int(rows[0][0]))
        events = [
            StoredEvent(
                int(seq), StreamResponse.model_validate_json(body) if body is not None else None
            )
            for seq, body, _ in rows[1:]
        ]
        return snapshot, events

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        where = ["tenant = %(tenant)s"]
        params: dict[str, Any] = {"tenant": query.tenant, "limit": query.page_size + 1}
        if query.context_id is not None:
            where.append("context_id = %(context)s")
            params["context"] = query.context_id
        if query.status is not None:
            where.append("state = %(state)s")
            params["state"] = query.status.value
        if query.status_timestamp_after is not None:
            where.append("status_ts > %(after)s")
            params["after"] = f"{query.status_timestamp_after:%Y-%m-%dT%H:%M:%S.%f}"
        filters = " AND ".join(where)
        page_where = filters
        if query.page_token:
            params["pts"], params["pid"] = decode_page_token(query.page_token)
            page_where += " AND (status_ts, id) < (%(pts)s, %(pid)s)"
        rows = await self._fetch(
            f"SELECT body, (SELECT COUNT(*) FROM a2a_tasks WHERE {filters}) FROM a2a_tasks"
            f" WHERE {page_where} ORDER BY status_ts DESC, id DESC LIMIT %(limit)s",
            params,
        )
        if not rows:
            total_rows = await self._fetch(
                f"SELECT COUNT(*) FROM a2a_tasks WHERE {filters}", params
            )
            return TaskPage([], "", int(total_rows[0][0]))
        tasks = [Task.model_validate_json(r[0]) for r in rows]
        more = len(tasks) > query.page_size
        tasks = tasks[: query.page_size]
        token = encode_page_token(sort_key(tasks[-1])) if more and tasks else ""
        return TaskPage(tasks, token, int(rows[0][1]))

    # -- message ids ---------------------------------------------------------------

    async def get_message(self, message_id: str, *, tenant: str = "") -> MessageRecord | None:
        claim = await self.get_claim(message_id, tenant=tenant)
        if claim is None or claim.pending or claim.error is not None:
            return None
        return MessageRecord(task_id=claim.task_id, reply=claim.reply)

    async def save_message(
        self, message_id: str, record: MessageRecord, *, tenant: str = ""
    ) -> None:
        await self._fetch(
            "INSERT INTO a2a_messages (tenant, message_id, task_id, reply, pending)"
            " VALUES (%(tenant)s, %(mid)s, %(id)s, %(reply)s, false)"
            " ON CONFLICT (tenant, message_id) DO UPDATE SET task_id = EXCLUDED.task_id,"
            " reply = EXCLUDED.reply, pending = false, error = NULL",
            {
                "tenant": tenant,
                "mid": message_id,
                "id": record.task_id,
                "reply": None if record.reply is None else _dump(record.reply),
            },
        )

    async def claim_message(
        self, message_id: str, *, tenant: str = "", task_id: str, stale_after: float
    ) -> Claim | None:
        params = {"tenant": tenant, "mid": message_id, "id": task_id, "stale": stale_after}
        if await self._fetch(_CLAIM, params):
            return None
        claim = await self.get_claim(message_id, tenant=tenant)
        # Gone in between (cannot happen: claims are never deleted): treat as pending.
        return claim if claim is not None else Claim(pending=True)

    async def get_claim(self, message_id: str, *, tenant: str = "") -> Claim | None:
        rows = await self._fetch(
            "SELECT task_id, reply, pending, seq, error FROM a2a_messages"
            " WHERE tenant = %(tenant)s AND message_id = %(mid)s",
            {"tenant": tenant, "mid": message_id},
        )
        if not rows:
            return None
        task_id, reply, pending, seq, error = rows[0]
        return Claim(
            task_id=task_id,
            reply=Message.model_validate_json(reply) if reply is not None else None,
            pending=bool(pending),
            seq=int(seq),
            error=json.loads(error) if error is not None else None,
        )

    async def fail_claim(
        self, message_id: str, *, tenant: str = "", task_id: str, error: dict[str, Any]
    ) -> None:
        await self._fetch(
            "UPDATE a2a_messages SET pending = false, error = %(error)s"
            " WHERE tenant = %(tenant)s AND message_id = %(mid)s AND task_id = %(id)s"
            " AND pending",
            {"tenant": tenant, "mid": message_id, "id": task_id, "error": json.dumps(error)},
        )

    async def release_claim(self, message_id: str, *, tenant: str = "", task_id: str) -> None:
        # Marked as failed, which `_CLAIM` takes over (only the first claimant wins).
        released = json.dumps({"code": 0, "message": "superseded: its task moved on"})
        await self._fetch(
            "UPDATE a2a_messages SET error = %(error)s"
            " WHERE tenant = %(tenant)s AND message_id = %(mid)s AND task_id = %(id)s"
            " AND NOT pending AND error IS NULL",
            {"tenant": tenant, "mid": message_id, "id": task_id, "error": released},
        )

    # -- push configs --------------------------------------------------------------

    async def save_push_config(
        self, config: TaskPushNotificationConfig, *, tenant: str = ""
    ) -> None:
        assert config.task_id and config.id, "a stored push config has task_id and id"
        await self._fetch(
            "INSERT INTO a2a_push_configs (tenant, task_id, id, body)"
            " VALUES (%(tenant)s, %(task)s, %(id)s, %(body)s)"
            " ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = EXCLUDED.body",
            {"tenant": tenant, "task": config.task_id, "id": config.id, "body": _dump(config)},
        )

    async def get_push_config(
        self, task_id: str, config_id: str, *, tenant: str = ""
    ) -> TaskPushNotificationConfig | None:
        rows = await self._fetch(
            "SELECT body FROM a2a_push_configs"
            " WHERE tenant = %(tenant)s AND task_id = %(task)s AND id = %(id)s",
            {"tenant": tenant, "task": task_id, "id": config_id},
        )
        return TaskPushNotificationConfig.model_validate_json(rows[0][0]) if rows else None

    async def list_push_configs(
        self, task_id: str, *, tenant: str = ""
    ) -> list[TaskPushNotificationConfig]:
        rows = await self._fetch(
            "SELECT body FROM a2a_push_configs WHERE tenant = %(tenant)s AND task_id = %(task)s"
            " ORDER BY created",
            {"tenant": tenant, "task": task_id},
        )
        return [TaskPushNotificationConfig.model_validate_json(r[0]) for r in rows]

    async def delete_push_config(self, task_id: str, config_id: str, *, tenant: str = "") -> bool:
        rows = await self._fetch(
            "DELETE FROM a2a_push_configs"
            " WHERE tenant = %(tenant)s AND task_id = %(task)s AND id = %(id)s RETURNING 1",
            {"tenant": tenant, "task": task_id, "id": config_id},
        )
        return bool(rows)

    async def count_push_configs(self) -> int:
        rows = await self._fetch("SELECT count(*) FROM a2a_push_configs", {})
        return int(rows[0][0])

    # -- fan-out -------------------------------------------------------------------

    async def listen(
        self,
        on_change: Callable[[str, str, int], None],
        on_resync: Callable[[], None],
        started: anyio.Event | None = None,
    ) -> None:
        await self._connect()

        def on_notify(channel: str, payload: str) -> None:
            try:
                tenant, task_id, seq = json.loads(payload)
            except (ValueError, TypeError):
                on_resync()  # "*" (rule 3) or something we did not send
                return
            on_change(str(tenant), str(task_id), int(seq))

        listener = Listener(self.dsn, [self.channel], on_notify=on_notify, on_reconnect=on_resync)
        async with anyio.create_task_group() as task_group:
            await task_group.start(_run_listener, listener)
            if started is not None:
                started.set()
            while True:
                await anyio.sleep(self.prune_interval)
                try:
                    await self.prune()
                except Exception:  # pruning is housekeeping: never stop listening for it
                    import logging

                    logging.getLogger("a2a_layer.postgres").exception("pruning events failed")

    async def prune(self) -> int:
        """Delete events older than ``event_retention`` seconds (rule 4); how many."""
        rows = await self._fetch(
            "WITH d AS (DELETE FROM a2a_task_events"
            " WHERE created_at < now() - make_interval(secs => %(keep)s) RETURNING 1)"
            " SELECT COUNT(*) FROM d",
            {"keep": self.event_retention},
        )
        return int(rows[0][0])


async def _run_listener(
    listener: Listener, *, task_status: Any = anyio.TASK_STATUS_IGNORED
) -> None:
    started = anyio.Event()

    async def run() -> None:
        await listener.run(started)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(run)
        await started.wait()
        task_status.started()
