"""``rpcweave demo`` (``make demo``): the three flows (and the core's) pass end to end with
real processes, save a trace, a diagram and a page each, and leave no process behind.

Tests the private units `rpcweave._demo` and `_demo_flows` on purpose: the demo has no
Python API; a test replaces a flow to see a failure reported.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import rpcweave
import rpcweave._demo_flows
from rpcweave._demo import run_demo

FLOWS = ("mcp", "acp", "a2a", "jsonrpc")


def processes_with(marker: str) -> list[str]:
    """Command lines of the live processes whose environment carries ``marker``."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs a Linux /proc")
def test_demo_passes_saves_traces_and_leaves_no_process(tmp_path: Path) -> None:
    marker = f"rpcweave-demo-{uuid.uuid4().hex}"
    out = tmp_path / "demo-output"
    everything = tmp_path / "all.jsonl"
    done = subprocess.run(  # as `make demo` runs it, but from elsewhere: relative paths
        [sys.executable, "-m", "rpcweave", "demo", "--trace", "all.jsonl"],
        cwd=tmp_path,
        env={**os.environ, "RPCWEAVE_TEST_MARK": marker},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    summary = done.stdout.strip().splitlines()[-5:]
    assert [line.split(" ", 2)[:2] for line in summary[:4]] == [["PASS", f] for f in FLOWS]
    assert "fs/write_text_file before the prompt's answer" in summary[1]
    assert "input-required → completed" in summary[2] and "webhook pushes" in summary[2]
    # The demo's webhook receiver is on loopback: it opts in to private targets, and says so.
    assert "push: private webhook targets allowed (loopback receivers)" in done.stdout
    # The wire traffic was printed as it went.
    assert '"method":"tools/call"' in done.stdout
    assert '"method":"session/request_permission"' in done.stdout
    assert '"method":"SendStreamingMessage"' in done.stdout
    for flow in FLOWS:
        for suffix in (".jsonl", ".mmd", ".html"):
            assert (out / f"{flow}{suffix}").stat().st_size > 0, (flow, suffix)
    acp = (out / "acp.mmd").read_text(encoding="utf-8")
    assert "participant P0 as editor (ACP client)" in acp
    assert "P1->>P0: fs/write_text_file [3] greeting.txt" in acp
    assert acp.rstrip().endswith("P1-->>P0: result [3] session/prompt end_turn")
    a2a = (out / "a2a.mmd").read_text(encoding="utf-8")
    assert "P1->>P0: POST /a2a/webhook" in a2a and "SendStreamingMessage" in a2a
    assert "Resource not found" in (out / "acp.html").read_text(encoding="utf-8")
    assert (out / "workspace" / "greeting.txt").read_text() == "Hello from the ACP demo agent"
    records = [json.loads(line) for line in everything.read_text().splitlines()]
    assert {r["from"] for r in records} >= {"host (MCP client)", "demo_agent.py", "coding_agent.py"}
    assert (tmp_path / "all.mmd").exists() and (tmp_path / "all.html").exists()
    assert processes_with(marker) == []


def test_a_failing_flow_says_fail_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rpcweave._demo_flows, "EXAMPLES", tmp_path / "nowhere")
    assert run_demo(output=str(tmp_path / "out"), quiet=True, only=["mcp", "jsonrpc"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("FAIL mcp (") and "file_server.py is missing" in lines[0]
    assert lines[1].startswith("FAIL jsonrpc (")


def test_a_flow_failing_before_any_traffic_leaves_no_empty_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for suffix in (".jsonl", ".mmd", ".html"):  # an earlier run's trace must not stay either
        (out / f"mcp{suffix}").write_text("old", encoding="utf-8")
    monkeypatch.setattr(rpcweave._demo_flows, "EXAMPLES", tmp_path / "nowhere")
    assert run_demo(output=str(out), only=["mcp"]) == 1
    printed = capsys.readouterr()
    assert "trace:" not in printed.out + printed.err
    assert sorted(p.name for p in out.iterdir()) == ["workspace"]


def test_a_flow_failing_after_traffic_is_still_drawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fails_midway(ctx: rpcweave._demo_flows.DemoContext) -> str:
        ctx.trace.record("client", "server", {"jsonrpc": "2.0", "method": "ping", "id": 1})
        raise rpcweave._demo_flows.DemoFailure("no answer")

    import rpcweave._demo

    flows = tuple(
        dataclasses.replace(flow, run=fails_midway) if flow.name == "mcp" else flow
        for flow in rpcweave._demo.FLOWS
    )
    monkeypatch.setattr(rpcweave._demo, "FLOWS", flows)
    assert run_demo(output=str(tmp_path / "out"), quiet=True, only=["mcp"]) == 1
    assert "FAIL mcp (" in capsys.readouterr().out
    assert (tmp_path / "out" / "mcp.jsonl").stat().st_size > 0
    assert (tmp_path / "out" / "mcp.html").exists()  # a failed flow is drawn, to show where


def test_the_demo_runs_the_examples_installed_inside_the_package() -> None:
    # A wheel installs packages only: the examples must live in rpcweave/ (the checkout's
    # examples/ links there), or `rpcweave demo` fails outside a checkout.
    package = Path(rpcweave.__file__).resolve().parent
    assert rpcweave._demo_flows.EXAMPLES == package / "examples"
    for name in ("mcp/file_server.py", "acp/demo_agent.py", "a2a/coding_agent.py"):
        assert (package / "examples" / name).is_file()
