"""`PostgresEventStore`: SSE streams kept in PostgreSQL, so any replica can resume them.

A `SharedEventStore` for `JsonRpcHTTPApp` (``HTTPServerOptions.event_store``) when
several server processes serve one endpoint. Needs the ``postgres`` extra (psycopg 3,
asyncio only); ``import jsonrpc_core`` does not load it until it is used. Rules:

1. An event id is ``<stream>:<n>``: the n-th event of the stream, numbered by the
   database in one statement with the insert, so replicas never hand out one id twice.
   Every append notifies channel ``channel`` with ``<stream>:<n>`` (ids are short).
2. The schema is versioned (``rpcweave_migrations``, component ``jsonrpc_sse``).
3. A stream keeps its last ``max_events_per_stream`` events; streams untouched for
   ``retention`` seconds are dropped with their events, sessions after
   ``session_retention`` seconds. A replay that would skip dropped events says so
   (``Replay.complete``).
4. `follow` replays and then tails a stream through its own LISTEN connection: it ends
   when the stream has ended (`end`), when nothing arrives for ``follow_idle`` seconds
   (the client resumes again from the last id it got), or when the caller stops.
   At most ``max_followers`` follow at once in a process; past that, 503.
5. A session is known with a digest of its principal's ``repr`` (``None`` for no
   principal); a principal whose ``repr`` differs between processes (one that shows a
   memory address) is never recognised elsewhere, so its streams resume only locally.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import psycopg

from ._event_store import Replay, split_event_id
from ._pg import Migration, PooledStore, listen_statement

__all__ = ["MIGRATIONS", "PostgresEventStore", "principal_digest"]

MIGRATIONS = [
    Migration(
        1,
        "SSE streams, their events, the sessions that own them",
        """
        CREATE TABLE rpcweave_sse_streams (
            stream_id TEXT COLLATE "C" PRIMARY KEY,
            last_seq BIGINT NOT NULL,
            ended BOOLEAN NOT NULL DEFAULT false,
            updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE INDEX rpcweave_sse_streams_by_age ON rpcweave_sse_streams (updated_at);
        CREATE TABLE rpcweave_sse_events (
            stream_id TEXT COLLATE "C" NOT NULL
                REFERENCES rpcweave_sse_streams (stream_id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            data BYTEA NOT NULL,
            PRIMARY KEY (stream_id, seq)
        );
        CREATE TABLE rpcweave_sse_sessions (
            session_id TEXT COLLATE "C" PRIMARY KEY,
            principal TEXT,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE INDEX rpcweave_sse_sessions_by_age ON rpcweave_sse_sessions (created_at);
        """,
    ),
]

_APPEND = """
WITH s AS (
    INSERT INTO rpcweave_sse_streams (stream_id, last_seq) VALUES (%(sid)s, 1)
    ON CONFLICT (stream_id) DO UPDATE
    SET last_seq = rpcweave_sse_streams.last_seq + 1, updated_at = now()
    RETURNING last_seq
),
e AS (
    INSERT INTO rpcweave_sse_events (stream_id, seq, data)
    SELECT %(sid)s, last_seq, %(data)s FROM s
),
d AS (
    DELETE FROM rpcweave_sse_events
    WHERE stream_id = %(sid)s AND seq = (SELECT last_seq FROM s) - %(window)s
)
SELECT last_seq, pg_notify(%(channel)s, %(sid)s || ':' || last_seq) FROM s
"""

_AFTER = """
SELECT s.last_seq, s.ended, e.seq, e.data
FROM rpcweave_sse_streams s
LEFT JOIN rpcweave_sse_events e ON e.stream_id = s.stream_id AND e.seq > %(seq)s
WHERE s.stream_id = %(sid)s
ORDER BY e.seq
LIMIT %(limit)s
"""

_PRUNE_EVERY = 1000  # appends between two prunings


def principal_digest(principal: Any) -> str | None:
    """How a session's principal is recognised by other processes (rule 5)."""
    if principal is None:
        return None
    return hashlib.sha256(repr(principal).encode()).hexdigest()


class PostgresEventStore(PooledStore):
    """A `jsonrpc_core.http.SharedEventStore` in PostgreSQL (see module rules).

    ``await PostgresEventStore.open(dsn)`` connects and migrates, or the first use
    does; `aclose` closes its connections.
    """

    _pool_name = "rpcweave-sse"
    _component = "jsonrpc_sse"
    _migrations = MIGRATIONS

    def __init__(
        self,
        dsn: str,
        *,
        pool_size: int = 10,
        channel: str = "rpcweave_sse",
        max_events_per_stream: int = 1000,
        retention: float = 3600.0,
        session_retention: float = 86400.0,
        follow_idle: float = 30.0,
        max_followers: int = 64,
    ) -> None:
        super().__init__(dsn, pool_size=pool_size)
        self.channel = channel
        self.max_events_per_stream = max_events_per_stream
        self.retention = retention
        self.session_retention = session_retention
        self.follow_idle = follow_idle
        self.max_followers = max_followers
        self._followers: anyio.Semaphore | None = None
        self._appends = 0

    # -- EventStore ----------------------------------------------------------------

    async def append(self, stream_id: str, data: bytes) -> str:
        rows = await self._fetch(
            _APPEND,
            {
                "sid": stream_id,
                "data": data,
                "window": self.max_events_per_stream,
                "channel": self.channel,
            },
        )
        self._appends += 1
        if self._appends % _PRUNE_EVERY == 0:
            await self.prune()
        return f"{stream_id}:{rows[0][0]}"

    async def replay_after(self, last_event_id: str) -> Replay | None:
        parsed = split_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        rows = await self._fetch(
            _AFTER, {"sid": stream_id, "seq": seq, "limit": self.max_events_per_stream + 1}
        )
        if not rows or seq > rows[0][0]:
            return None
        last = int(rows[0][0])
        events = [(f"{stream_id}:{n}", bytes(data)) for _, _, n, data in rows if n is not None]
        numbers = [int(n) for _, _, n, _ in rows if n is not None]
        return Replay(stream_id, events, complete=numbers == list(range(seq + 1, last + 1)))

    async def forget(self, stream_id: str) -> None:
        await self._fetch(
            "DELETE FROM rpcweave_sse_streams WHERE stream_id = %(sid)s", {"sid": stream_id}
        )

    # -- SharedEventStore ----------------------------------------------------------

    async def register_session(self, session_id: str, principal: Any) -> None:
        await self._fetch(
            "INSERT INTO rpcweave_sse_sessions (session_id, principal) VALUES (%(id)s, %(p)s)"
            " ON CONFLICT (session_id) DO NOTHING",
            {"id": session_id, "p": principal_digest(principal)},
        )

    async def forget_session(self, session_id: str) -> None:
        await self._fetch(
            "DELETE FROM rpcweave_sse_sessions WHERE session_id = %(id)s", {"id": session_id}
        )

    async def session_known(self, session_id: str, principal: Any) -> bool:
        rows = await self._fetch(
            "SELECT principal FROM rpcweave_sse_sessions WHERE session_id = %(id)s",
            {"id": session_id},
        )
        return bool(rows) and rows[0][0] == principal_digest(principal)

    async def end(self, stream_id: str) -> None:
        await self._fetch(
            "WITH u AS (UPDATE rpcweave_sse_streams SET ended = true, updated_at = now()"
            " WHERE stream_id = %(sid)s RETURNING last_seq)"
            " SELECT pg_notify(%(channel)s, %(sid)s || ':' || last_seq) FROM u",
            {"sid": stream_id, "channel": self.channel},
        )

    @asynccontextmanager
    async def follow(
        self, last_event_id: str
    ) -> AsyncIterator[AsyncIterator[tuple[str, bytes]] | None]:
        """The events after ``last_event_id``, then new ones as they come (rule 4);
        ``None`` if the id names no stored stream."""
        parsed = split_event_id(last_event_id)
        if parsed is None:
            yield None
            return
        if self._followers is None:
            self._followers = anyio.Semaphore(self.max_followers)
        try:
            self._followers.acquire_nowait()
        except anyio.WouldBlock:
            from ._http_common import HTTPError

            raise HTTPError(503, "Service Unavailable: too many resumed streams") from None
        try:
            await self._connect()
            conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
            async with conn:
                await conn.execute(listen_statement(self.channel))
                stream_id, seq = parsed
                # Listening first, reading second: nothing appended in between is missed.
                rows = await self._fetch(_AFTER, {"sid": stream_id, "seq": seq, "limit": 1})
                if not rows or seq > rows[0][0]:
                    yield None
                    return
                yield self._tail(conn, stream_id, seq)
        finally:
            self._followers.release()

    async def _tail(
        self, conn: psycopg.AsyncConnection[Any], stream_id: str, seq: int
    ) -> AsyncIterator[tuple[str, bytes]]:
        prefix = stream_id + ":"
        while True:
            rows = await self._fetch(_AFTER, {"sid": stream_id, "seq": seq, "limit": 500})
            if not rows:
                return  # forgotten meanwhile
            for _, _, n, data in rows:
                if n is not None:
                    seq = int(n)
                    yield f"{stream_id}:{seq}", bytes(data)
            last, ended = int(rows[0][0]), bool(rows[0][1])
            if seq < last:
                if not any(n is not None for _, _, n, _ in rows):
                    seq = last  # the missing events were dropped (rule 3)
                continue  # more than one page
            if ended:
                return
            woken = False
            async for note in conn.notifies(timeout=self.follow_idle):
                if note.payload.startswith(prefix):
                    woken = True
                    break
            if not woken:
                return  # idle: the client resumes again from its last id

    async def prune(self) -> None:
        """Drop old streams and sessions (rule 3)."""
        await self._fetch(
            "DELETE FROM rpcweave_sse_streams"
            " WHERE updated_at < now() - make_interval(secs => %(keep)s)",
            {"keep": self.retention},
        )
        await self._fetch(
            "DELETE FROM rpcweave_sse_sessions"
            " WHERE created_at < now() - make_interval(secs => %(keep)s)",
            {"keep": self.session_retention},
        )
