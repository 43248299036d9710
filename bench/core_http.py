"""HTTP benchmark: JSON-RPC `echo` round trips over Streamable HTTP on uvicorn.

Contenders (each a client in this process talking to a uvicorn server subprocess on
127.0.0.1, every server started with the same uvicorn configuration):

* ``rpcweave json``: `jsonrpc_core.StreamableHTTPTransport` + `jsonrpc_core.Peer` as
  the client; `jsonrpc_core.JsonRpcHTTPApp` serving the methods of
  ``examples/jsonrpc/echo_server.py`` as the server, answering with ``application/json``.
* ``rpcweave sse``: the same, with the server answering each POST with a
  ``text/event-stream`` (the Streamable HTTP default).
* ``floor``: a plain ``httpx.AsyncClient`` POST loop against a minimal raw ASGI app
  that parses the JSON body and replies with the JSON-RPC response (no framework, no
  validation, no sessions).

Loads: one request in flight (one caller doing sequential calls) and 8 in flight
(8 closed-loop callers). Each run starts a fresh server process (untimed), warms up,
times a fixed number of calls, then stops the server (untimed).

Run directly as ``python -m bench.core_http --serve {floor,json,sse}`` it is the server
process: it prints ``PORT <n>`` once uvicorn listens, and serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import signal
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ._harness import (
    REPO_ROOT,
    Contender,
    CpuPerCall,
    EchoLoad,
    EchoPlan,
    Sample,
    format_latency,
    format_ratio,
    listening_process,
    measure_with_cpu,
    render_table,
    run_alternating,
    summarize,
    summary_cells,
    summary_headers,
    verdict,
    warm_up,
)

__all__ = ["NAME", "TITLE", "run"]

NAME = "http"
TITLE = "jsonrpc_core over Streamable HTTP on uvicorn: `echo` round trips"

ECHO_SERVER = REPO_ROOT / "examples" / "jsonrpc" / "echo_server.py"
HOST = "127.0.0.1"
ENDPOINT = "/mcp"
PARAMS: dict[str, Any] = {"text": "hello"}
FLOOR = "floor"
RPCWEAVE_JSON = "rpcweave json"
RPCWEAVE_SSE = "rpcweave sse"
SERVER_MODES = {FLOOR: "floor", RPCWEAVE_JSON: "json", RPCWEAVE_SSE: "sse"}
POST_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
STARTUP_TIMEOUT = 30.0

Call = Callable[[], Awaitable[object]]


def make_plan(quick: bool) -> EchoPlan:
    """The full plan, or a much shorter one for smoke tests."""
    if quick:
        return EchoPlan(
            mode="quick",
            runs=3,
            warmup=50,
            loads=(EchoLoad("1 in flight", 1, 300, 0.70), EchoLoad("8 in flight", 8, 600, None)),
        )
    return EchoPlan(
        mode="full",
        runs=5,
        warmup=200,
        loads=(EchoLoad("1 in flight", 1, 2_000, 0.70), EchoLoad("8 in flight", 8, 4_000, None)),
    )


def _check_echo(result: object, contender: str) -> None:
    """Fail loudly if a contender does not actually echo (a broken benchmark, not a slow one)."""
    if result != PARAMS:
        raise RuntimeError(f"{contender}: echo returned {result!r}, expected {PARAMS!r}")


# -- the server processes -----------------------------------------------------------


def uvicorn_config(app: Any, sock: socket.socket) -> Any:
    """The one uvicorn configuration every contender's server runs with."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=HOST,
        port=sock.getsockname()[1],
        log_level="warning",
        access_log=False,
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=2,
    )


async def floor_app(scope: Any, receive: Any, send: Any) -> None:
    """The floor: read the body, answer the JSON-RPC request with its params. Nothing else."""
    kind = scope["type"]
    if kind == "lifespan":
        from .servers._uvicorn import lifespan

        await lifespan(receive, send)
        return
    if kind != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request = json.loads(body)
    reply = json.dumps(
        {"jsonrpc": "2.0", "id": request["id"], "result": request.get("params")},
        separators=(",", ":"),
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(reply)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": reply})


def _load_echo_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_echo_example", ECHO_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rpcweave_app(json_response: bool) -> Any:
    """The echo example's methods behind `JsonRpcHTTPApp`, with MCP-like sessions."""
    from jsonrpc_core import (
        HTTPServerOptions,
        JsonRpcHTTPApp,
        MessageStream,
        Peer,
        Request,
        SessionPolicy,
    )

    registry = _load_echo_example().registry

    async def serve(stream: MessageStream) -> None:
        await Peer(stream, registry, name="bench-http-server").run()

    options = HTTPServerOptions(
        path=ENDPOINT,
        sessions=SessionPolicy(is_start=lambda payload: isinstance(payload, Request)),
        json_response=json_response,
    )
    return JsonRpcHTTPApp(serve, options)


def serve_forever(mode: str) -> None:
    """The server process: bind 127.0.0.1 on a free port, say which, serve until SIGTERM."""
    import uvicorn

    app = floor_app if mode == "floor" else rpcweave_app(json_response=mode == "json")
    # proto IPPROTO_TCP, not 0: asyncio only sets TCP_NODELAY on connections accepted
    # from such a socket; without it each response waits on Nagle + delayed ACK (~40 ms).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        port = sock.getsockname()[1]

        class AnnouncingServer(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets=sockets)
                print(f"PORT {port}", flush=True)

        AnnouncingServer(uvicorn_config(app, sock)).run(sockets=[sock])


@dataclass(frozen=True, slots=True)
class Server:
    """A running server process: its base URL and process id."""

    base: str
    pid: int


@contextlib.asynccontextmanager
async def server_process(mode: str) -> AsyncIterator[Server]:
    """Start a server subprocess; yield a `Server`; stop it with SIGTERM."""
    async with listening_process(
        ["-m", "bench.core_http", "--serve", mode],
        what=f"{mode} server",
        ready="PORT",
        stop=signal.SIGTERM,
        startup_timeout=STARTUP_TIMEOUT,
        shutdown_timeout=15,
    ) as (base, pid):
        yield Server(base, pid)


# -- the clients --------------------------------------------------------------------


CPU_PER_CALL = CpuPerCall()
"""(load label, contender) -> per run (client, server) CPU seconds per timed call."""


async def _timed(name: str, load: EchoLoad, warmup: int, server: Server, call: Call) -> Sample:
    """Warm up, then time ``load.calls`` calls, recording CPU per call on both sides."""
    _check_echo(await warm_up(call, calls=warmup, concurrency=load.in_flight), name)
    sample, client_cpu, server_cpu = await measure_with_cpu(
        call, calls=load.calls, concurrency=load.in_flight, pid=server.pid
    )
    CPU_PER_CALL.add((load.label, name), client_cpu, server_cpu)
    return sample


async def _rpcweave_sample(mode: str, load: EchoLoad, warmup: int) -> Sample:
    """One run of an rpcweave contender: start the server, warm up, time, stop."""
    from jsonrpc_core import Peer, StreamableHTTPTransport

    name = RPCWEAVE_JSON if mode == "json" else RPCWEAVE_SSE
    async with server_process(mode) as server:
        transport = StreamableHTTPTransport(server.base + ENDPOINT)
        async with transport, Peer(transport, name="bench") as peer:

            async def call() -> object:
                return await peer.request("echo", PARAMS)

            return await _timed(name, load, warmup, server, call)


async def _floor_sample(load: EchoLoad, warmup: int) -> Sample:
    """One run of the floor: start the raw ASGI server, POST in a loop, stop."""
    import httpx

    async with server_process("floor") as server, httpx.AsyncClient() as client:
        url = server.base + ENDPOINT
        next_id = 0

        async def call() -> object:
            nonlocal next_id
            next_id += 1
            request_id = next_id
            body = json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "echo", "params": PARAMS},
                separators=(",", ":"),
            ).encode()
            response = await client.post(url, content=body, headers=POST_HEADERS)
            reply = json.loads(response.content)
            if reply.get("id") != request_id:
                raise RuntimeError(f"floor: response id {reply.get('id')!r}, expected {request_id}")
            return reply["result"]

        return await _timed(FLOOR, load, warmup, server, call)


# -- the benchmark ------------------------------------------------------------------


def _contenders(load: EchoLoad, warmup: int) -> list[Contender]:
    """rpcweave (JSON, then SSE), then the floor; each run gets a fresh loop and server."""
    runners: dict[str, Callable[[], Sample]] = {
        RPCWEAVE_JSON: lambda: asyncio.run(_rpcweave_sample("json", load, warmup)),
        RPCWEAVE_SSE: lambda: asyncio.run(_rpcweave_sample("sse", load, warmup)),
        FLOOR: lambda: asyncio.run(_floor_sample(load, warmup)),
    }
    return [Contender(name, runner) for name, runner in runners.items()]


def run(*, quick: bool = False) -> str:
    """Run every load, alternating contenders, and return the Markdown report."""
    plan = make_plan(quick)
    CPU_PER_CALL.clear()
    rows: list[list[str]] = []
    for load in plan.loads:
        samples = run_alternating(
            _contenders(load, plan.warmup), plan.runs, label=f"{NAME} {load.label}"
        )
        floor = summarize(FLOOR, samples[FLOOR])
        for name in (RPCWEAVE_JSON, RPCWEAVE_SSE, FLOOR):
            summary = floor if name == FLOOR else summarize(name, samples[name])
            ratio = summary.median_rate / floor.median_rate
            judged = name != FLOOR and load.target is not None
            client_cpu, server_cpu = CPU_PER_CALL.medians((load.label, name))
            rows.append(
                [
                    load.label,
                    name,
                    *summary_cells(summary),
                    format_latency(client_cpu),
                    format_latency(server_cpu),
                    format_ratio(ratio),
                    f"≥ {load.target:.2f}" if judged and load.target is not None else "—",
                    verdict(ratio, load.target) if judged and load.target is not None else "—",
                ]
            )
    table = render_table(
        [
            "load",
            "contender",
            *summary_headers("calls", "req/s"),
            "client CPU/call",
            "server CPU/call",
            "vs floor",
            "target",
            "result",
        ],
        rows,
        align={2: "r", 3: "r", 4: "r", 5: "r", 6: "r", 7: "r", 8: "r", 9: "r"},
    )
    notes = [
        f"Mode: {plan.mode} — {plan.runs} runs per contender per load, alternating "
        f"rpcweave json / rpcweave sse / floor; {plan.warmup} untimed warm-up calls per "
        "run; a fresh uvicorn server process per run on 127.0.0.1 (start-up and shutdown "
        "untimed), every one with the same uvicorn configuration (HTTP implementation and "
        "event loop as uvicorn's `auto` picks them, access log off, lifespan on) and a "
        "listening socket created with `IPPROTO_TCP`, so that asyncio sets TCP_NODELAY "
        "on each connection.",
        'Workload: request `echo` with params `{"text": "hello"}`; the server returns the '
        "params as the result. rpcweave = `StreamableHTTPTransport` + `Peer` against "
        "`JsonRpcHTTPApp` serving `examples/jsonrpc/echo_server.py`'s methods, with a "
        "session (opened by the first call; the client also holds the standalone GET "
        "stream open) and no event store; `json` answers each POST with "
        "`application/json`, `sse` with a `text/event-stream` carrying the response. "
        "floor = a plain `httpx.AsyncClient` POST loop against a raw ASGI app that "
        "parses the body and replies with the JSON-RPC response as `application/json`.",
        "`vs floor` = median req/s ÷ the floor's median req/s. Latencies are the median "
        "over runs of each run's p50/p99. CPU/call = CPU time (user + system) of the "
        "client process (this one) and of the server process during the timed calls, "
        "divided by the calls, median over runs: unlike req/s it hardly moves when other "
        "work shares the machine. The target (rpcweave ≥ 0.70 of the floor with "
        "1 in flight) applies to both rpcweave modes; 8 in flight is reported without a "
        "target. A MISS is reported, never raised.",
    ]
    return "\n".join([f"## {NAME}: {TITLE}", "", table, "", *(f"- {n}" for n in notes)])


def main(argv: list[str] | None = None) -> int:
    """``--serve MODE``: be a benchmark server process (see the module docstring)."""
    parser = argparse.ArgumentParser(description="core_http benchmark server process")
    parser.add_argument("--serve", choices=sorted(set(SERVER_MODES.values())), required=True)
    args = parser.parse_args(argv)
    serve_forever(args.serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
