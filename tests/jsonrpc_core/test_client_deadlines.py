"""Total per-call deadlines: a server that trickles one byte every 0.2 s (in the head, in
the body, or as endless ``100 Continue`` interim responses) cannot hold a client past its
``timeout``. Each client ends with `RequestTimeout` well within a generous bound, and the
trickling server sees its connection closed (nothing keeps reading it)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from _trickle import MODES, TrickleServer, response, trickling
from a2a_fixtures.harness import make_card
from anyio.from_thread import start_blocking_portal

from a2a_layer import A2AClient
from a2a_layer.types import AgentInterface
from jsonrpc_core import RequestTimeout
from jsonrpc_core.http import HTTPCaller, new_async_client
from mcp_layer import MCPServer, connect

# The deadline of every call here; the seconds to each error are printed with ``-s``
# (RPCWEAVE_DEADLINE_TEST_TIMEOUT=3 measures them at 3 s).
TIMEOUT = float(os.environ.get("RPCWEAVE_DEADLINE_TEST_TIMEOUT", "1"))
BOUND = TIMEOUT + 7.0  # generous


@asynccontextmanager
async def deadline_case(server: TrickleServer, name: str) -> AsyncIterator[None]:
    """Expect `RequestTimeout` from the block within `BOUND`, then the trickling
    connection closed by the client."""
    start = anyio.current_time()
    with anyio.fail_after(BOUND):
        with pytest.raises(RequestTimeout) as raised:
            yield
    print(f"{name}: {anyio.current_time() - start:.2f} s")  # shown with -s
    assert f"within {TIMEOUT:g} s" in str(raised.value)  # this deadline, no other
    assert server.trickled >= 1
    with anyio.fail_after(5):
        await server.trickles_closed.wait()
    assert server.trickles_open == 0


def _content_type(mode: str, sse: bool) -> str:
    return "text/event-stream" if sse and mode == "body" else "application/json"


# -- HTTPCaller ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_http_caller_call_ends_at_its_deadline(mode: str) -> None:
    async with trickling(mode) as server, new_async_client() as http:
        caller = HTTPCaller(http, server.url + "/rpc", timeout=TIMEOUT)
        async with deadline_case(server, f"HTTPCaller.call {mode}"):
            await caller.call("echo", {"x": 1})


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_http_caller_stream_deadline_bounds_its_first_result(mode: str) -> None:
    async with (
        trickling(mode, content_type="text/event-stream") as server,
        new_async_client() as http,
    ):
        caller = HTTPCaller(http, server.url + "/rpc", timeout=TIMEOUT)
        async with deadline_case(server, f"HTTPCaller.stream {mode}"):
            async for _ in caller.stream("watch"):
                pass


# -- A2AClient -------------------------------------------------------------------------------


def _card(url: str, binding: str, version: str = "1.0") -> Any:
    card = make_card()
    card.supported_interfaces = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
    ]
    return card


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a2a_client_call_ends_at_its_deadline(mode: str, binding: str) -> None:
    async with trickling(mode) as server:
        async with A2AClient(_card(server.url, binding), timeout=TIMEOUT) as client:
            async with deadline_case(server, f"A2AClient {binding} get_task {mode}"):
                await client.get_task("t-1")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a2a_client_stream_deadline_bounds_its_first_event(mode: str, binding: str) -> None:
    async with trickling(mode, content_type="text/event-stream") as server:
        async with A2AClient(_card(server.url, binding), timeout=TIMEOUT) as client:
            async with deadline_case(server, f"A2AClient {binding} stream {mode}"):
                async for _ in client.stream("hi"):
                    pass


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a2a_connect_card_fetch_ends_at_its_deadline(mode: str) -> None:
    async with trickling(mode) as server:
        async with deadline_case(server, f"A2AClient.connect card {mode}"):
            async with A2AClient.connect(server.url, timeout=TIMEOUT):
                pass


# -- MCP over Streamable HTTP ------------------------------------------------------------------


def _result(body: bytes, result: dict[str, Any]) -> bytes:
    """The JSON-RPC response carrying ``result`` to the request in ``body``."""
    request = json.loads(body)
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()


def _initialize_result(body: bytes) -> bytes:
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "trickle", "version": "1"},
    }
    return _result(body, result)


# The one tool the CLI tests call (`rpcweave mcp call` lists the tools first, to check
# the arguments it was given).
_TOOLS = {"tools": [{"name": "slow", "inputSchema": {"type": "object", "properties": {}}}]}


def _method(body: bytes) -> str | None:
    try:
        return json.loads(body).get("method")
    except ValueError:
        return None


def _mcp_answer(trickle: str) -> Any:
    """A Streamable HTTP server that answers everything except ``trickle`` (a method)."""

    async def answer(server: TrickleServer, head: bytes, body: bytes) -> bytes | None:
        method = _method(body)
        if method == trickle:
            return None
        if method == "initialize":
            return response(200, _initialize_result(body))
        if method == "tools/list":
            return response(200, _result(body, _TOOLS))
        if head.startswith(b"POST"):
            return response(202)
        return response(404 if head.startswith(b"DELETE") else 405)

    return answer


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("step", ["initialize", "notifications/initialized"])
async def test_mcp_connect_handshake_ends_at_its_deadline(mode: str, step: str) -> None:
    async with trickling(mode, answer=_mcp_answer(step)) as server:
        async with deadline_case(server, f"MCP connect {step} {mode}"):
            async with connect(server.url + "/mcp", timeout=TIMEOUT):
                pass


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_mcp_call_tool_ends_at_its_deadline(mode: str) -> None:
    async with trickling(
        mode, answer=_mcp_answer("tools/call"), content_type=_content_type(mode, True)
    ) as server:
        async with connect(server.url + "/mcp", timeout=TIMEOUT) as session:
            async with deadline_case(server, f"MCP call_tool {mode}"):
                await session.call_tool("slow", {})


@pytest.mark.anyio
async def test_session_request_timeout_bounds_every_call_unless_lifted() -> None:
    server = MCPServer("slow")

    @server.tool()
    async def nap(seconds: float) -> str:
        await anyio.sleep(seconds)  # the server being slow
        return "rested"

    with anyio.fail_after(BOUND):
        async with connect(server, request_timeout=0.2) as session:
            with pytest.raises(RequestTimeout):
                await session.call_tool("nap", {"seconds": 60})
            result = await session.call_tool("nap", {"seconds": 0.5}, timeout=math.inf)
    assert [block.text for block in result.content] == ["rested"]  # type: ignore[union-attr]


# -- MCP over HTTP+SSE -------------------------------------------------------------------------

_SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"


def _sse_answer(trickle: str) -> Any:
    """An HTTP+SSE server: GET opens the event stream (``trickle="GET"``: it trickles),
    POSTs are accepted and answered on it, except the method ``trickle``."""
    events: list[Any] = []

    async def answer(server: TrickleServer, head: bytes, body: bytes) -> bytes | None:
        if head.startswith(b"GET"):
            if trickle == "GET":
                return None
            events.append(server.current)
            return _SSE_HEAD + b"event: endpoint\ndata: /messages\n\n"
        method = _method(body)
        if method == trickle:
            return None
        if method == "initialize":
            data = _initialize_result(body)
            await events[-1].send(b"event: message\ndata: " + data + b"\n\n")
        return response(202)

    return answer


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("step", ["GET", "initialize"])
async def test_mcp_sse_connect_ends_at_its_deadline(mode: str, step: str) -> None:
    async with trickling(mode, answer=_sse_answer(step)) as server:
        async with deadline_case(server, f"MCP HTTP+SSE connect {step} {mode}"):
            async with connect(server.url + "/sse", sse=True, timeout=TIMEOUT):
                pass


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_mcp_sse_call_tool_ends_at_its_deadline(mode: str) -> None:
    async with trickling(mode, answer=_sse_answer("tools/call")) as server:
        async with connect(server.url + "/sse", sse=True, timeout=TIMEOUT) as session:
            async with deadline_case(server, f"MCP HTTP+SSE call_tool {mode}"):
                await session.call_tool("slow", {})


# -- the CLI -----------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def trickling_in_thread(mode: str, answer: Any = None) -> Iterator[tuple[TrickleServer, Any]]:
    """A `TrickleServer` on its own event loop (the CLI runs its own): (server, portal)."""
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(trickling(mode, answer=answer)) as server:
            yield server, portal


async def _closed(server: TrickleServer) -> None:
    with anyio.fail_after(5):
        await server.trickles_closed.wait()


def run_cli_bounded(*argv: str) -> tuple[int, str, float]:
    """``python -m rpcweave ARGV`` (stopped after `BOUND` + 20 s): status, stderr, seconds."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "rpcweave", *argv],
        capture_output=True,
        text=True,
        timeout=BOUND + 20,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return done.returncode, done.stderr, time.monotonic() - start


def _assert_timeout_line(err: str, url: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert lines == [f"rpcweave: error: no answer from {url} within 1 s (--timeout)"], err


@pytest.mark.parametrize("step", ["initialize", "tools/call"])
def test_cli_mcp_call_ends_at_its_timeout(step: str) -> None:
    with trickling_in_thread("body", _mcp_answer(step)) as (server, portal):
        url = server.url + "/mcp"
        code, err, seconds = run_cli_bounded("mcp", "call", url, "slow", "--timeout", "1")
        print(f"rpcweave mcp call ({step} trickled): {seconds:.2f} s")
        assert code == 1
        _assert_timeout_line(err, url)
        portal.call(_closed, server)


def test_cli_mcp_sse_ends_at_its_timeout() -> None:
    with trickling_in_thread("head", _sse_answer("GET")) as (server, portal):
        url = server.url + "/sse"
        code, err, seconds = run_cli_bounded("mcp", "tools", url, "--sse", "--timeout", "1")
        print(f"rpcweave mcp tools --sse (GET trickled): {seconds:.2f} s")
        assert code == 1
        _assert_timeout_line(err, url)
        portal.call(_closed, server)


def _a2a_answer(trickle: str) -> Any:
    """The card (a JSON-RPC interface here) unless ``trickle`` is "card"; SendMessage
    trickles."""

    async def answer(server: TrickleServer, head: bytes, body: bytes) -> bytes | None:
        if head.startswith(b"GET") and trickle != "card":
            card = _card(server.url, "JSONRPC").model_dump_json(by_alias=True, exclude_none=True)
            return response(200, card.encode())
        return None

    return answer


@pytest.mark.parametrize("trickle", ["card", "send"])
def test_cli_a2a_send_ends_at_its_timeout(trickle: str) -> None:
    with trickling_in_thread("continue", _a2a_answer(trickle)) as (server, portal):
        code, err, seconds = run_cli_bounded("a2a", "send", server.url, "hi", "--timeout", "1")
        print(f"rpcweave a2a send ({trickle} trickled): {seconds:.2f} s")
        assert code == 1
        _assert_timeout_line(err, server.url)
        portal.call(_closed, server)


def test_cli_timeout_defaults_to_60_seconds() -> None:
    from rpcweave.__main__ import build_parser

    parser = build_parser()
    for argv in (["mcp", "tools", "http://x"], ["a2a", "card", "http://x"]):
        assert parser.parse_args(argv).timeout == 60.0
