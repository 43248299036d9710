"""A2A servers as several processes on one PostgreSQL database, behind a round-robin
proxy: tasks made on one replica are read, listed, answered, cancelled and followed on
another; a replica killed mid-stream loses no event for its subscriber; concurrent
sends with one messageId on two replicas run the agent once, and two messages that
share an id but not their content run it once each.

The replicas run under uvicorn (asyncio, the driver's loop); the test side is plain
HTTP, so it runs on asyncio and trio alike.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from scaleout.processes import Replica, replicas
from scaleout.proxy import round_robin_proxy

from a2a_layer import A2AClient, user_message
from a2a_layer.types import Message, StreamResponse, Task, TaskState

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def cluster(pg_module_dsn: str) -> Iterator[list[Replica]]:
    """Three replicas on one database, shared by this module's tests."""
    with replicas("a2a_replica.py", [pg_module_dsn], 3) as started:
        yield started


def spread() -> httpx.AsyncClient:
    """An HTTP client that opens a connection per request (so the proxy spreads them)."""
    return httpx.AsyncClient(
        limits=httpx.Limits(max_keepalive_connections=0),
        timeout=httpx.Timeout(30.0, read=120.0),
    )


@asynccontextmanager
async def client_for(
    url: str, *, http: httpx.AsyncClient | None = None, headers: dict[str, str] | None = None
) -> AsyncIterator[A2AClient]:
    async with A2AClient.connect(url, http=http, headers=headers) as client:
        yield client


def unique(prefix: str = "m") -> str:
    return f"{prefix}-{uuid.uuid4()}"


def chunks_of(task: Task) -> list[str]:
    for artifact in task.artifacts or []:
        if artifact.artifact_id == "chunks":
            return [p.text or "" for p in artifact.parts]
    return []


async def wait_for_file(path: Path) -> str:
    apath = anyio.Path(path)
    with anyio.fail_after(30):
        while not await apath.exists():  # noqa: ASYNC110 - written by another process
            await anyio.sleep(0.02)  # a bounded poll: the file is the only signal
    return await apath.read_text()


async def test_a_task_made_on_one_replica_is_served_by_all(cluster: list[Replica]) -> None:
    r0, r1, r2 = cluster
    async with client_for(r0.url) as a, client_for(r1.url) as b, client_for(r2.url) as c:
        context = unique("ctx")
        made = await a.send(user_message("plain job", context_id=context))
        assert isinstance(made, Task) and made.status.state is TaskState.COMPLETED
        assert (await b.get_task(made.id)) == made
        listed = await c.list_tasks(context_id=context, include_artifacts=True)
        assert [t.id for t in listed.tasks] == [made.id]
        echoed = await b.send("echo")
        assert isinstance(echoed, Message) and echoed.parts[0].text == "echo from r1"
        asked = await a.send("ask")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        answer = user_message("yes", task_id=asked.id, context_id=asked.context_id)
        answered = await c.send(answer)
        assert isinstance(answered, Task) and answered.id == asked.id
        assert answered.status.state is TaskState.COMPLETED
        assert answered.status.message is not None
        assert answered.status.message.parts[0].text == "answered on r2"
        assert [m.parts[0].text for m in (await a.get_task(asked.id)).history or []][:3] == [
            "ask",
            "what now?",
            "yes",
        ]


async def test_cancel_on_one_replica_stops_the_agent_on_another(
    cluster: list[Replica], tmp_path: Path
) -> None:
    r0, r1, r2 = cluster
    mark = tmp_path / "stopped"
    async with client_for(r0.url) as a, client_for(r1.url) as b, client_for(r2.url) as c:
        held = await a.send(f"hold {mark}", return_immediately=True)
        assert isinstance(held, Task)
        with anyio.fail_after(30):
            while (await c.get_task(held.id)).status.state is not TaskState.WORKING:  # noqa: ASYNC110
                await anyio.sleep(0.02)  # a bounded poll of another replica's process
        canceled = await b.cancel_task(held.id)
        assert canceled.status.state is TaskState.CANCELED
        assert await wait_for_file(mark) == "r0"  # the agent on r0 was stopped
        assert (await c.get_task(held.id)).status.state is TaskState.CANCELED


async def test_subscribers_on_other_replicas_see_every_event_in_order(
    cluster: list[Replica], tmp_path: Path
) -> None:
    r0, r1, r2 = cluster
    gate = tmp_path / "gate"
    count = 10
    async with client_for(r0.url) as a, client_for(r1.url) as b, client_for(r2.url) as c:
        started = await a.send(f"gated {count} {gate}", return_immediately=True)
        assert isinstance(started, Task)
        seen: dict[str, list[StreamResponse]] = {"b": [], "c": []}

        async def follow(name: str, client: A2AClient, ready: anyio.Event) -> None:
            async for event in client.subscribe(started.id):
                seen[name].append(event)
                if event.task is not None:
                    ready.set()

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                readies = [anyio.Event(), anyio.Event()]
                tg.start_soon(follow, "b", b, readies[0])
                tg.start_soon(follow, "c", c, readies[1])
                for ready in readies:
                    await ready.wait()
                gate.touch()
        for events in seen.values():
            parts = chunks_of(events[0].task) if events[0].task else []
            for event in events[1:]:
                assert event.task is None  # one stream each: no reconnect happened
                if event.artifact_update is not None:
                    parts += [p.text or "" for p in event.artifact_update.artifact.parts]
            assert parts == [str(i) for i in range(count)]
            last = events[-1].status_update
            assert last is not None and last.status.state is TaskState.COMPLETED


async def test_a_replica_killed_mid_stream_loses_no_event(
    pg_module_dsn: str, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    count = 12
    with replicas("a2a_replica.py", [pg_module_dsn], 3, first=10) as (worker, front, spare):
        async with (
            round_robin_proxy([front.url, spare.url]) as (proxy_url, proxy),
            client_for(worker.url) as a,
            spread() as http,
            client_for(proxy_url, http=http) as client,
        ):
            started = await a.send(f"gated {count} {gate}", return_immediately=True)
            assert isinstance(started, Task)
            parts: list[str] = []
            snapshots = 0
            killed: list[Replica] = []
            with anyio.fail_after(60):
                async for event in client.subscribe(started.id, reconnect_delay=0.05):
                    if event.task is not None:
                        # The task as it is now: it holds what we saw, perhaps more.
                        known = chunks_of(event.task)
                        assert known[: len(parts)] == parts
                        parts = known
                        snapshots += 1
                    if event.artifact_update is not None:
                        parts += [p.text or "" for p in event.artifact_update.artifact.parts]
                    if len(parts) == count // 2 and not killed:
                        # The stream is the proxy's latest connection: kill its replica.
                        killed.append([front, spare][proxy.last])
                        killed[0].kill()
                        gate.touch()
            assert parts == [str(i) for i in range(count)]
            assert snapshots >= 2  # the first subscription and the one after the kill
            assert killed and not killed[0].alive
            final = await a.get_task(started.id)
            assert final.status.state is TaskState.COMPLETED
            assert chunks_of(final) == parts


async def test_one_message_id_sent_to_two_replicas_runs_once(
    cluster: list[Replica], tmp_path: Path
) -> None:
    log, gate, arrivals = tmp_path / "runs", tmp_path / "gate", tmp_path / "arrivals"
    arrivals.mkdir()
    text = f"once {log} {gate}"
    headers = {"x-test-arrivals": str(arrivals)}
    message_id = unique()
    results: list[Task | Message] = []
    streamed: list[StreamResponse] = []
    async with (
        client_for(cluster[0].url, headers=headers) as a,
        client_for(cluster[1].url, headers=headers) as b,
        client_for(cluster[2].url, headers=headers) as c,
    ):

        async def send(client: A2AClient) -> None:
            results.append(await client.send(text, message_id=message_id))

        async def stream() -> None:
            async for event in c.stream(text, message_id=message_id):
                streamed.append(event)

        async def open_gate_once_all_arrived() -> None:
            # The run waits for the gate: each send reaches its replica while it runs.
            for replica in cluster:
                assert await wait_for_file(arrivals / replica.name) == replica.name
            await anyio.Path(gate).touch()

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send, a)
                tg.start_soon(send, b)
                tg.start_soon(stream)
                tg.start_soon(open_gate_once_all_arrived)
        again = await c.send(text, message_id=message_id)
    assert len((await anyio.Path(log).read_text()).splitlines()) == 1
    tasks = [r for r in [*results, again] if isinstance(r, Task)]
    assert len(tasks) == 3 and len({t.id for t in tasks}) == 1
    assert all(t.status.state is TaskState.COMPLETED for t in tasks)
    last = streamed[-1]
    assert (last.task or last.status_update) is not None
    final_state = (
        last.task.status.state if last.task is not None else last.status_update.status.state  # type: ignore[union-attr]
    )
    assert final_state is TaskState.COMPLETED


async def test_one_message_id_for_a_direct_reply_runs_once(cluster: list[Replica]) -> None:
    message_id = unique()
    replies: list[Task | Message] = []
    async with client_for(cluster[0].url) as a, client_for(cluster[1].url) as b:

        async def send(client: A2AClient) -> None:
            replies.append(await client.send("echo", message_id=message_id))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send, a)
                tg.start_soon(send, b)
    assert all(isinstance(r, Message) for r in replies)
    assert len({r.message_id for r in replies if isinstance(r, Message)}) == 1  # one reply, to both


async def test_one_message_id_with_two_contents_on_two_replicas_runs_both(
    cluster: list[Replica], tmp_path: Path
) -> None:
    first_log, second_log = tmp_path / "first", tmp_path / "second"
    message_id = unique()
    async with client_for(cluster[0].url) as a, client_for(cluster[1].url) as b:
        async with client_for(cluster[2].url) as c:
            with anyio.fail_after(60):
                first = await a.send(f"once {first_log}", message_id=message_id)
                second = await b.send(f"once {second_log}", message_id=message_id)
                retried = await c.send(f"once {first_log}", message_id=message_id)
    assert isinstance(first, Task) and isinstance(second, Task) and isinstance(retried, Task)
    assert first.id != second.id and retried.id == first.id
    for log in (first_log, second_log):
        assert len((await anyio.Path(log).read_text()).splitlines()) == 1


async def test_a_resend_once_its_task_moved_on_runs_again_on_any_replica(
    cluster: list[Replica],
) -> None:
    message_id = unique()
    async with client_for(cluster[0].url) as a, client_for(cluster[1].url) as b:
        async with client_for(cluster[2].url) as c:
            with anyio.fail_after(60):
                first = await a.send("ask", message_id=message_id)
                retried = await b.send("ask", message_id=message_id)
                assert isinstance(first, Task) and isinstance(retried, Task)
                answered = await c.send("go on", task_id=first.id)
                again = await b.send("ask", message_id=message_id)
    assert retried.id == first.id
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert isinstance(again, Task) and again.id != first.id
    assert again.status.state is TaskState.INPUT_REQUIRED
