"""``rpcweave demo`` (``make demo``): the classic flows of MCP, ACP and A2A, end to end.

Each flow runs with real processes (and, for A2A, real sockets on 127.0.0.1), prints the
wire traffic as it goes, and is saved under the output directory as ``<flow>.jsonl`` with
its ``.mmd`` diagram and ``.html`` page. The run ends with one ``PASS``/``FAIL`` line per
flow; the exit status is 1 if any flow failed. Every flow is bounded in time and leaves no
process behind.
"""

from __future__ import annotations

import io
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from jsonrpc_core import JsonLinesSink, TapRecord

from ._cli_common import error_message
from ._demo_flows import DemoContext, a2a_flow, acp_flow, jsonrpc_flow, mcp_flow
from ._render import Style
from ._trace import Trace, WirePrinter

__all__ = ["FLOWS", "Flow", "run_demo"]

FLOW_TIMEOUT = 45.0


@dataclass(frozen=True)
class Flow:
    """One flow of the demo: its name, heading, the roles in its diagram, and its code."""

    name: str
    heading: str
    labels: dict[str, str]
    run: Callable[[DemoContext], Awaitable[str]]


FLOWS = (
    Flow(
        "mcp",
        "MCP — a host reads a file through a tool server (stdio)",
        {"client": "host (MCP client)", "server": "file_server.py"},
        mcp_flow,
    ),
    Flow(
        "acp",
        "ACP — an editor and a coding agent; the agent writes a file with permission (stdio)",
        {"client": "editor (ACP client)", "agent": "demo_agent.py"},
        acp_flow,
    ),
    Flow(
        "a2a",
        "A2A — a research agent delegates to a coding agent (HTTP, SSE, webhook)",
        {"client": "research agent", "agent": "coding_agent.py"},
        a2a_flow,
    ),
    Flow(
        "jsonrpc",
        "JSON-RPC — the bare core: calls both ways, errors, cancellation (stdio)",
        {"client": "client", "server": "echo_server.py"},
        jsonrpc_flow,
    ),
)


@dataclass
class _Outcome:
    flow: Flow
    passed: bool
    summary: str
    seconds: float


async def _run_flow(flow: Flow, out: Path, shared: JsonLinesSink | None, quiet: bool) -> _Outcome:
    stream = io.StringIO() if quiet else sys.stdout
    style = Style(stream)
    print(style.bold(f"\n== {flow.heading} =="), file=stream, flush=True)
    trace = Trace(
        str(out / f"{flow.name}.jsonl"),
        title=f"rpcweave demo: {flow.heading}",
        labels=flow.labels,
        err=stream,
    )
    context = DemoContext(
        out=out, trace=trace, say=lambda text: print(text, file=stream, flush=True), stream=stream
    )
    trace.tap.sinks.append(context.records.append)
    if not quiet:
        width = max(shutil.get_terminal_size((120, 24)).columns, 80)
        trace.tap.sinks.append(WirePrinter(stream, labels=flow.labels, width=width))
    if shared is not None:
        names = flow.labels

        def to_shared(record: TapRecord) -> None:
            local = names.get(record.local, record.local)
            remote = names.get(record.remote, record.remote)
            shared(replace(record, local=local, remote=remote))

        trace.tap.sinks.append(to_shared)
    started = time.monotonic()
    failure: str | None = None
    try:
        with anyio.fail_after(FLOW_TIMEOUT):
            summary = await flow.run(context)
    except Exception as exc:
        failure = error_message(exc)
    finally:
        # A flow that failed before any message went over the wire leaves no (empty) trace
        # and prints no "trace:" line; one that failed later is drawn, to show where.
        if failure is not None and not context.records:
            trace.discard()
        else:
            trace.close()
    if failure is not None:
        return _Outcome(flow, False, failure, time.monotonic() - started)
    return _Outcome(flow, True, summary, time.monotonic() - started)


def run_demo(
    *,
    output: str = "demo-output",
    trace: str | None = None,
    quiet: bool = False,
    only: Sequence[str] | None = None,
) -> int:
    """Run the demo's flows (all, or those named in ``only``); return the exit status."""
    out = Path(output).resolve()  # ACP sessions need an absolute working directory
    out.mkdir(parents=True, exist_ok=True)
    shared = None
    if trace:
        Path(trace).write_text("", encoding="utf-8")
        shared = JsonLinesSink(trace)
    outcomes = []
    try:
        for flow in FLOWS:
            if only and flow.name not in only:
                continue
            outcomes.append(anyio.run(_run_flow, flow, out, shared, quiet))
    finally:
        if shared is not None:
            shared.close()
            _draw_shared(trace)
    print()
    style = Style(sys.stdout)
    for outcome in outcomes:
        mark = style.green("PASS") if outcome.passed else style.red("FAIL")
        print(f"{mark} {outcome.flow.name} ({outcome.seconds:.1f} s): {outcome.summary}")
    print(f"traces, diagrams and pages: {output.rstrip('/')}/")
    return 0 if outcomes and all(outcome.passed for outcome in outcomes) else 1


def _draw_shared(trace: str | None) -> None:
    if trace:
        from ._trace import annotate
        from ._trace_html import write_trace_views

        write_trace_views(trace, title="rpcweave demo", annotate=annotate)
