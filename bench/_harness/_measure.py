"""Closed-loop drivers, alternating runs and their summaries, CPU time per call.

Every loop is bounded by a count, never by the clock; the clock only measures.
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ._tables import format_rate

__all__ = [
    "Call",
    "Contender",
    "CpuPerCall",
    "Sample",
    "Summary",
    "measure",
    "measure_with_cpu",
    "percentile",
    "process_cpu_seconds",
    "run_alternating",
    "summarize",
    "to_stderr",
    "verdict",
    "warm_up",
]

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
    report = progress if progress is not None else to_stderr
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


def to_stderr(line: str) -> None:
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
