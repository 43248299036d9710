"""Import time of ``mcp_layer`` against ``mcp`` and the official server module, each in
fresh interpreters, with the largest entries of ``-X importtime``."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time

from .._harness import format_ms, import_seconds, render_table
from .plan import NAME, Plan

__all__ = ["BREAKDOWN_STATEMENT", "IMPORTS", "IMPORT_TARGET_SECONDS", "import_section"]

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


def import_section(plan: Plan) -> list[str]:
    for statement, _ in IMPORTS:  # untimed: writes any missing .pyc files
        import_seconds(statement)
    imports: dict[str, list[float]] = {statement: [] for statement, _ in IMPORTS}
    walls: dict[str, list[float]] = {statement: [] for statement, _ in IMPORTS}
    interpreter: list[float] = []
    for index in range(plan.import_runs):
        interpreter.append(_interpreter_seconds())
        for statement, _ in IMPORTS:
            seconds, wall = import_seconds(statement)
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
