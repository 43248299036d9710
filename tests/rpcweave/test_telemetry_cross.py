"""One trace across the three protocols: an ACP agent handling ``session/prompt`` calls
an MCP tool and sends an A2A message, in process and across real processes (the MCP
server a stdio child, the A2A agent an HTTP server in another process); and
``rpcweave demo --otel`` prints that trace as a tree.

Tests the private unit `rpcweave._demo_otel` on purpose: the CLI's demo is not a library
API, and its pieces are driven in process here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _otel import Recorded, child_of, otel
from opentelemetry.trace import SpanKind

from a2a_layer import A2AClient
from mcp_layer import connect
from rpcweave._demo_otel import PlannerAgent, in_process_planner, render_tree, run_turn

pytestmark = pytest.mark.anyio

__all__ = ["otel"]

ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "fixtures" / "otel_child.py"
CLIENT, SERVER = SpanKind.CLIENT, SpanKind.SERVER


def protocol_of(span: Any) -> Any:
    return (span.attributes or {}).get("rpcweave.protocol")


async def test_an_acp_turn_calling_mcp_and_a2a_is_one_trace(otel: Recorded, tmp_path: Path) -> None:
    tracer = otel.tracer_provider.get_tracer("test")
    async with in_process_planner() as planner:
        with tracer.start_as_current_span("editor"):
            response = await run_turn(planner, "rpcweave", str(tmp_path))
    assert response.stop_reason == "end_turn"
    spans = otel.spans()
    assert len({span.context.trace_id for span in spans if span.context}) == 1
    turn = otel.span("session/prompt", SERVER)
    assert child_of(turn, otel.span("session/prompt", CLIENT))
    tool_call = otel.span("tools/call lookup", CLIENT)
    delegated = otel.span("SendMessage", CLIENT)
    assert child_of(tool_call, turn) and child_of(delegated, turn)
    assert child_of(otel.span("tools/call lookup", SERVER), tool_call)
    assert child_of(otel.span("SendMessage", SERVER), delegated)
    assert [protocol_of(s) for s in (turn, tool_call, delegated)] == ["acp", "mcp", "a2a"]
    tree = render_tree(spans)
    assert "\n    session/prompt  [server]" in tree
    assert "\n      tools/call lookup  [client]" in tree
    assert "\n        SendMessage  [server]" in tree


def read_spans(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@asynccontextmanager
async def a2a_child(spans: Path) -> AsyncIterator[str]:
    """The A2A writer serving HTTP in a child process; its base URL."""
    command = [sys.executable, str(CHILD), "a2a-http", str(spans)]
    async with await anyio.open_process(command, stdin=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stdin is not None
        buffered = b""
        with anyio.fail_after(30):
            while not buffered.endswith(b"\n"):
                buffered += await process.stdout.receive()
        try:
            yield buffered.decode().strip()
        finally:
            await process.stdin.aclose()  # the child stops serving and exits
            with anyio.fail_after(20):
                await process.wait()


async def test_the_trace_crosses_a_stdio_child_and_an_http_server(
    otel: Recorded, tmp_path: Path
) -> None:
    mcp_spans, a2a_spans = tmp_path / "mcp.jsonl", tmp_path / "a2a.jsonl"
    mcp_command = [sys.executable, str(CHILD), "mcp-stdio", str(mcp_spans)]
    with anyio.fail_after(60):
        async with a2a_child(a2a_spans) as url, httpx.AsyncClient(timeout=10) as http:

            def delegate() -> Any:
                return A2AClient.connect(url, http=http, bindings=("JSONRPC",))

            planner = PlannerAgent(lambda: connect(mcp_command), delegate)
            response = await run_turn(planner, "rpcweave", str(tmp_path))
    assert response.stop_reason == "end_turn"
    turn = otel.span("session/prompt", SERVER)
    tool_call = otel.span("tools/call lookup", CLIENT)
    delegated = otel.span("SendMessage", CLIENT)
    assert child_of(tool_call, turn) and child_of(delegated, turn)
    assert turn.context is not None and tool_call.context and delegated.context
    trace_id = f"{turn.context.trace_id:032x}"
    (served_tool,) = [s for s in read_spans(mcp_spans) if s["name"] == "tools/call lookup"]
    assert served_tool["kind"] == "SERVER" and served_tool["trace_id"] == trace_id
    assert served_tool["parent_id"] == f"{tool_call.context.span_id:016x}"
    assert served_tool["attributes"]["network.transport"] == "pipe"
    (served_send,) = [s for s in read_spans(a2a_spans) if s["name"] == "SendMessage"]
    assert served_send["kind"] == "SERVER" and served_send["trace_id"] == trace_id
    assert served_send["parent_id"] == f"{delegated.context.span_id:016x}"
    assert served_send["attributes"]["network.transport"] == "tcp"


def test_demo_otel_prints_one_trace_as_a_tree_and_draws_it_on_the_trace_page(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rpcweave", "demo", "--otel", "--trace", "otel.jsonl"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("editor: explain rpcweave  [internal]")
    assert any(line.startswith("  session/prompt  [client]") and "acp" in line for line in lines)
    assert any(line.startswith("      tools/call lookup  [client]") for line in lines)
    assert any(line.startswith("        SendMessage  [server]") for line in lines)
    assert "· notifications/progress" in done.stdout
    assert "in 1 trace(s); stop reason: end_turn" in lines[-1]
    # --trace: the three hops' messages, and the spans beside them on the page.
    assert "trace: otel.jsonl (diagram otel.mmd, page otel.html)" in done.stderr
    spans = read_spans(tmp_path / "otel.spans.jsonl")
    assert len(spans) == int(lines[-1].split()[0])  # "N spans in 1 trace(s)"
    assert len({span["trace_id"] for span in spans}) == 1
    page = (tmp_path / "otel.html").read_text()
    assert "<script" not in page
    for sent in spans:
        failed = " failed" if sent["error"] else ""
        assert f'<div class="span{failed}" id="span-{sent["span_id"]}">' in page
    senders = {(sent["name"], sent["kind"]): sent["span_id"] for sent in spans}
    # The MCP tool call and the ACP prompt link to the CLIENT spans that sent them.
    for method, span_name, label in [
        ("tools/call", "tools/call lookup", "planner → lookup"),
        ("session/prompt", "session/prompt", "editor → planner"),
    ]:
        span_id = senders[(span_name, "client")]
        row = re.search(rf'<li id="m\d+"[^>]*><div class="head">\d+\. {label} · request · '
                        rf'{re.escape(method)} \[[^<]*<small>[^<]*</small>'
                        rf' <a class="span-link" href="#span-{span_id}">', page)  # fmt: skip
        assert row, (method, span_id)
    for participant in ("editor", "planner", "lookup", "writer"):
        assert f"{participant} → " in page
