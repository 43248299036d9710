"""Load soak: many sessions and tasks against one server process, then idle.

    python tests/soak/load.py [--sessions 1000] [--tasks 1000] [--only mcp|a2a]

1. MCP, two waves against one everything-server process. A wave opens ``--sessions``
   Streamable HTTP sessions concurrently (one connection each unless ``--pool``), each
   used (initialize, initialized, tools/list, tools/call); all must still be live when
   the wave ends. Then idle: every session must be reaped (the server's count drops to
   0 and old ids answer 404). Wave 2 repeats wave 1 on the same process, and must fit
   mostly in the memory wave 1's reaped sessions gave back: its RSS growth is reported
   as a share of wave 1's (a leak would grow by the same amount again).
2. A2A: ``--tasks`` concurrent SendStreamingMessage calls against one A2A process,
   each task streaming 5 artifacts; every stream must end with the completed status
   and exactly its 5 artifacts.

Idle timeouts. A session is idle on the server from the end of its last request until
the server reads its next one; a request still queued in the client (in its connection
pool, or in a saturated client's event loop) is invisible there. Under this load the
client is the bottleneck (its CPU per request is several times the server's, both
reported), so a session's next request can take longer to leave the client than a
short idle timeout: with 1,000 sessions at ~40 req/s, about 1000 / 40 = 25 s. A 5-10 s
timeout then reaps sessions mid-wave and their next request gets 404. So the waves run
with ``--load-idle-timeout`` (600 s; the SDK's default is 1800 s) and the reaping is
observed with ``--idle-timeout`` (5 s), switched through the soak server's control
route. With ``--pool N`` each session holds a pool slot for its whole sequence
(``--admission request`` queues every request on the pool instead, which makes the
client-side wait, and the reaping, worse). The server's keep-alive (``--keep-alive``,
120 s here; the SDK's default is 75 s, uvicorn's own 5 s) stays above the client pool's
for the same reason: a saturated client may reuse a pooled connection after the server
closed it as idle (ReadError).

Prints the figures (errors, request latency, CPU per request in server and client,
peak RSS from VmHWM, RSS after each wave and after idle, event streams the server
still keeps) and exits non-zero on any failure. Everything is bounded: connection
pools, counts, and a deadline per wave.
"""

from __future__ import annotations

import argparse
import json
import os
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

from jsonrpc_core.http import SSEDecoder  # noqa: E402

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


class Wave:
    """One wave of MCP sessions: how it went."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.session_ids: list[str] = []
        self.max_gap = 0.0  # longest time a session went between two of its answers
        self.latency: dict[str, list[float]] = {}  # seconds per request, by method
        self.requests = 0


async def mcp_wave(
    http: httpx.AsyncClient, endpoint: str, args: argparse.Namespace, pool: int, wave: int
) -> Wave:
    """``--sessions`` sessions, each: initialize, initialized, tools/list, tools/call.

    Admission is per session (default): a session takes a slot of the connection pool
    for its whole sequence, so its requests never queue behind other sessions' in the
    client, where the server cannot see them. ``--admission request`` queues each request
    on the pool instead (the pre-fix behaviour, kept to show the difference).
    """
    result = Wave()
    slots = anyio.Semaphore(pool) if args.admission == "session" else None

    async def post(body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        result.requests += 1
        started = time.monotonic()
        response = await http.post(endpoint, json=body, headers=headers)
        response.raise_for_status()
        result.latency.setdefault(body["method"], []).append(time.monotonic() - started)
        return response

    async def sequence(n: int) -> None:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
        response = await post(init, MCP_HEADERS)
        last = time.monotonic()
        headers = {
            **MCP_HEADERS,
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        result.session_ids.append(headers["mcp-session-id"])
        calls: list[tuple[str, dict[str, Any] | None]] = [
            ("notifications/initialized", None),
            ("tools/list", {}),
            ("tools/call", {"name": "test_simple_text", "arguments": {}}),
        ]
        for call_id, (method, params) in enumerate(calls):
            body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
            if params is not None:
                body.update(id=call_id, params=params)
            response = await post(body, headers)
            now = time.monotonic()
            result.max_gap = max(result.max_gap, now - last)
            last = now
            if params is not None and "result" not in messages(response)[-1]:
                result.errors.append(f"wave {wave} session {n}: {messages(response)[-1]}")

    async def one(n: int) -> None:
        try:
            if slots is None:
                await sequence(n)
            else:
                async with slots:
                    await sequence(n)
        except Exception as exc:  # counted, then reported
            result.errors.append(f"wave {wave} session {n}: {exc!r}")

    with anyio.fail_after(args.deadline):
        async with anyio.create_task_group() as task_group:
            for n in range(args.sessions):
                task_group.start_soon(one, n)
    return result


def keep_alive_args(args: argparse.Namespace) -> list[str]:
    return ["--keep-alive", str(args.keep_alive)] if args.keep_alive else []


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def server_stats(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    """The server's live sessions and stored event streams (read without touching any)."""
    stats: dict[str, Any] = (await http.get(url + "/_soak/stats")).json()
    return stats


async def live_sessions(http: httpx.AsyncClient, url: str) -> int:
    """The server's live session count."""
    count: int = (await server_stats(http, url))["sessions"]
    return count


async def set_idle_timeout(http: httpx.AsyncClient, url: str, seconds: float) -> None:
    """Change what the server's reaper counts as expired."""
    response = await http.post(url + "/_soak/idle-timeout", json={"seconds": seconds})
    response.raise_for_status()


async def mcp_phase(args: argparse.Namespace) -> dict[str, Any]:
    pool = args.pool or args.sessions + 10
    load_timeout = args.load_idle_timeout or args.idle_timeout
    figures: dict[str, Any] = {
        "sessions_per_wave": args.sessions,
        "pool_connections": pool,
        "admission": args.admission,
        "idle_timeout_under_load_s": load_timeout,
        "idle_timeout_s": args.idle_timeout,
    }
    errors: list[str] = []
    limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
    serve_args = ["--idle-timeout", str(args.idle_timeout), *keep_alive_args(args)]
    if args.no_event_store:
        serve_args.append("--no-event-store")
    async with served("mcp", *serve_args) as (proc, url):
        endpoint = url + "/mcp"
        baseline = figures["rss_baseline_mib"] = rss_kib(proc.pid) / 1024
        async with (
            httpx.AsyncClient(timeout=120, limits=limits) as http,
            httpx.AsyncClient(timeout=30) as control,
        ):
            for wave in (1, 2):
                await set_idle_timeout(control, url, load_timeout)
                started = time.monotonic()
                server_cpu, client_cpu = cpu_seconds(proc.pid), time.process_time()
                result = await mcp_wave(http, endpoint, args, pool, wave)
                seconds = time.monotonic() - started
                server_cpu = cpu_seconds(proc.pid) - server_cpu
                client_cpu = time.process_time() - client_cpu
                per_request = 1000 / max(result.requests, 1)
                figures[f"wave{wave}_server_cpu_ms_per_req"] = round(server_cpu * per_request, 2)
                figures[f"wave{wave}_client_cpu_ms_per_req"] = round(client_cpu * per_request, 2)
                errors += result.errors
                figures[f"wave{wave}_seconds"] = round(seconds, 1)
                figures[f"wave{wave}_requests_per_s"] = round(result.requests / seconds, 1)
                figures[f"wave{wave}_max_gap_s"] = round(result.max_gap, 2)
                for method, seconds_list in result.latency.items():
                    ordered = sorted(seconds_list)
                    p50, p99 = (ordered[int(q * (len(ordered) - 1))] for q in (0.5, 0.99))
                    figures[f"wave{wave}_latency_{method}"] = (
                        f"p50 {p50:.2f} s, p99 {p99:.2f} s, max {ordered[-1]:.2f} s"
                    )
                figures[f"wave{wave}_sessions_live"] = await live_sessions(control, url)
                figures[f"wave{wave}_rss_loaded_mib"] = rss_kib(proc.pid) / 1024
                figures[f"wave{wave}_rss_peak_mib"] = hwm_kib(proc.pid) / 1024
                # Idle: the reaper runs every idle_timeout / 4; nothing touches a session.
                await set_idle_timeout(control, url, args.idle_timeout)
                idle_started = time.monotonic()
                with anyio.move_on_after(args.idle_timeout * 3):
                    while await live_sessions(control, url):  # noqa: ASYNC110 (another process)
                        await anyio.sleep(0.25)
                figures[f"wave{wave}_reaped_after_s"] = round(time.monotonic() - idle_started, 1)
                stats = await server_stats(control, url)
                figures[f"wave{wave}_sessions_left"] = stats["sessions"]
                figures[f"wave{wave}_event_streams_kept"] = stats["event_streams"]
                probe = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
                reaped = 0
                for session_id in result.session_ids[-50:]:
                    headers = {**MCP_HEADERS, "mcp-session-id": session_id}
                    response = await control.post(endpoint, json=probe, headers=headers)
                    reaped += response.status_code == 404
                figures[f"wave{wave}_reaped_of_50_probed"] = reaped
                figures[f"wave{wave}_rss_after_idle_mib"] = rss_kib(proc.pid) / 1024
    growth1 = figures["wave1_rss_loaded_mib"] - baseline
    growth2 = figures["wave2_rss_loaded_mib"] - figures["wave1_rss_loaded_mib"]
    figures["wave1_growth_mib"] = growth1
    figures["wave2_extra_growth_mib"] = growth2
    # 0 %: wave 2 fitted entirely in the memory wave 1's reaped sessions gave back.
    figures["wave2_growth_pct_of_wave1"] = round(100 * growth2 / growth1, 1) if growth1 else 0.0
    figures["mcp_errors"] = len(errors)
    figures["mcp_error_samples"] = [e[:300] for e in errors[:5]]
    return figures


async def a2a_phase(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"tasks": args.tasks}
    errors: list[str] = []
    limits = httpx.Limits(max_connections=args.tasks + 10, max_keepalive_connections=200)
    async with served("a2a", *keep_alive_args(args)) as (proc, url):
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
            await anyio.sleep(2)  # time is under test: the RSS after the server idles a while
            figures["a2a_rss_after_idle_mib"] = rss_kib(proc.pid) / 1024
    figures["a2a_errors"] = len(errors)
    figures["a2a_error_samples"] = errors[:5]
    return figures


def mcp_ok(figures: dict[str, Any], sessions: int) -> bool:
    return (
        figures["mcp_errors"] == 0
        and all(
            figures[f"wave{w}_sessions_live"] == sessions
            and figures[f"wave{w}_sessions_left"] == 0
            and figures[f"wave{w}_reaped_of_50_probed"] == 50
            for w in (1, 2)
        )
        # Reaped sessions' memory is reused: wave 2 must not grow by wave 1's amount again.
        and figures["wave2_growth_pct_of_wave1"] < 50
    )


async def main(args: argparse.Namespace) -> int:
    figures: dict[str, Any] = {}
    ok = True
    if args.only in (None, "mcp"):
        figures.update(await mcp_phase(args))
        ok = ok and mcp_ok(figures, args.sessions)
    if args.only in (None, "a2a"):
        figures.update(await a2a_phase(args))
        ok = ok and figures["a2a_errors"] == 0
    for key, value in figures.items():
        print(f"{key:32} {value:.1f}" if isinstance(value, float) else f"{key:32} {value}")
    print("soak:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--pool", type=int, default=0, help="connections (0: one per session)")
    parser.add_argument("--admission", choices=["session", "request"], default="session")
    parser.add_argument("--idle-timeout", type=float, default=5.0, help="when idle (reaping)")
    parser.add_argument(
        "--load-idle-timeout", type=float, default=600.0, help="during a wave (0: the same)"
    )
    parser.add_argument("--deadline", type=float, default=240.0)
    parser.add_argument("--only", choices=["mcp", "a2a"], default=None)
    parser.add_argument("--no-event-store", action="store_true")
    parser.add_argument(
        "--keep-alive",
        type=float,
        default=120.0,
        help="server keep-alive (0: the SDK's default, 75 s)",
    )
    sys.exit(anyio.run(main, parser.parse_args()))
