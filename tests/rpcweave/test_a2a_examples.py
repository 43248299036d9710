"""The A2A examples: the TCK agent's messageId contract, and the research agent driving
the coding agent by streaming, polling and push, over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a_fixtures.harness import BASE, in_process

from a2a_layer import A2AClient, SQLiteTaskStore, text_of
from a2a_layer.types import Message, StreamResponse, Task, TaskState
from jsonrpc_core import running_server
from rpcweave.examples.a2a import coding_agent, research_agent, tck_agent

pytestmark = pytest.mark.anyio


def kinds(events: list[StreamResponse]) -> list[str]:
    return [next(iter(e.model_dump(exclude_none=True))) for e in events]


def parts(task: Task) -> list[dict[str, Any]]:
    assert task.artifacts
    return [p.model_dump(mode="json", exclude_none=True) for p in task.artifacts[0].parts]


async def test_tck_agent_contract(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tck_agent, "RESUBSCRIBE_DELAY", 0.2)
    server = tck_agent.build_server(push=True)
    async with in_process(server) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        async with A2AClient.connect(BASE, http=http) as client:

            async def send(prefix: str) -> Task | Message:
                return await client.send("hi", message_id=f"{prefix}-{id(prefix)}")

            async def stream(prefix: str) -> list[StreamResponse]:
                return [e async for e in client.stream("hi", message_id=f"{prefix}-x")]

            complete = await send("tck-complete-task")
            text = await send("tck-artifact-text")
            url = await send("tck-artifact-file-url")
            raw = await send("tck-artifact-file")
            data = await send("tck-artifact-data")
            reply = await send("tck-message-response")
            asked = await send("tck-input-required")
            rejected = await send("tck-reject-task")
            other = await send("something-else")
            streams = {
                p: await stream(p)
                for p in (
                    "tck-stream-001",
                    "tck-stream-002",
                    "tck-stream-003",
                    "tck-stream-ordering-001",
                    "tck-stream-artifact-text",
                    "tck-stream-artifact-file",
                    "tck-stream-artifact-chunked",
                )
            }
            slow = await client.send(
                "hi", message_id="test-resubscribe-message-id-1", return_immediately=True
            )
            assert isinstance(slow, Task)
            with anyio.fail_after(5):
                resubscribed = [e async for e in client.subscribe(slow.id)]
    assert [i["protocolBinding"] for i in card["supportedInterfaces"][:2]] == [
        "JSONRPC",
        "HTTP+JSON",
    ]
    assert card["supportedInterfaces"][1]["url"].endswith("/rest")
    assert card["capabilities"]["streaming"] and card["capabilities"]["pushNotifications"]
    assert isinstance(complete, Task) and text_of(complete.status.message) == "Hello from TCK"
    assert isinstance(text, Task) and parts(text) == [{"text": "Generated text content"}]
    assert isinstance(url, Task) and parts(url)[0]["url"] == "https://example.com/output.txt"
    assert isinstance(raw, Task)
    assert parts(raw)[0]["filename"] == "output.txt"
    assert parts(raw)[0]["mediaType"] == "text/plain" and "raw" in parts(raw)[0]
    assert isinstance(data, Task) and parts(data) == [{"data": {"key": "value", "count": 42}}]
    assert isinstance(reply, Message) and text_of(reply) == "Direct message response"
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(rejected, Task) and rejected.status.state is TaskState.REJECTED
    assert isinstance(other, Task) and other.status.state is TaskState.COMPLETED
    full = ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    for prefix in ("tck-stream-001", "tck-stream-003", "tck-stream-ordering-001"):
        assert kinds(streams[prefix]) == full
    assert kinds(streams["tck-stream-002"]) == ["task", "statusUpdate"]
    assert kinds(streams["tck-stream-artifact-text"]) == full
    assert kinds(streams["tck-stream-artifact-file"]) == full
    chunked = streams["tck-stream-artifact-chunked"]
    assert kinds(chunked) == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    first, second = chunked[2].artifact_update, chunked[3].artifact_update
    assert first is not None and second is not None
    assert (text_of(first.artifact), first.append, first.last_chunk) == ("chunk-1 ", False, False)
    assert (text_of(second.artifact), second.append, second.last_chunk) == ("chunk-2", True, True)
    assert resubscribed[0].task is not None
    assert resubscribed[0].task.status.state is TaskState.WORKING
    last = resubscribed[-1].status_update
    assert last is not None and last.status.state is TaskState.COMPLETED


def test_tck_agent_store_flag(tmp_path: Path) -> None:
    assert tck_agent.open_store(None) is None
    store = tck_agent.open_store(f"sqlite:{tmp_path / 't.db'}")
    assert isinstance(store, SQLiteTaskStore)
    with pytest.raises(SystemExit):
        tck_agent.open_store("postgres:x")


async def test_research_agent_drives_the_coding_agent() -> None:
    lines: list[str] = []
    # The research agent's webhook listens on 127.0.0.1: private targets are opt-in.
    server = coding_agent.build_server(delay=0, allow_private_webhooks=True)
    async with running_server(server.asgi_app()) as url:
        with anyio.fail_after(30):
            results = await research_agent.research(url, ["stream", "poll", "push"], lines.append)
    assert set(results) == {"stream", "poll", "push"}
    for mode, task in results.items():
        assert task.status.state is TaskState.COMPLETED, mode
        names = [a.name for a in task.artifacts or []]
        assert names == ["reverse.py", "test_reverse.py"], mode
        assert "return text[::-1]" in text_of((task.artifacts or [])[0])
    text = "\n".join(lines)
    assert "Discovered 'Coding Agent'" in text
    for state in ("WORKING", "INPUT_REQUIRED", "COMPLETED"):
        assert f"status {state}" in text
    assert "pushed status INPUT_REQUIRED" in text and "polled: INPUT_REQUIRED" in text
