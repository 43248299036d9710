"""Core benchmark: JSON-RPC `echo` round trips over stdio, rpcweave against the floor.

Contenders (each a client process talking to a server subprocess over pipes):

* ``rpcweave``: `jsonrpc_core.spawn_stdio` + `jsonrpc_core.Peer` as the client, and
  ``examples/jsonrpc/echo_server.py`` (built on `jsonrpc_core`) as the server.
* ``floor``: a hand-written minimal asyncio client and ``bench/floor_echo_server.py``,
  standard library only.

Loads: one request in flight (one caller doing sequential calls) and 32 in flight
(32 closed-loop callers). Each run starts a fresh server (untimed), warms up, times a
fixed number of calls, then shuts the server down cleanly (untimed).
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonrpc_core import Peer, spawn_stdio

from ._harness import (
    REPO_ROOT,
    Contender,
    Sample,
    format_ratio,
    measure,
    render_table,
    run_alternating,
    summarize,
    summary_cells,
    summary_headers,
    verdict,
)

__all__ = ["NAME", "TITLE", "run"]

NAME = "core"
TITLE = "jsonrpc_core over stdio: `echo` round trips"

ECHO_SERVER = REPO_ROOT / "examples" / "jsonrpc" / "echo_server.py"
FLOOR_SERVER = Path(__file__).resolve().parent / "floor_echo_server.py"
PARAMS: dict[str, Any] = {"text": "hello"}
FLOOR = "floor"
RPCWEAVE = "rpcweave"


@dataclass(frozen=True, slots=True)
class Load:
    """How many requests are in flight, how many calls a run times, and the target ratio."""

    label: str
    in_flight: int
    calls: int
    target: float


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything that differs between a full run and a ``--quick`` smoke run."""

    mode: str
    runs: int
    warmup: int
    loads: tuple[Load, ...]


def make_plan(quick: bool) -> Plan:
    """The full plan, or a much shorter one for smoke tests."""
    if quick:
        return Plan(
            mode="quick",
            runs=3,
            warmup=50,
            loads=(Load("1 in flight", 1, 300, 0.5), Load("32 in flight", 32, 2_000, 0.33)),
        )
    return Plan(
        mode="full",
        runs=5,
        warmup=200,
        loads=(Load("1 in flight", 1, 3_000, 0.5), Load("32 in flight", 32, 20_000, 0.33)),
    )


def _check_echo(result: object, contender: str) -> None:
    """Fail loudly if a contender does not actually echo (a broken benchmark, not a slow one)."""
    if result != PARAMS:
        raise RuntimeError(f"{contender}: echo returned {result!r}, expected {PARAMS!r}")


# -- rpcweave -----------------------------------------------------------------------


async def _rpcweave_sample(load: Load, warmup: int) -> Sample:
    """One run of the rpcweave contender: spawn, warm up, time, shut down."""
    command = [sys.executable, str(ECHO_SERVER)]
    async with spawn_stdio(command, cwd=REPO_ROOT) as stream, Peer(stream, name="bench") as peer:

        async def call() -> object:
            return await peer.request("echo", PARAMS)

        _check_echo(await call(), RPCWEAVE)
        return await measure(call, warmup=warmup, calls=load.calls, concurrency=load.in_flight)


# -- floor --------------------------------------------------------------------------


class _FloorClient:
    """A minimal hand-written JSON-RPC client for a subprocess speaking NDJSON.

    With one request in flight it writes a line and reads the next line. With several,
    a reader task matches responses to callers through a dict of futures.
    """

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._writer = process.stdin
        self._reader = process.stdout
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader_task: asyncio.Task[None] | None = None

    def _encode(self, request_id: int) -> bytes:
        request = {"jsonrpc": "2.0", "id": request_id, "method": "echo", "params": PARAMS}
        return json.dumps(request, separators=(",", ":")).encode() + b"\n"

    async def call_sequential(self) -> object:
        """One round trip; only valid while nothing else is in flight."""
        self._next_id += 1
        request_id = self._next_id
        self._writer.write(self._encode(request_id))
        await self._writer.drain()
        line = await self._reader.readline()
        if not line:
            raise ConnectionError("floor server closed the connection")
        reply = json.loads(line)
        if reply.get("id") != request_id:
            raise RuntimeError(f"floor: response id {reply.get('id')!r}, expected {request_id}")
        if "error" in reply:
            raise RuntimeError(f"floor: error response {reply['error']!r}")
        return reply["result"]

    def start_reader(self) -> None:
        """Switch to multiplexed mode: a task routes each response to its caller."""
        self._reader_task = asyncio.get_running_loop().create_task(self._read_replies())

    async def call_multiplexed(self) -> object:
        """One round trip that may overlap with others (after `start_reader`)."""
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._writer.write(self._encode(request_id))
        await self._writer.drain()
        return await future

    async def _read_replies(self) -> None:
        try:
            while line := await self._reader.readline():
                reply = json.loads(line)
                future = self._pending.pop(reply["id"], None)
                if future is None or future.done():
                    continue
                if "error" in reply:
                    future.set_exception(RuntimeError(f"floor: error {reply['error']!r}"))
                else:
                    future.set_result(reply["result"])
        finally:
            pending, self._pending = self._pending, {}
            for future in pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("floor server closed the connection"))

    async def close(self) -> None:
        """Close stdin, let the server exit on end of input, and reap it."""
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (BrokenPipeError, ConnectionResetError):
            pass
        await self._process.wait()
        if self._reader_task is not None:
            await self._reader_task


async def _floor_sample(load: Load, warmup: int) -> Sample:
    """One run of the floor contender: spawn, warm up, time, shut down."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FLOOR_SERVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT,
    )
    client = _FloorClient(process)
    try:
        if load.in_flight == 1:
            call = client.call_sequential
        else:
            client.start_reader()
            call = client.call_multiplexed
        _check_echo(await call(), FLOOR)
        return await measure(call, warmup=warmup, calls=load.calls, concurrency=load.in_flight)
    finally:
        await client.close()


# -- the benchmark ------------------------------------------------------------------


def _contenders(load: Load, warmup: int) -> list[Contender]:
    """rpcweave first, then the floor; each run gets a fresh event loop and server."""
    return [
        Contender(RPCWEAVE, lambda: asyncio.run(_rpcweave_sample(load, warmup))),
        Contender(FLOOR, lambda: asyncio.run(_floor_sample(load, warmup))),
    ]


def run(*, quick: bool = False) -> str:
    """Run every load, alternating contenders, and return the Markdown report."""
    plan = make_plan(quick)
    rows: list[list[str]] = []
    for load in plan.loads:
        samples = run_alternating(
            _contenders(load, plan.warmup), plan.runs, label=f"{NAME} {load.label}"
        )
        floor = summarize(FLOOR, samples[FLOOR])
        for name in (RPCWEAVE, FLOOR):
            summary = floor if name == FLOOR else summarize(name, samples[name])
            ratio = summary.median_rate / floor.median_rate
            is_floor = name == FLOOR
            rows.append(
                [
                    load.label,
                    name,
                    *summary_cells(summary),
                    format_ratio(ratio),
                    "—" if is_floor else f"≥ {load.target:.2f}",
                    "—" if is_floor else verdict(ratio, load.target),
                ]
            )
    table = render_table(
        [
            "load",
            "contender",
            *summary_headers("calls", "req/s"),
            "vs floor",
            "target",
            "result",
        ],
        rows,
        align={2: "r", 3: "r", 4: "r", 5: "r", 6: "r", 7: "r"},
    )
    notes = [
        f"Mode: {plan.mode} — {plan.runs} runs per contender per load, alternating "
        f"rpcweave/floor; {plan.warmup} untimed warm-up calls per run; a fresh server "
        "process per run (start-up and shutdown untimed).",
        'Workload: request `echo` with params `{"text": "hello"}`; the server returns the '
        "params as the result. Both sides of each contender are measured together: "
        "rpcweave = `spawn_stdio` + `Peer` against `examples/jsonrpc/echo_server.py`; "
        "floor = a hand-written asyncio client against `bench/floor_echo_server.py` "
        "(1 in flight: write a line, read a line; 32 in flight: a reader task resolves "
        "futures by id).",
        "`vs floor` = median req/s ÷ the floor's median req/s. Latencies are the median "
        "over runs of each run's p50/p99. Targets come from the issue; a MISS is reported, "
        "never raised.",
    ]
    return "\n".join([f"## {NAME}: {TITLE}", "", table, "", *(f"- {n}" for n in notes)])
