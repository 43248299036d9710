"""Shared helpers of the A2A tests: cards, an in-process server, raw wire calls, stores."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from a2a_layer import A2AServer, InMemoryTaskStore, SQLiteTaskStore, TaskStore
from a2a_layer.types import AgentCapabilities, AgentCard, AgentExtension, AgentSkill
from jsonrpc_core.http import SSEDecoder
from jsonrpc_core.testing import StreamingASGITransport

BASE = "http://127.0.0.1"

STORE_KINDS = ("memory", "sqlite")
"""The task stores every store test runs against (see `empty_store`)."""


@asynccontextmanager
async def empty_store(kind: str, folder: Path) -> AsyncIterator[TaskStore]:
    """An empty task store of ``kind`` (one of `STORE_KINDS`; SQLite's file in ``folder``)."""
    if kind == "memory":
        yield InMemoryTaskStore()
        return
    sqlite = await SQLiteTaskStore.open(folder / "tasks.db")
    try:
        yield sqlite
    finally:
        await sqlite.aclose()


def make_card(
    *,
    streaming: bool = True,
    push: bool = False,
    extended: bool = False,
    extensions: list[AgentExtension] | None = None,
) -> AgentCard:
    """A minimal card with the given capabilities."""
    return AgentCard(
        name="test agent",
        description="An agent for tests.",
        version="1.0.0",
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push,
            extended_agent_card=extended,
            extensions=extensions,
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="skill", description="does things", tags=["t"])],
    )


@asynccontextmanager
async def in_process(
    server: A2AServer, app: Callable[..., Any] | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """Run ``server`` and yield an httpx client that reaches it in process."""
    async with server.running():
        transport = StreamingASGITransport(app or server.asgi_app())
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=10) as http:
            yield http


def rpc_body(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    """A JSON-RPC request object."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


async def rpc(
    http: httpx.AsyncClient,
    method: str,
    params: Any = None,
    *,
    version: str | None = "1.0",
    headers: dict[str, str] | None = None,
    path: str = "/",
) -> dict[str, Any]:
    """POST one JSON-RPC request; the decoded response object."""
    all_headers = {"content-type": "application/json", **(headers or {})}
    if version is not None:
        all_headers["A2A-Version"] = version
    response = await http.post(path, json=rpc_body(method, params), headers=all_headers)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def sse_data(text: str) -> list[Any]:
    """The JSON ``data`` of every event of an SSE body."""
    decoder = SSEDecoder()
    events = list(decoder.feed(text.encode()))
    return [json.loads(e.data) for e in events if e.data]


async def rpc_stream(
    http: httpx.AsyncClient,
    method: str,
    params: Any,
    *,
    version: str | None = "1.0",
    headers: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """POST a streaming JSON-RPC request; every response object of its SSE stream."""
    all_headers = {"content-type": "application/json", "accept": "text/event-stream"}
    all_headers.update(headers or {})
    if version is not None:
        all_headers["A2A-Version"] = version
    response = await http.post("/", json=rpc_body(method, params), headers=all_headers)
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        return [response.json()]
    return sse_data(response.text)


def message(text: str, message_id: str, **extra: Any) -> dict[str, Any]:
    """A 1.0 user message as JSON."""
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}
