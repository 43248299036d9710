"""`PostgresSubscriptionBus`: ``subscriptions/listen`` across replicas, through PostgreSQL.

A `SubscriptionBus` for servers running as several processes: a change published on
any replica reaches the open ``subscriptions/listen`` streams of every replica. Needs
the ``postgres`` extra. Rules, beside those of the bus interface (``_subscriptions``):

1. Every event goes through the database, even to this process's own subscribers:
   ``publish`` sends a NOTIFY on ``channel``; each process keeps one LISTEN connection
   while it has subscribers, so every subscriber of every replica sees the events in
   the order the database delivered them.
2. The payload is the event as JSON. One larger than a NOTIFY may carry (a big task
   state) is written to ``mcp_change_events`` and the NOTIFY carries its row number
   (``#n``); rows older than ``retention`` seconds are deleted.
3. The driver runs blocking, in worker threads (publishing) and in one listening
   thread that hands events to the event loop: so the bus works under asyncio and
   trio alike. A lost listening connection ends every subscription gracefully (their
   clients listen again) rather than silently missing events.
4. The listener starts with the first subscription (which waits until it is listening:
   nothing published after its acknowledgement is missed) and stops with the last.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import psycopg
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from jsonrpc_core.postgres import NOTIFY_LIMIT, Migration, listen_statement, migrate_sync

from ._subscriptions import ChangeEvent

__all__ = ["MIGRATIONS", "PostgresSubscriptionBus"]

logger = logging.getLogger("mcp_layer.subscriptions")

MIGRATIONS = [
    Migration(
        1,
        "change events too large for a NOTIFY payload",
        """
        CREATE TABLE mcp_change_events (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            body TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE INDEX mcp_change_events_by_age ON mcp_change_events (created_at);
        """,
    ),
]

_POLL = 0.2  # seconds the listening thread waits before looking at its stop flag


def _event_from(body: str) -> ChangeEvent:
    value = json.loads(body)
    return ChangeEvent(
        kind=value["kind"],
        uri=value.get("uri"),
        task_id=value.get("task_id"),
        task=value.get("task"),
    )


class PostgresSubscriptionBus:
    """A `SubscriptionBus` shared by replicas through PostgreSQL (see module rules)."""

    def __init__(
        self,
        dsn: str,
        *,
        channel: str = "rpcweave_mcp_changes",
        max_buffered: int = 64,
        retention: float = 600.0,
    ) -> None:
        self.dsn = dsn
        self.channel = channel
        self.max_buffered = max_buffered
        self.retention = retention
        self._subscribers: set[MemoryObjectSendStream[ChangeEvent]] = set()
        self._publisher: psycopg.Connection[Any] | None = None
        self._publish_lock = threading.Lock()
        self._migrated = False
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        self._starting: anyio.Lock | None = None

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions this process has open."""
        return len(self._subscribers)

    # -- publishing ----------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[Any]:
        if self._publisher is None or self._publisher.closed:
            self._publisher = psycopg.connect(self.dsn, autocommit=True)
        if not self._migrated:
            migrate_sync(self._publisher, "mcp_subscriptions", MIGRATIONS)
            self._migrated = True
        return self._publisher

    def _publish_blocking(self, body: str) -> None:
        with self._publish_lock:
            for attempt in (1, 2):
                conn = self._connection()
                try:
                    payload = body
                    if len(body.encode()) > NOTIFY_LIMIT:
                        row = conn.execute(
                            "INSERT INTO mcp_change_events (body) VALUES (%s) RETURNING id",
                            (body,),
                        ).fetchone()
                        assert row is not None
                        payload = f"#{row[0]}"
                        conn.execute(
                            "DELETE FROM mcp_change_events"
                            " WHERE created_at < now() - make_interval(secs => %s)",
                            (self.retention,),
                        )
                    conn.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))
                    return
                except psycopg.OperationalError:
                    self._publisher = None
                    if attempt == 2:
                        raise

    async def publish(self, event: ChangeEvent) -> None:
        await anyio.to_thread.run_sync(self._publish_blocking, json.dumps(asdict(event)))

    # -- subscribing ---------------------------------------------------------------

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[MemoryObjectReceiveStream[ChangeEvent]]:
        send, receive = anyio.create_memory_object_stream[ChangeEvent](self.max_buffered)
        if self._starting is None:
            self._starting = anyio.Lock()
        async with self._starting:
            self._subscribers.add(send)
            listener = self._listener
            if listener is None or not listener.is_alive() or self._stop.is_set():
                try:
                    await self._start_listener()
                except BaseException:
                    self._subscribers.discard(send)
                    raise
        try:
            async with receive:
                yield receive
        finally:
            self._subscribers.discard(send)
            send.close()
            if not self._subscribers:
                self._stop.set()

    async def _start_listener(self) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []
        self._stop = threading.Event()
        thread = threading.Thread(
            target=self._listen,
            args=(anyio.lowlevel.current_token(), self._stop, ready, failure),
            name="rpcweave-mcp-subscriptions",
            daemon=True,
        )
        thread.start()
        await anyio.to_thread.run_sync(ready.wait, abandon_on_cancel=True)
        if failure:
            raise failure[0]
        self._listener = thread

    def _listen(
        self,
        token: anyio.lowlevel.EventLoopToken,
        stop: threading.Event,
        ready: threading.Event,
        failure: list[BaseException],
    ) -> None:
        try:
            conn = psycopg.connect(self.dsn, autocommit=True)
        except BaseException as exc:
            failure.append(exc)
            ready.set()
            return
        reader: list[psycopg.Connection[Any]] = []  # for large events (rule 2), on demand
        try:
            with conn:
                conn.execute(listen_statement(self.channel))
                ready.set()
                while not stop.is_set():
                    payloads = [note.payload for note in conn.notifies(timeout=_POLL)]
                    for payload in payloads:
                        event = self._decode(reader, payload)
                        if event is not None:
                            anyio.from_thread.run_sync(self._dispatch, event, token=token)
        except Exception as exc:  # the connection is gone: every subscription ends (rule 3)
            if not stop.is_set():
                logger.warning("subscriptions/listen connection lost: %s", exc)
                try:
                    anyio.from_thread.run_sync(self._end_all, token=token)
                except RuntimeError:
                    pass  # the event loop is gone as well
        finally:
            ready.set()
            for extra in reader:
                extra.close()

    def _decode(self, reader: list[psycopg.Connection[Any]], payload: str) -> ChangeEvent | None:
        try:
            if payload.startswith("#"):
                if not reader:
                    reader.append(psycopg.connect(self.dsn, autocommit=True))
                row = (
                    reader[0]
                    .execute(
                        "SELECT body FROM mcp_change_events WHERE id = %s", (int(payload[1:]),)
                    )
                    .fetchone()
                )
                return None if row is None else _event_from(row[0])
            return _event_from(payload)
        except (ValueError, KeyError, TypeError):
            logger.warning("ignored a change notification that is not an event: %.80r", payload)
            return None

    def _dispatch(self, event: ChangeEvent) -> None:
        for send in list(self._subscribers):
            try:
                send.send_nowait(event)
            except anyio.WouldBlock:
                logger.warning("a subscriber fell %d events behind; dropping it", self.max_buffered)
                self._subscribers.discard(send)
                send.close()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._subscribers.discard(send)

    def _end_all(self) -> None:
        subscribers, self._subscribers = self._subscribers, set()
        for send in subscribers:
            send.close()

    async def close(self) -> None:
        self._stop.set()
        self._end_all()

        def close_publisher() -> None:
            with self._publish_lock:
                if self._publisher is not None:
                    self._publisher.close()
                    self._publisher = None

        await anyio.to_thread.run_sync(close_publisher)
