"""ACP benchmark: ``session/prompt`` turns that stream 10 ``session/update`` chunks, over stdio.

Each prompt turn is 11 messages from the agent: 10 ``session/update`` notifications
(``agent_message_chunk``, text ``chunk <i> ``) and then the ``end_turn`` response. A call
is timed from sending ``session/prompt`` until the client has the response *and* has
handled all 10 updates (both SDKs guarantee that ordering; it is checked on every call).

Contenders (client -> agent; every agent is a subprocess on pipes, every client runs here):

* ``rpcweave → rpcweave``: `acp_layer.spawn_agent` + a `acp_layer.Client` subclass, against
  ``bench/servers/acp_rpcweave_agent.py`` (`acp_layer.Agent` + `run_agent_stdio`).
* ``official → official``: ``acp.spawn_agent_process`` (PyPI ``agent-client-protocol``)
  against ``bench/servers/acp_official_agent.py`` (``acp.run_agent``).
* the cross pairs ``official → rpcweave`` and ``rpcweave → official``, to see which side
  the time goes to;
* ``floor``: a hand-written asyncio NDJSON client against ``bench/servers/acp_floor_agent.py``
  (standard library only, one write + flush per message).

Loads: one prompt in flight (the target: rpcweave → rpcweave at least 3x the official
pair's prompts/s) and 8 in flight on 8 sessions (reported only). Also reported: import
time of ``acp_layer`` against ``acp`` (fresh interpreters, median of N).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, cast

from ._harness import (
    FLOOR,
    OFFICIAL,
    PAIRS,
    REPO_ROOT,
    RPCWEAVE,
    SERVERS_DIR,
    THEIRS,
    ColdStart,
    CpuPerCall,
    NdjsonClient,
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
    import_seconds,
    load_note,
    measure_with_cpu,
    peak_rss_section,
    process_cpu_seconds,
    render_attribution,
    render_pair_table,
    render_table,
    run_report,
    summary_cells,
    target_cells,
    warm_up,
)

__all__ = ["NAME", "TITLE", "run"]

NAME = "acp"
TITLE = "ACP session/prompt streaming 10 session/update chunks over stdio"

CHUNKS = 10
PROMPT_TEXT = "hi"
CHUNK_TEXTS = [f"chunk {i} " for i in range(CHUNKS)]

AGENT_SCRIPTS = {
    RPCWEAVE: SERVERS_DIR / "acp_rpcweave_agent.py",
    OFFICIAL: SERVERS_DIR / "acp_official_agent.py",
    FLOOR: SERVERS_DIR / "acp_floor_agent.py",
}


# -- plan ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Load:
    """Prompts in flight (one session each), timed prompts per run, and the target."""

    label: str
    in_flight: int
    calls: int
    warmup: int
    target: float | None
    """Required ratio rpcweave → rpcweave ÷ official → official (None: reported only)."""
    placement: Literal["split", "shared"] | None = None
    """``None``: wherever the scheduler puts the processes; ``"split"``: this client on one
    CPU and the agent on another; ``"shared"``: both on one CPU (see `_placed`)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything that differs between a full run and a ``--quick`` smoke run."""

    mode: str
    runs: int
    loads: tuple[Load, ...]
    import_runs: int
    cold_runs: int


SPLIT_LABEL = "1 in flight, client and agent pinned to two CPUs"
SHARED_LABEL = "1 in flight, client and agent pinned to one CPU"


def make_plan(quick: bool) -> Plan:
    """The full plan, or a much shorter one for smoke tests."""
    calls, warmup = (200, 30) if quick else (1_500, 150)
    loads = [
        Load("1 prompt in flight", 1, calls, warmup, 3.0),
        Load("8 prompts in flight (8 sessions)", 8, 2 * calls, 40 if quick else 200, None),
    ]
    if len(_usable_cpus()) >= 2:
        loads.append(Load(SPLIT_LABEL, 1, calls, warmup, None, placement="split"))
        loads.append(Load(SHARED_LABEL, 1, calls, warmup, None, placement="shared"))
    if quick:
        return Plan(mode="quick", runs=2, loads=tuple(loads), import_runs=5, cold_runs=3)
    return Plan(mode="full", runs=5, loads=tuple(loads), import_runs=15, cold_runs=7)


def _usable_cpus() -> list[int]:
    """The CPUs this process may run on (none known where affinity is not supported)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    return sorted(getaffinity(0)) if getaffinity is not None else []


@contextmanager
def _placed(placement: Literal["split", "shared"] | None, agent_pid: int | None) -> Iterator[None]:
    """Pin this process (the client) and the agent as ``placement`` says, for the body;
    this process gets its own CPU set back afterwards (the agent exits after the run)."""
    if placement is None or agent_pid is None:
        yield
        return
    own = os.sched_getaffinity(0)
    cpus = _usable_cpus()
    client_cpu = cpus[0]
    agent_cpu = cpus[1] if placement == "split" else cpus[0]
    os.sched_setaffinity(0, {client_cpu})
    try:
        os.sched_setaffinity(agent_pid, {agent_cpu})
        yield
    finally:
        os.sched_setaffinity(0, own)


# -- processes ----------------------------------------------------------------------

CHILD_ENV: dict[str, str] = {}
"""Variables for agents launched by the official client, which passes only a trimmed
environment (set by `run` from `bytecode_caches`)."""


def _agent_command(agent: str) -> list[str]:
    return [sys.executable, str(AGENT_SCRIPTS[agent]), "--chunks", str(CHUNKS)]


# -- clients ------------------------------------------------------------------------


@dataclass(slots=True)
class Counts:
    """``agent_message_chunk`` updates seen per session (checked after every prompt)."""

    chunks: dict[str, int] = field(default_factory=dict)
    last_text: dict[str, str] = field(default_factory=dict)

    def add(self, session_id: str, text: str) -> None:
        self.chunks[session_id] = self.chunks.get(session_id, 0) + 1
        self.last_text[session_id] = text


@dataclass(slots=True)
class Connection:
    """An initialized client connection with ``sessions`` open, whichever SDKs are used."""

    prompt: Callable[[str], Awaitable[str]]
    """Run one turn in a session; returns the stop reason."""
    sessions: list[str]
    counts: Counts
    agent_pid: int | None


def _rpcweave_client_class() -> type:
    from acp_layer import Client
    from acp_layer import schema as s

    class BenchClient(Client):
        """Counts the message chunks of each session (runs on the read loop, in order)."""

        def __init__(self) -> None:
            self.counts = Counts()

        async def session_update(self, params: s.SessionNotification) -> None:
            update = params.update
            if isinstance(update, s.AgentMessageChunk) and isinstance(
                update.content, s.TextContent
            ):
                self.counts.add(params.session_id, update.content.text)

    return BenchClient


class _OfficialClient:
    """The official SDK's client side: counts the message chunks of each session."""

    def __init__(self) -> None:
        self.counts = Counts()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            text = getattr(update.content, "text", None)
            if text is not None:
                self.counts.add(session_id, text)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the benchmark agent does not ask for permission")


class _FloorClient(NdjsonClient):
    """A minimal hand-written ACP client over NDJSON pipes (standard library only).

    With one prompt in flight it writes the request and reads lines until the response,
    counting the updates on the way. With several, a reader task does that and resolves
    each caller's future by id.
    """

    peer = "floor agent"

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.counts = Counts()

    def _reply(self, line: bytes) -> dict[str, Any] | None:
        """Count an update; return a response (anything with an id and no method)."""
        message: dict[str, Any] = json.loads(line)
        if message.get("method") == "session/update":
            params = message["params"]
            update = params["update"]
            if update.get("sessionUpdate") == "agent_message_chunk":
                self.counts.add(params["sessionId"], update["content"]["text"])
            return None
        return message if "id" in message and "method" not in message else None


@asynccontextmanager
async def open_connection(pair: Pair, sessions: int) -> AsyncIterator[Connection]:
    """Launch ``pair.server`` (the agent), connect ``pair.client``, initialize, open
    ``sessions``."""
    cwd = str(REPO_ROOT)
    command = _agent_command(pair.server)
    if pair.client == FLOOR:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=cwd
        )
        floor = _FloorClient(process)
        try:
            call = floor.call_sequential
            await call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            ids = []
            for _ in range(sessions):
                result = await call("session/new", {"cwd": cwd, "mcpServers": []})
                ids.append(result["sessionId"])
            if sessions > 1:
                floor.start_reader()
                call = floor.call_multiplexed

            async def floor_prompt(session_id: str, call: Any = call) -> str:
                params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
                result = await call("session/prompt", params)
                return str(result["stopReason"])

            yield Connection(floor_prompt, ids, floor.counts, process.pid)
        finally:
            await floor.close()
        return
    if pair.client == RPCWEAVE:
        from acp_layer import spawn_agent

        client = _rpcweave_client_class()()
        async with spawn_agent(command, client, cwd=cwd) as conn:
            ids = [(await conn.new_session(cwd)).session_id for _ in range(sessions)]

            async def rpcweave_prompt(session_id: str) -> str:
                return str((await conn.prompt(session_id, PROMPT_TEXT)).stop_reason)

            pid = conn.process.process.pid if conn.process is not None else None
            yield Connection(rpcweave_prompt, ids, client.counts, pid)
        return
    import acp

    official = _OfficialClient()
    spawn = acp.spawn_agent_process(
        cast(Any, official), command[0], *command[1:], env=CHILD_ENV or None, cwd=cwd
    )
    async with spawn as (official_conn, process):
        await official_conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        ids = []
        for _ in range(sessions):
            response = await official_conn.new_session(cwd=cwd, mcp_servers=[])
            ids.append(response.session_id)
        blocks: list[Any] = [acp.text_block(PROMPT_TEXT)]

        async def official_prompt(session_id: str) -> str:
            response = await official_conn.prompt(session_id=session_id, prompt=blocks)
            return str(response.stop_reason)

        yield Connection(official_prompt, ids, official.counts, process.pid)


# -- throughput ---------------------------------------------------------------------

CPU_PER_CALL = CpuPerCall()
"""(load label, contender) -> per run (client, agent) CPU seconds per timed prompt."""
PEAK_RSS = PeakRss()
"""``VmHWM`` of each agent process after its first prompt and after a timed run."""


async def _sample(pair: Pair, load: Load) -> Sample:
    """One run: launch, connect, check, warm up, time, shut down (only the timing timed)."""
    async with open_connection(pair, load.in_flight) as connection:
        free = list(connection.sessions)

        async def call() -> None:
            session_id = free.pop()
            await _checked_prompt(pair, connection, session_id)
            free.append(session_id)

        with _placed(load.placement, connection.agent_pid):
            await warm_up(call, calls=load.warmup, concurrency=load.in_flight)
            sample, client_cpu, agent_cpu = await measure_with_cpu(
                call, calls=load.calls, concurrency=load.in_flight, pid=connection.agent_pid
            )
        CPU_PER_CALL.add((load.label, pair.name), client_cpu, agent_cpu)
        PEAK_RSS.add(PEAK_RSS.after_workload, pair.server, connection.agent_pid)
        return sample


async def _checked_prompt(pair: Pair, connection: Connection, session_id: str) -> None:
    """One prompt turn, checked: ``end_turn`` after exactly the expected chunks."""
    counts = connection.counts
    before = counts.chunks.get(session_id, 0)
    stop_reason = await connection.prompt(session_id)
    seen = counts.chunks.get(session_id, 0) - before
    if stop_reason != "end_turn" or seen != CHUNKS:
        raise RuntimeError(
            f"{pair.name}: prompt ended with {stop_reason!r} after {seen} chunks "
            f"(expected end_turn after {CHUNKS})"
        )
    if counts.last_text.get(session_id) != CHUNK_TEXTS[-1]:
        raise RuntimeError(f"{pair.name}: last chunk {counts.last_text.get(session_id)!r}")


async def _cold_start(pair: Pair) -> ColdStart:
    """Launching the agent to the first ``session/prompt`` answered (after ``initialize``
    and ``session/new``); records the agent's peak RSS after it."""
    started = time.perf_counter()
    async with open_connection(pair, 1) as connection:
        await _checked_prompt(pair, connection, connection.sessions[0])
        elapsed = time.perf_counter() - started
        pid = connection.agent_pid
        PEAK_RSS.add(PEAK_RSS.after_first_call, pair.server, pid)
        return ColdStart(elapsed, process_cpu_seconds(pid))


def _load_rows(load: Load, summaries: dict[str, Summary]) -> list[list[str]]:
    baseline = summaries[THEIRS.name]
    floor = summaries[FLOOR]
    rows: list[list[str]] = []
    for pair in PAIRS:
        summary = summaries[pair.name]
        ratio = summary.median_rate / baseline.median_rate
        client_cpu, agent_cpu = CPU_PER_CALL.medians((load.label, pair.name))
        rows.append(
            [
                load.label,
                pair.name,
                *summary_cells(summary),
                format_latency(client_cpu),
                format_latency(agent_cpu),
                format_ratio(ratio),
                format_ratio(summary.median_rate / floor.median_rate),
                *target_cells(pair, ratio, load.target),
            ]
        )
    return rows


def _attribution_row(load: Load, summaries: dict[str, Summary]) -> list[str]:
    return [load.label, *attribution_cells(lambda pair: summaries[pair.name].median_rate)]


def _throughput_section(plan: Plan) -> list[str]:
    rows: list[list[str]] = []
    attribution: list[list[str]] = []
    for load, summaries in compare_groups(plan.loads, _sample, plan.runs, name=NAME):
        rows.extend(_load_rows(load, summaries))
        attribution.append(_attribution_row(load, summaries))
    extra = ["client CPU/prompt", "agent CPU/prompt"]
    table = render_pair_table("load", "agent", ("prompts", "prompts/s"), extra, rows)
    where = render_attribution("load", attribution, server="agent")
    return [
        "### Prompt turns (1 request + 10 notifications + 1 response each)",
        "",
        table,
        "",
        "### Where the time goes",
        "",
        "Median prompts/s of each pair ÷ official → official, same load and run.",
        "",
        where,
    ]


# -- import time --------------------------------------------------------------------

IMPORTS: tuple[tuple[str, str, bool], ...] = (
    ("import acp_layer", "rpcweave ACP package (lazy: loads `schema` only)", True),
    ("import acp", "official SDK package (everything it exports)", False),
    (
        "from acp_layer import Agent, Client, spawn_agent, run_agent_stdio",
        "rpcweave ACP, what an agent and a client need",
        False,
    ),
)


def _import_section(plan: Plan) -> list[str]:
    for statement, _, _ in IMPORTS:  # untimed: writes any missing .pyc files
        import_seconds(statement)
    times: dict[str, list[float]] = {statement: [] for statement, _, _ in IMPORTS}
    for index in range(plan.import_runs):
        for statement, _, _ in IMPORTS:
            times[statement].append(import_seconds(statement)[0])
        print(f"{NAME} import time: round {index + 1}/{plan.import_runs}", file=sys.stderr)
    official = statistics.median(times["import acp"])
    rows: list[list[str]] = []
    for statement, description, _ in IMPORTS:
        values = times[statement]
        median = statistics.median(values)
        rows.append(
            [
                f"`{statement}`",
                description,
                _ms(median),
                f"{_ms(min(values))} - {_ms(max(values))}",
                format_ratio(official / median),
            ]
        )
    table = render_table(
        ["import", "what", "median", "range", "speed-up vs `import acp`"],
        rows,
        align={2: "r", 3: "r", 4: "r"},
    )
    return [
        "### Import time (fresh interpreter per measurement)",
        "",
        table,
        "",
        f"- {plan.import_runs} rounds, statements alternating; each is timed inside the "
        "child with `time.perf_counter()` (interpreter start-up excluded), from a "
        "directory outside the repository.",
    ]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


# -- the benchmark ------------------------------------------------------------------


def _notes(plan: Plan, load_before: str, load_after: str) -> list[str]:
    return [
        load_note(load_before, load_after, server="agent"),
        f"Mode: {plan.mode} — {plan.runs} runs per contender per load, contenders "
        "alternating run by run; each run launches a fresh agent process, initializes and "
        "opens one session per prompt in flight (untimed), warms up (untimed), then times "
        "a fixed count of prompts with N closed-loop callers, each on its own session.",
        f"Workload: `session/prompt` with one text block; the agent answers with {CHUNKS} "
        "`session/update` notifications (`agent_message_chunk`, text `chunk <i> `) and "
        'then `{"stopReason": "end_turn"}`. Every call checks that the stop reason is '
        f"`end_turn` and that the client had handled exactly {CHUNKS} chunks of that "
        "session, the last one being the last text, by the time the prompt returned.",
        "Agents: `bench/servers/acp_rpcweave_agent.py` (`acp_layer.Agent`, "
        "`run_agent_stdio`, `AgentConnection.send_text`), "
        "`bench/servers/acp_official_agent.py` (`acp.run_agent`, "
        "`conn.session_update(update_agent_message_text(...))`), "
        "`bench/servers/acp_floor_agent.py` (standard library; one `write` + `flush` per "
        "message). Clients: rpcweave `acp_layer.spawn_agent` + `Client` subclass; official "
        "`acp.spawn_agent_process` + a client object (`initialize` and `session/new` "
        "untimed); floor a hand-written asyncio NDJSON client (1 in flight: write, read "
        "lines to the response; 8 in flight: a reader task).",
        "`vs official` = median prompts/s ÷ official → official's; `vs floor` = ÷ the "
        "floor's. Latencies are the median over runs of each run's p50/p99. CPU/prompt = "
        "CPU time (user + system) of the client process (this one) and of the agent "
        "process during the timed prompts ÷ prompts, median over runs. The target "
        "(rpcweave → rpcweave ≥ 3x official → official, 1 prompt in flight) comes from the "
        "issue; 8 in flight is reported only. A MISS is reported, never raised.",
        "Placement (the two pinned loads, reported only): for the timed part of each run "
        "the client (this process) is pinned to the first usable CPU and the agent to the "
        "second (`two CPUs`) or to the same one (`one CPU`), every contender alike "
        "(`os.sched_setaffinity`). With two CPUs each side waits for the other's wake-up "
        "(a sleeping process is woken through the other CPU), so the floor's lead is "
        "bounded by those wake-ups; on one CPU the two processes' CPU time adds up instead. "
        "The unpinned load, where the scheduler moves both at will, carries the target.",
        "Cold start: from launching the agent process to the first `session/prompt` "
        "answered (the client's `initialize` and `session/new` included), one untimed "
        "round first, then pairs alternating; `agent CPU by then` = the agent's user + "
        "system CPU at that moment (less noisy than the wall time on a shared machine). "
        "Target < 300 ms for rpcweave → rpcweave. Peak RSS = the agent's `VmHWM` right "
        "after that first prompt, and after each timed throughput run; target < 40 MiB "
        "for the rpcweave agent, judged on the largest reading.",
        "Bytecode: agents and import timings run with bytecode caches, as an installed "
        "package has them; when `PYTHONDONTWRITEBYTECODE` is set they are kept in a "
        "temporary `PYTHONPYCACHEPREFIX` (`bench._harness.bytecode_caches`), filled by "
        "the untimed round.",
    ]


def run(*, quick: bool = False) -> str:
    """Run every section and return the Markdown report."""
    plan = make_plan(quick)
    CPU_PER_CALL.clear()
    PEAK_RSS.clear()

    def sections() -> list[str]:
        with bytecode_caches() as child_env:
            CHILD_ENV.clear()
            CHILD_ENV.update(child_env)
            # first, so that every timed run finds the bytecode caches filled
            cold = cold_start_section(
                NAME,
                plan.cold_runs,
                _cold_start,
                peak=PEAK_RSS,
                server="agent",
                what="agent launch to the first `session/prompt` answered",
            )
            throughput = _throughput_section(plan)
            imports = _import_section(plan)
            CHILD_ENV.clear()
        return [
            *throughput,
            "",
            *cold,
            "",
            *peak_rss_section(PEAK_RSS, server="agent"),
            "",
            *imports,
        ]

    return run_report(NAME, TITLE, sections, partial(_notes, plan))


if __name__ == "__main__":  # pragma: no cover - convenience entry point
    sys.stdout.write(run(quick="--quick" in sys.argv[1:]) + "\n")
