"""Throughput: each workload's pairs in alternating runs (a ``tools/call`` workload and
its 2026-07-28 twin in one loop, so the era ratio compares runs minutes apart, not a
workload apart), the "where the time goes" table, and both eras side by side with the
server's CPU per call."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from functools import partial

from .._harness import (
    FLOOR_PAIR,
    OURS,
    THEIRS,
    CpuPerCall,
    Pair,
    Sample,
    Summary,
    async_contender,
    attribution_cells,
    compare,
    format_rate,
    format_ratio,
    log_tail,
    measure,
    measure_with_cpu,
    one_line,
    peak_rss_kib,
    render_attribution,
    render_pair_table,
    render_table,
    scratch_log,
    summary_cells,
    verdict,
)
from .plan import (
    HANDSHAKE,
    MODERN,
    NAME,
    TRANSPORT_LABELS,
    Footprint,
    Plan,
    Workload,
    check_echo,
    check_listing,
    pair_label,
)
from .sessions import open_session

__all__ = ["CPU_PER_CALL", "era_groups", "throughput_section"]


async def _workload_sample(pair: Pair, workload: Workload, footprint: Footprint) -> Sample:
    """One run of one pair: launch, connect, check, warm up, time, read RSS, shut down."""
    with scratch_log() as log:
        try:
            async with open_session(
                pair, workload.transport, log, workload.in_flight, workload.era
            ) as session:
                if workload.operation == "tools/list":
                    call = session.list_tools
                    check_listing(await call(), pair)
                else:
                    call = session.call_echo
                    check_echo(await call(), pair)
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


def era_groups(workloads: Sequence[Workload]) -> list[tuple[Workload, ...]]:
    """The workloads in planned order, each with the 2026-07-28 twin that follows it
    (same shape) in one group: a group's pairs run in one alternating loop."""
    groups: list[list[Workload]] = []
    for workload in workloads:
        if groups and workload.era == MODERN and groups[-1][-1].shape == workload.shape:
            groups[-1].append(workload)
        else:
            groups.append([workload])
    return [tuple(group) for group in groups]


def _compare_group(
    group: Sequence[Workload], footprint: Footprint, runs: int
) -> list[dict[str, Summary]]:
    """Every (workload, pair) of ``group`` alternating in one loop of ``runs`` rounds;
    per workload, its pairs' summaries by pair name."""
    contenders = [
        async_contender(
            f"{workload.era} {pair.name}",
            partial(_workload_sample, pair, workload=workload, footprint=footprint),
        )
        for workload in group
        for pair in workload.pairs
    ]
    what = group[0].label.removesuffix(f", {group[0].era}")
    summaries = compare(contenders, runs, label=f"{NAME} {what}")
    return [
        {pair.name: summaries[f"{workload.era} {pair.name}"] for pair in workload.pairs}
        for workload in group
    ]


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
        if pair == OURS and workload.floor_target is not None:
            targets.append(f"≥ {workload.floor_target:.2f} of floor")
            results.append(verdict(vs_floor, workload.floor_target))
        target = "; ".join(targets) or "—"
        result = "; ".join(results) or "—"
        rows.append(
            [
                workload.label,
                pair_label(pair),
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
                    pair_label(pair),
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


def throughput_section(plan: Plan, footprint: Footprint) -> list[str]:
    rows: list[list[str]] = []
    attribution: list[list[str]] = []
    failures: list[str] = []
    rates: dict[str, dict[str, float]] = {}
    CPU_PER_CALL.clear()
    for group in era_groups(plan.workloads):
        try:
            by_workload = _compare_group(group, footprint, plan.runs)
        except Exception as exc:  # a broken contender: report it, go on with the rest
            for workload in group:
                print(f"{NAME} {workload.label}: FAILED: {exc}", file=sys.stderr, flush=True)
                failures.append(f"{workload.label}: {one_line(exc)}")
                rows.append([workload.label, "(all pairs)", *["—"] * 8, "FAILED"])
            continue
        for workload, summaries in zip(group, by_workload, strict=True):
            rows.extend(_workload_rows(workload, summaries))
            rates[workload.label] = {name: s.median_rate for name, s in summaries.items()}
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
