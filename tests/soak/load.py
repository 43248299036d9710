"""Load soak: many sessions and tasks against one server process, then idle.

    python tests/soak/load.py [--sessions 1000] [--tasks 1000] [--idle-timeout 5]

1. MCP: ``--sessions`` Streamable HTTP sessions opened concurrently (one connection each)
   against one everything-server process, each used (initialize, initialized,
   tools/list, tools/call); then idle past the idle timeout: every session must be
   reaped (an old session id answers 404).
2. A2A: ``--tasks`` concurrent SendStreamingMessage calls against one A2A process,
   each task streaming 5 artifacts; every stream must end with the completed status
   and exactly its 5 artifacts.

Prints the figures (errors, peak RSS from VmHWM, RSS after idle) and exits non-zero
on any error. Everything is bounded: connection pools, counts, and a deadline per phase.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from anyio.abc import Process

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

from soak.kit import hwm_kib, rss_kib  # noqa: E402

from jsonrpc_core import SSEDecoder  # noqa: E402

MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "soak", "version": "1"},
}


@asynccontextmanager
async def served(kind: str, *args: str) -> AsyncIterator[tuple[Process, str]]:
    proc = await anyio.open_process([sys.executable, str(HERE / "serve.py"), kind, *args])
    try:
        assert proc.stdout is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await proc.stdout.receive(1)
        yield proc, line.decode().strip()
    finally:
        proc.kill()
        await proc.wait()
        await proc.aclose()


def messages(response: httpx.Response) -> list[Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = SSEDecoder().feed(response.content)
        return [json.loads(e.data) for e in events if e.data]
    return [json.loads(response.content)] if response.content else []


async def mcp_phase(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"sessions": args.sessions}
    errors: list[str] = []
    limits = httpx.Limits(max_connections=args.sessions + 10, max_keepalive_connections=200)
    async with served("mcp", "--idle-timeout", str(args.idle_timeout)) as (proc, url):
        endpoint = url + "/mcp"
        figures["rss_baseline_mib"] = rss_kib(proc.pid) / 1024
        session_ids: list[str] = []
        async with httpx.AsyncClient(timeout=120, limits=limits) as http:

            async def one(n: int) -> None:
                try:
                    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
                    response = await http.post(endpoint, json=init, headers=MCP_HEADERS)
                    response.raise_for_status()
                    headers = {
                        **MCP_HEADERS,
                        "mcp-session-id": response.headers["mcp-session-id"],
                        "mcp-protocol-version": "2025-11-25",
                    }
                    session_ids.append(headers["mcp-session-id"])
                    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                    (await http.post(endpoint, json=note, headers=headers)).raise_for_status()
                    for call_id, (method, params) in enumerate(
                        [
                            ("tools/list", {}),
                            ("tools/call", {"name": "test_simple_text", "arguments": {}}),
                        ],
                        1,
                    ):
                        body = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
                        response = await http.post(endpoint, json=body, headers=headers)
                        response.raise_for_status()
                        answer = messages(response)[-1]
                        if "result" not in answer:
                            errors.append(f"session {n}: {answer}")
                except Exception as exc:  # counted, then reported
                    errors.append(f"session {n}: {exc!r}")

            started = time.monotonic()
            with anyio.fail_after(args.deadline):
                async with anyio.create_task_group() as task_group:
                    for n in range(args.sessions):
                        task_group.start_soon(one, n)
            figures["mcp_seconds"] = round(time.monotonic() - started, 1)
            figures["rss_loaded_mib"] = rss_kib(proc.pid) / 1024
            figures["rss_peak_mib"] = hwm_kib(proc.pid) / 1024
            # Idle: the reaper runs every idle_timeout / 4; wait past two rounds.
            await anyio.sleep(args.idle_timeout * 1.6)
            probe = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            reaped = 0
            for session_id in session_ids[-50:]:
                headers = {**MCP_HEADERS, "mcp-session-id": session_id}
                response = await http.post(endpoint, json=probe, headers=headers)
                reaped += response.status_code == 404
            figures["sessions_reaped_of_50_probed"] = reaped
            figures["rss_after_idle_mib"] = rss_kib(proc.pid) / 1024
    figures["mcp_errors"] = len(errors)
    figures["mcp_error_samples"] = errors[:5]
    return figures


async def a2a_phase(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"tasks": args.tasks}
    errors: list[str] = []
    limits = httpx.Limits(max_connections=args.tasks + 10, max_keepalive_connections=200)
    async with served("a2a") as (proc, url):
        figures["a2a_rss_baseline_mib"] = rss_kib(proc.pid) / 1024
        async with httpx.AsyncClient(timeout=120, limits=limits) as http:

            async def one(n: int) -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "SendStreamingMessage",
                    "params": {
                        "message": {
                            "messageId": f"soak-{n}",
                            "role": "ROLE_USER",
                            "parts": [{"text": "stream-5"}],
                        }
                    },
                }
                headers = {"content-type": "application/json", "A2A-Version": "1.0"}
                try:
                    async with http.stream("POST", url + "/", json=body, headers=headers) as rsp:
                        decoder = SSEDecoder()
                        events = []
                        async for chunk in rsp.aiter_bytes():
                            events += [json.loads(e.data) for e in decoder.feed(chunk) if e.data]
                    results = [e.get("result", {}) for e in events]
                    artifacts = [r for r in results if "artifactUpdate" in r]
                    final = results[-1].get("statusUpdate", {}).get("status", {}).get("state")
                    if len(artifacts) != 5 or final != "TASK_STATE_COMPLETED":
                        errors.append(f"task {n}: {len(artifacts)} artifacts, final {final}")
                except Exception as exc:
                    errors.append(f"task {n}: {exc!r}")

            started = time.monotonic()
            with anyio.fail_after(args.deadline):
                async with anyio.create_task_group() as task_group:
                    for n in range(args.tasks):
                        task_group.start_soon(one, n)
            figures["a2a_seconds"] = round(time.monotonic() - started, 1)
            figures["a2a_rss_peak_mib"] = hwm_kib(proc.pid) / 1024
            await anyio.sleep(2)
            figures["a2a_rss_after_idle_mib"] = rss_kib(proc.pid) / 1024
    figures["a2a_errors"] = len(errors)
    figures["a2a_error_samples"] = errors[:5]
    return figures


async def main(args: argparse.Namespace) -> int:
    figures = {**await mcp_phase(args), **await a2a_phase(args)}
    for key, value in figures.items():
        print(f"{key:32} {value:.1f}" if isinstance(value, float) else f"{key:32} {value}")
    ok = (
        figures["mcp_errors"] == 0
        and figures["a2a_errors"] == 0
        and figures["sessions_reaped_of_50_probed"] == 50
    )
    print("soak:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--idle-timeout", type=float, default=10.0)
    parser.add_argument("--deadline", type=float, default=240.0)
    sys.exit(anyio.run(main, parser.parse_args()))
