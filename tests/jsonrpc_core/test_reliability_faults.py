"""Faults, injected for real: processes killed, TCP connections cut, consumers that stop
reading, handlers that never return.

* A stdio server killed (SIGKILL) mid-request: every pending call fails promptly with
  `ConnectionClosed` or `TransportError`, never a hang.
* An HTTP server killed mid-SSE (MCP and A2A, in their own processes): the call fails
  promptly with a clear error.
* The TCP connection cut mid-SSE by a proxy on 127.0.0.1: the MCP client resumes with
  ``Last-Event-ID`` (event store) and every progress notification arrives exactly once;
  the A2A client re-subscribes and fills the gap: every artifact seen exactly once.
* A consumer that stops reading an SSE stream: the producing handler waits (bounded
  buffers) instead of queueing everything; once it reads again, everything arrives.
* A handler that never returns: the caller's timeout cuts it, the caller is told
  (`RequestTimeout`), and the server's handler is cancelled.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process
from soak.kit import TcpProxy, eventually

from a2a_layer import A2AClient
from jsonrpc_core import (
    ConnectionClosed,
    Peer,
    RequestTimeout,
    RpcError,
    TransportError,
    spawn_stdio,
)
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import Context, MCPServer, connect_http

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
ECHO = ROOT / "examples" / "jsonrpc" / "echo_server.py"
SERVE = ROOT / "tests" / "soak" / "serve.py"
PROMPTLY = 10
"""Seconds within which a failure must be reported (a bound against hangs, not a timing
assertion: the real figure is milliseconds)."""


@asynccontextmanager
async def served(kind: str, *args: str) -> AsyncIterator[tuple[Process, str]]:
    """``tests/soak/serve.py KIND`` in its own process, and its URL."""
    proc = await anyio.open_process([sys.executable, str(SERVE), kind, *args], cwd=ROOT)
    try:
        assert proc.stdout is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await proc.stdout.receive(1)
        yield proc, line.decode().strip()
    finally:
        if proc.returncode is None:
            proc.kill()
        with anyio.fail_after(10):
            await proc.wait()
        await proc.aclose()


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


# --- processes killed -------------------------------------------------------------------


async def test_stdio_server_killed_mid_request_fails_every_pending_call() -> None:
    async with spawn_stdio([sys.executable, str(ECHO)]) as stream, Peer(stream) as peer:
        assert await peer.request("echo", {"x": 1}) == {"x": 1}
        failures: list[BaseException] = []

        async def pending() -> None:
            try:
                await peer.request("sleep", {"seconds": 600})
            except RpcError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as task_group:
            for _ in range(5):
                task_group.start_soon(pending)
            await eventually(lambda: len(peer._pending) == 5)
            stream.process.send_signal(signal.SIGKILL)
            with anyio.fail_after(PROMPTLY):
                await eventually(lambda: len(failures) == 5)
        assert all(isinstance(f, (ConnectionClosed, TransportError)) for f in failures), failures
        with pytest.raises((ConnectionClosed, TransportError)):
            await peer.request("echo", {"x": 2})


async def test_mcp_http_server_killed_mid_sse_fails_the_call_promptly() -> None:
    async with served("mcp") as (proc, url), connect_http(url + "/mcp") as session:
        steps: list[float] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            steps.append(value)

        failures: list[BaseException] = []

        async def call() -> None:
            try:
                await session.call_tool("slow_progress", {"steps": 5000}, progress=progress)
            except RpcError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(call)
            await eventually(lambda: len(steps) >= 3)
            proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(PROMPTLY):
                await eventually(lambda: bool(failures))
        assert isinstance(failures[0], (TransportError, ConnectionClosed)), failures


async def test_a2a_http_server_killed_mid_sse_fails_the_stream_promptly() -> None:
    async with served("a2a") as (proc, url), A2AClient.connect(url) as client:
        seen = 0
        with pytest.raises((TransportError, ConnectionClosed)), anyio.fail_after(PROMPTLY + 5):
            async for _event in client.stream("stream-5000", max_reconnects=1):
                seen += 1
                if seen == 3:
                    proc.send_signal(signal.SIGKILL)
        assert seen >= 3


# --- TCP connections cut ------------------------------------------------------------------


async def test_mcp_client_resumes_a_cut_sse_stream_with_last_event_id() -> None:
    steps_total = 60
    async with served("mcp") as (_, url):
        proxy = TcpProxy(port_of(url))
        async with proxy.running(), connect_http(f"http://127.0.0.1:{proxy.port}/mcp") as session:
            steps: list[float] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                steps.append(value)

            result: list[Any] = []

            async def call() -> None:
                arguments = {"steps": steps_total, "delay": 0.02}
                result.append(
                    await session.call_tool("slow_progress", arguments, progress=progress)
                )

            def has_steps(count: int) -> bool:
                return len(steps) >= count

            async with anyio.create_task_group() as task_group:
                task_group.start_soon(call)
                for threshold in (10, 30):
                    await eventually(functools.partial(has_steps, threshold))
                    assert await proxy.cut() >= 1
            assert result and not result[0].is_error
            assert steps == [float(n) for n in range(1, steps_total + 1)], steps
            assert proxy.cuts >= 2


async def test_a2a_client_resubscribes_after_a_cut_and_fills_the_gap() -> None:
    count = 60
    async with served("a2a") as (_, url):
        proxy = TcpProxy(port_of(url))
        async with proxy.running():
            base = f"http://127.0.0.1:{proxy.port}"
            async with A2AClient.connect(base, http=httpx.AsyncClient(base_url=base)) as client:
                updates: list[str] = []
                known: set[str] = set()
                snapshots = 0
                final = None
                with anyio.fail_after(60):
                    async for event in client.stream(f"stream-{count}"):
                        if event.artifact_update is not None:
                            name = event.artifact_update.artifact.name or ""
                            assert name not in known, f"{name} delivered twice"
                            updates.append(name)
                            known.add(name)
                            if len(updates) in (10, 30):
                                await proxy.cut()
                        if event.task is not None:
                            snapshots += 1
                            final = event.task
                            known |= {a.name or "" for a in event.task.artifacts or []}
                        if event.status_update is not None:
                            final_state = event.status_update.status.state
                assert known == {f"a{i}" for i in range(count)}
                assert proxy.cuts >= 2 and snapshots >= 2, (proxy.cuts, snapshots)
                assert final is not None
                assert final_state.value == "TASK_STATE_COMPLETED"


# --- slow consumers and handlers that never return ---------------------------------------


async def test_sse_consumer_that_stops_reading_makes_the_producer_wait() -> None:
    server = MCPServer("slow")
    produced = [0]
    total = 5000

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs a lot."""
        for n in range(total):
            await ctx.report_progress(n, total)
            produced[0] += 1
        return "done"

    app = server.asgi_app(stateless=True)
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p"}},
    }
    async with app.running():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            async with http.stream("POST", "/mcp", json=call, headers=headers) as response:
                chunks = response.aiter_bytes()
                await chunks.__anext__()
                # Not reading: the handler must stall at the bounded buffers.
                await eventually(lambda: produced[0] > 0)
                await anyio.wait_all_tasks_blocked()  # the handler has gone as far as it can
                assert produced[0] < 1000, f"{produced[0]} messages queued for a stalled reader"
                body = b"".join([chunk async for chunk in chunks])
            assert produced[0] == total
            assert body.count(b'"notifications/progress"') >= total - 1000
            assert b'"result"' in body


async def test_handler_that_never_returns_is_cut_by_the_callers_timeout() -> None:
    async with served("mcp") as (_, url), connect_http(url + "/mcp") as session:
        with pytest.raises(RequestTimeout), anyio.fail_after(PROMPTLY):
            await session.call_tool("hang", {}, timeout=0.5)
        # The client told the server (notifications/cancelled): the handler is gone.
        for _ in range(250):
            running = await session.call_tool("hanging_now", {})
            if running.structured_content == {"result": 0} or "0" == _text(running):
                break
            await anyio.sleep(0.02)  # a bounded poll of the server's process
        else:
            pytest.fail("the server kept running the abandoned handler")
        ok = await session.call_tool("test_simple_text", {})
        assert not ok.is_error


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


# --- a push webhook that is down ---------------------------------------------------------


async def test_push_webhook_down_then_up_gets_exactly_the_due_events(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import socket

    from a2a_fixtures.harness import in_process, make_card

    from a2a_layer import A2AServer, ExecutionContext, PushReceiver, TaskUpdater
    from a2a_layer.types import TaskPushNotificationConfig
    from jsonrpc_core import running_server

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        for index in range(3):
            await updater.add_artifact(f"part {index}", name=f"p{index}")
        await updater.complete("done")

    with socket.socket() as probe:  # a free port, nobody listening on it yet
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = A2AServer(
        make_card(push=True),
        agent,
        push_retries=40,
        push_backoff=0.05,
        allow_private_webhooks=True,  # the webhook is on loopback
    )
    receiver = PushReceiver(token="push-tok")
    config = TaskPushNotificationConfig(url=f"http://127.0.0.1:{port}/hook", token="push-tok")
    caplog.set_level(logging.INFO, logger="a2a_layer.push")
    async with in_process(server) as http:
        async with A2AClient.connect("http://127.0.0.1", http=http) as client:
            task = await client.send("go", push=config)
        # The webhook is down: deliveries fail (connection refused) and are retried.
        await eventually(lambda: any("; retry" in r.getMessage() for r in caplog.records))
        async with running_server(receiver.asgi_app(), port=port):
            events = []
            with anyio.fail_after(30):
                async for event in receiver.events():
                    events.append(event)
                    update = event.status_update
                    if update is not None and update.status.state.is_terminal:
                        break
    kinds = [next(iter(e.model_dump(exclude_none=True))) for e in events]
    assert kinds == ["task", "statusUpdate", *["artifactUpdate"] * 3, "statusUpdate"], kinds
    assert events[0].task is not None and events[0].task.id == task.id  # type: ignore[union-attr]
    names = [e.artifact_update.artifact.name for e in events if e.artifact_update]
    assert names == ["p0", "p1", "p2"]
    assert receiver.duplicates == 0
