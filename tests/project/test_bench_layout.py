"""The benchmark package (``python -m bench``): every benchmark named in its table loads
and has a ``run``; the MCP benchmark's plan keeps its rows (what a split must not
change). Nothing here runs a benchmark; the size rules are test_package_sizes.py's."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench` is no installed package: it runs from a checkout
    sys.path.insert(0, str(ROOT))

from bench.__main__ import BENCHMARKS  # noqa: E402


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_benchmark_in_the_table_loads_and_has_a_keyword_only_run(name: str) -> None:
    module = importlib.import_module(BENCHMARKS[name])
    parameters = inspect.signature(module.run).parameters
    assert parameters["quick"].kind is inspect.Parameter.KEYWORD_ONLY


MCP_ROWS = [
    "stdio, tools/call echo, 1 in flight, 2025-11-25",
    "stdio, tools/call echo, 1 in flight, 2026-07-28",
    "stdio, tools/call echo, 32 in flight, 2025-11-25",
    "stdio, tools/call echo, 32 in flight, 2026-07-28",
    "stdio, tools/list (100 tools), 1 in flight, 2025-11-25",
    "Streamable HTTP, tools/call echo, 1 in flight, 2025-11-25",
    "Streamable HTTP, tools/call echo, 1 in flight, 2026-07-28",
    "Streamable HTTP, tools/call echo, 32 in flight, 2025-11-25",
    "Streamable HTTP, tools/call echo, 32 in flight, 2026-07-28",
    "Streamable HTTP, tools/list (100 tools), 1 in flight, 2025-11-25",
]


@pytest.mark.parametrize("quick", [True, False])
def test_the_mcp_plan_has_each_workload_in_both_eras(quick: bool) -> None:
    from bench.mcp_tools import make_plan

    plan = make_plan(quick)
    assert [workload.label for workload in plan.workloads] == MCP_ROWS
    pairs = {workload.label: [pair.name for pair in workload.pairs] for workload in plan.workloads}
    cross = ["official → rpcweave", "rpcweave → official"]
    ours_and_theirs = ["rpcweave → rpcweave", "official → official"]
    # the floor runs with the handshake era's tools/call rows; the cross pairs in every
    # row of a full run, and only in the handshake era's rows of a quick one
    assert pairs[MCP_ROWS[0]] == [*ours_and_theirs, *cross, "floor"]
    assert pairs[MCP_ROWS[1]] == ours_and_theirs + ([] if quick else cross)
    assert pairs[MCP_ROWS[4]] == [*ours_and_theirs, *cross]


def test_a_tools_call_workload_and_its_2026_twin_alternate_in_one_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bench._harness import Pair, Sample
    from bench._mcp_tools import throughput
    from bench.mcp_tools import make_plan

    plan = make_plan(True)
    groups = throughput.era_groups(plan.workloads)
    assert [[w.label for w in group] for group in groups] == [
        MCP_ROWS[0:2],
        MCP_ROWS[2:4],
        MCP_ROWS[4:5],
        MCP_ROWS[5:7],
        MCP_ROWS[7:9],
        MCP_ROWS[9:10],
    ]
    order: list[tuple[str, str]] = []

    async def fake_sample(pair: Pair, workload: Any, footprint: Any) -> Sample:
        order.append((workload.era, pair.name))
        rate = 1000.0 if workload.era == "2025-11-25" else 800.0
        return Sample(calls=100, elapsed=100 / rate, latencies=[1 / rate] * 100)

    monkeypatch.setattr(throughput, "_workload_sample", fake_sample)
    lines = throughput.throughput_section(make_plan(True), make_footprint())
    first = [(w.era, p.name) for w in groups[0] for p in w.pairs]
    # round after round, every pair of both eras before any pair runs again
    assert order[: plan.runs * len(first)] == first * plan.runs
    report = "\n".join(lines).splitlines()
    era_rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in report
        if line.startswith("| stdio, 1 in flight")
    ]
    # the era table: both eras' req/s and their ratio, per pair that ran in both
    assert [row[1:5] for row in era_rows] == [
        ["rpcweave → rpcweave", "1,000", "800", "0.800"],
        ["official → official", "1,000", "800", "0.800"],
    ]


def make_footprint() -> Any:
    from bench._mcp_tools.plan import Footprint

    return Footprint()
