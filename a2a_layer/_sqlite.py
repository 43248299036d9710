"""`SQLiteTaskStore`: the `TaskStore` on disk, with the standard library's sqlite3.

Rules:

1. Every call runs in a worker thread (``anyio.to_thread``), never on the event loop,
   one at a time (one connection, guarded by a lock): SQLite serialises writers anyway.
2. The database runs in WAL mode with ``synchronous=NORMAL``: a committed write survives
   the process being killed (SIGKILL) at any point; only an OS crash or power loss may
   lose the last transactions.
3. A task row holds the whole task as JSON (rule 1 of ``_store``) plus the columns that
   ListTasks filters and orders on; the JSON is written and read with the models, so a
   restarted server sees exactly the tasks, histories and artifacts it saved.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from ._store import (
    MessageRecord,
    TaskPage,
    TaskQuery,
    TaskStore,
    _timestamp_key,
    decode_page_token,
    encode_page_token,
    sort_key,
)
from .types import Message, Task, TaskPushNotificationConfig

__all__ = ["SQLiteTaskStore"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT,
    state TEXT NOT NULL,
    status_ts TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS tasks_by_time ON tasks (tenant, status_ts DESC, id DESC);
CREATE INDEX IF NOT EXISTS tasks_by_context ON tasks (tenant, context_id);
CREATE TABLE IF NOT EXISTS messages (
    tenant TEXT NOT NULL,
    message_id TEXT NOT NULL,
    task_id TEXT,
    reply TEXT,
    PRIMARY KEY (tenant, message_id)
);
CREATE TABLE IF NOT EXISTS push_configs (
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, task_id, id)
);
"""


class SQLiteTaskStore(TaskStore):
    """A `TaskStore` in one SQLite file (see module rules); ``":memory:"`` for tests.

    Open it with ``await SQLiteTaskStore.open(path)`` or let the server open it on
    first use; close it with `aclose`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @classmethod
    async def open(cls, path: str | Path) -> SQLiteTaskStore:
        """A store on ``path`` with its tables created."""
        store = cls(path)
        await store._run(lambda conn: None)
        return store

    # -- plumbing ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=5000")
        conn.executescript(_SCHEMA)
        return conn

    def _call(self, func: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = func(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    async def _run(self, func: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._call, func)

    async def aclose(self) -> None:
        def close() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await anyio.to_thread.run_sync(close)

    # -- tasks ---------------------------------------------------------------------

    async def get_task(self, task_id: str, *, tenant: str = "") -> Task | None:
        row = await self._run(
            lambda c: c.execute(
                "SELECT body FROM tasks WHERE tenant = ? AND id = ?", (tenant, task_id)
            ).fetchone()
        )
        return None if row is None else Task.model_validate_json(row[0])

    async def save_task(self, task: Task, *, tenant: str = "") -> None:
        body = task.model_dump_json(by_alias=True, exclude_none=True)
        values = (
            tenant,
            task.id,
            task.context_id,
            task.status.state.value,
            _timestamp_key(task),
            body,
        )
        await self._run(
            lambda c: c.execute(
                "INSERT OR REPLACE INTO tasks (tenant, id, context_id, state, status_ts, body)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                values,
            )
        )

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        where = ["tenant = ?"]
        args: list[Any] = [query.tenant]
        if query.context_id is not None:
            where.append("context_id = ?")
            args.append(query.context_id)
        if query.status is not None:
            where.append("state = ?")
            args.append(query.status.value)
        if query.status_timestamp_after is not None:
            where.append("status_ts > ?")
            args.append(f"{query.status_timestamp_after:%Y-%m-%dT%H:%M:%S.%f}")
        filters = " AND ".join(where)
        page_where, page_args = filters, list(args)
        if query.page_token:
            ts, task_id = decode_page_token(query.page_token)
            page_where += " AND (status_ts < ? OR (status_ts = ? AND id < ?))"
            page_args += [ts, ts, task_id]
        limit = query.page_size + 1

        def run(conn: sqlite3.Connection) -> tuple[int, list[str]]:
            total = conn.execute(f"SELECT COUNT(*) FROM tasks WHERE {filters}", args).fetchone()
            rows = conn.execute(
                f"SELECT body FROM tasks WHERE {page_where}"
                " ORDER BY status_ts DESC, id DESC LIMIT ?",
                [*page_args, limit],
            ).fetchall()
            return int(total[0]), [r[0] for r in rows]

        total, bodies = await self._run(run)
        tasks = [Task.model_validate_json(b) for b in bodies]
        more = len(tasks) > query.page_size
        tasks = tasks[: query.page_size]
        token = encode_page_token(sort_key(tasks[-1])) if more and tasks else ""
        return TaskPage(tasks, token, total)

    # -- message ids ---------------------------------------------------------------

    async def get_message(self, message_id: str, *, tenant: str = "") -> MessageRecord | None:
        row = await self._run(
            lambda c: c.execute(
                "SELECT task_id, reply FROM messages WHERE tenant = ? AND message_id = ?",
                (tenant, message_id),
            ).fetchone()
        )
        if row is None:
            return None
        reply = Message.model_validate_json(row[1]) if row[1] else None
        return MessageRecord(task_id=row[0], reply=reply)

    async def save_message(
        self, message_id: str, record: MessageRecord, *, tenant: str = ""
    ) -> None:
        reply = (
            record.reply.model_dump_json(by_alias=True, exclude_none=True)
            if record.reply is not None
            else None
        )
        values = (tenant, message_id, record.task_id, reply)
        await self._run(
            lambda c: c.execute(
                "INSERT OR REPLACE INTO messages (tenant, message_id, task_id, reply)"
                " VALUES (?, ?, ?, ?)",
                values,
            )
        )

    # -- push configs --------------------------------------------------------------

    async def save_push_config(
        self, config: TaskPushNotificationConfig, *, tenant: str = ""
    ) -> None:
        assert config.task_id and config.id, "a stored push config has task_id and id"
        body = config.model_dump_json(by_alias=True, exclude_none=True)
        key = (tenant, config.task_id, config.id)

        def run(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT seq FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?", key
            ).fetchone()
            if row is None:
                row = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM push_configs").fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO push_configs (tenant, task_id, id, seq, body)"
                " VALUES (?, ?, ?, ?, ?)",
                (*key, row[0], body),
            )

        await self._run(run)

    async def get_push_config(
        self, task_id: str, config_id: str, *, tenant: str = ""
    ) -> TaskPushNotificationConfig | None:
        row = await self._run(
            lambda c: c.execute(
                "SELECT body FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?",
                (tenant, task_id, config_id),
            ).fetchone()
        )
        return None if row is None else TaskPushNotificationConfig.model_validate_json(row[0])

    async def list_push_configs(
        self, task_id: str, *, tenant: str = ""
    ) -> list[TaskPushNotificationConfig]:
        rows = await self._run(
            lambda c: c.execute(
                "SELECT body FROM push_configs WHERE tenant = ? AND task_id = ? ORDER BY seq",
                (tenant, task_id),
            ).fetchall()
        )
        return [TaskPushNotificationConfig.model_validate_json(r[0]) for r in rows]

    async def delete_push_config(self, task_id: str, config_id: str, *, tenant: str = "") -> bool:
        count = await self._run(
            lambda c: (
                c.execute(
                    "DELETE FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?",
                    (tenant, task_id, config_id),
                ).rowcount
            )
        )
        return bool(count)

    async def count_push_configs(self) -> int:
        row = await self._run(lambda c: c.execute("SELECT COUNT(*) FROM push_configs").fetchone())
        return int(row[0])
