"""The MCP benchmark's plan (workloads per mode, pairs, eras, targets) and what every
runner shares: the result checks, the `Session` shape and the `Footprint` readings."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._harness import FLOOR, FLOOR_PAIR, OFFICIAL, OURS, RPCWEAVE, SERVERS_DIR, THEIRS, Pair

__all__ = [
    "ECHO_ARGUMENTS",
    "ERAS",
    "FLOOR_STDIO_SCRIPT",
    "FLOOR_TARGET",
    "HANDSHAKE",
    "HTTP",
    "HTTP_SHUTDOWN_TIMEOUT",
    "HTTP_STARTUP_TIMEOUT",
    "MODERN",
    "NAME",
    "PAIRS",
    "SERVER_SCRIPTS",
    "STDIO",
    "STDIO_FLOOR_TARGET",
    "TITLE",
    "TOOL_COUNT",
    "TRANSPORT_LABELS",
    "Footprint",
    "Plan",
    "Session",
    "Workload",
    "check_echo",
    "check_listing",
    "make_plan",
    "pair_label",
    "session_calls",
]

NAME = "mcp"
TITLE = "MCP tools/call and tools/list: rpcweave against the official `mcp` SDK"

SERVER_SCRIPTS = {
    RPCWEAVE: SERVERS_DIR / "mcp_rpcweave_server.py",
    OFFICIAL: SERVERS_DIR / "mcp_official_server.py",
    FLOOR: SERVERS_DIR / "mcp_floor_server.py",
}
FLOOR_STDIO_SCRIPT = SERVERS_DIR / "mcp_floor_stdio_server.py"
STDIO = "stdio"
HTTP = "http"
TRANSPORT_LABELS = {STDIO: "stdio", HTTP: "Streamable HTTP"}

TOOL_COUNT = 100
ECHO_ARGUMENTS: dict[str, Any] = {"text": "hello"}
HTTP_STARTUP_TIMEOUT = 30.0
HTTP_SHUTDOWN_TIMEOUT = 10.0


HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ERAS = (HANDSHAKE, MODERN)
"""The protocol revisions the throughput rows run in: the handshake era (``initialize``)
and 2026-07-28 (per-request metadata, the official `mcp.Client`'s default)."""

PAIRS = (OURS, THEIRS, Pair(OFFICIAL, RPCWEAVE), Pair(RPCWEAVE, OFFICIAL))
"""Ours first, the baseline second, then the cross pairs. The floor (`FLOOR_PAIR`, for
``tools/call`` only) is a hand-written NDJSON client against a standard-library stdio
server, or httpx against a raw ASGI app."""


def pair_label(pair: Pair) -> str:
    """``client → server`` for every pair, the floor too (``floor → floor``, where
    `Pair.name` says just ``floor``)."""
    return f"{pair.client} → {pair.server}"


# -- plan ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Workload:
    """One row group of the report: what is called, how, and what rpcweave must reach."""

    transport: str
    operation: str  # "tools/call" or "tools/list"
    in_flight: int
    calls: int
    warmup: int
    target: float | None = None
    """Required ratio rpcweave → rpcweave ÷ official → official (None: reported only); the
    ``tools/call`` targets are #22's: stdio 10x at 1 in flight and 30x at 32, Streamable
    HTTP 5x, in both eras."""
    floor: bool = False
    """Whether the floor runs too (``tools/call`` only)."""
    floor_target: float | None = None
    """Required ratio rpcweave → rpcweave ÷ the floor (needs ``floor``; None: reported only)."""
    era: str = HANDSHAKE
    """The protocol revision both ends speak (`HANDSHAKE` or `MODERN`; the floor speaks
    the handshake era only)."""
    cross: bool = True
    """Whether the cross pairs run too (``--quick`` leaves them out of 2026-era rows)."""

    @property
    def pairs(self) -> tuple[Pair, ...]:
        pairs = PAIRS if self.cross else (OURS, THEIRS)
        return (*pairs, FLOOR_PAIR) if self.floor else pairs

    @property
    def label(self) -> str:
        what = "tools/list (100 tools)" if self.operation == "tools/list" else "tools/call echo"
        return f"{TRANSPORT_LABELS[self.transport]}, {what}, {self.in_flight} in flight, {self.era}"

    @property
    def shape(self) -> tuple[str, str, int]:
        """What the workload does, whatever the era (pairs the rows of both eras)."""
        return self.transport, self.operation, self.in_flight


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything that differs between a full run and a ``--quick`` smoke run."""

    mode: str
    runs: int
    workloads: tuple[Workload, ...]
    cold_runs: int
    import_runs: int


FLOOR_TARGET = 0.70
"""Streamable HTTP ``tools/call``: rpcweave → rpcweave at least 70% of the floor (#10)."""
STDIO_FLOOR_TARGET = 0.50
"""stdio ``tools/call``, 1 in flight: rpcweave → rpcweave at least 50% of the floor (#10)."""


def _with_modern_twins(workloads: Sequence[Workload], *, cross: bool) -> tuple[Workload, ...]:
    """Each workload, and after every ``tools/call`` one its 2026-07-28 twin: the same
    calls and targets, no floor (it speaks the handshake era), cross pairs if ``cross``."""
    planned: list[Workload] = []
    for workload in workloads:
        planned.append(workload)
        if workload.operation == "tools/call":
            twin = dataclasses.replace(
                workload, era=MODERN, floor=False, floor_target=None, cross=cross
            )
            planned.append(twin)
    return tuple(planned)


def _workloads(sizes: Sequence[tuple[int, int]]) -> tuple[Workload, ...]:
    """The six workloads (before their 2026-07-28 twins), with ``sizes`` their (calls,
    warm-up calls) in order: stdio tools/call at 1 and 32 in flight, stdio tools/list,
    Streamable HTTP tools/call at 1 and 32 in flight, Streamable HTTP tools/list."""
    (s1, s32, slist, h1, h32, hlist) = sizes
    return (
        Workload(
            STDIO, "tools/call", 1, *s1, target=10.0, floor=True, floor_target=STDIO_FLOOR_TARGET
        ),
        Workload(STDIO, "tools/call", 32, *s32, target=30.0, floor=True),
        Workload(STDIO, "tools/list", 1, *slist, target=3.0),
        Workload(HTTP, "tools/call", 1, *h1, target=5.0, floor=True, floor_target=FLOOR_TARGET),
        Workload(HTTP, "tools/call", 32, *h32, target=5.0, floor=True, floor_target=FLOOR_TARGET),
        Workload(HTTP, "tools/list", 1, *hlist, target=3.0),
    )


def make_plan(quick: bool) -> Plan:
    """The full plan, or a much shorter one for smoke tests (whose 2026-era rows run
    rpcweave → rpcweave and official → official only)."""
    if quick:
        quick_sizes = [(300, 30), (1_000, 64), (60, 5), (150, 20), (500, 64), (40, 5)]
        return Plan(
            mode="quick",
            runs=2,
            workloads=_with_modern_twins(_workloads(quick_sizes), cross=False),
            cold_runs=2,
            import_runs=5,
        )
    full_sizes = [(2_000, 200), (6_000, 320), (300, 20), (800, 100), (3_000, 320), (200, 20)]
    return Plan(
        mode="full",
        runs=5,
        workloads=_with_modern_twins(_workloads(full_sizes), cross=True),
        cold_runs=7,
        import_runs=15,
    )


# -- checks -------------------------------------------------------------------------


def check_echo(result: Any, pair: Pair) -> None:
    """Fail loudly when a contender does not echo (a broken benchmark, not a slow one)."""
    content = getattr(result, "content", None) or []
    text = getattr(content[0], "text", None) if content else None
    if getattr(result, "is_error", False) or text != ECHO_ARGUMENTS["text"]:
        raise RuntimeError(f"{pair.name}: echo returned {result!r}")


def check_listing(result: Any, pair: Pair) -> None:
    tools = getattr(result, "tools", None) or []
    names = {tool.name for tool in tools}
    if len(tools) != TOOL_COUNT or "echo" not in names or getattr(result, "next_cursor", None):
        raise RuntimeError(f"{pair.name}: tools/list gave {len(tools)} tools, one page expected")


# -- sessions and footprints, whichever SDK runs -----------------------------------


@dataclass(slots=True)
class Session:
    """An initialized session, whichever SDK is on each end."""

    call_echo: Callable[[], Any]
    list_tools: Callable[[], Any]
    server_pid: int | None


def session_calls(session: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``call_tool("echo", ...)`` and ``list_tools()``; both SDKs spell them alike."""

    def call_echo() -> Any:
        return session.call_tool("echo", ECHO_ARGUMENTS)

    def list_tools() -> Any:
        return session.list_tools()

    return call_echo, list_tools


@dataclass(slots=True)
class Footprint:
    """Peak RSS per (server, transport), in KiB, from every run that used that server."""

    after_first_call: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    after_workload: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    @staticmethod
    def add(table: dict[tuple[str, str], list[float]], key: tuple[str, str], kib: float) -> None:
        if math.isfinite(kib):
            table.setdefault(key, []).append(kib)
