"""Serve one of the shipped servers in its own process, for tests that kill, cut or load
it. Prints the base URL on the first line of stdout, then serves until killed.

    python tests/soak/serve.py mcp [--idle-timeout S]    everything server, event store,
                                                          plus slow_progress, hang, and
                                                          the soak's control routes
    python tests/soak/serve.py a2a [--store sqlite:PATH]  TCK agent, plus a "stream-N"
                                                          behaviour (N artifacts, 20 ms apart)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from jsonrpc_core import InMemoryEventStore, running_server  # noqa: E402
from jsonrpc_core.http import HTTPRequest, HTTPResponse, Route  # noqa: E402
from mcp_layer import Context  # noqa: E402


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("served_" + path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mcp_app(args: argparse.Namespace) -> Any:
    everything = load(ROOT / "examples" / "mcp" / "everything_server.py")
    server = everything.build_server()
    hanging = [0]

    @server.tool()
    async def slow_progress(steps: int, ctx: Context, delay: float = 0.02) -> str:
        """Reports ``steps`` progress notifications, ``delay`` seconds apart."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await anyio.sleep(delay)
        return f"{steps} steps"

    @server.tool()
    async def hang() -> str:
        """Never returns (until cancelled)."""
        hanging[0] += 1
        try:
            await anyio.sleep_forever()
        finally:
            hanging[0] -= 1
        return "unreachable"

    @server.tool()
    def hanging_now() -> int:
        """How many ``hang`` calls are still running."""
        return hanging[0]

    apps: list[Any] = []
    store = None if args.no_event_store else InMemoryEventStore(max_streams=args.max_streams)

    async def stats(request: HTTPRequest) -> HTTPResponse:
        # Read-only: counting sessions touches none of them (a probe request would).
        table = apps[0].sessions
        return HTTPResponse.json(
            {
                "sessions": len(table),
                "idle_timeout": table.idle_timeout,
                "event_streams": 0 if store is None else len(store),
            }
        )

    async def set_idle_timeout(request: HTTPRequest) -> HTTPResponse:
        # The reaper keeps the interval it started with (from --idle-timeout); what
        # counts as expired follows the table's timeout, changed here.
        apps[0].sessions.idle_timeout = float(request.json()["seconds"])
        return await stats(request)

    app = server.asgi_app(
        event_store=store,
        retry_interval_ms=100,
        idle_timeout=args.idle_timeout,
        max_sessions=args.max_sessions,
        routes=[
            Route("/_soak/stats", ("GET",), stats),
            Route("/_soak/idle-timeout", ("POST",), set_idle_timeout),
        ],
    )
    apps.append(app)
    return app


def a2a_app(args: argparse.Namespace) -> Any:
    from a2a_layer import ExecutionContext, SQLiteTaskStore, TaskUpdater

    tck = load(ROOT / "examples" / "a2a" / "tck_agent.py")

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        text = context.text
        if text.startswith("stream-"):
            count = int(text.split("-", 1)[1])
            await updater.start_work()
            for index in range(count):
                await updater.add_artifact(f"chunk {index}", name=f"a{index}")
                await anyio.sleep(0.02)
            await updater.complete("streamed")
            return
        if text.startswith("wait"):
            await updater.start_work()
            await updater.add_artifact("accepted", name="ack")
            await anyio.sleep_forever()
        await tck.tck_agent(context, updater)

    store = None
    if args.store:
        store = SQLiteTaskStore(args.store.removeprefix("sqlite:"))
    server = tck.A2AServer(tck.build_card(push=True), agent, store=store, max_concurrency=4096)
    return server.asgi_app()


async def main(args: argparse.Namespace) -> None:
    app = mcp_app(args) if args.kind == "mcp" else a2a_app(args)
    options: dict[str, Any] = {}
    if args.keep_alive is not None:
        options["timeout_keep_alive"] = args.keep_alive
    async with running_server(app, port=args.port, **options) as url:
        print(url, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["mcp", "a2a"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--idle-timeout", type=float, default=1800.0)
    parser.add_argument("--max-sessions", type=int, default=10_000)
    parser.add_argument("--max-streams", type=int, default=10_000)
    parser.add_argument("--store", default=None)
    parser.add_argument("--no-event-store", action="store_true")
    parser.add_argument("--keep-alive", type=float, default=None, help="uvicorn keep-alive")
    anyio.run(main, parser.parse_args())
