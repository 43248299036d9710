"""The benchmark package (``python -m bench``): every benchmark named in its table loads
and has a ``run``; its modules keep to the size rules (no module over 600 lines, no
function over 80); the MCP benchmark's plan keeps its rows (what a split must not
change). Nothing here runs a benchmark."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
if str(ROOT) not in sys.path:  # `bench` is no installed package: it runs from a checkout
    sys.path.insert(0, str(ROOT))

from bench.__main__ import BENCHMARKS  # noqa: E402

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def _bench_sources() -> list[Path]:
    return sorted(BENCH.rglob("*.py"))


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_benchmark_in_the_table_loads_and_has_a_keyword_only_run(name: str) -> None:
    module = importlib.import_module(BENCHMARKS[name])
    parameters = inspect.signature(module.run).parameters
    assert parameters["quick"].kind is inspect.Parameter.KEYWORD_ONLY


def test_no_bench_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _bench_sources()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_bench_function_is_over_80_lines() -> None:
    long: dict[str, int] = {}
    for path in _bench_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert long == {}


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
