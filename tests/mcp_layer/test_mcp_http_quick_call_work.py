"""What a quick 2026-07-28 ``tools/call`` over Streamable HTTP costs the server, counted:
no cancel scope cancelled (anyio formats the current task's repr in every
``CancelScope.cancel``) when the tool answers without waiting. A tool that waits still
gets its disconnect watcher: the client closing its stream cancels it.

Counts calls of the running backend's `anyio.CancelScope.cancel` while the real server
(`MCPServer.asgi_app`, in process) answers; no private unit is touched.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp2026 import ModernHTTP, modern_http, server_wire
from mcp_schema import WireChecker

from mcp_layer import MCPServer

pytestmark = pytest.mark.anyio

CALLS = 5


@pytest.fixture
def wire() -> Iterator[WireChecker]:
    yield from server_wire()


class CancelCounts:
    """Counts `anyio.CancelScope.cancel` calls by the module (file name) that made them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cancels: Counter[str] = Counter()
        self.counting = False
        # anyio.CancelScope() is the running backend's class: its method is the one called.
        backend_scope = type(anyio.CancelScope())
        real_cancel = backend_scope.cancel
        counts = self

        def cancel(scope: Any, *args: Any, **kwargs: Any) -> None:
            if counts.counting:
                counts.cancels[caller()] += 1
            real_cancel(scope, *args, **kwargs)

        monkeypatch.setattr(backend_scope, "cancel", cancel)


def caller() -> str:
    """The file of the function that called the counted one."""
    return Path(sys._getframe(2).f_code.co_filename).name


def tools_server(entered: anyio.Event | None = None, ended: anyio.Event | None = None) -> MCPServer:
    server = MCPServer("counted", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def hang() -> str:
        assert entered is not None and ended is not None
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()
        return "never"

    return server


async def call_echo(client: ModernHTTP, text: str) -> None:
    answer = await client.post("tools/call", {"name": "echo", "arguments": {"text": text}})
    assert answer.status == 200
    assert answer.result["content"] == [{"type": "text", "text": text}]


async def test_a_quick_tool_call_cancels_no_scope(
    wire: WireChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = CancelCounts(monkeypatch)
    async with modern_http(tools_server(), wire) as client:
        await call_echo(client, "warm")
        counts.counting = True
        for index in range(CALLS):
            await call_echo(client, str(index))
        counts.counting = False
    # (In process the HTTP server may still watch for a disconnect while it waits for the
    # answer, as the client shares its event loop; the handler itself is not watched.)
    assert counts.cancels["_disconnect.py"] == 0
    assert counts.cancels["_session.py"] == 0


async def test_a_waiting_tool_is_still_cancelled_when_its_stream_closes(
    wire: WireChecker,
) -> None:
    entered, ended = anyio.Event(), anyio.Event()
    async with modern_http(tools_server(entered, ended), wire) as client:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(client.post, "tools/call", {"name": "hang", "arguments": {}})
            await entered.wait()
            # The client closes its response stream: the POST is given up.
            task_group.cancel_scope.cancel()
        await ended.wait()  # the watcher cancelled the tool (bounded by modern_http)
        # The session goes on answering.
        await call_echo(client, "after")
