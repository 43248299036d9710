"""Cold start (server launch to the first ``tools/call`` response, per pair and
transport) and the peak RSS of each server process."""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import time

from .._harness import (
    OFFICIAL,
    RPCWEAVE,
    THEIRS,
    Pair,
    format_mib,
    format_ms,
    format_ratio,
    log_tail,
    one_line,
    peak_rss_kib,
    render_table,
    scratch_log,
)
from .plan import HTTP, NAME, PAIRS, STDIO, TRANSPORT_LABELS, Footprint, Plan, check_echo
from .sessions import open_session

__all__ = ["cold_start_section", "footprint_section"]


async def _cold_start(pair: Pair, transport: str, footprint: Footprint) -> float:
    """Seconds from launching the server to the first ``tools/call`` response."""
    with scratch_log() as log:
        started = time.perf_counter()
        try:
            async with open_session(pair, transport, log) as session:
                result = await session.call_echo()
                elapsed = time.perf_counter() - started
                check_echo(result, pair)
                kib = peak_rss_kib(session.server_pid)
                Footprint.add(footprint.after_first_call, (pair.server, transport), kib)
                return elapsed
        except Exception as exc:
            detail = f"{pair.name} cold start over {transport} failed: {exc!r}; {log_tail(log)}"
            raise RuntimeError(detail) from exc


def cold_start_section(plan: Plan, footprint: Footprint) -> list[str]:
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


def footprint_section(footprint: Footprint) -> list[str]:
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
