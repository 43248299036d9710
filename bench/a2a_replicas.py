"""A2A scale-out benchmark: SendMessage on 1, 2 and 3 replicas sharing one PostgreSQL.

Every replica is its own process under uvicorn on 127.0.0.1
(``bench/servers/a2a_replica_server.py``: the chunk agent of the A2A benchmark, one
artifact then completed); the client runs in this process and sends raw JSON-RPC
``SendMessage`` requests (blocking: the answer is the completed task), spread evenly
over the replicas (worker i talks to replica i mod n).

Contenders:

* ``sqlite x1``: one replica on `SQLiteTaskStore` (the embedded default);
* ``postgres x1``, ``x2``, ``x3``: replicas on one `PostgresTaskStore` database.

Each run starts its replicas on a fresh store (a new database, or a new file), warms
up, times a fixed number of calls, and stops them. Two loads: 1 request in flight (the
latency a shared store adds) and 24 in flight (throughput as replicas are added).
PostgreSQL comes from ``$RPCWEAVE_PG_DSN``, else a throwaway cluster is started with
``scripts/postgres.sh`` (which needs PostgreSQL's server programs).

Read the figures with the machine in mind: replicas, PostgreSQL and this client share
its cores, so adding replicas adds throughput only while a core is idle.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ._harness import (
    REPO_ROOT,
    SERVERS_DIR,
    Contender,
    Sample,
    compare,
    format_latency,
    format_rate,
    format_ratio,
    listening_process,
    measure,
    render_table,
)

SERVER = SERVERS_DIR / "a2a_replica_server.py"
RETRIES: list[int] = []
"""One entry per request resent after a transport error (reported with the figures)."""


@dataclass(frozen=True)
class Plan:
    runs: int
    warmup: int
    calls_serial: int
    calls_parallel: int
    concurrency: int = 24


def make_plan(quick: bool) -> Plan:
    if quick:
        return Plan(runs=1, warmup=20, calls_serial=100, calls_parallel=300)
    return Plan(runs=3, warmup=100, calls_serial=400, calls_parallel=1000)


# -- PostgreSQL ---------------------------------------------------------------------


@contextmanager
def postgres() -> Iterator[str]:
    """A DSN of a running cluster: ``$RPCWEAVE_PG_DSN`` or a throwaway one."""
    dsn = os.environ.get("RPCWEAVE_PG_DSN")
    if dsn:
        yield dsn
        return
    script = REPO_ROOT / "scripts" / "postgres.sh"
    started = subprocess.run(["bash", str(script), "up"], capture_output=True, text=True)
    if started.returncode != 0:
        raise RuntimeError(f"cannot start PostgreSQL: {started.stderr.strip()}")
    env = dict(
        line.removeprefix("export ").split("=", 1)
        for line in started.stdout.splitlines()
        if line.startswith("export ")
    )
    try:
        yield env["RPCWEAVE_PG_DSN"]
    finally:
        subprocess.run(["bash", str(script), "down", env["RPCWEAVE_PG_DIR"]], check=False)


@contextmanager
def fresh_database(dsn: str) -> Iterator[str]:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"rpcweave_bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(dsn)
    params["dbname"] = name
    try:
        yield make_conninfo("", **params)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- replicas -----------------------------------------------------------------------


def replica(args: list[str]) -> AbstractAsyncContextManager[tuple[str, int]]:
    """Start one replica (stderr inherited); yield its base URL and pid; stop it."""
    return listening_process([str(SERVER), *args], what="replica")


def _body(index: int) -> bytes:
    request = {
        "jsonrpc": "2.0",
        "id": index,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": f"m-{index}-{secrets.token_hex(4)}",
                "role": "ROLE_USER",
                "parts": [{"text": "1"}],
            }
        },
    }
    return json.dumps(request).encode()


async def _run(args_for: list[list[str]], warmup: int, calls: int, concurrency: int) -> Sample:
    import httpx

    async with AsyncExitStack() as stack:
        urls = [(await stack.enter_async_context(replica(args)))[0] for args in args_for]
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=url,
                    headers={"a2a-version": "1.0", "content-type": "application/json"},
                    limits=httpx.Limits(
                        max_connections=concurrency, max_keepalive_connections=concurrency
                    ),
                    timeout=60.0,
                )
            )
            for url in urls
        ]
        counter = 0

        async def call() -> None:
            nonlocal counter
            counter += 1
            client = clients[counter % len(clients)]
            body = _body(counter)
            try:
                response = await client.post("/", content=body)
            except httpx.TransportError:
                # A kept-alive connection closed under us: send again, with the same
                # messageId, so the server deduplicates if the first one got through.
                RETRIES.append(1)
                response = await client.post("/", content=body)
            answer = response.json()
            state = answer.get("result", {}).get("task", {}).get("status", {}).get("state")
            if state != "TASK_STATE_COMPLETED":
                raise RuntimeError(f"SendMessage answered {answer!r}")

        return await measure(call, warmup=warmup, calls=calls, concurrency=concurrency)


def _contender(
    name: str, store: str, replicas: int, dsn: str, plan: Plan, parallel: bool
) -> Contender:
    calls = plan.calls_parallel if parallel else plan.calls_serial
    concurrency = plan.concurrency if parallel else 1

    def run_once() -> Sample:
        if store == "sqlite":
            with tempfile.TemporaryDirectory() as tmp:
                args = [["sqlite", str(Path(tmp) / "tasks.db")]]
                return asyncio.run(_run(args, plan.warmup, calls, concurrency))
        with fresh_database(dsn) as db:
            args = [["postgres", db] for _ in range(replicas)]
            return asyncio.run(_run(args, plan.warmup, calls, concurrency))

    return Contender(name, run_once)


def run(*, quick: bool) -> str:
    try:
        with postgres() as dsn:
            return _report(dsn, make_plan(quick))
    except RuntimeError as exc:
        if "cannot start PostgreSQL" not in str(exc):
            raise
        return f"Skipped: {exc} (set RPCWEAVE_PG_DSN, or install PostgreSQL).\n"


def _report(dsn: str, plan: Plan) -> str:
    sections: list[str] = [__doc__.split("\n\n")[0], ""]
    for parallel in (False, True):
        contenders = [
            _contender("sqlite x1", "sqlite", 1, dsn, plan, parallel),
            *(_contender(f"postgres x{n}", "postgres", n, dsn, plan, parallel) for n in (1, 2, 3)),
        ]
        label = f"{plan.concurrency} in flight" if parallel else "1 in flight"
        summaries = list(compare(contenders, plan.runs, label=label).values())
        base = summaries[0].median_rate
        rows = [
            [
                s.name,
                format_rate(s.median_rate),
                f"{format_rate(s.min_rate)}-{format_rate(s.max_rate)}",
                format_ratio(s.median_rate / base),
                format_latency(s.p50_latency),
                format_latency(s.p99_latency),
            ]
            for s in summaries
        ]
        sections += [
            f"## SendMessage, {label} ({plan.runs} runs x "
            f"{plan.calls_parallel if parallel else plan.calls_serial} calls)",
            "",
            render_table(
                ["store x replicas", "req/s (median)", "range", "vs sqlite x1", "p50", "p99"],
                rows,
                align={1: "r", 2: "r", 3: "r", 4: "r", 5: "r"},
            ),
            "",
        ]
    sections.append(f"Requests resent after a transport error: {len(RETRIES)}.")
    return "\n".join(sections)
