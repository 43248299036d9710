"""The demo: two real processes calling each other over stdio, traffic printed as it flows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from jsonrpc_core import (
    InternalError,
    InvalidParams,
    JsonLinesSink,
    MethodRegistry,
    Notification,
    Peer,
    RequestContext,
    RequestId,
    RequestType,
    TapRecord,
    WireTap,
    spawn_stdio,
)

__all__ = ["run_demo"]

ROOT = Path(__file__).resolve().parent.parent
ECHO_SERVER = ROOT / "examples" / "jsonrpc" / "echo_server.py"


def _printer(quiet: bool) -> Any:
    def show(record: TapRecord) -> None:
        if quiet:
            return
        import json

        arrow = "host ──▶ server" if record.direction == "send" else "host ◀── server"
        text = json.dumps(record.message, ensure_ascii=False)
        if len(text) > 160:
            text = text[:157] + "..."
        print(f"  [{record.transport}] {arrow}  {text}", flush=True)

    return show


def _cancel_hook(request_id: RequestId, reason: str) -> Notification:
    return Notification("$/cancel_request", {"requestId": request_id})


async def _jsonrpc_flow(tap: WireTap, quiet: bool) -> list[str]:
    passed: list[str] = []
    registry = MethodRegistry()

    async def answer(params: Any, ctx: RequestContext) -> str:
        # The host calls the server back while the server's own call to us is in flight.
        total = await ctx.peer.request("add", {"a": 40, "b": 2})
        return f"{params['question']} -> {total:g}"

    registry.on(RequestType("client/answer"), answer)
    command = [sys.executable, str(ECHO_SERVER)]
    async with spawn_stdio(command) as process:
        stream = tap.wrap(process, local="host", remote="echo-server", transport="stdio")
        async with Peer(stream, registry, name="host", on_outgoing_cancel=_cancel_hook) as peer:
            with anyio.fail_after(20):
                if not quiet:
                    print("» echo")
                assert await peer.request("echo", {"text": "hello"}) == {"text": "hello"}
                passed.append("echo")
                if not quiet:
                    print("» ask: the server calls the host, which calls the server, mid-call")
                result = await peer.request("ask", {"question": "the answer"})
                assert result == {"question": "the answer", "answer": "the answer -> 42"}
                passed.append("nested calls in both directions")
                if not quiet:
                    print("» bad input: wrong params, then a failing handler")
                try:
                    await peer.request("add", {"a": "one"})
                except InvalidParams:
                    passed.append("invalid params refused")
                try:
                    await peer.request("fail")
                except InternalError:
                    passed.append("handler failure reported")
                if not quiet:
                    print("» cancel: a long sleep is abandoned and the server is told")
                with anyio.move_on_after(0.3):
                    await peer.request("sleep", {"seconds": 30})
                assert await peer.request("echo", ["still alive"]) == ["still alive"]
                passed.append("cancellation")
    return passed


def run_demo(*, trace: str | None = None, quiet: bool = False) -> int:
    """Run the demo; return the process exit status."""
    tap = WireTap(_printer(quiet))
    sink = JsonLinesSink(trace) if trace else None
    if sink is not None:
        tap.sinks.append(sink)
    try:
        passed = anyio.run(_jsonrpc_flow, tap, quiet)
    except Exception as exc:
        print(f"FAIL jsonrpc over stdio: {type(exc).__name__}: {exc}")
        return 1
    finally:
        if sink is not None:
            sink.close()
    print(f"PASS jsonrpc over stdio, both directions: {', '.join(passed)}")
    return 0
