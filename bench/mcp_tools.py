"""MCP benchmark: rpcweave's `mcp_layer` against the official `mcp` SDK, in one run.

Workloads, each over stdio and over Streamable HTTP:

* ``tools/call`` of ``echo(text: str) -> str`` with one request in flight and with 32;
* ``tools/list`` of a server with 100 tools (one request in flight).

Contenders per workload are the four client -> server pairs: rpcweave -> rpcweave,
official -> official, and the cross pairs official -> rpcweave and rpcweave -> official,
so the table shows whether the time goes to the client or to the server. Every
``tools/call`` workload runs in both protocol eras: the handshake era (2025-11-25,
``initialize``) and 2026-07-28 (per-request metadata), where the official client is
`mcp.Client` in its default mode, which negotiates 2026-07-28 (``--quick`` runs the
2026-era rows without the cross pairs); a table sets the two eras side by side, with
the server's CPU per call. Both servers
(``bench/servers/``) declare the same tools from ``bench/servers/mcp_toolset.py``. The
``tools/call`` workloads also run the floor, a hand-written client against a server that
answers with the same JSON and does nothing else: over stdio an asyncio NDJSON client
against ``mcp_floor_stdio_server.py``, over Streamable HTTP a plain ``httpx`` POST loop
against a raw ASGI app (``mcp_floor_server.py``).

Also measured: cold start (process launch to the first ``tools/call`` response, per
pair and transport), each server process's peak RSS (``VmHWM``), and import time of
``mcp_layer`` against ``mcp`` and the official server module (fresh interpreters).

Every timed run starts a fresh server process (untimed), connects and initializes
(untimed), warms up, times a fixed number of calls, reads the server's peak RSS, then
shuts everything down (untimed). Contenders alternate run by run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO, cast

from ._harness import (
    FLOOR,
    FLOOR_PAIR,
    OFFICIAL,
    OURS,
    REPO_ROOT,
    RPCWEAVE,
    SERVERS_DIR,
    THEIRS,
    CpuPerCall,
    NdjsonClient,
    Pair,
    Sample,
    Summary,
    attribution_cells,
    bytecode_caches,
    compare_pairs,
    format_mib,
    format_ms,
    format_rate,
    format_ratio,
    listening_process,
    load_note,
    log_tail,
    measure,
    measure_with_cpu,
    one_line,
    peak_rss_kib,
    render_attribution,
    render_pair_table,
    render_table,
    run_report,
    scratch_log,
    stack_footprint_section,
    summary_cells,
    verdict,
)

__all__ = ["NAME", "TITLE", "run"]

NAME = "mcp"
TITLE = "MCP tools/call and tools/list: rpcweave against the official `mcp` SDK"

SERVER_SCRIPTS = {
    RPCWEAVE: SERVERS_DIR / "mcp_rpcweave_server.py",
    OFFICIAL: SERVERS_DIR / "mcp_official_server.py",
    FLOOR: SERVERS_DIR / "mcp_floor_server.py",
}
FLOOR_STDIO_SCRIPT = SERVERS_DIR / "mcp_floor_stdio_server.py"
STDIO = "stdio"
HTTP = "http"
TRANSPORT_LABELS = {STDIO: "stdio", HTTP: "Streamable HTTP"}

TOOL_COUNT = 100
ECHO_ARGUMENTS: dict[str, Any] = {"text": "hello"}
HTTP_STARTUP_TIMEOUT = 30.0
HTTP_SHUTDOWN_TIMEOUT = 10.0


HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ERAS = (HANDSHAKE, MODERN)
"""The protocol revisions the throughput rows run in: the handshake era (``initialize``)
and 2026-07-28 (per-request metadata, the official `mcp.Client`'s default)."""

PAIRS = (OURS, THEIRS, Pair(OFFICIAL, RPCWEAVE), Pair(RPCWEAVE, OFFICIAL))
"""Ours first, the baseline second, then the cross pairs. The floor (`FLOOR_PAIR`, for
``tools/call`` only) is a hand-written NDJSON client against a standard-library stdio
server, or httpx against a raw ASGI app."""


def _label(pair: Pair) -> str:
    """``client → server`` for every pair, the floor too (``floor → floor``, where
    `Pair.name` says just ``floor``)."""
    return f"{pair.client} → {pair.server}"


# -- plan ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Workload:
    """One row group of the report: what is called, how, and what rpcweave must reach."""

    transport: str
    operation: str  # "tools/call" or "tools/list"
    in_flight: int
    calls: int
    warmup: int
    target: float | None = None
    """Required ratio rpcweave → rpcweave ÷ official → official (None: reported only)."""
    later_target: float | None = None
    """A target announced for later; shown, never judged."""
    floor: bool = False
    """Whether the floor runs too (``tools/call`` only)."""
    floor_target: float | None = None
    """Required ratio rpcweave → rpcweave ÷ the floor (needs ``floor``; None: reported only)."""
    era: str = HANDSHAKE
    """The protocol revision both ends speak (`HANDSHAKE` or `MODERN`; the floor speaks
    the handshake era only)."""
    cross: bool = True
    """Whether the cross pairs run too (``--quick`` leaves them out of 2026-era rows)."""

    @property
    def pairs(self) -> tuple[Pair, ...]:
        pairs = PAIRS if self.cross else (OURS, THEIRS)
        return (*pairs, FLOOR_PAIR) if self.floor else pairs

    @property
    def label(self) -> str:
        what = "tools/list (100 tools)" if self.operation == "tools/list" else "tools/call echo"
        return f"{TRANSPORT_LABELS[self.transport]}, {what}, {self.in_flight} in flight, {self.era}"

    @property
    def shape(self) -> tuple[str, str, int]:
        """What the workload does, whatever the era (pairs the rows of both eras)."""
        return self.transport, self.operation, self.in_flight


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything that differs between a full run and a ``--quick`` smoke run."""

    mode: str
    runs: int
    workloads: tuple[Workload, ...]
    cold_runs: int
    import_runs: int


FLOOR_TARGET = 0.70
"""Streamable HTTP ``tools/call``: rpcweave → rpcweave at least 70% of the floor (#10)."""
STDIO_FLOOR_TARGET = 0.50
"""stdio ``tools/call``, 1 in flight: rpcweave → rpcweave at least 50% of the floor (#10)."""


def _with_modern_twins(workloads: Sequence[Workload], *, cross: bool) -> tuple[Workload, ...]:
    """Each workload, and after every ``tools/call`` one its 2026-07-28 twin: the same
    calls and targets, no floor (it speaks the handshake era), cross pairs if ``cross``."""
    planned: list[Workload] = []
    for workload in workloads:
        planned.append(workload)
        if workload.operation == "tools/call":
            twin = dataclasses.replace(
                workload, era=MODERN, floor=False, floor_target=None, cross=cross
            )
            planned.append(twin)
    return tuple(planned)


def make_plan(quick: bool) -> Plan:
    """The full plan, or a much shorter one for smoke tests (whose 2026-era rows run
    rpcweave → rpcweave and official → official only)."""
    if quick:
        return Plan(
            mode="quick",
            runs=2,
            workloads=_with_modern_twins(
                (
                    Workload(
                        STDIO,
                        "tools/call",
                        1,
                        300,
                        30,
                        target=5.0,
                        floor=True,
                        floor_target=STDIO_FLOOR_TARGET,
                    ),
                    Workload(STDIO, "tools/call", 32, 1_000, 64, later_target=20.0, floor=True),
                    Workload(STDIO, "tools/list", 1, 60, 5, target=3.0),
                    Workload(HTTP, "tools/call", 1, 150, 20, floor=True, floor_target=FLOOR_TARGET),
                    Workload(
                        HTTP, "tools/call", 32, 500, 64, floor=True, floor_target=FLOOR_TARGET
                    ),
                    Workload(HTTP, "tools/list", 1, 40, 5, target=3.0),
                ),
                cross=False,
            ),
            cold_runs=2,
            import_runs=5,
        )
    return Plan(
        mode="full",
        runs=5,
        workloads=_with_modern_twins(
            (
                Workload(
                    STDIO,
                    "tools/call",
                    1,
                    2_000,
                    200,
                    target=5.0,
                    floor=True,
                    floor_target=STDIO_FLOOR_TARGET,
                ),
                Workload(STDIO, "tools/call", 32, 6_000, 320, later_target=20.0, floor=True),
                Workload(STDIO, "tools/list", 1, 300, 20, target=3.0),
                Workload(HTTP, "tools/call", 1, 800, 100, floor=True, floor_target=FLOOR_TARGET),
                Workload(HTTP, "tools/call", 32, 3_000, 320, floor=True, floor_target=FLOOR_TARGET),
                Workload(HTTP, "tools/list", 1, 200, 20, target=3.0),
            ),
            cross=True,
        ),
        cold_runs=7,
        import_runs=15,
    )


# -- checks -------------------------------------------------------------------------


def _check_echo(result: Any, pair: Pair) -> None:
    """Fail loudly when a contender does not echo (a broken benchmark, not a slow one)."""
    content = getattr(result, "content", None) or []
    text = getattr(content[0], "text", None) if content else None
    if getattr(result, "is_error", False) or text != ECHO_ARGUMENTS["text"]:
        raise RuntimeError(f"{pair.name}: echo returned {result!r}")


def _check_listing(result: Any, pair: Pair) -> None:
    tools = getattr(result, "tools", None) or []
    names = {tool.name for tool in tools}
    if len(tools) != TOOL_COUNT or "echo" not in names or getattr(result, "next_cursor", None):
        raise RuntimeError(f"{pair.name}: tools/list gave {len(tools)} tools, one page expected")


# -- processes ----------------------------------------------------------------------


def _server_pid(script: Path) -> int | None:
    """The pid of our child process running ``script`` (the server), if exactly one."""
    me = os.getpid()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            # Fields after the command name, which is in parentheses and may hold spaces.
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if str(script).encode() in handle.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found[0] if len(found) == 1 else None


@asynccontextmanager
async def _http_server(server: str, log: TextIO) -> AsyncIterator[tuple[str, int]]:
    """Start a fixture server with ``--http``; yield its ``/mcp`` URL and pid; stop it."""
    async with listening_process(
        [str(SERVER_SCRIPTS[server]), "--http"],
        what=f"{server} HTTP server",
        log=log,
        url_suffix="/mcp",
        startup_timeout=HTTP_STARTUP_TIMEOUT,
        shutdown_timeout=HTTP_SHUTDOWN_TIMEOUT,
    ) as (url, pid):
        yield url, pid


# -- sessions -----------------------------------------------------------------------


@dataclass(slots=True)
class Session:
    """An initialized session, whichever SDK is on each end."""

    call_echo: Callable[[], Any]
    list_tools: Callable[[], Any]
    server_pid: int | None


def _session_calls(session: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``call_tool("echo", ...)`` and ``list_tools()``; both SDKs spell them alike."""

    def call_echo() -> Any:
        return session.call_tool("echo", ECHO_ARGUMENTS)

    def list_tools() -> Any:
        return session.list_tools()

    return call_echo, list_tools


@dataclass(frozen=True, slots=True)
class _FloorText:
    text: str


@dataclass(frozen=True, slots=True)
class _FloorResult:
    """What the floor client keeps of a ``tools/call`` result (for `_check_echo`)."""

    content: list[_FloorText]
    is_error: bool


def _floor_echo(result: dict[str, Any]) -> _FloorResult:
    """What a floor keeps of a ``tools/call`` result, after checking the echoed text (on
    every call: the SDK clients parse every result, so the floor does not skip that)."""
    texts = [_FloorText(block["text"]) for block in result["content"]]
    echoed = _FloorResult(texts, bool(result.get("isError")))
    if echoed.is_error or not texts or texts[0].text != ECHO_ARGUMENTS["text"]:
        raise RuntimeError(f"floor: echo returned {result!r}")
    return echoed


FLOOR_PROTOCOL_VERSION = "2025-11-25"


FLOOR_INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": FLOOR_PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "bench-floor", "version": "1.0.0"},
}


def _floor_initialize(request_id: int) -> dict[str, Any]:
    params = FLOOR_INITIALIZE_PARAMS
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _floor_echo_request(request_id: int) -> dict[str, Any]:
    params = {"name": "echo", "arguments": ECHO_ARGUMENTS}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class _StdioFloorClient(NdjsonClient):
    """A minimal hand-written MCP client over NDJSON pipes (standard library only).

    With one request in flight it writes a line and reads lines until the response with
    its id. With several, a reader task resolves each caller's future by id.
    """

    close_timeout = HTTP_SHUTDOWN_TIMEOUT

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self._dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

    def _encode(self, method: str, params: Any) -> tuple[int, bytes]:
        self._next_id += 1
        request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        return self._next_id, self._dumps(request).encode() + b"\n"

    async def notify(self, method: str) -> None:
        """Send the notification ``method`` (no params)."""
        self._writer.write(self._dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        await self._writer.drain()

    async def echo_sequential(self) -> _FloorResult:
        """``tools/call`` of ``echo``, one in flight."""
        params = {"name": "echo", "arguments": ECHO_ARGUMENTS}
        return _floor_echo(await self.call_sequential("tools/call", params))

    async def echo_multiplexed(self) -> _FloorResult:
        """``tools/call`` of ``echo`` that may overlap with others (after `start_reader`)."""
        # `call_multiplexed` inlined: one coroutine per call, as in the other floors.
        params = {"name": "echo", "arguments": ECHO_ARGUMENTS}
        request_id, data = self._encode("tools/call", params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._writer.write(data)
        await self._writer.drain()
        return _floor_echo(await future)


@asynccontextmanager
async def _stdio_floor_session(in_flight: int, log: TextIO) -> AsyncIterator[Session]:
    """Launch the stdio floor server and initialize it by hand; ``call_echo`` writes and
    reads itself with 1 in flight, and goes through a reader task with more."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FLOOR_STDIO_SCRIPT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        cwd=REPO_ROOT,
    )
    client = _StdioFloorClient(process)
    try:
        result = await client.call_sequential("initialize", FLOOR_INITIALIZE_PARAMS)
        if result.get("protocolVersion") != FLOOR_PROTOCOL_VERSION:
            raise RuntimeError(f"floor: initialize returned {result!r}")
        await client.notify("notifications/initialized")
        if in_flight == 1:
            call_echo: Callable[[], Any] = client.echo_sequential
        else:
            client.start_reader()
            call_echo = client.echo_multiplexed
        yield Session(call_echo, _no_listing, process.pid)
    finally:
        await client.close()


@asynccontextmanager
async def _floor_session(url: str) -> AsyncIterator[Callable[[], Any]]:
    """A plain ``httpx.AsyncClient`` doing the Streamable HTTP exchange by hand:
    ``initialize``, ``notifications/initialized``, then ``tools/call`` POSTs whose
    SSE answer is parsed with `json.loads` and checked for its id."""
    import httpx

    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    next_id = 0

    async def post(http: httpx.AsyncClient, message: dict[str, Any]) -> httpx.Response:
        content = json.dumps(message, separators=(",", ":")).encode()
        return await http.post(url, content=content, headers=headers)

    def reply_of(response: httpx.Response, request_id: int) -> dict[str, Any]:
        for line in response.content.split(b"\n"):
            if line.startswith(b"data:"):
                reply = json.loads(line[5:])
                if reply.get("id") == request_id and "result" in reply:
                    return cast(dict[str, Any], reply["result"])
        raise RuntimeError(f"floor: no result for request {request_id}: {response.content!r}")

    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
        response = await post(http, _floor_initialize(0))
        reply_of(response, 0)
        headers["mcp-session-id"] = response.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = FLOOR_PROTOCOL_VERSION
        await post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        async def call_echo() -> _FloorResult:
            nonlocal next_id
            next_id += 1
            request_id = next_id
            response = await post(http, _floor_echo_request(request_id))
            return _floor_echo(reply_of(response, request_id))

        yield call_echo


def _no_listing() -> Any:
    raise RuntimeError("the floor answers tools/call only")


_CHILD_ENV: dict[str, str] = {}
"""Environment for servers launched by the official client (see `bytecode_caches`)."""


@asynccontextmanager
async def _official_modern_session(
    transport: str, script: Path, log: TextIO, url: str, pid: int | None
) -> AsyncIterator[Session]:
    """The official `mcp.Client` in its default mode (``"auto"``: ``server/discover``,
    then 2026-07-28 with a server that speaks it), over stdio or Streamable HTTP."""
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if transport == STDIO:
        params = StdioServerParameters(
            command=sys.executable, args=[str(script)], cwd=str(REPO_ROOT), env=_CHILD_ENV
        )
        connection: Any = stdio_client(params, errlog=log)
    else:
        connection = streamable_http_client(url)
    async with Client(connection) as client:
        if client.protocol_version != MODERN:
            raise RuntimeError(f"official client negotiated {client.protocol_version}")
        yield Session(*_session_calls(client), pid if transport == HTTP else _server_pid(script))


@asynccontextmanager
async def open_session(
    pair: Pair, transport: str, log: TextIO, in_flight: int = 1, era: str = HANDSHAKE
) -> AsyncIterator[Session]:
    """Launch ``pair.server`` and open a ``pair.client`` session to it in ``era``
    (``in_flight`` only tells the stdio floor whether to start its reader task)."""
    script = SERVER_SCRIPTS[pair.server]
    if era == MODERN:
        async with _modern_session(pair, transport, script, log) as session:
            yield session
        return
    if pair == FLOOR_PAIR:
        if transport == STDIO:
            async with _stdio_floor_session(in_flight, log) as session:
                yield session
            return
        async with _http_server(FLOOR, log) as (url, pid), _floor_session(url) as call_echo:
            yield Session(call_echo, _no_listing, pid)
        return
    if transport == STDIO:
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_stdio

            command = [sys.executable, str(script)]
            async with connect_stdio(command, cwd=str(REPO_ROOT)) as session:
                yield Session(*_session_calls(session), _server_pid(script))
        else:
            from mcp import ClientSession, StdioServerParameters, stdio_client

            # The official client gives its server a trimmed environment: pass on the
            # bytecode-cache settings every other process of the run has.
            params = StdioServerParameters(
                command=sys.executable, args=[str(script)], cwd=str(REPO_ROOT), env=_CHILD_ENV
            )
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield Session(*_session_calls(session), _server_pid(script))
        return
    async with _http_server(pair.server, log) as (url, pid):
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_http

            async with connect_http(url) as session:
                yield Session(*_session_calls(session), pid)
        else:
            from mcp import ClientSession
            from mcp.client.streamable_http import streamable_http_client

            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield Session(*_session_calls(session), pid)


@asynccontextmanager
async def _modern_session(
    pair: Pair, transport: str, script: Path, log: TextIO
) -> AsyncIterator[Session]:
    """A 2026-07-28 session of ``pair`` (rpcweave's client asks for it by version, the
    official one negotiates it by default); fails if either end settles elsewhere."""
    if transport == STDIO:
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_stdio

            command = [sys.executable, str(script)]
            async with connect_stdio(command, cwd=str(REPO_ROOT), protocol_version=MODERN) as ours:
                yield Session(*_session_calls(ours), _server_pid(script))
            return
        async with _official_modern_session(STDIO, script, log, "", None) as session:
            yield session
        return
    async with _http_server(pair.server, log) as (url, pid):
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_http

            async with connect_http(url, protocol_version=MODERN) as ours:
                yield Session(*_session_calls(ours), pid)
            return
        async with _official_modern_session(HTTP, script, log, url, pid) as session:
            yield session


# -- throughput ---------------------------------------------------------------------


@dataclass(slots=True)
class Footprint:
    """Peak RSS per (server, transport), in KiB, from every run that used that server."""

    after_first_call: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    after_workload: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    @staticmethod
    def add(table: dict[tuple[str, str], list[float]], key: tuple[str, str], kib: float) -> None:
        if math.isfinite(kib):
            table.setdefault(key, []).append(kib)


async def _workload_sample(pair: Pair, workload: Workload, footprint: Footprint) -> Sample:
    """One run of one pair: launch, connect, check, warm up, time, read RSS, shut down."""
    with scratch_log() as log:
        try:
            async with open_session(
                pair, workload.transport, log, workload.in_flight, workload.era
            ) as session:
                if workload.operation == "tools/list":
                    call = session.list_tools
                    _check_listing(await call(), pair)
                else:
                    call = session.call_echo
                    _check_echo(await call(), pair)
                await measure(call, warmup=workload.warmup, calls=0, concurrency=workload.in_flight)
                sample, client_cpu, server_cpu = await measure_with_cpu(
                    call,
                    calls=workload.calls,
                    concurrency=workload.in_flight,
                    pid=session.server_pid,
                )
                CPU_PER_CALL.add((workload.label, pair.name), client_cpu, server_cpu)
                key = (pair.server, workload.transport)
                Footprint.add(footprint.after_workload, key, peak_rss_kib(session.server_pid))
                return sample
        except Exception as exc:
            detail = f"{pair.name} over {workload.transport} failed: {exc!r}; {log_tail(log)}"
            raise RuntimeError(detail) from exc


def _workload_rows(workload: Workload, summaries: dict[str, Summary]) -> list[list[str]]:
    baseline = summaries[THEIRS.name]
    floor = summaries.get(FLOOR_PAIR.name)
    rows: list[list[str]] = []
    for pair in workload.pairs:
        summary = summaries[pair.name]
        ratio = summary.median_rate / baseline.median_rate
        vs_floor = summary.median_rate / floor.median_rate if floor is not None else math.nan
        targets: list[str] = []
        results: list[str] = []
        if pair == OURS and workload.target is not None:
            targets.append(f"≥ {workload.target:g}x")
            results.append(verdict(ratio, workload.target))
        if pair == OURS and workload.later_target is not None:
            targets.append(f"(later ≥ {workload.later_target:g}x)")
            results.append(f"({verdict(ratio, workload.later_target)})")
        if pair == OURS and workload.floor_target is not None:
            targets.append(f"≥ {workload.floor_target:.2f} of floor")
            results.append(verdict(vs_floor, workload.floor_target))
        target = "; ".join(targets) or "—"
        result = "; ".join(results) or "—"
        rows.append(
            [
                workload.label,
                _label(pair),
                *summary_cells(summary),
                format_ratio(ratio),
                format_ratio(vs_floor) if floor is not None else "—",
                target,
                result,
            ]
        )
    return rows


def _median_rate(summaries: dict[str, Summary], pair: Pair) -> float:
    return summaries[pair.name].median_rate


CPU_PER_CALL = CpuPerCall()
"""(workload label, pair name) -> each run's client and server CPU seconds per call."""


def _era_rows(plan: Plan, rates: dict[str, dict[str, float]]) -> list[list[str]]:
    """Per workload shape and pair: req/s and server CPU per call in both eras."""
    rows: list[list[str]] = []
    by_era = {(w.shape, w.era): w for w in plan.workloads}
    for workload in plan.workloads:
        twin = by_era.get((workload.shape, MODERN))
        if workload.era != HANDSHAKE or twin is None:
            continue
        for pair in twin.pairs:
            old = rates.get(workload.label, {}).get(pair.name, math.nan)
            new = rates.get(twin.label, {}).get(pair.name, math.nan)
            old_cpu = CPU_PER_CALL.medians((workload.label, pair.name))[1]
            new_cpu = CPU_PER_CALL.medians((twin.label, pair.name))[1]
            what = f"{TRANSPORT_LABELS[workload.transport]}, {workload.in_flight} in flight"
            rows.append(
                [
                    what,
                    _label(pair),
                    format_rate(old),
                    format_rate(new),
                    format_ratio(new / old),
                    _micros(old_cpu),
                    _micros(new_cpu),
                ]
            )
    return rows


def _micros(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if math.isfinite(seconds) else "n/a"


def _era_section(plan: Plan, rates: dict[str, dict[str, float]]) -> list[str]:
    table = render_table(
        [
            "tools/call echo",
            "client → server",
            f"{HANDSHAKE} req/s",
            f"{MODERN} req/s",
            f"{MODERN} ÷ {HANDSHAKE}",
            f"server CPU/call {HANDSHAKE}",
            f"server CPU/call {MODERN}",
        ],
        _era_rows(plan, rates),
        align={2: "r", 3: "r", 4: "r", 5: "r", 6: "r"},
    )
    return [
        "### Both eras: the handshake (2025-11-25) against 2026-07-28",
        "",
        "Median req/s of the same workload in each era, and the server process's CPU "
        "(user + system, from `/proc`) per timed call, median over runs. In 2026-07-28 "
        "rpcweave's client asks for the version (`protocol_version=`) and the official "
        "`mcp.Client` negotiates it in its default mode (`server/discover`); in the "
        "handshake era both `initialize`.",
        "",
        table,
    ]


def _throughput_section(plan: Plan, footprint: Footprint) -> list[str]:
    rows: list[list[str]] = []
    attribution: list[list[str]] = []
    failures: list[str] = []
    rates: dict[str, dict[str, float]] = {}
    CPU_PER_CALL.clear()
    for workload in plan.workloads:
        run = partial(_workload_sample, workload=workload, footprint=footprint)
        try:
            summaries = compare_pairs(
                workload.pairs, run, plan.runs, label=f"{NAME} {workload.label}"
            )
        except Exception as exc:  # a broken contender: report it, go on with the rest
            print(f"{NAME} {workload.label}: FAILED: {exc}", file=sys.stderr, flush=True)
            failures.append(f"{workload.label}: {one_line(exc)}")
            rows.append([workload.label, "(all pairs)", *["—"] * 8, "FAILED"])
            continue
        rows.extend(_workload_rows(workload, summaries))
        rates[workload.label] = {name: summary.median_rate for name, summary in summaries.items()}
        if workload.cross:
            score = partial(_median_rate, summaries)
            attribution.append([workload.label, *attribution_cells(score)])
    table = render_pair_table("workload", "server", ("calls", "req/s"), [], rows)
    where = render_attribution("workload", attribution, server="server")
    failed = [f"- FAILED {failure}" for failure in failures]
    return [
        "### Throughput",
        "",
        table,
        *(["", *failed] if failed else []),
        "",
        "### Where the time goes",
        "",
        "Median req/s of each pair ÷ official → official, same workload and run.",
        "",
        where,
        "",
        *_era_section(plan, rates),
    ]


# -- cold start and footprint ---------------------------------------------------------


async def _cold_start(pair: Pair, transport: str, footprint: Footprint) -> float:
    """Seconds from launching the server to the first ``tools/call`` response."""
    with scratch_log() as log:
        started = time.perf_counter()
        try:
            async with open_session(pair, transport, log) as session:
                result = await session.call_echo()
                elapsed = time.perf_counter() - started
                _check_echo(result, pair)
                kib = peak_rss_kib(session.server_pid)
                Footprint.add(footprint.after_first_call, (pair.server, transport), kib)
                return elapsed
        except Exception as exc:
            detail = f"{pair.name} cold start over {transport} failed: {exc!r}; {log_tail(log)}"
            raise RuntimeError(detail) from exc


def _cold_start_section(plan: Plan, footprint: Footprint) -> list[str]:
    times: dict[tuple[Pair, str], list[float]] = {(p, t): [] for t in (STDIO, HTTP) for p in PAIRS}
    failures: dict[tuple[Pair, str], str] = {}
    # One untimed launch of every server first: it fills the bytecode caches (compiling
    # the standard library too, which inflates that process's peak RSS), so no reading
    # below or in the throughput runs pays for compilation.
    for transport in (STDIO, HTTP):
        for pair in PAIRS:
            try:
                asyncio.run(_cold_start(pair, transport, Footprint()))
            except Exception:  # the timed rounds report the failure
                pass
    for index in range(plan.cold_runs):
        for transport in (STDIO, HTTP):
            for pair in PAIRS:
                if (pair, transport) in failures:
                    continue
                try:
                    seconds = asyncio.run(_cold_start(pair, transport, footprint))
                except Exception as exc:  # reported in the table; the others go on
                    failures[(pair, transport)] = one_line(exc)
                    print(
                        f"{NAME} cold start {pair.name} {transport}: FAILED: {exc}", file=sys.stderr
                    )
                    continue
                times[(pair, transport)].append(seconds)
                print(
                    f"{NAME} cold start: run {index + 1}/{plan.cold_runs} {pair.name} "
                    f"{transport}: {seconds * 1000:,.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )
    rows: list[list[str]] = []
    for transport in (STDIO, HTTP):
        base_values = times[(THEIRS, transport)]
        baseline = statistics.median(base_values) if base_values else math.nan
        for pair in PAIRS:
            values = times[(pair, transport)]
            if not values:
                error = failures.get((pair, transport), "no runs")
                rows.append([TRANSPORT_LABELS[transport], pair.name, "0", "FAILED", error, "—"])
                continue
            median = statistics.median(values)
            rows.append(
                [
                    TRANSPORT_LABELS[transport],
                    pair.name,
                    str(len(values)),
                    format_ms(median),
                    f"{format_ms(min(values))} - {format_ms(max(values))}",
                    format_ratio(baseline / median),
                ]
            )
    table = render_table(
        ["transport", "client → server", "runs", "median", "range", "speed-up vs official"],
        rows,
        align={2: "r", 3: "r", 4: "r", 5: "r"},
    )
    return ["### Cold start: server launch to first tools/call response", "", table]


def _footprint_section(footprint: Footprint) -> list[str]:
    rows: list[list[str]] = []
    for transport in (STDIO, HTTP):
        for server in (RPCWEAVE, OFFICIAL):
            first = footprint.after_first_call.get((server, transport), [])
            after = footprint.after_workload.get((server, transport), [])
            rows.append(
                [
                    server,
                    TRANSPORT_LABELS[transport],
                    format_mib(statistics.median(first)) if first else "n/a",
                    format_mib(statistics.median(after)) if after else "n/a",
                    format_mib(max(after)) if after else "n/a",
                    str(len(after)),
                ]
            )
    table = render_table(
        [
            "server",
            "transport",
            "after first call (median)",
            "after a timed run (median)",
            "after a timed run (max)",
            "runs",
        ],
        rows,
        align={2: "r", 3: "r", 4: "r", 5: "r"},
    )
    return ["### Peak RSS of each server process (VmHWM)", "", table]


# -- import time --------------------------------------------------------------------

IMPORT_TARGET_SECONDS = 0.200
IMPORTS: tuple[tuple[str, str], ...] = (
    ("import mcp_layer", "rpcweave MCP (client and server)"),
    ("from mcp_layer import MCPServer", "rpcweave MCP, what a server loads"),
    ("from mcp_layer import connect_stdio", "rpcweave MCP, what a stdio client loads"),
    ("import jsonrpc_core", "rpcweave JSON-RPC core"),
    ("import mcp", "official SDK package (client, stdio)"),
    ("import mcp.server.mcpserver", "official high-level server"),
)
"""Statements timed; the target applies to every ``mcp_layer`` one. `mcp_layer` loads its
parts on first use, so the ``from`` rows are what a server or client really pays."""
BREAKDOWN_STATEMENT = "from mcp_layer import MCPServer"
_TIMER = "import time; t = time.perf_counter(); {0}; print(time.perf_counter() - t)"


def _import_seconds(statement: str) -> tuple[float, float]:
    """(import only, whole process) in seconds, in a fresh interpreter."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _TIMER.format(statement)],
        cwd=tempfile.gettempdir(),  # not the repository: no accidental local imports
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    wall = time.perf_counter() - started
    return float(done.stdout.strip()), wall


def _interpreter_seconds() -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "pass"], cwd=tempfile.gettempdir(), check=True, timeout=60
    )
    return time.perf_counter() - started


def _importtime_entries(statement: str) -> list[tuple[int, str, float]]:
    """(depth, module, cumulative seconds) per line of ``python -X importtime -c``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    entries: list[tuple[int, str, float]] = []
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        # The name column is one space, then two spaces per nesting level.
        depth = (len(parts[2]) - len(parts[2].lstrip(" ")) - 1) // 2
        entries.append((depth, parts[2].strip(), int(parts[1]) / 1e6))
    return entries


def _importtime_breakdown(statement: str, top: int = 8) -> list[tuple[str, float]]:
    """The largest cumulative entries (one or two levels deep) that ``statement`` imports
    beyond interpreter start-up, from ``python -X importtime -c statement``. A lazily
    loaded package shows its parts as top-level entries of their own."""
    startup = {name for _, name, _ in _importtime_entries("pass")}
    entries = [
        (name, seconds)
        for depth, name, seconds in _importtime_entries(statement)
        if depth <= 1 and name not in startup
    ]
    entries.sort(key=lambda item: item[1], reverse=True)
    return entries[:top]


def _import_section(plan: Plan) -> list[str]:
    for statement, _ in IMPORTS:  # untimed: writes any missing .pyc files
        _import_seconds(statement)
    imports: dict[str, list[float]] = {statement: [] for statement, _ in IMPORTS}
    walls: dict[str, list[float]] = {statement: [] for statement, _ in IMPORTS}
    interpreter: list[float] = []
    for index in range(plan.import_runs):
        interpreter.append(_interpreter_seconds())
        for statement, _ in IMPORTS:
            seconds, wall = _import_seconds(statement)
            imports[statement].append(seconds)
            walls[statement].append(wall)
        print(f"{NAME} import time: round {index + 1}/{plan.import_runs}", file=sys.stderr)
    base = statistics.median(interpreter)
    rows: list[list[str]] = []
    for statement, description in IMPORTS:
        median = statistics.median(imports[statement])
        is_ours = "mcp_layer" in statement
        rows.append(
            [
                f"`{statement}`",
                description,
                format_ms(median),
                f"{format_ms(min(imports[statement]))} - {format_ms(max(imports[statement]))}",
                format_ms(statistics.median(walls[statement])),
                f"< {IMPORT_TARGET_SECONDS * 1000:.0f} ms" if is_ours else "—",
                ("PASS" if median < IMPORT_TARGET_SECONDS else "MISS") if is_ours else "—",
            ]
        )
    table = render_table(
        [
            "import",
            "what",
            "median import",
            "range",
            "median process wall",
            "target",
            "result",
        ],
        rows,
        align={2: "r", 3: "r", 4: "r"},
    )
    breakdown = ", ".join(
        f"`{name}` {format_ms(seconds)}"
        for name, seconds in _importtime_breakdown(BREAKDOWN_STATEMENT)
    )
    return [
        "### Import time (fresh interpreter per measurement)",
        "",
        table,
        "",
        f"- {plan.import_runs} rounds, statements alternating; the statement is timed inside "
        "the child with `time.perf_counter()` (interpreter start-up excluded); "
        f"`process wall` is the whole `python -c '…'` (`python -c pass` alone: "
        f"{format_ms(base)}). `mcp_layer` and `jsonrpc_core` load their parts on first use, so "
        "`import mcp_layer` alone loads almost nothing; the `from mcp_layer import …` rows "
        "are what a server or a stdio client pays.",
        f"- Largest cumulative entries under `{BREAKDOWN_STATEMENT}` (`-X importtime`, one "
        f"run, one or two levels deep): {breakdown}.",
    ]


# -- the benchmark ------------------------------------------------------------------


def _notes(plan: Plan, load_before: str, load_after: str) -> list[str]:
    return [
        load_note(load_before, load_after, when=" the run"),
        f"Mode: {plan.mode} — {plan.runs} runs per pair per workload, pairs alternating "
        "run by run; each run launches a fresh server process and opens a fresh, "
        "initialized session (untimed), warms up (untimed), then times a fixed count of "
        "calls with N closed-loop callers. Latencies are the median over runs of each "
        "run's p50/p99.",
        "`vs official` = median req/s ÷ official → official median req/s; the target "
        "applies to rpcweave → rpcweave only. A MISS is reported, never raised.",
        "Floor (`tools/call` only): `floor → floor` is a hand-written client against a "
        "server that answers `initialize`, notifications and `tools/call` of `echo` with "
        "the same JSON as the SDK servers and does nothing else (no validation, no other "
        "tools). Over stdio: an asyncio NDJSON client (1 in flight: write a line, read "
        "lines to the response; 32 in flight: a reader task resolving futures by id) "
        "against `bench/servers/mcp_floor_stdio_server.py` (standard library; asyncio "
        "reader on stdin, one `write` + `flush` per message). Over Streamable HTTP: a "
        "plain `httpx.AsyncClient` POST loop (JSON by hand, the SSE answer parsed with "
        "`json.loads`, its id checked) against `bench/servers/mcp_floor_server.py`, a raw "
        "ASGI app under the same uvicorn settings answering as one SSE event (no session "
        "table). Both floor clients check the echoed text of every call. `vs floor` = "
        "median req/s ÷ the floor's; the targets (#10) are rpcweave → rpcweave ≥ "
        f"{STDIO_FLOOR_TARGET:.2f} of the floor over stdio with 1 in flight and ≥ "
        f"{FLOOR_TARGET:.2f} over Streamable HTTP (1 and 32 in flight); stdio with 32 in "
        "flight is reported only.",
        "Servers: `bench/servers/mcp_rpcweave_server.py` (`mcp_layer.MCPServer`) and "
        "`bench/servers/mcp_official_server.py` (`mcp.server.mcpserver.MCPServer`, the "
        "former FastMCP), both with `echo(text: str) -> str` plus the same 99 other tools "
        "(`bench/servers/mcp_toolset.py`), declared the same way (plain functions). Over "
        "HTTP both run under uvicorn with the same settings (stateful Streamable HTTP at "
        "/mcp, SSE responses, 127.0.0.1).",
        "Clients: rpcweave = `mcp_layer.connect_stdio` / `connect_http` (with "
        f"`protocol_version={MODERN!r}` in the {MODERN} rows); official = "
        "`mcp.stdio_client` / `mcp.client.streamable_http.streamable_http_client` + "
        f"`mcp.ClientSession` (`initialize`) in the {HANDSHAKE} rows, and `mcp.Client` "
        f"on the same transports in its default mode (`auto`: `server/discover`, then "
        f"{MODERN}) in the {MODERN} rows; a session that settles on another version "
        "fails the run. The floor speaks the handshake era only. The official client "
        "validates `structuredContent` against "
        "the tool's output schema on every call and lists tools once first (in warm-up); "
        "rpcweave does not validate results against output schemas.",
        "Bytecode caches: every process of the run (servers, import timings) reads and "
        "writes `.pyc` files, as an installed package does; when `PYTHONDONTWRITEBYTECODE` "
        "is set they are kept in a temporary `PYTHONPYCACHEPREFIX` "
        "(`bench._harness.bytecode_caches`), also passed to the servers the official "
        "client launches with its trimmed environment.",
    ]


def run(*, quick: bool = False) -> str:
    """Run every section and return the Markdown report."""
    plan = make_plan(quick)
    footprint = Footprint()

    def sections() -> list[str]:
        with bytecode_caches() as child_env:
            _CHILD_ENV.clear()
            _CHILD_ENV.update(child_env)
            try:
                # first, so that every timed run finds the bytecode caches filled
                cold = _cold_start_section(plan, footprint)
                return [
                    *_throughput_section(plan, footprint),
                    "",
                    *cold,
                    "",
                    *_footprint_section(footprint),
                    "",
                    *stack_footprint_section(
                        plan.cold_runs,
                        server_kib=footprint.after_first_call.get((RPCWEAVE, HTTP), []),
                    ),
                    "",
                    *_import_section(plan),
                ]
            finally:
                _CHILD_ENV.clear()

    return run_report(NAME, TITLE, sections, partial(_notes, plan))


def _main(argv: Sequence[str]) -> None:  # pragma: no cover - convenience entry point
    sys.stdout.write(run(quick="--quick" in argv) + "\n")


if __name__ == "__main__":  # pragma: no cover
    _main(sys.argv[1:])
