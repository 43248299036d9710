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
import sys
from functools import partial
from pathlib import Path
from typing import Any

from jsonrpc_core import Peer, spawn_stdio

from ._harness import (
    REPO_ROOT,
    Contender,
    EchoLoad,
    EchoPlan,
    NdjsonClient,
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


def make_plan(quick: bool) -> EchoPlan:
    """The full plan, or a much shorter one for smoke tests."""
    if quick:
        return EchoPlan(
            mode="quick",
            runs=3,
            warmup=50,
            loads=(EchoLoad("1 in flight", 1, 300, 0.5), EchoLoad("32 in flight", 32, 2_000, 0.33)),
        )
    return EchoPlan(
        mode="full",
        runs=5,
        warmup=200,
        loads=(EchoLoad("1 in flight", 1, 3_000, 0.5), EchoLoad("32 in flight", 32, 20_000, 0.33)),
    )


def _check_echo(result: object, contender: str) -> None:
    """Fail loudly if a contender does not actually echo (a broken benchmark, not a slow one)."""
    if result != PARAMS:
        raise RuntimeError(f"{contender}: echo returned {result!r}, expected {PARAMS!r}")


# -- rpcweave -----------------------------------------------------------------------


async def _rpcweave_sample(load: EchoLoad, warmup: int) -> Sample:
    """One run of the rpcweave contender: spawn, warm up, time, shut down."""
    command = [sys.executable, str(ECHO_SERVER)]
    async with spawn_stdio(command, cwd=REPO_ROOT) as stream, Peer(stream, name="bench") as peer:

        async def call() -> object:
            return await peer.request("echo", PARAMS)

        _check_echo(await call(), RPCWEAVE)
        return await measure(call, warmup=warmup, calls=load.calls, concurrency=load.in_flight)


# -- floor --------------------------------------------------------------------------


async def _floor_sample(load: EchoLoad, warmup: int) -> Sample:
    """One run of the floor contender: spawn, warm up, time, shut down."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FLOOR_SERVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT,
    )
    client = NdjsonClient(process)
    try:
        if load.in_flight == 1:
            call = partial(client.call_sequential, "echo", PARAMS)
        else:
            client.start_reader()
            call = partial(client.call_multiplexed, "echo", PARAMS)
        _check_echo(await call(), FLOOR)
        return await measure(call, warmup=warmup, calls=load.calls, concurrency=load.in_flight)
    finally:
        await client.close()


# -- the benchmark ------------------------------------------------------------------


def _contenders(load: EchoLoad, warmup: int) -> list[Contender]:
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
            target = None if name == FLOOR else load.target
            rows.append(
                [
                    load.label,
                    name,
                    *summary_cells(summary),
                    format_ratio(ratio),
                    "—" if target is None else f"≥ {target:.2f}",
                    "—" if target is None else verdict(ratio, target),
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
