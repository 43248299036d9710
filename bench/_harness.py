"""Shared benchmark machinery: closed-loop drivers, alternating runs, summaries, Markdown.

Rules this module keeps:

1. Contenders run alternately in one process (A, B, A, B, ...), so machine noise that
   comes and goes hits every contender alike.
2. Every loop is bounded by a count, never by the clock; the clock only measures.
3. Nothing here asserts on time. A target that is missed is reported, not raised.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar, cast

__all__ = [
    "FLOOR",
    "FLOOR_PAIR",
    "OFFICIAL",
    "OURS",
    "PAIRS",
    "REPO_ROOT",
    "RPCWEAVE",
    "SERVERS_DIR",
    "THEIRS",
    "Contender",
    "CpuPerCall",
    "NdjsonClient",
    "Pair",
    "Sample",
    "Summary",
    "async_contender",
    "attribution_cells",
    "compare",
    "compare_groups",
    "compare_pairs",
    "format_latency",
    "format_rate",
    "format_ratio",
    "listening_process",
    "load_average",
    "load_note",
    "log_tail",
    "measure",
    "measure_with_cpu",
    "percentile",
    "process_cpu_seconds",
    "render_attribution",
    "render_pair_table",
    "render_report",
    "render_table",
    "run_alternating",
    "run_report",
    "scratch_log",
    "summarize",
    "summary_cells",
    "summary_headers",
    "target_cells",
    "verdict",
    "warm_up",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVERS_DIR = Path(__file__).resolve().parent / "servers"

Call = Callable[[], Awaitable[object]]
"""One request/response round trip, awaited to completion."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One timed run: ``calls`` round trips took ``elapsed`` seconds in total.

    ``latencies`` holds each call's duration in seconds, in completion order.
    """

    calls: int
    elapsed: float
    latencies: Sequence[float]

    @property
    def throughput(self) -> float:
        """Completed calls per second."""
        return self.calls / self.elapsed if self.elapsed > 0 else math.inf


@dataclass(frozen=True, slots=True)
class Contender:
    """A named implementation of a workload.

    ``run_once`` performs one complete run (setup, warm-up, timed section, teardown)
    and returns the timed section's `Sample`; setup and teardown are not timed.
    """

    name: str
    run_once: Callable[[], Sample]


@dataclass(frozen=True, slots=True)
class Summary:
    """The runs of one contender reduced to a few robust figures."""

    name: str
    runs: int
    calls: int
    median_rate: float
    min_rate: float
    max_rate: float
    p50_latency: float
    p99_latency: float


async def _drive(call: Call, calls: int, concurrency: int, record: bool) -> list[float]:
    """Complete ``calls`` round trips with ``concurrency`` closed-loop workers.

    Each worker takes the next call from a shared counter and awaits it before taking
    another, so exactly ``concurrency`` requests are in flight until the counter runs out.
    """
    latencies: list[float] = []
    remaining = calls
    clock = time.perf_counter

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            if record:
                started = clock()
                await call()
                latencies.append(clock() - started)
            else:
                await call()

    workers = max(1, min(concurrency, calls))
    if workers == 1:
        await worker()
    else:
        await asyncio.gather(*(worker() for _ in range(workers)))
    return latencies


async def measure(call: Call, *, warmup: int, calls: int, concurrency: int) -> Sample:
    """Warm up with ``warmup`` untimed calls, then time ``calls`` calls.

    Both phases use the same concurrency. The elapsed time covers the timed calls only.
    """
    await _drive(call, warmup, concurrency, record=False)
    started = time.perf_counter()
    latencies = await _drive(call, calls, concurrency, record=True)
    elapsed = time.perf_counter() - started
    return Sample(calls=calls, elapsed=elapsed, latencies=latencies)


def run_alternating(
    contenders: Sequence[Contender],
    runs: int,
    *,
    label: str = "",
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[Sample]]:
    """Run every contender ``runs`` times, interleaved A, B, A, B, ...

    ``progress`` (default: a line on stderr) is told about each finished run.
    """
    report = progress if progress is not None else _to_stderr
    samples: dict[str, list[Sample]] = {c.name: [] for c in contenders}
    for index in range(runs):
        for contender in contenders:
            sample = contender.run_once()
            samples[contender.name].append(sample)
            prefix = f"{label}: " if label else ""
            report(
                f"{prefix}run {index + 1}/{runs} {contender.name}: "
                f"{format_rate(sample.throughput)} req/s"
            )
    return samples


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values (``fraction`` in 0..1)."""
    if not ordered:
        return math.nan
    rank = math.ceil(fraction * len(ordered))
    return ordered[min(max(rank, 1), len(ordered)) - 1]


def summarize(name: str, samples: Sequence[Sample]) -> Summary:
    """Median throughput over runs; latency percentiles as the median of per-run values."""
    if not samples:
        raise ValueError(f"{name}: no samples to summarise")
    rates = [s.throughput for s in samples]
    p50s: list[float] = []
    p99s: list[float] = []
    for sample in samples:
        ordered = sorted(sample.latencies)
        p50s.append(percentile(ordered, 0.50))
        p99s.append(percentile(ordered, 0.99))
    return Summary(
        name=name,
        runs=len(samples),
        calls=samples[0].calls,
        median_rate=statistics.median(rates),
        min_rate=min(rates),
        max_rate=max(rates),
        p50_latency=statistics.median(p50s),
        p99_latency=statistics.median(p99s),
    )


def verdict(ratio: float, target: float) -> str:
    """``PASS`` when ``ratio`` reaches ``target``, else ``MISS`` (never raises)."""
    return "PASS" if ratio >= target else "MISS"


def format_rate(rate: float) -> str:
    """Requests per second with thousands separators."""
    return f"{rate:,.0f}" if math.isfinite(rate) else "n/a"


def format_latency(seconds: float) -> str:
    """A latency in microseconds (or milliseconds once it is large)."""
    if not math.isfinite(seconds):
        return "n/a"
    micros = seconds * 1e6
    return f"{micros:,.0f} µs" if micros < 10_000 else f"{micros / 1000:,.1f} ms"


def format_ratio(ratio: float) -> str:
    """A throughput ratio with three decimals (so a near miss does not print as the target)."""
    return f"{ratio:.3f}" if math.isfinite(ratio) else "n/a"


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align: Mapping[int, str] | None = None,
) -> str:
    """A GitHub-flavoured Markdown table with padded columns.

    ``align`` maps a column index to ``"l"``, ``"r"`` or ``"c"`` (default left).
    """
    align = align or {}
    width = len(headers)
    for row in rows:
        if len(row) != width:
            raise ValueError(f"row has {len(row)} cells, expected {width}: {row!r}")
    sizes = [max([3, len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = []
        for i, cell in enumerate(cells):
            padded.append(cell.rjust(sizes[i]) if align.get(i) == "r" else cell.ljust(sizes[i]))
        return "| " + " | ".join(padded) + " |"

    rules = []
    for i, size in enumerate(sizes):
        kind = align.get(i, "l")
        if kind == "r":
            rules.append("-" * (size - 1) + ":")
        elif kind == "c":
            rules.append(":" + "-" * (size - 2) + ":")
        else:
            rules.append("-" * size)
    return "\n".join([line(headers), "| " + " | ".join(rules) + " |", *(line(r) for r in rows)])


# -- contenders ---------------------------------------------------------------------

RPCWEAVE = "rpcweave"
OFFICIAL = "official"
FLOOR = "floor"


@dataclass(frozen=True, slots=True)
class Pair:
    """A client implementation talking to a server (or agent) implementation."""

    client: str
    server: str

    @property
    def name(self) -> str:
        """``client → server``, or just ``floor`` for the floor pair."""
        return FLOOR if self.client == FLOOR else f"{self.client} → {self.server}"


OURS = Pair(RPCWEAVE, RPCWEAVE)
THEIRS = Pair(OFFICIAL, OFFICIAL)
FLOOR_PAIR = Pair(FLOOR, FLOOR)
PAIRS = (OURS, THEIRS, Pair(OFFICIAL, RPCWEAVE), Pair(RPCWEAVE, OFFICIAL), FLOOR_PAIR)
"""Ours first, the baseline second, then the cross pairs and the floor."""


def async_contender(name: str, run: Callable[[], Coroutine[Any, Any, Sample]]) -> Contender:
    """A contender whose run is the coroutine ``run()`` on a fresh event loop."""
    return Contender(name, lambda: asyncio.run(run()))


def compare(contenders: Sequence[Contender], runs: int, *, label: str) -> dict[str, Summary]:
    """`run_alternating`, then `summarize` each contender (in the contenders' order)."""
    samples = run_alternating(contenders, runs, label=label)
    return {name: summarize(name, runs) for name, runs in samples.items()}


def compare_pairs(
    pairs: Sequence[Pair],
    run: Callable[[Pair], Coroutine[Any, Any, Sample]],
    runs: int,
    *,
    label: str,
) -> dict[str, Summary]:
    """`compare` the pairs, each run being ``run(pair)`` on a fresh event loop."""
    return compare([async_contender(p.name, partial(run, p)) for p in pairs], runs, label=label)


class Group(Protocol):
    """A row group of a report (a workload, a load): anything with a ``label``."""

    @property
    def label(self) -> str: ...


G = TypeVar("G", bound=Group)


def compare_groups(
    groups: Sequence[G],
    run: Callable[[Pair, G], Coroutine[Any, Any, Sample]],
    runs: int,
    *,
    name: str,
    pairs: Sequence[Pair] = PAIRS,
) -> Iterator[tuple[G, dict[str, Summary]]]:
    """For each group in turn, `compare_pairs` with ``run(pair, group)`` (progress
    labelled ``"<name> <group label>"``) and yield the group and its summaries."""
    for group in groups:
        summaries = compare_pairs(pairs, _bind(run, group), runs, label=f"{name} {group.label}")
        yield group, summaries


def _bind(
    run: Callable[[Pair, G], Coroutine[Any, Any, Sample]], group: G
) -> Callable[[Pair], Coroutine[Any, Any, Sample]]:
    return lambda pair: run(pair, group)


@dataclass(frozen=True, slots=True)
class EchoLoad:
    """For the core echo benches: requests in flight, calls a run times, and the target
    ratio to the floor (``None``: reported, no target)."""

    label: str
    in_flight: int
    calls: int
    target: float | None


@dataclass(frozen=True, slots=True)
class EchoPlan:
    """Everything that differs between a full run and a ``--quick`` smoke run of a core
    echo bench."""

    mode: str
    runs: int
    warmup: int
    loads: tuple[EchoLoad, ...]


# -- timed sections -----------------------------------------------------------------


async def warm_up(call: Callable[[], Awaitable[object]], *, calls: int, concurrency: int) -> object:
    """One call alone (its result returned, to be checked), then ``calls`` untimed calls
    by ``concurrency`` closed-loop callers."""
    first = await call()
    await measure(call, warmup=0, calls=calls, concurrency=concurrency)
    return first


def process_cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user + system) used so far by process ``pid``; NaN where unknown."""
    if pid is None:
        return math.nan
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return math.nan


async def measure_with_cpu(
    call: Call, *, calls: int, concurrency: int, pid: int | None
) -> tuple[Sample, float, float]:
    """Time ``calls`` calls (no warm-up) like `measure`; also return the CPU seconds per
    call spent by this process and by process ``pid`` (NaN if unknown) meanwhile."""
    client_cpu, server_cpu = time.process_time(), process_cpu_seconds(pid)
    sample = await measure(call, warmup=0, calls=calls, concurrency=concurrency)
    client_cpu = (time.process_time() - client_cpu) / calls
    server_cpu = (process_cpu_seconds(pid) - server_cpu) / calls
    return sample, client_cpu, server_cpu


class CpuPerCall:
    """(row label, contender) -> each run's (client, server) CPU seconds per timed call."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, str], list[tuple[float, float]]] = {}

    def add(self, key: tuple[str, str], client: float, server: float) -> None:
        """Record one run."""
        self.runs.setdefault(key, []).append((client, server))

    def medians(self, key: tuple[str, str]) -> tuple[float, float]:
        """Median client and server CPU per call over the runs of ``key`` (NaN if none)."""
        runs = self.runs.get(key, [])
        if not runs:
            return math.nan, math.nan
        return statistics.median(c for c, _ in runs), statistics.median(s for _, s in runs)

    def clear(self) -> None:
        """Forget every run (at the start of a benchmark)."""
        self.runs.clear()


# -- server processes ---------------------------------------------------------------


def scratch_log() -> TextIO:
    """A temporary file for a server's stderr (its tail goes into error messages)."""
    return cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8"))


def log_tail(log: TextIO, lines: int = 6) -> str:
    """The last ``lines`` lines of ``log``, joined with `` | `` (empty if unreadable)."""
    try:
        log.flush()
        log.seek(0)
        return " | ".join(log.read().strip().splitlines()[-lines:])
    except (OSError, ValueError):
        return ""


@asynccontextmanager
async def listening_process(
    args: Sequence[str],
    *,
    what: str,
    log: TextIO | None = None,
    ready: str = "LISTENING",
    url_suffix: str = "",
    stop: signal.Signals = signal.SIGINT,
    startup_timeout: float = 30.0,
    shutdown_timeout: float = 10.0,
) -> AsyncIterator[tuple[str, int]]:
    """Run ``python *args`` (from the repository root, stdin closed, stderr to ``log``
    or inherited), wait for its first stdout line ``<ready> <port>``, and yield
    ``http://127.0.0.1:<port><url_suffix>`` and its pid. On exit send ``stop``, and kill
    it if it has not exited after ``shutdown_timeout`` seconds."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        cwd=REPO_ROOT,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), startup_timeout)
        word, _, port = line.decode().partition(" ")
        if word != ready or not port.strip().isdigit():
            detail = f"; {log_tail(log)}" if log is not None else ""
            raise RuntimeError(f"{what} did not start: {line!r}{detail}")
        yield f"http://127.0.0.1:{int(port)}{url_suffix}", process.pid
    finally:
        if process.returncode is None:
            process.send_signal(stop)
            try:
                await asyncio.wait_for(process.wait(), shutdown_timeout)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()


class NdjsonClient:
    """A minimal hand-written JSON-RPC client of a subprocess speaking NDJSON on its pipes
    (standard library only), for floor contenders.

    With one request in flight, `call_sequential` writes the request and reads lines up
    to its response. With several, `start_reader` starts a task that routes each response
    to its caller's future, and callers use `call_multiplexed`. Subclasses may override
    `_reply` to look at the other messages on the way.
    """

    peer = "floor server"
    """How error messages name the other end."""
    close_timeout: float | None = 10.0
    """Seconds `close` waits for the process to exit before killing it (None: no limit)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._writer = process.stdin
        self._reader = process.stdout
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader_task: asyncio.Task[None] | None = None

    def _encode(self, method: str, params: Any) -> tuple[int, bytes]:
        """The next request id and the request as one compact JSON line."""
        self._next_id += 1
        request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        return self._next_id, json.dumps(request, separators=(",", ":")).encode() + b"\n"

    def _reply(self, line: bytes) -> dict[str, Any] | None:
        """The message on ``line`` if it is a response (an id and no method), else None."""
        message: dict[str, Any] = json.loads(line)
        return message if "id" in message and "method" not in message else None

    async def call_sequential(self, method: str, params: Any) -> Any:
        """One request; only valid while nothing else is in flight."""
        request_id, data = self._encode(method, params)
        self._writer.write(data)
        await self._writer.drain()
        while True:
            line = await self._reader.readline()
            if not line:
                raise ConnectionError(f"{self.peer} closed the connection")
            reply = self._reply(line)
            if reply is None:
                continue
            if reply.get("id") != request_id:
                raise RuntimeError(f"floor: response id {reply.get('id')!r}, not {request_id}")
            if "error" in reply:
                raise RuntimeError(f"floor: error response {reply['error']!r}")
            return reply["result"]

    def start_reader(self) -> None:
        """Switch to multiplexed mode: a task routes each response to its caller."""
        self._reader_task = asyncio.get_running_loop().create_task(self._read_replies())

    async def call_multiplexed(self, method: str, params: Any) -> Any:
        """One request that may overlap with others (after `start_reader`)."""
        request_id, data = self._encode(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._writer.write(data)
        await self._writer.drain()
        return await future

    async def _read_replies(self) -> None:
        try:
            while line := await self._reader.readline():
                reply = self._reply(line)
                if reply is None:
                    continue
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
                    future.set_exception(ConnectionError(f"{self.peer} closed the connection"))

    async def close(self) -> None:
        """Close stdin, let the process exit on end of input, and reap it."""
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            await asyncio.wait_for(self.process.wait(), self.close_timeout)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self._reader_task is not None:
            await self._reader_task


# -- report -------------------------------------------------------------------------


def summary_headers(count: str, rate: str) -> list[str]:
    """The headers of `summary_cells`, e.g. ``("calls", "req/s")``."""
    return [f"runs x {count}", f"median {rate}", f"range {rate}", "p50 latency", "p99 latency"]


def summary_cells(summary: Summary) -> list[str]:
    """``runs x calls``, median rate, rate range, p50 and p99 latency of one contender."""
    return [
        f"{summary.runs} x {summary.calls:,}",
        format_rate(summary.median_rate),
        f"{format_rate(summary.min_rate)} - {format_rate(summary.max_rate)}",
        format_latency(summary.p50_latency),
        format_latency(summary.p99_latency),
    ]


def target_cells(pair: Pair, ratio: float, target: float | None) -> list[str]:
    """The ``target`` and ``result`` cells: filled for rpcweave → rpcweave when the row
    group has a target (``≥ <target>x`` and the `verdict` of ``ratio``), else dashes."""
    if pair == OURS and target is not None:
        return [f"≥ {target:g}x", verdict(ratio, target)]
    return ["—", "—"]


def render_pair_table(
    group: str,
    server: str,
    units: tuple[str, str],
    extra: Sequence[str],
    rows: Sequence[Sequence[str]],
) -> str:
    """The results table of client → server pairs: ``group`` (the row group's header),
    ``client → <server>``, `summary_headers` of ``units``, the ``extra`` columns, then
    ``vs official``, ``vs floor``, ``target``, ``result``; all but the first two and the
    last two right-aligned."""
    headers = [
        group,
        f"client → {server}",
        *summary_headers(*units),
        *extra,
        "vs official",
        "vs floor",
        "target",
        "result",
    ]
    return render_table(headers, rows, align={i: "r" for i in range(2, len(headers) - 2)})


def attribution_cells(score: Callable[[Pair], float]) -> list[str]:
    """``score`` (bigger is better) of official → rpcweave, rpcweave → official and
    rpcweave → rpcweave, each ÷ official → official's."""
    base = score(THEIRS)
    return [
        format_ratio(score(Pair(OFFICIAL, RPCWEAVE)) / base),
        format_ratio(score(Pair(RPCWEAVE, OFFICIAL)) / base),
        format_ratio(score(OURS) / base),
    ]


def render_attribution(row_header: str, rows: Sequence[Sequence[str]], *, server: str) -> str:
    """The "where the time goes" table: a row label, then `attribution_cells`."""
    return render_table(
        [
            row_header,
            f"rpcweave {server} only (official → rpcweave)",
            "rpcweave client only (rpcweave → official)",
            "both (rpcweave → rpcweave)",
        ],
        rows,
        align={1: "r", 2: "r", 3: "r"},
    )


def load_average() -> str:
    """The machine's 1- and 5-minute load averages, for the notes."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.1f} (1 min) / {five:.1f} (5 min)"


def load_note(before: str, after: str, *, server: str = "server", when: str = "") -> str:
    """The note on machine load (`load_average` before and after the runs); ``when``
    goes after "before / after" (e.g. ``" the run"``)."""
    return (
        f"Machine load average before / after{when}: {before}; {after} "
        f"({os.cpu_count()} CPUs). Client and {server} share these CPUs, so other work on "
        "the machine moves the absolute figures; alternating runs keep the ratios fair."
    )


def render_report(name: str, title: str, sections: Sequence[str], notes: Sequence[str]) -> str:
    """A benchmark's Markdown: heading, ``sections`` (lines), then ``notes`` as a list."""
    bullets = [f"- {note}" for note in notes]
    return "\n".join([f"## {name}: {title}", "", *sections, "", "### Notes", "", *bullets])


def run_report(
    name: str,
    title: str,
    sections: Callable[[], Sequence[str]],
    notes: Callable[[str, str], Sequence[str]],
) -> str:
    """Build ``sections()`` (the runs), then `render_report` with ``notes(load before,
    load after)``, the `load_average` read just before and just after the sections."""
    before = load_average()
    lines = sections()
    return render_report(name, title, lines, notes(before, load_average()))


# -- cold start and footprint -------------------------------------------------------

COLD_START_TARGET_SECONDS = 0.300
"""Issue target: process launch to first answer, rpcweave → rpcweave."""
PEAK_RSS_TARGET_KIB = 40 * 1024
"""Issue target: peak RSS (``VmHWM``) of an rpcweave server process."""
COLD_PAIRS = (OURS, THEIRS, Pair(OFFICIAL, RPCWEAVE), Pair(RPCWEAVE, OFFICIAL))
"""The pairs timed from a cold start (no floor: it is no SDK)."""


def peak_rss_kib(pid: int | None) -> float:
    """``VmHWM`` (peak resident set size, KiB) of a live process; NaN if unknown."""
    if pid is None:
        return math.nan
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return math.nan


class PeakRss:
    """Peak RSS (KiB) of each server implementation's processes, after the first call
    (cold-start runs) and after a timed run (throughput runs)."""

    def __init__(self) -> None:
        self.after_first_call: dict[str, list[float]] = {}
        self.after_workload: dict[str, list[float]] = {}

    @staticmethod
    def add(table: dict[str, list[float]], server: str, pid: int | None) -> None:
        """Record the ``VmHWM`` of process ``pid`` (skipped where unknown)."""
        kib = peak_rss_kib(pid)
        if math.isfinite(kib):
            table.setdefault(server, []).append(kib)

    def clear(self) -> None:
        """Forget every reading (at the start of a benchmark)."""
        self.after_first_call.clear()
        self.after_workload.clear()


STACK_STEPS: tuple[tuple[str, str], ...] = (
    ("Python interpreter (this venv's `site`)", "pass"),
    ("+ asyncio (it imports ssl)", "import asyncio"),
    (
        "+ pydantic, one model built and used",
        "import pydantic\n"
        "class Model(pydantic.BaseModel):\n"
        "    a: int = 0\n"
        "Model.model_validate({'a': 1}).model_dump_json()",
    ),
    (
        "+ uvicorn with its httptools protocol and lifespan",
        "import uvicorn, uvicorn.protocols.http.httptools_impl, uvicorn.lifespan.on",
    ),
    ("+ anyio with its asyncio backend", "import anyio, anyio._backends._asyncio"),
)
"""The dependency stack every rpcweave HTTP server process loads before any code of ours,
step by step (each step adds to the ones above)."""

_STEPS_CHILD = """
import sys
def rss():
    with open('/proc/self/status') as status:
        for line in status:
            if line.startswith('VmRSS:'):
                return line.split()[1]
for code in sys.argv[1:]:
    exec(code)
    print(rss())
"""


def _stack_step_kib() -> list[float]:
    """VmRSS (KiB) after each of `STACK_STEPS`, in one fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _STEPS_CHILD, *(code for _, code in STACK_STEPS)],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [float(value) for value in done.stdout.split()]


def stack_footprint_section(runs: int, *, server_kib: Sequence[float]) -> list[str]:
    """Where a server's resident memory goes: the dependency stack (`STACK_STEPS`, median
    of ``runs`` fresh interpreters, after a discarded one that fills the bytecode caches)
    against the rpcweave server readings ``server_kib`` (after its first call), and what
    that leaves for rpcweave's own code under the 40 MiB target."""
    _stack_step_kib()
    readings = [_stack_step_kib() for _ in range(runs)]
    steps = [statistics.median(run[index] for run in readings) for index in range(len(STACK_STEPS))]
    rows: list[list[str]] = []
    previous = 0.0
    for (label, _), kib in zip(STACK_STEPS, steps, strict=True):
        rows.append([label, format_mib(kib), format_mib(kib - previous) if previous else "—"])
        previous = kib
    stack = steps[-1]
    if server_kib:
        server = statistics.median(server_kib)
        added = format_mib(server - stack)
        rows.append(["rpcweave server after its first call", format_mib(server), added])
    table = render_table(["process", "VmRSS (median)", "added"], rows, align={1: "r", 2: "r"})
    left_mib = (PEAK_RSS_TARGET_KIB - stack) / 1024
    left_mb = (40e6 / 1024 - stack) * 1024 / 1e6
    return [
        "### Where a server's memory goes: the dependency stack before rpcweave's code",
        "",
        table,
        "",
        f"- {runs} fresh interpreters (bytecode caches filled first), run from a directory "
        "outside the repository; each row adds its imports to the rows above. The stack "
        f"leaves {left_mib:,.1f} MiB for the SDK (its core, layer, models and the app) "
        f"under 40 MiB, and {left_mb:,.1f} MB under 40 MB (= 38.1 MiB).",
    ]


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``exc`` as one table-safe line of at most ``limit`` characters."""
    text = " ".join(str(exc).split()).replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_ms(seconds: float) -> str:
    """Milliseconds, no decimals."""
    return f"{seconds * 1000:,.0f} ms"


def format_mib(kib: float) -> str:
    """KiB as MiB, one decimal."""
    return f"{kib / 1024:,.1f} MiB"


@contextmanager
def bytecode_caches() -> Iterator[dict[str, str]]:
    """Let the Python processes started inside read and write bytecode caches.

    Installed packages have theirs; a source checkout run with ``PYTHONDONTWRITEBYTECODE``
    set has none, and every server launch would then compile the project's modules from
    source, which no installed deployment does. If that variable is set, this unsets it and
    points ``PYTHONPYCACHEPREFIX`` at a temporary directory (nothing is written to the
    checkout) until the block ends; otherwise it changes nothing. Yields the variables
    to pass to launchers that do not inherit this environment."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        yield {}
        return
    saved = os.environ.pop("PYTHONDONTWRITEBYTECODE")
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as prefix:
        os.environ["PYTHONPYCACHEPREFIX"] = prefix
        try:
            yield {"PYTHONPYCACHEPREFIX": prefix}
        finally:
            del os.environ["PYTHONPYCACHEPREFIX"]
            os.environ["PYTHONDONTWRITEBYTECODE"] = saved


@dataclass(frozen=True, slots=True)
class ColdStart:
    """One cold start: wall seconds from launching the server process to the first
    answer, and the CPU seconds that process had used by then (NaN if unknown)."""

    seconds: float
    server_cpu: float


def cold_start_section(
    name: str,
    runs: int,
    cold_start: Callable[[Pair], Coroutine[Any, Any, ColdStart]],
    *,
    what: str,
    peak: PeakRss | None = None,
    server: str = "server",
    pairs: Sequence[Pair] = COLD_PAIRS,
) -> list[str]:
    """Run ``cold_start(pair)`` (each on a fresh event loop) once per pair untimed (it
    fills the bytecode caches, see `bytecode_caches`; the ``peak.after_first_call``
    readings it made are dropped), then ``runs`` times per pair, pairs alternating, and
    render the medians with the < 300 ms target on rpcweave → rpcweave (``server`` names
    the launched side in the headers). A pair that fails is reported in its row and not
    run again; the others go on."""
    times: dict[Pair, list[ColdStart]] = {pair: [] for pair in pairs}
    failures: dict[Pair, str] = {}
    for index in range(-1, runs):
        if index == 0 and peak is not None:
            peak.after_first_call.clear()
        for pair in pairs:
            if pair in failures:
                continue
            try:
                result = asyncio.run(cold_start(pair))
            except Exception as exc:  # reported in the table
                failures[pair] = one_line(exc)
                _to_stderr(f"{name} cold start {pair.name}: FAILED: {exc}")
                continue
            if index < 0:
                continue
            times[pair].append(result)
            _to_stderr(
                f"{name} cold start: run {index + 1}/{runs} {pair.name}: "
                f"{format_ms(result.seconds)} (server CPU {format_ms(result.server_cpu)})"
            )
    base_values = [run.seconds for run in times.get(THEIRS, [])]
    baseline = statistics.median(base_values) if base_values else math.nan
    rows: list[list[str]] = []
    for pair in pairs:
        values = [run.seconds for run in times[pair]]
        if not values:
            rows.append([pair.name, "0", "FAILED", failures.get(pair, "no runs"), "—", "—", "—"])
            continue
        median = statistics.median(values)
        target = "—"
        if pair == OURS:
            target = f"< 300 ms: {'MET' if median < COLD_START_TARGET_SECONDS else 'MISS'}"
        rows.append(
            [
                pair.name,
                str(len(values)),
                format_ms(median),
                f"{format_ms(min(values))} - {format_ms(max(values))}",
                format_ms(statistics.median(run.server_cpu for run in times[pair])),
                format_ratio(baseline / median),
                target,
            ]
        )
    table = render_table(
        [
            f"client → {server}",
            "runs",
            "median",
            "range",
            f"{server} CPU by then (median)",
            "speed-up vs official",
            "target",
        ],
        rows,
        align={1: "r", 2: "r", 3: "r", 4: "r", 5: "r"},
    )
    return [f"### Cold start: {what}", "", table]


def peak_rss_section(peak: PeakRss, *, server: str = "server") -> list[str]:
    """The `PeakRss` readings of rpcweave and official, with the < 40 MiB target on
    rpcweave (judged on the largest reading after a timed run, or after the first call
    if there is none)."""
    rows: list[list[str]] = []
    for implementation in (RPCWEAVE, OFFICIAL):
        first = peak.after_first_call.get(implementation, [])
        after = peak.after_workload.get(implementation, [])
        target = "—"
        worst = max(after or first or [math.nan])
        if implementation == RPCWEAVE and math.isfinite(worst):
            target = f"< 40 MiB: {'MET' if worst < PEAK_RSS_TARGET_KIB else 'MISS'}"
        rows.append(
            [
                implementation,
                format_mib(statistics.median(first)) if first else "n/a",
                format_mib(statistics.median(after)) if after else "n/a",
                format_mib(max(after)) if after else "n/a",
                str(len(first)),
                str(len(after)),
                target,
            ]
        )
    table = render_table(
        [
            server,
            "after first call (median)",
            "after a timed run (median)",
            "after a timed run (max)",
            "first-call runs",
            "timed runs",
            "target",
        ],
        rows,
        align={1: "r", 2: "r", 3: "r", 4: "r", 5: "r"},
    )
    return [f"### Peak RSS of each {server} process (VmHWM)", "", table]
