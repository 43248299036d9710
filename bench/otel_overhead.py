"""What the OpenTelemetry instrumentation costs on MCP ``tools/call``:
``python -m bench.otel_overhead [--rounds N] [--block N]``.

Three modes:

- ``absent``: as without ``opentelemetry`` installed (the peers get no telemetry hook;
  the stdio server child runs with ``opentelemetry`` hidden by an import hook);
- ``api``: ``opentelemetry-api`` importable, no SDK configured (a user who installed
  the extra but exports nothing): the target is at most 3% slower than ``absent``;
- ``sdk``: the SDK's tracer and meter providers, spans batched to an exporter that drops
  them, metrics kept by a reader that is never collected.

Rows: in memory, 1 in flight (client and server in this process: the worst case, no
I/O to hide the cost) and stdio, 1 and 32 in flight (the headline rows of ``bench
mcp``; one server child per mode). On a shared machine the load drifts by more than the
effect measured, so one connection per mode is opened up front and the modes take turns
in short blocks of calls; each figure is the median over the rounds of the block's
calls per second.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

MODES = ("absent", "api", "sdk")
ROWS = (("memory", 1), ("stdio", 1), ("stdio", 32))
_MODE_VARIABLE = "RPCWEAVE_BENCH_OTEL_MODE"


class _HideOpenTelemetry:
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(f"{name} is hidden")


def _sdk_providers(set_globally: bool) -> tuple[Any, Any]:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Dropping()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    if set_globally:
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)
    return tracer_provider, meter_provider


def _server() -> Any:
    from mcp_layer import MCPServer

    server = MCPServer("bench", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


@asynccontextmanager
async def _connection(mode: str, transport: str) -> AsyncIterator[Any]:
    """A client session of ``mode``: built with no telemetry hook for ``absent``."""
    from jsonrpc_core import _telemetry
    from mcp_layer import connect

    target: Any = _server()
    if transport == "stdio":
        target = [sys.executable, "-m", "bench.otel_overhead", "--serve"]
    saved = _telemetry._otel_installed
    if mode == "absent":
        _telemetry._otel_installed = False  # what `instrument` finds without opentelemetry
    os.environ[_MODE_VARIABLE] = mode  # for the stdio child
    try:
        # Both peers exist once the handshake is answered (the in-memory server's too).
        opening = connect(target)
        client = await opening.__aenter__()
    finally:
        _telemetry._otel_installed = saved
    try:
        yield client
    finally:
        await opening.__aexit__(None, None, None)


async def _block(client: Any, in_flight: int, calls: int) -> float:
    import anyio

    async def worker(count: int) -> None:
        for _ in range(count):
            await client.call_tool("echo", {"text": "hello"})

    per_worker = calls // in_flight
    started = time.perf_counter()
    async with anyio.create_task_group() as task_group:
        for _ in range(in_flight):
            task_group.start_soon(worker, per_worker)
    return per_worker * in_flight / (time.perf_counter() - started)


async def _measure_row(transport: str, in_flight: int, rounds: int, block: int) -> list[float]:
    from jsonrpc_core._telemetry_otel import use_providers

    providers = _sdk_providers(set_globally=False)
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    async with AsyncExitStack() as stack:
        clients = {m: await stack.enter_async_context(_connection(m, transport)) for m in MODES}
        for mode in MODES:  # warm up
            use_providers(*providers) if mode == "sdk" else use_providers(None, None)
            await _block(clients[mode], in_flight, block)
        for round_number in range(rounds):
            shift = round_number % len(MODES)  # no mode always follows the same one
            for mode in MODES[shift:] + MODES[:shift]:
                use_providers(*providers) if mode == "sdk" else use_providers(None, None)
                rates[mode].append(await _block(clients[mode], in_flight, block))
                # The SDK's export thread and garbage are paid before the next block.
                providers[0].force_flush()
                gc.collect()
        use_providers(None, None)
    return [statistics.median(rates[mode]) for mode in MODES] + [max(rates[m]) for m in MODES]


def _serve(mode: str) -> None:
    if mode == "absent":
        sys.meta_path.insert(0, _HideOpenTelemetry())  # type: ignore[arg-type]
    elif mode == "sdk":
        _sdk_providers(set_globally=True)
    _server().run()


def main(argv: Sequence[str] | None = None) -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=200, help="calls per block")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve(os.environ.get(_MODE_VARIABLE, "api"))
        return 0
    print(
        "| tools/call, calls/s | figure | otel absent | API, no SDK | vs absent "
        "| SDK, no-op export | vs absent |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for transport, in_flight in ROWS:
        block = args.block * (4 if in_flight > 1 else 1)
        figures = anyio.run(_measure_row, transport, in_flight, args.rounds, block)
        for label, (absent, api, sdk) in (("median", figures[:3]), ("best", figures[3:])):
            print(
                f"| {transport}, {in_flight} in flight | {label} of {args.rounds} | "
                f"{absent:,.0f} | {api:,.0f} | {(api / absent - 1) * 100:+.1f}% | "
                f"{sdk:,.0f} | {(sdk / absent - 1) * 100:+.1f}% |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
