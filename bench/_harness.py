"""Shared benchmark machinery: closed-loop drivers, alternating runs, summaries, Markdown.

Rules this module keeps:

1. Contenders run alternately in one process (A, B, A, B, ...), so machine noise that
   comes and goes hits every contender alike.
2. Every loop is bounded by a count, never by the clock; the clock only measures.
3. Nothing here asserts on time. A target that is missed is reported, not raised.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Contender",
    "Sample",
    "Summary",
    "format_latency",
    "format_rate",
    "format_ratio",
    "measure",
    "percentile",
    "render_table",
    "run_alternating",
    "summarize",
    "verdict",
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
