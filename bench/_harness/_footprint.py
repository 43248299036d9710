"""Cold start (process launch to first answer) and memory footprint (peak RSS of each
server process, and the dependency stack's share of it)."""

from __future__ import annotations

import asyncio
import math
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from ._measure import to_stderr
from ._pairs import OFFICIAL, OURS, RPCWEAVE, THEIRS, Pair
from ._tables import format_mib, format_ms, format_ratio, one_line, render_table

__all__ = [
    "COLD_PAIRS",
    "COLD_START_TARGET_SECONDS",
    "PEAK_RSS_TARGET_KIB",
    "STACK_STEPS",
    "ColdStart",
    "PeakRss",
    "cold_start_section",
    "peak_rss_kib",
    "peak_rss_section",
    "stack_footprint_section",
]

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
import sys, time
def rss():
    with open('/proc/self/status') as status:
        for line in status:
            if line.startswith('VmRSS:'):
                return line.split()[1]
for code in sys.argv[1:]:
    exec(code)
    print(rss(), time.process_time())
"""


@dataclass(frozen=True, slots=True)
class _StackStep:
    """One fresh interpreter's reading after a step of `STACK_STEPS`: VmRSS (KiB) and the
    CPU seconds the process had used since it was launched (its start-up included)."""

    kib: float
    cpu_seconds: float


def _stack_steps() -> list[_StackStep]:
    """The readings after each of `STACK_STEPS`, in one fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _STEPS_CHILD, *(code for _, code in STACK_STEPS)],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    readings = [line.split() for line in done.stdout.splitlines()]
    return [_StackStep(float(kib), float(cpu)) for kib, cpu in readings]


def stack_footprint_section(runs: int, *, server_kib: Sequence[float]) -> list[str]:
    """Where a server's resident memory and cold start go: the dependency stack
    (`STACK_STEPS`, median of ``runs`` fresh interpreters, after a discarded one that
    fills the bytecode caches) against the rpcweave server readings ``server_kib`` (after
    its first call), and what that leaves for rpcweave's own code under the 40 MiB and
    300 ms targets (a cold start's CPU is the server's, and the stack's CPU is spent
    before the server has read its first byte)."""
    _stack_steps()
    readings = [_stack_steps() for _ in range(runs)]
    steps = [
        _StackStep(
            statistics.median(run[index].kib for run in readings),
            statistics.median(run[index].cpu_seconds for run in readings),
        )
        for index in range(len(STACK_STEPS))
    ]
    rows: list[list[str]] = []
    previous: _StackStep | None = None
    for (label, _), step in zip(STACK_STEPS, steps, strict=True):
        rows.append(
            [
                label,
                format_mib(step.kib),
                format_mib(step.kib - previous.kib) if previous else "—",
                format_ms(step.cpu_seconds),
                format_ms(step.cpu_seconds - previous.cpu_seconds) if previous else "—",
            ]
        )
        previous = step
    stack = steps[-1]
    if server_kib:
        server = statistics.median(server_kib)
        added = format_mib(server - stack.kib)
        rows.append(["rpcweave server after its first call", format_mib(server), added, "—", "—"])
    table = render_table(
        ["process", "VmRSS (median)", "added", "CPU since launch (median)", "added CPU"],
        rows,
        align={1: "r", 2: "r", 3: "r", 4: "r"},
    )
    left_mib = (PEAK_RSS_TARGET_KIB - stack.kib) / 1024
    left_mb = (40e6 / 1024 - stack.kib) * 1024 / 1e6
    left_ms = (COLD_START_TARGET_SECONDS - stack.cpu_seconds) * 1000
    cold_start = (
        f"Its CPU leaves {left_ms:,.0f} ms of the 300 ms cold-start target for the SDK's "
        "imports, the server's start and the first answer (compare the cold start's "
        "`server CPU by then`)."
        if left_ms >= 0
        else f"Its CPU alone is {-left_ms:,.0f} ms over the 300 ms cold-start target: on "
        "this machine no server on this stack can meet it (compare the cold start's "
        "`server CPU by then`)."
    )
    return [
        "### Where a server's memory and cold start go: the dependency stack before "
        "rpcweave's code",
        "",
        table,
        "",
        f"- {runs} fresh interpreters (bytecode caches filled first), run from a directory "
        "outside the repository; each row adds its imports to the rows above. The stack "
        f"leaves {left_mib:,.1f} MiB for the SDK (its core, layer, models and the app) "
        f"under 40 MiB, and {left_mb:,.1f} MB under 40 MB (= 38.1 MiB). {cold_start}",
    ]


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
                to_stderr(f"{name} cold start {pair.name}: FAILED: {exc}")
                continue
            if index < 0:
                continue
            times[pair].append(result)
            to_stderr(
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
