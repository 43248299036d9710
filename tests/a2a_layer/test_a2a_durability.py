"""A SQLite task store survives the server process being killed (SIGKILL) mid-task:
after a restart the task, its history and its artifacts are there, and a retried send
with the same messageId still finds its task instead of running again."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from a2a_layer import A2AClient
from a2a_layer.types import Task, TaskState

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).resolve().parents[1] / "a2a_fixtures" / "durable_agent.py"
ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def agent_process(db: Path) -> AsyncIterator[tuple[Process, str]]:
    """The durable agent in its own process, and its URL."""
    process = await anyio.open_process([sys.executable, str(AGENT), str(db)], cwd=ROOT)
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(20):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        yield process, line.decode().strip()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.fail_after(10):
            await process.wait()
        await process.aclose()


async def test_tasks_survive_sigkill_of_the_server(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    async with agent_process(db) as (process, url):
        async with A2AClient.connect(url) as client:
            finished = await client.send("finish the first job", message_id="first")
            assert isinstance(finished, Task)
            seen_artifact = False
            with anyio.fail_after(10):
                async for event in client.stream("a long job", message_id="long"):
                    if event.task is not None:
                        running = event.task
                    if event.artifact_update is not None:
                        seen_artifact = True
                        break
        assert seen_artifact
        process.send_signal(signal.SIGKILL)
        with anyio.fail_after(10):
            await process.wait()
        assert process.returncode == -signal.SIGKILL

    async with agent_process(db) as (_, url):
        async with A2AClient.connect(url) as client:
            task = await client.get_task(running.id)
            done = await client.get_task(finished.id)
            listed = await client.list_tasks(include_artifacts=True)
            retried = await client.send("a long job", message_id="long", return_immediately=True)
    assert task.status.state is TaskState.WORKING
    assert [m.parts[0].text for m in task.history or []] == ["a long job", "started"]
    assert task.artifacts is not None
    assert [p.text for p in task.artifacts[0].parts] == ["part one"]
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts is not None and done.artifacts[0].parts[0].text == "finished output"
    assert {t.id for t in listed.tasks} == {running.id, finished.id}
    assert isinstance(retried, Task) and retried.id == running.id
