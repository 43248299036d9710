"""The benchmark package (``python -m bench``): every benchmark named in its table loads
and has a ``run``; the MCP benchmark's plan keeps its rows (what a split must not
change). Nothing here runs a benchmark; the size rules are test_package_sizes.py's."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

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
