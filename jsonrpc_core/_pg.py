"""PostgreSQL plumbing shared by the stores that let several server processes share state.

Used by `PostgresEventStore` (here), ``a2a_layer``'s `PostgresTaskStore` and
``mcp_layer``'s `PostgresSubscriptionBus`. Importing this module imports the driver,
psycopg 3 (``pip install 'rpcweave[postgres]'``); ``import jsonrpc_core`` never does.

Rules:

1. psycopg's async connections wait on asyncio's loop (its ``waiting`` module): the
   stores built on them (task store, event store) are asyncio only, and
   `require_asyncio` refuses trio with a clear message. Code that must run on trio too
   and is off the hot path (the subscription bus) uses blocking connections in threads.
2. Schemas are versioned per component in one table, ``rpcweave_migrations``
   (component, version, description, applied_at). `migrate` applies the missing
   versions in order, in one transaction, under a transaction-level advisory lock: two
   replicas starting together never both apply a migration, and a database migrated
   by a newer rpcweave is refused rather than misread.
3. `Listener` owns one connection in LISTEN mode. When it reconnects after losing the
   connection, notifications sent meanwhile are lost, so it calls ``on_reconnect``
   and its users re-read what they follow (every notification here only says "look
   at the table"; the tables are the truth).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
from typing_extensions import Self

from ._backend import is_asyncio

try:
    import psycopg
    from psycopg import sql
    from psycopg.rows import TupleRow
    from psycopg_pool import AsyncConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "PostgreSQL support needs psycopg 3 and psycopg-pool: pip install 'rpcweave[postgres]'"
    ) from exc

__all__ = [
    "NOTIFY_LIMIT",
    "Listener",
    "Migration",
    "PooledStore",
    "SchemaTooNew",
    "listen_statement",
    "migrate",
    "migrate_sync",
    "open_pool",
    "require_asyncio",
]

logger = logging.getLogger("jsonrpc_core.postgres")

NOTIFY_LIMIT = 7900
"""Payload bytes a NOTIFY may carry here (PostgreSQL's limit is 8000)."""

_MIGRATIONS_LOCK = 0x7270_6377  # "rpcw": the advisory lock key of `migrate`


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer rpcweave than this one."""


@dataclass(frozen=True)
class Migration:
    """One step of a component's schema: applied once, in ``version`` order."""

    version: int
    description: str
    sql: str


def require_asyncio(what: str) -> None:
    """Raise unless running under asyncio (rule 1); called from async code only."""
    if not is_asyncio():
        raise RuntimeError(
            f"{what} needs asyncio: the PostgreSQL driver (psycopg 3) supports no other "
            "event loop (such as trio); serve with uvicorn (asyncio) or use SQLite / the "
            "in-memory stores"
        )


async def open_pool(
    dsn: str, *, min_size: int = 1, max_size: int = 10, name: str = "rpcweave"
) -> AsyncConnectionPool:
    """An open pool of autocommit connections to ``dsn``."""
    require_asyncio("a PostgreSQL store")
    pool = AsyncConnectionPool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": True},
        name=name,
    )
    await pool.open(wait=True, timeout=30.0)
    return pool


def listen_statement(channel: str) -> sql.Composed:
    """``LISTEN channel``, with the channel name quoted as an identifier."""
    return sql.SQL("LISTEN {}").format(sql.Identifier(channel))


class PooledStore:
    """A store's pool, opened and its schema migrated on first use (or by `open`).

    A subclass names its pool (``_pool_name``), its schema's component
    (``_component``) and that schema's steps (``_migrations``). ``pool_size`` bounds
    the pool's connections and is read when the pool opens.
    """

    _pool_name: ClassVar[str]
    _component: ClassVar[str]
    _migrations: ClassVar[Sequence[Migration]]

    def __init__(self, dsn: str, *, pool_size: int = 10) -> None:
        self.dsn = dsn
        self.pool_size = pool_size
        self._pool: AsyncConnectionPool | None = None
        self._opening: anyio.Lock | None = None

    @classmethod
    async def open(cls, dsn: str, **options: Any) -> Self:
        """A store on ``dsn``, connected, with its schema migrated."""
        store = cls(dsn, **options)
        await store._connect()
        return store

    async def _connect(self) -> AsyncConnectionPool:
        if self._pool is not None:
            return self._pool
        if self._opening is None:
            self._opening = anyio.Lock()
        async with self._opening:
            if self._pool is None:
                pool = await open_pool(self.dsn, max_size=self.pool_size, name=self._pool_name)
                try:
                    await migrate(pool, self._component, self._migrations)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
        return self._pool

    async def _fetch(self, query: str, params: dict[str, Any]) -> list[TupleRow]:
        pool = await self._connect()
        async with pool.connection() as conn:
            cursor = await conn.execute(query, params)
            return await cursor.fetchall() if cursor.description is not None else []

    async def aclose(self) -> None:
        """Close the connections (the store is not used afterwards)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            with anyio.CancelScope(shield=True):
                await pool.close()


_CREATE_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS rpcweave_migrations ("
    " component TEXT NOT NULL, version INTEGER NOT NULL,"
    " description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " PRIMARY KEY (component, version))"
)
_CURRENT = "SELECT COALESCE(MAX(version), 0) FROM rpcweave_migrations WHERE component = %s"
_RECORD = "INSERT INTO rpcweave_migrations (component, version, description) VALUES (%s, %s, %s)"


def _plan(component: str, steps: Sequence[Migration], current: int) -> list[Migration]:
    """The steps to apply on a schema at ``current`` (raises `SchemaTooNew`)."""
    versions = [step.version for step in steps]
    if versions != sorted(set(versions)):
        raise ValueError("migration versions must be unique and ascending")
    latest = versions[-1] if versions else 0
    if current > latest:
        raise SchemaTooNew(
            f"the database has {component} schema version {current}; this rpcweave "
            f"knows versions up to {latest}: upgrade rpcweave"
        )
    todo = [step for step in steps if step.version > current]
    for step in todo:
        logger.info("migrating %s to version %d: %s", component, step.version, step.description)
    return todo


async def migrate(pool: AsyncConnectionPool, component: str, steps: Sequence[Migration]) -> int:
    """Bring ``component``'s schema up to the last of ``steps``; returns its version."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATIONS_LOCK,))
        await conn.execute(_CREATE_MIGRATIONS)
        row = await (await conn.execute(_CURRENT, (component,))).fetchone()
        for step in _plan(component, steps, int(row[0]) if row is not None else 0):
            await conn.execute(sql.SQL(step.sql))
            await conn.execute(_RECORD, (component, step.version, step.description))
    return steps[-1].version if steps else 0


def migrate_sync(conn: psycopg.Connection[Any], component: str, steps: Sequence[Migration]) -> int:
    """`migrate` for a blocking connection (code that runs the driver in threads)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATIONS_LOCK,))
        conn.execute(_CREATE_MIGRATIONS)
        row = conn.execute(_CURRENT, (component,)).fetchone()
        for step in _plan(component, steps, int(row[0]) if row is not None else 0):
            conn.execute(sql.SQL(step.sql))
            conn.execute(_RECORD, (component, step.version, step.description))
    return steps[-1].version if steps else 0


class Listener:
    """A LISTEN connection that survives reconnects (rule 3).

    ``on_notify(channel, payload)`` runs on the event loop for every notification and
    must not block; ``on_reconnect()`` after every reconnection but the first.
    """

    def __init__(
        self,
        dsn: str,
        channels: Sequence[str],
        *,
        on_notify: Callable[[str, str], None],
        on_reconnect: Callable[[], None] | None = None,
        max_backoff: float = 5.0,
    ) -> None:
        self.dsn = dsn
        self.channels = list(channels)
        self.on_notify = on_notify
        self.on_reconnect = on_reconnect
        self.max_backoff = max_backoff
        self.connected = anyio.Event()

    async def run(self, started: anyio.Event | None = None) -> None:
        """Listen until cancelled; ``started`` is set once the first LISTEN is in place."""
        require_asyncio("a PostgreSQL listener")
        backoff = 0.05
        first = True
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
                async with conn:
                    for channel in self.channels:
                        await conn.execute(listen_statement(channel))
                    self.connected.set()
                    if first:
                        first = False
                        if started is not None:
                            started.set()
                    elif self.on_reconnect is not None:
                        self.on_reconnect()
                    backoff = 0.05
                    async for note in conn.notifies():
                        self.on_notify(note.channel, note.payload)
            except psycopg.Error as exc:
                if first:
                    raise  # the database is not there at all: fail the startup
                self.connected = anyio.Event()
                logger.warning("LISTEN connection lost (%s); reconnecting in %.2fs", exc, backoff)
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, self.max_backoff)
