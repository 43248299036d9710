"""`PostgresEventStore`: the `EventStore` contract of the in-memory store (ids that name
their stream, replay after an id, bounded windows that say when a replay is partial),
plus what sharing adds: sessions known with their principal, and `follow`, which
replays and then tails a stream another store instance (replica) is writing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from jsonrpc_core import InMemoryEventStore
from jsonrpc_core.http import SharedEventStore
from jsonrpc_core.postgres import PostgresEventStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    # psycopg's async connections run on asyncio only (see jsonrpc_core._pg, rule 1).
    return "asyncio"


@pytest.fixture
async def store(pg_dsn: str) -> AsyncIterator[PostgresEventStore]:
    opened = await PostgresEventStore.open(pg_dsn, max_events_per_stream=3, follow_idle=5)
    try:
        yield opened
    finally:
        await opened.aclose()


async def test_replay_matches_the_in_memory_store(store: PostgresEventStore) -> None:
    memory = InMemoryEventStore(max_events_per_stream=3)
    for candidate in (memory, store):
        ids = [await candidate.append("s.a", f"e{i}".encode()) for i in range(5)]
        assert ids == [f"s.a:{i}" for i in range(1, 6)]
        await candidate.append("s.b", b"other")
        replay = await candidate.replay_after("s.a:3")
        assert replay is not None and replay.complete
        assert replay.events == [("s.a:4", b"e3"), ("s.a:5", b"e4")]
        partial = await candidate.replay_after("s.a:1")  # events 2 fell out of the window
        assert partial is not None and not partial.complete
        assert [i for i, _ in partial.events] == ["s.a:3", "s.a:4", "s.a:5"]
        assert await candidate.replay_after("s.a:9") is None
        assert await candidate.replay_after("nope:1") is None
        assert await candidate.replay_after("garbage") is None
        await candidate.forget("s.a")
        assert await candidate.replay_after("s.a:3") is None
    assert isinstance(store, SharedEventStore) and not isinstance(memory, SharedEventStore)


async def test_sessions_are_known_with_their_principal(store: PostgresEventStore) -> None:
    await store.register_session("sess", {"sub": "alice"})
    assert await store.session_known("sess", {"sub": "alice"})
    assert not await store.session_known("sess", {"sub": "mallory"})
    assert not await store.session_known("sess", None)
    assert not await store.session_known("other", {"sub": "alice"})
    await store.forget_session("sess")
    assert not await store.session_known("sess", {"sub": "alice"})


async def test_follow_replays_then_tails_until_the_end(pg_dsn: str) -> None:
    writer = await PostgresEventStore.open(pg_dsn)
    reader = await PostgresEventStore.open(pg_dsn, follow_idle=10)
    try:
        first = await writer.append("sess.s", b"")  # the priming event
        await writer.append("sess.s", b"one")
        got: list[tuple[str, bytes]] = []
        async with reader.follow(first) as events:
            assert events is not None

            async def write_more() -> None:
                await writer.append("sess.s", b"two")
                await writer.append("sess.s", b"three")
                await writer.end("sess.s")

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    async for event in events:
                        got.append(event)
                        if len(got) == 1:
                            tg.start_soon(write_more)
        assert got == [("sess.s:2", b"one"), ("sess.s:3", b"two"), ("sess.s:4", b"three")]
        async with reader.follow("sess.s:9") as missing:
            assert missing is None
    finally:
        await writer.aclose()
        await reader.aclose()
