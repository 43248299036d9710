"""A2A benchmark: blocking SendMessage and a 100-chunk streamed artifact, over HTTP.

Every server runs in its own process under uvicorn on 127.0.0.1 (same settings for all,
``bench/servers/a2a_uvicorn.py``); every client runs in this process.

Workloads (the agent's text decides the chunk count N):

* ``SendMessage``: the executor completes the task at once with one text artifact; the
  blocking call returns the completed task. Timed: request to validated result.
* ``SendStreamingMessage``, N = 100: the executor sends one artifact in 100 chunks
  (``artifactUpdate`` events, appended), then completes. Timed: request to the last event
  (the completed status), every event received and parsed on the way; time to the first
  event is reported too.

Contenders (client → server):

* ``rpcweave → rpcweave``: `a2a_layer.A2AClient` against `a2a_layer.A2AServer`
  (``bench/servers/a2a_rpcweave_server.py``);
* ``official → official``: the ``a2a-sdk`` client (``ClientFactory``) against an a2a-sdk
  Starlette app (``DefaultRequestHandler``, ``bench/servers/a2a_official_server.py``);
* the cross pairs, to see which side the time goes to;
* ``floor``: a plain ``httpx.AsyncClient`` against a raw ASGI app that answers with the
  same JSON (``bench/servers/a2a_floor_server.py``).

Targets from the issue: rpcweave → rpcweave ≥ 3x the a2a-sdk pair's SendMessage
throughput (1 in flight) and ≥ 5x faster time to the last event of the 100-chunk stream.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TextIO

from ._harness import (
    FLOOR,
    OFFICIAL,
    PAIRS,
    RPCWEAVE,
    SERVERS_DIR,
    THEIRS,
    ColdStart,
    CpuPerCall,
    Pair,
    PeakRss,
    Sample,
    Summary,
    attribution_cells,
    bytecode_caches,
    cold_start_section,
    compare_groups,
    format_latency,
    format_ratio,
    listening_process,
    load_note,
    log_tail,
    measure_with_cpu,
    peak_rss_section,
    process_cpu_seconds,
    render_attribution,
    render_pair_table,
    run_report,
    scratch_log,
    stack_footprint_section,
    summary_cells,
    target_cells,
    warm_up,
)

__all__ = ["NAME", "TITLE", "run"]

NAME = "a2a"
TITLE = "A2A SendMessage and a 100-chunk streamed artifact over HTTP (uvicorn)"

STREAM_CHUNKS = 100

SERVER_SCRIPTS = {
    RPCWEAVE: SERVERS_DIR / "a2a_rpcweave_server.py",
    OFFICIAL: SERVERS_DIR / "a2a_official_server.py",
    FLOOR: SERVERS_DIR / "a2a_floor_server.py",
}


SEND = "send"
STREAM = "stream"


# -- plan ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Workload:
    """One row group of the report."""

    operation: str  # SEND or STREAM
    in_flight: int
    calls: int
    warmup: int
    target: float | None = None
    """SEND: required req/s ratio; STREAM: required speed-up of time to the last event."""

    @property
    def label(self) -> str:
        what = (
            "SendMessage (blocking)"
            if self.operation == SEND
            else f"SendStreamingMessage, {STREAM_CHUNKS}-chunk artifact"
        )
        return f"{what}, {self.in_flight} in flight"

    @property
    def chunks(self) -> int:
        return 1 if self.operation == SEND else STREAM_CHUNKS


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything that differs between a full run and a ``--quick`` smoke run."""

    mode: str
    runs: int
    workloads: tuple[Workload, ...]
    cold_runs: int


def make_plan(quick: bool) -> Plan:
    """The full plan, or a much shorter one for smoke tests."""
    if quick:
        return Plan(
            mode="quick",
            runs=2,
            workloads=(
                Workload(SEND, 1, 150, 30, target=5.0),
                Workload(SEND, 8, 300, 40),
                Workload(STREAM, 1, 15, 3, target=5.0),
            ),
            cold_runs=3,
        )
    return Plan(
        mode="full",
        runs=5,
        workloads=(
            Workload(SEND, 1, 1_000, 100, target=5.0),
            Workload(SEND, 8, 2_000, 160),
            Workload(STREAM, 1, 100, 10, target=5.0),
        ),
        cold_runs=7,
    )


# -- server processes ---------------------------------------------------------------


def server_process(server: str, log: TextIO) -> AbstractAsyncContextManager[tuple[str, int]]:
    """Start a fixture server; yield its base URL and pid; stop it with SIGINT."""
    return listening_process([str(SERVER_SCRIPTS[server])], what=f"{server} server", log=log)


# -- clients ------------------------------------------------------------------------

Call = Callable[[], Awaitable[None]]
FIRST_EVENT: list[float] = []
"""perf_counter() of the first event of the stream being timed (1 in flight only)."""


@dataclass(slots=True)
class Client:
    """One open client, whichever SDK: ``send`` and ``stream`` check what they get."""

    send: Call
    stream: Call


def _fail(pair: Pair, what: str) -> RuntimeError:
    return RuntimeError(f"{pair.name}: {what}")


@asynccontextmanager
async def _rpcweave_client(pair: Pair, base_url: str) -> AsyncIterator[Client]:
    from a2a_layer import A2AClient, text_of
    from a2a_layer.types import Task, TaskState

    async with A2AClient.connect(base_url) as client:

        async def send() -> None:
            task = await client.send("1")
            if (
                not isinstance(task, Task)
                or task.status.state != TaskState.COMPLETED
                or not task.artifacts
                or text_of(task.artifacts[0]) != "chunk 0"
            ):
                raise _fail(pair, f"SendMessage returned {task!r}")

        async def stream() -> None:
            chunks = 0
            last: Any = None
            async for event in client.stream(str(STREAM_CHUNKS)):
                if last is None:
                    FIRST_EVENT.append(time.perf_counter())
                last = event
                if event.artifact_update is not None:
                    chunks += 1
            status = last.status_update if last is not None else None
            if (
                chunks != STREAM_CHUNKS
                or status is None
                or status.status.state != TaskState.COMPLETED
            ):
                raise _fail(pair, f"stream gave {chunks} chunks, last event {last!r}")

        yield Client(send, stream)


@asynccontextmanager
async def _official_client(pair: Pair, base_url: str) -> AsyncIterator[Client]:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState

    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=300.0)) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()

        def make(streaming: bool) -> Any:
            config = ClientConfig(
                streaming=streaming, supported_protocol_bindings=["JSONRPC"], httpx_client=http
            )
            return ClientFactory(config).create(card)

        blocking, streaming = make(False), make(True)

        def request(text: str) -> Any:
            message = Message(
                message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)]
            )
            return SendMessageRequest(message=message)

        async def send() -> None:
            events = [event async for event in blocking.send_message(request("1"))]
            task = events[0].task if len(events) == 1 and events[0].HasField("task") else None
            if (
                task is None
                or task.status.state != TaskState.TASK_STATE_COMPLETED
                or not task.artifacts
                or task.artifacts[0].parts[0].text != "chunk 0"
            ):
                raise _fail(pair, f"SendMessage gave {events!r}")

        async def stream() -> None:
            chunks = 0
            last: Any = None
            async for event in streaming.send_message(request(str(STREAM_CHUNKS))):
                if last is None:
                    FIRST_EVENT.append(time.perf_counter())
                last = event
                if event.HasField("artifact_update"):
                    chunks += 1
            done = (
                last is not None
                and last.HasField("status_update")
                and last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
            )
            if chunks != STREAM_CHUNKS or not done:
                raise _fail(pair, f"stream gave {chunks} chunks, last event {last!r}")

        try:
            yield Client(send, stream)
        finally:
            await blocking.close()
            await streaming.close()


@asynccontextmanager
async def _floor_client(pair: Pair, base_url: str) -> AsyncIterator[Client]:
    import httpx

    url = base_url + "/"
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "a2a-version": "1.0",
    }
    next_id = 0

    def body(method: str, text: str) -> tuple[int, bytes]:
        nonlocal next_id
        next_id += 1
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        request = {
            "jsonrpc": "2.0",
            "id": next_id,
            "method": method,
            "params": {"message": message},
        }
        return next_id, json.dumps(request, separators=(",", ":")).encode()

    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=300.0)) as http:

        async def send() -> None:
            request_id, content = body("SendMessage", "1")
            response = await http.post(url, content=content, headers=headers)
            reply = json.loads(response.content)
            task = reply.get("result", {}).get("task") if reply.get("id") == request_id else None
            if task is None or task["status"]["state"] != "TASK_STATE_COMPLETED":
                raise _fail(pair, f"SendMessage gave {reply!r}")

        async def stream() -> None:
            request_id, content = body("SendStreamingMessage", str(STREAM_CHUNKS))
            chunks = 0
            last: Any = None
            async with http.stream("POST", url, content=content, headers=headers) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    if last is None:
                        FIRST_EVENT.append(time.perf_counter())
                    reply = json.loads(line[5:])
                    if reply.get("id") != request_id:
                        raise _fail(pair, f"event for request {reply.get('id')!r}")
                    last = reply["result"]
                    if "artifactUpdate" in last:
                        chunks += 1
                    elif "statusUpdate" in last:
                        break
            status = (last or {}).get("statusUpdate", {}).get("status", {}).get("state")
            if chunks != STREAM_CHUNKS or status != "TASK_STATE_COMPLETED":
                raise _fail(pair, f"stream gave {chunks} chunks, last event {last!r}")

        yield Client(send, stream)


CLIENTS = {RPCWEAVE: _rpcweave_client, OFFICIAL: _official_client, FLOOR: _floor_client}


# -- throughput ---------------------------------------------------------------------

CPU_PER_CALL = CpuPerCall()
"""(workload label, contender) -> per run (client, server) CPU seconds per timed call."""
TTFE: dict[tuple[str, str], list[float]] = {}
"""(workload label, contender) -> per run median time to the first event (streams)."""
PEAK_RSS = PeakRss()
"""``VmHWM`` of each server process after its first SendMessage and after a timed run."""


async def _sample(pair: Pair, workload: Workload) -> Sample:
    """One run: start the server, connect, check, warm up, time, stop (only timing timed)."""
    with scratch_log() as log:
        try:
            async with (
                server_process(pair.server, log) as (base_url, pid),
                CLIENTS[pair.client](pair, base_url) as client,
            ):
                operation = client.send if workload.operation == SEND else client.stream
                starts: list[float] = []

                async def call() -> None:
                    starts.append(time.perf_counter())
                    await operation()

                await warm_up(call, calls=workload.warmup, concurrency=workload.in_flight)
                starts.clear()
                FIRST_EVENT.clear()
                sample, client_cpu, server_cpu = await measure_with_cpu(
                    call, calls=workload.calls, concurrency=workload.in_flight, pid=pid
                )
                key = (workload.label, pair.name)
                CPU_PER_CALL.add(key, client_cpu, server_cpu)
                PEAK_RSS.add(PEAK_RSS.after_workload, pair.server, pid)
                if workload.operation == STREAM and workload.in_flight == 1:
                    firsts = [f - s for s, f in zip(starts, FIRST_EVENT, strict=True)]
                    TTFE.setdefault(key, []).append(statistics.median(firsts))
                return sample
        except Exception as exc:
            raise RuntimeError(
                f"{pair.name} {workload.label} failed: {exc!r}; {log_tail(log)}"
            ) from exc


async def _cold_start(pair: Pair) -> ColdStart:
    """Launching the server to the first blocking SendMessage answered (the client's
    agent card fetch included); records the server's peak RSS after it."""
    with scratch_log() as log:
        started = time.perf_counter()
        try:
            async with (
                server_process(pair.server, log) as (base_url, pid),
                CLIENTS[pair.client](pair, base_url) as client,
            ):
                await client.send()
                elapsed = time.perf_counter() - started
                PEAK_RSS.add(PEAK_RSS.after_first_call, pair.server, pid)
                return ColdStart(elapsed, process_cpu_seconds(pid))
        except Exception as exc:
            raise RuntimeError(f"{pair.name} cold start failed: {exc!r}; {log_tail(log)}") from exc


def _workload_rows(workload: Workload, summaries: dict[str, Summary]) -> list[list[str]]:
    baseline = summaries[THEIRS.name]
    floor = summaries[FLOOR]
    rows: list[list[str]] = []
    for pair in PAIRS:
        summary = summaries[pair.name]
        key = (workload.label, pair.name)
        client_cpu, server_cpu = CPU_PER_CALL.medians(key)
        if workload.operation == SEND:
            ratio = summary.median_rate / baseline.median_rate
            vs_floor = summary.median_rate / floor.median_rate
        else:  # time to the last event: smaller is better, ratios are speed-ups
            ratio = baseline.p50_latency / summary.p50_latency
            vs_floor = floor.p50_latency / summary.p50_latency
        rows.append(
            [
                workload.label,
                pair.name,
                *summary_cells(summary),
                format_latency(statistics.median(TTFE[key])) if key in TTFE else "—",
                format_latency(client_cpu),
                format_latency(server_cpu),
                format_ratio(ratio),
                format_ratio(vs_floor),
                *target_cells(pair, ratio, workload.target),
            ]
        )
    return rows


def _attribution_row(workload: Workload, summaries: dict[str, Summary]) -> list[str]:
    def score(pair: Pair) -> float:
        summary = summaries[pair.name]
        return summary.median_rate if workload.operation == SEND else 1 / summary.p50_latency

    return [workload.label, *attribution_cells(score)]


def _throughput_section(plan: Plan) -> list[str]:
    rows: list[list[str]] = []
    attribution: list[list[str]] = []
    for workload, summaries in compare_groups(plan.workloads, _sample, plan.runs, name=NAME):
        rows.extend(_workload_rows(workload, summaries))
        attribution.append(_attribution_row(workload, summaries))
    extra = ["p50 first event", "client CPU/call", "server CPU/call"]
    table = render_pair_table("workload", "server", ("calls", "calls/s"), extra, rows)
    where = render_attribution("workload", attribution, server="server")
    return [
        "### Results",
        "",
        table,
        "",
        "### Where the time goes",
        "",
        "Each pair ÷ official → official, same workload and run: median calls/s for "
        "SendMessage, 1 / p50 time to the last event for the stream.",
        "",
        where,
    ]


# -- the benchmark ------------------------------------------------------------------


def _notes(plan: Plan, load_before: str, load_after: str) -> list[str]:
    return [
        load_note(load_before, load_after, server="server"),
        f"Mode: {plan.mode} — {plan.runs} runs per contender per workload, contenders "
        "alternating run by run; each run starts a fresh server process (uvicorn on "
        "127.0.0.1, same settings for all: h11/asyncio as installed, lifespan on, access "
        "log off, TCP_NODELAY) and a fresh client that reads the agent card (untimed), "
        "warms up (untimed), then times a fixed count of calls with N closed-loop callers.",
        "SendMessage: blocking `SendMessage` (JSON-RPC, A2A 1.0) with text `1`; the "
        "executor adds one text artifact (`chunk 0`) and completes; every call checks the "
        "completed task and its artifact. `vs official` = median calls/s ÷ official → "
        "official's (target ≥ 3x with 1 in flight; 8 in flight is reported only).",
        f"Stream: `SendStreamingMessage` with text `{STREAM_CHUNKS}`; events: the submitted "
        f"task, {STREAM_CHUNKS} `artifactUpdate` chunks of one artifact (appended, the last "
        "marked `lastChunk`), the completed status; every call checks the count and the "
        "final state. `p50 latency` is the time to the last event; `vs official` = "
        "official → official's p50 ÷ this p50 (a speed-up; target ≥ 5x). `p50 first "
        "event` = median over runs of each run's median time to the first event.",
        "Servers: `bench/servers/a2a_rpcweave_server.py` (`A2AServer`, in-memory store, "
        "JSON-RPC 1.0 only: `rest_path=None`, `compat_v03=False`), "
        "`bench/servers/a2a_official_server.py` (a2a-sdk `DefaultRequestHandler`, "
        "`InMemoryTaskStore`, `create_jsonrpc_routes` + card routes on Starlette), "
        "`bench/servers/a2a_floor_server.py` (raw ASGI, the same JSON shapes, each SSE "
        "event its own body chunk). Clients: `A2AClient.connect`; a2a-sdk `ClientFactory` "
        "(`ClientConfig(streaming=False/True, supported_protocol_bindings=['JSONRPC'])`) "
        "on one shared `httpx.AsyncClient`; floor: `httpx.AsyncClient.post` / `.stream` "
        "with `json.loads` of each body / `data:` line.",
        "Latencies are the median over runs of each run's p50/p99. CPU/call = CPU time "
        "(user + system) of the client process (this one) and of the server process "
        "during the timed calls ÷ calls, median over runs. A MISS is reported, never raised.",
        "Cold start: from launching the server process to the first blocking "
        "SendMessage answered, including the wait for uvicorn to listen and the client's "
        "agent card fetch; one untimed round first, then pairs alternating. `server CPU "
        "by then` = the server's user + system CPU at that moment (less noisy than the "
        "wall time on a shared machine). Target < 300 ms for rpcweave → rpcweave. Peak "
        "RSS = the server's `VmHWM` right after that first call, and after each timed "
        "run; target < 40 MiB for the rpcweave server, judged on the largest reading.",
        "Bytecode: servers run with bytecode caches, as an installed package has them; "
        "when `PYTHONDONTWRITEBYTECODE` is set they are kept in a temporary "
        "`PYTHONPYCACHEPREFIX` (`bench._harness.bytecode_caches`), filled by the "
        "untimed round.",
    ]


def run(*, quick: bool = False) -> str:
    """Run every workload and return the Markdown report."""
    plan = make_plan(quick)
    CPU_PER_CALL.clear()
    TTFE.clear()
    PEAK_RSS.clear()

    def sections() -> list[str]:
        with bytecode_caches():
            # first, so that every timed run finds the bytecode caches filled
            cold = cold_start_section(
                NAME,
                plan.cold_runs,
                _cold_start,
                peak=PEAK_RSS,
                what="server launch to the first blocking SendMessage answered",
            )
            throughput = _throughput_section(plan)
            stack = stack_footprint_section(
                plan.cold_runs, server_kib=PEAK_RSS.after_first_call.get(RPCWEAVE, [])
            )
        return [
            *throughput,
            "",
            *cold,
            "",
            *peak_rss_section(PEAK_RSS, server="server"),
            "",
            *stack,
        ]

    return run_report(NAME, TITLE, sections, partial(_notes, plan))


if __name__ == "__main__":  # pragma: no cover - convenience entry point
    sys.stdout.write(run(quick="--quick" in sys.argv[1:]) + "\n")
