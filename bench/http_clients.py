"""HTTP client benchmark: which client should carry rpcweave's HTTP requests?

The same rpcweave stack (MCP `connect_http`, A2A `A2AClient.connect`) against the same
rpcweave server, with only the HTTP client changed, plugged in the way a user would
(``connect_http(url, client=...)``, ``A2AClient.connect(url, http=...)``), each built
with its defaults and a 30 s timeout:

* ``rpcweave HTTP1Transport``: `jsonrpc_core.http.new_async_client` (httpx's client on
  rpcweave's own keep-alive pool and httptools parser), what the stack makes by default;
* ``httpx + httpcore``: a stock ``httpx.AsyncClient`` (httpx 0.28, httpcore 1, h11);
* ``httpx2 + httpcore2``: ``httpx2.AsyncClient`` (Pydantic's continuation), which the
  stack fronts with a thin httpx client (`jsonrpc_core._http1.as_httpx_client`);
* ``httpx-aiohttp``: ``httpx_aiohttp.HttpxAiohttpClient`` (aiohttp's client behind
  httpx's transport interface; asyncio only).

Rows: MCP Streamable HTTP ``tools/call`` echo and A2A blocking ``SendMessage``, with 1
and 32 requests in flight. Figures: calls/s, and the client process's CPU time per call
(the server runs in its own process, so this process's CPU is the client side's).

Decision rule (issue #22): a maintained library that comes within 15% of ours on every
row (calls/s at least 0.85x ours and client CPU per call at most 1.15x ours) would
replace ours.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ._harness import (
    REPO_ROOT,
    SERVERS_DIR,
    Contender,
    CpuPerCall,
    Sample,
    Summary,
    format_latency,
    format_rate,
    format_ratio,
    load_note,
    log_tail,
    measure_with_cpu,
    render_table,
    run_alternating,
    run_report,
    scratch_log,
    summarize,
    warm_up,
)

__all__ = ["NAME", "TITLE", "run"]

NAME = "http-clients"
TITLE = "the HTTP client under rpcweave's MCP and A2A clients, decided by measurement"

MCP = "MCP Streamable HTTP tools/call"
A2A = "A2A SendMessage"
SERVER_SCRIPTS: dict[str, tuple[Path, tuple[str, ...]]] = {
    MCP: (SERVERS_DIR / "mcp_rpcweave_server.py", ("--http",)),
    A2A: (SERVERS_DIR / "a2a_rpcweave_server.py", ()),
}
TIMEOUT = 30.0
WITHIN = 0.15
"""How close (as a fraction of ours) a library must come on every row to replace ours."""


@dataclass(frozen=True, slots=True)
class Client:
    """A contender: how a user would make it, and what it is built on."""

    name: str
    make: Callable[[], Any]
    packages: tuple[str, ...]


def _ours() -> Any:
    from jsonrpc_core.http import new_async_client

    return new_async_client(timeout=TIMEOUT)


def _httpx() -> Any:
    import httpx

    return httpx.AsyncClient(timeout=TIMEOUT)


def _httpx2() -> Any:
    import httpx2

    return httpx2.AsyncClient(timeout=TIMEOUT)


def _httpx_aiohttp() -> Any:
    from httpx_aiohttp import HttpxAiohttpClient

    return HttpxAiohttpClient(timeout=TIMEOUT)


OURS = Client("rpcweave HTTP1Transport", _ours, ("httpx", "httptools"))
CLIENTS = (
    OURS,
    Client("httpx + httpcore", _httpx, ("httpx", "httpcore", "h11")),
    Client("httpx2 + httpcore2", _httpx2, ("httpx2", "httpcore2")),
    Client("httpx-aiohttp", _httpx_aiohttp, ("httpx-aiohttp", "aiohttp")),
)
"""Ours first: every ratio is to it."""


@dataclass(frozen=True, slots=True)
class Workload:
    """One row of the report."""

    protocol: str  # MCP or A2A
    in_flight: int
    calls: int
    warmup: int

    @property
    def label(self) -> str:
        return f"{self.protocol}, {self.in_flight} in flight"


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything that differs between a full run and a ``--quick`` smoke run."""

    mode: str
    runs: int
    workloads: tuple[Workload, ...]


def make_plan(quick: bool) -> Plan:
    """The full plan, or a much shorter one for smoke tests."""
    if quick:
        sizes = {1: (150, 30), 32: (640, 96)}
        runs, mode = 2, "quick"
    else:
        sizes = {1: (600, 60), 32: (1_600, 160)}
        runs, mode = 5, "full"
    workloads = tuple(
        Workload(protocol, in_flight, *sizes[in_flight])
        for protocol in (MCP, A2A)
        for in_flight in (1, 32)
    )
    return Plan(mode, runs, workloads)


# -- the server ---------------------------------------------------------------------


@contextmanager
def _server(protocol: str) -> Iterator[tuple[str, int, Any]]:
    """Start the rpcweave server of ``protocol`` in its own process for a whole row;
    yield its URL, pid and log; stop it (SIGINT, then kill after 10 s)."""
    script, args = SERVER_SCRIPTS[protocol]
    with scratch_log() as log:
        process = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=REPO_ROOT,
        )
        try:
            assert process.stdout is not None
            word, _, port = process.stdout.readline().decode().partition(" ")
            if word != "LISTENING" or not port.strip().isdigit():
                raise RuntimeError(f"{protocol} server did not start: {log_tail(log)}")
            url = f"http://127.0.0.1:{int(port)}" + ("/mcp" if protocol == MCP else "")
            yield url, process.pid, log
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# -- one run ------------------------------------------------------------------------


async def _open_call(stack: AsyncExitStack, protocol: str, url: str, http: Any) -> Any:
    """Open the rpcweave client of ``protocol`` on ``http``; return one checked call."""
    if protocol == MCP:
        from mcp_layer import connect_http

        session = await stack.enter_async_context(connect_http(url, client=http))

        async def call_tool() -> None:
            result = await session.call_tool("echo", {"text": "hello"})
            if result.is_error or getattr(result.content[0], "text", None) != "hello":
                raise RuntimeError(f"tools/call gave {result!r}")

        return call_tool
    from a2a_layer import A2AClient, text_of
    from a2a_layer.types import Task, TaskState

    client = await stack.enter_async_context(A2AClient.connect(url, http=http))

    async def send() -> None:
        task = await client.send("1")
        if (
            not isinstance(task, Task)
            or task.status.state != TaskState.COMPLETED
            or not task.artifacts
            or text_of(task.artifacts[0]) != "chunk 0"
        ):
            raise RuntimeError(f"SendMessage gave {task!r}")

    return send


async def _sample(
    client: Client, workload: Workload, url: str, pid: int, cpu: CpuPerCall
) -> Sample:
    """One run: a fresh HTTP client and session, warm-up (untimed), the timed calls."""
    async with AsyncExitStack() as stack:
        http = client.make()
        stack.push_async_callback(http.aclose)
        call: Callable[[], Awaitable[None]] = await _open_call(stack, workload.protocol, url, http)
        await warm_up(call, calls=workload.warmup, concurrency=workload.in_flight)
        sample, client_cpu, server_cpu = await measure_with_cpu(
            call, calls=workload.calls, concurrency=workload.in_flight, pid=pid
        )
        cpu.add((workload.label, client.name), client_cpu, server_cpu)
        return sample


def _row_group(plan: Plan, workload: Workload, cpu: CpuPerCall) -> dict[str, Summary]:
    """Every contender on one row, runs interleaved, against one server process."""
    with _server(workload.protocol) as (url, pid, log):
        contenders = [
            Contender(
                client.name,
                partial(lambda c: asyncio.run(_sample(c, workload, url, pid, cpu)), client),
            )
            for client in CLIENTS
        ]
        try:
            samples = run_alternating(contenders, plan.runs, label=f"{NAME} {workload.label}")
        except Exception as exc:
            raise RuntimeError(f"{workload.label} failed: {exc!r}; {log_tail(log)}") from exc
    return {name: summarize(name, runs) for name, runs in samples.items()}


# -- the report ---------------------------------------------------------------------


def _versions(client: Client) -> str:
    found = []
    for package in client.packages:
        try:
            found.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} (not installed)")
    return ", ".join(found)


def _throughput_section(plan: Plan) -> list[str]:
    cpu = CpuPerCall()
    rows: list[list[str]] = []
    close: dict[str, bool] = {client.name: True for client in CLIENTS[1:]}
    for workload in plan.workloads:
        summaries = _row_group(plan, workload, cpu)
        ours = summaries[OURS.name]
        ours_cpu, _ = cpu.medians((workload.label, OURS.name))
        for client in CLIENTS:
            summary = summaries[client.name]
            client_cpu, server_cpu = cpu.medians((workload.label, client.name))
            rate_ratio = summary.median_rate / ours.median_rate
            cpu_ratio = client_cpu / ours_cpu
            within = rate_ratio >= 1 - WITHIN and cpu_ratio <= 1 + WITHIN
            if client is not OURS:
                close[client.name] = close[client.name] and within
            rows.append(
                [
                    workload.label,
                    client.name,
                    str(summary.runs),
                    format_rate(summary.median_rate),
                    f"{format_rate(summary.min_rate)} - {format_rate(summary.max_rate)}",
                    format_latency(client_cpu),
                    format_latency(server_cpu),
                    format_ratio(rate_ratio),
                    format_ratio(cpu_ratio),
                    "—" if client is OURS else ("yes" if within else "no"),
                ]
            )
    headers = [
        "workload",
        "HTTP client",
        "runs",
        "calls/s (median)",
        "range",
        "client CPU/call",
        "server CPU/call",
        "calls/s vs ours",
        "client CPU vs ours",
        "within 15%",
    ]
    table = render_table(headers, rows, align={i: "r" for i in range(2, 9)})
    winners = [name for name, ok in close.items() if ok]
    decision = (
        f"within 15% of ours on every row: {', '.join(winners)}"
        if winners
        else "no library comes within 15% of ours on every row: rpcweave keeps its "
        "HTTP1Transport as the default"
    )
    return ["### Results", "", table, "", f"**Decision rule:** {decision}."]


def _notes(plan: Plan, load_before: str, load_after: str) -> list[str]:
    versions = "; ".join(f"{client.name}: {_versions(client)}" for client in CLIENTS)
    return [
        load_note(load_before, load_after, server="server"),
        f"Mode: {plan.mode} — {plan.runs} runs per client per row, the clients interleaved "
        "run by run (ours, httpx, httpx2, httpx-aiohttp, ours, ...) so that the drift of a "
        "busy machine hits all alike. One server process per row (the same one for every "
        "client: `bench/servers/mcp_rpcweave_server.py --http` or "
        "`bench/servers/a2a_rpcweave_server.py`, uvicorn on 127.0.0.1); each run makes a "
        "fresh HTTP client and session (MCP handshake or agent card, untimed), warms up "
        "(untimed), then times a fixed count of calls with N closed-loop callers.",
        f"Versions: {versions}.",
        "Each client is built with its defaults (httpx's limits: 100 connections, 20 kept "
        "alive) and a 30 s timeout, and given to the stack as a user would: "
        "`connect_http(url, client=...)`, `A2AClient.connect(url, http=...)`. The httpx2 "
        "client is fronted by a thin `httpx.AsyncClient` (`jsonrpc_core._http1.as_httpx_client`), "
        "the cost a user of httpx2 pays with this stack; httpx-aiohttp's client is an "
        "`httpx.AsyncClient` subclass and goes in as it is.",
        "Client CPU/call = this process's CPU time (user + system, `time.process_time`) "
        "during the timed calls ÷ calls, median over runs; the server's likewise, from "
        "/proc. Ratios are to rpcweave HTTP1Transport on the same row: calls/s ÷ ours "
        "(bigger is better), client CPU ÷ ours (smaller is better). `within 15%` = calls/s "
        "≥ 0.85x ours and client CPU ≤ 1.15x ours.",
    ]


def run(*, quick: bool = False) -> str:
    """Run every row and return the Markdown report."""
    plan = make_plan(quick)
    return run_report(NAME, TITLE, partial(_throughput_section, plan), partial(_notes, plan))


if __name__ == "__main__":  # pragma: no cover - convenience entry point
    sys.stdout.write(run(quick="--quick" in sys.argv[1:]) + "\n")
