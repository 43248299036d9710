"""MCP benchmark: rpcweave's `mcp_layer` against the official `mcp` SDK, in one run.

Workloads, each over stdio and over Streamable HTTP:

* ``tools/call`` of ``echo(text: str) -> str`` with one request in flight and with 32;
* ``tools/list`` of a server with 100 tools (one request in flight).

Contenders per workload are the four client -> server pairs: rpcweave -> rpcweave,
official -> official, and the cross pairs official -> rpcweave and rpcweave -> official,
so the table shows whether the time goes to the client or to the server. Every
``tools/call`` workload runs in both protocol eras: the handshake era (2025-11-25,
``initialize``) and 2026-07-28 (per-request metadata), where the official client is
`mcp.Client` in its default mode, which negotiates 2026-07-28 (``--quick`` runs the
2026-era rows without the cross pairs); a table sets the two eras side by side, with
the server's CPU per call. Both servers
(``bench/servers/``) declare the same tools from ``bench/servers/mcp_toolset.py``. The
``tools/call`` workloads also run the floor, a hand-written client against a server that
answers with the same JSON and does nothing else: over stdio an asyncio NDJSON client
against ``mcp_floor_stdio_server.py``, over Streamable HTTP a plain ``httpx`` POST loop
against a raw ASGI app (``mcp_floor_server.py``).

Also measured: cold start (process launch to the first ``tools/call`` response, per
pair and transport), each server process's peak RSS (``VmHWM``), and import time of
``mcp_layer`` against ``mcp`` and the official server module (fresh interpreters).

Every timed run starts a fresh server process (untimed), connects and initializes
(untimed), warms up, times a fixed number of calls, reads the server's peak RSS, then
shuts everything down (untimed). Contenders alternate run by run.

The parts are in ``bench/_mcp_tools/`` (the plan, the floor clients, the sessions of
each pair, throughput, cold start and footprint, import time); this module runs them in
order and writes the notes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial

from ._harness import RPCWEAVE, bytecode_caches, load_note, run_report, stack_footprint_section
from ._mcp_tools.cold_start import cold_start_section, footprint_section
from ._mcp_tools.import_time import import_section
from ._mcp_tools.plan import (
    FLOOR_TARGET,
    HANDSHAKE,
    HTTP,
    MODERN,
    NAME,
    STDIO_FLOOR_TARGET,
    TITLE,
    Footprint,
    Plan,
    make_plan,
)
from ._mcp_tools.sessions import CHILD_ENV
from ._mcp_tools.throughput import throughput_section

__all__ = ["NAME", "TITLE", "run"]


def _notes(plan: Plan, load_before: str, load_after: str) -> list[str]:
    return [
        load_note(load_before, load_after, when=" the run"),
        f"Mode: {plan.mode} — {plan.runs} runs per pair per workload, pairs alternating "
        "run by run; each run launches a fresh server process and opens a fresh, "
        "initialized session (untimed), warms up (untimed), then times a fixed count of "
        "calls with N closed-loop callers. Latencies are the median over runs of each "
        "run's p50/p99.",
        "`vs official` = median req/s ÷ official → official median req/s; the target "
        "applies to rpcweave → rpcweave only. A MISS is reported, never raised.",
        "Floor (`tools/call` only): `floor → floor` is a hand-written client against a "
        "server that answers `initialize`, notifications and `tools/call` of `echo` with "
        "the same JSON as the SDK servers and does nothing else (no validation, no other "
        "tools). Over stdio: an asyncio NDJSON client (1 in flight: write a line, read "
        "lines to the response; 32 in flight: a reader task resolving futures by id) "
        "against `bench/servers/mcp_floor_stdio_server.py` (standard library; asyncio "
        "reader on stdin, one `write` + `flush` per message). Over Streamable HTTP: a "
        "plain `httpx.AsyncClient` POST loop (JSON by hand, the SSE answer parsed with "
        "`json.loads`, its id checked) against `bench/servers/mcp_floor_server.py`, a raw "
        "ASGI app under the same uvicorn settings answering as one SSE event (no session "
        "table). Both floor clients check the echoed text of every call. `vs floor` = "
        "median req/s ÷ the floor's; the targets (#10) are rpcweave → rpcweave ≥ "
        f"{STDIO_FLOOR_TARGET:.2f} of the floor over stdio with 1 in flight and ≥ "
        f"{FLOOR_TARGET:.2f} over Streamable HTTP (1 and 32 in flight); stdio with 32 in "
        "flight is reported only.",
        "Servers: `bench/servers/mcp_rpcweave_server.py` (`mcp_layer.MCPServer`) and "
        "`bench/servers/mcp_official_server.py` (`mcp.server.mcpserver.MCPServer`, the "
        "former FastMCP), both with `echo(text: str) -> str` plus the same 99 other tools "
        "(`bench/servers/mcp_toolset.py`), declared the same way (plain functions). Over "
        "HTTP both run under uvicorn with the same settings (stateful Streamable HTTP at "
        "/mcp, SSE responses, 127.0.0.1).",
        "Clients: rpcweave = `mcp_layer.connect_stdio` / `connect_http` (with "
        f"`protocol_version={MODERN!r}` in the {MODERN} rows); official = "
        "`mcp.stdio_client` / `mcp.client.streamable_http.streamable_http_client` + "
        f"`mcp.ClientSession` (`initialize`) in the {HANDSHAKE} rows, and `mcp.Client` "
        f"on the same transports in its default mode (`auto`: `server/discover`, then "
        f"{MODERN}) in the {MODERN} rows; a session that settles on another version "
        "fails the run. The floor speaks the handshake era only. The official client "
        "validates `structuredContent` against "
        "the tool's output schema on every call and lists tools once first (in warm-up); "
        "rpcweave does not validate results against output schemas.",
        "Bytecode caches: every process of the run (servers, import timings) reads and "
        "writes `.pyc` files, as an installed package does; when `PYTHONDONTWRITEBYTECODE` "
        "is set they are kept in a temporary `PYTHONPYCACHEPREFIX` "
        "(`bench._harness.bytecode_caches`), also passed to the servers the official "
        "client launches with its trimmed environment.",
    ]


def run(*, quick: bool = False) -> str:
    """Run every section and return the Markdown report."""
    plan = make_plan(quick)
    footprint = Footprint()

    def sections() -> list[str]:
        with bytecode_caches() as child_env:
            CHILD_ENV.clear()
            CHILD_ENV.update(child_env)
            try:
                # first, so that every timed run finds the bytecode caches filled
                cold = cold_start_section(plan, footprint)
                return [
                    *throughput_section(plan, footprint),
                    "",
                    *cold,
                    "",
                    *footprint_section(footprint),
                    "",
                    *stack_footprint_section(
                        plan.cold_runs,
                        server_kib=footprint.after_first_call.get((RPCWEAVE, HTTP), []),
                    ),
                    "",
                    *import_section(plan),
                ]
            finally:
                CHILD_ENV.clear()

    return run_report(NAME, TITLE, sections, partial(_notes, plan))


def _main(argv: Sequence[str]) -> None:  # pragma: no cover - convenience entry point
    sys.stdout.write(run(quick="--quick" in argv) + "\n")


if __name__ == "__main__":  # pragma: no cover
    _main(sys.argv[1:])
