"""The floor: hand-written MCP clients doing nothing but the ``tools/call`` exchange (an
asyncio NDJSON client over stdio, a plain ``httpx`` POST loop over Streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO, cast

from .._harness import REPO_ROOT, NdjsonClient
from .plan import ECHO_ARGUMENTS, FLOOR_STDIO_SCRIPT, HTTP_SHUTDOWN_TIMEOUT, Session

__all__ = [
    "FLOOR_INITIALIZE_PARAMS",
    "FLOOR_PROTOCOL_VERSION",
    "FloorResult",
    "StdioFloorClient",
    "floor_session",
    "no_listing",
    "stdio_floor_session",
]


@dataclass(frozen=True, slots=True)
class _FloorText:
    text: str


@dataclass(frozen=True, slots=True)
class FloorResult:
    """What the floor client keeps of a ``tools/call`` result (for `check_echo`)."""

    content: list[_FloorText]
    is_error: bool


def _floor_echo(result: dict[str, Any]) -> FloorResult:
    """What a floor keeps of a ``tools/call`` result, after checking the echoed text (on
    every call: the SDK clients parse every result, so the floor does not skip that)."""
    texts = [_FloorText(block["text"]) for block in result["content"]]
    echoed = FloorResult(texts, bool(result.get("isError")))
    if echoed.is_error or not texts or texts[0].text != ECHO_ARGUMENTS["text"]:
        raise RuntimeError(f"floor: echo returned {result!r}")
    return echoed


FLOOR_PROTOCOL_VERSION = "2025-11-25"


FLOOR_INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": FLOOR_PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "bench-floor", "version": "1.0.0"},
}


def _floor_initialize(request_id: int) -> dict[str, Any]:
    params = FLOOR_INITIALIZE_PARAMS
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _floor_echo_request(request_id: int) -> dict[str, Any]:
    params = {"name": "echo", "arguments": ECHO_ARGUMENTS}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class StdioFloorClient(NdjsonClient):
    """A minimal hand-written MCP client over NDJSON pipes (standard library only).

    With one request in flight it writes a line and reads lines until the response with
    its id. With several, a reader task resolves each caller's future by id.
    """

    close_timeout = HTTP_SHUTDOWN_TIMEOUT

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self._dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

    def _encode(self, method: str, params: Any) -> tuple[int, bytes]:
        self._next_id += 1
        request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        return self._next_id, self._dumps(request).encode() + b"\n"

    async def notify(self, method: str) -> None:
        """Send the notification ``method`` (no params)."""
        self._writer.write(self._dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        await self._writer.drain()

    async def echo_sequential(self) -> FloorResult:
        """``tools/call`` of ``echo``, one in flight."""
        params = {"name": "echo", "arguments": ECHO_ARGUMENTS}
        return _floor_echo(await self.call_sequential("tools/call", params))

    async def echo_multiplexed(self) -> FloorResult:
        """``tools/call`` of ``echo`` that may overlap with others (after `start_reader`)."""
        # `call_multiplexed` inlined: one coroutine per call, as in the other floors.
        params = {"name": "echo", "arguments": ECHO_ARGUMENTS}
        request_id, data = self._encode("tools/call", params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._writer.write(data)
        await self._writer.drain()
        return _floor_echo(await future)


@asynccontextmanager
async def stdio_floor_session(in_flight: int, log: TextIO) -> AsyncIterator[Session]:
    """Launch the stdio floor server and initialize it by hand; ``call_echo`` writes and
    reads itself with 1 in flight, and goes through a reader task with more."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FLOOR_STDIO_SCRIPT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        cwd=REPO_ROOT,
    )
    client = StdioFloorClient(process)
    try:
        result = await client.call_sequential("initialize", FLOOR_INITIALIZE_PARAMS)
        if result.get("protocolVersion") != FLOOR_PROTOCOL_VERSION:
            raise RuntimeError(f"floor: initialize returned {result!r}")
        await client.notify("notifications/initialized")
        if in_flight == 1:
            call_echo: Callable[[], Any] = client.echo_sequential
        else:
            client.start_reader()
            call_echo = client.echo_multiplexed
        yield Session(call_echo, no_listing, process.pid)
    finally:
        await client.close()


@asynccontextmanager
async def floor_session(url: str) -> AsyncIterator[Callable[[], Any]]:
    """A plain ``httpx.AsyncClient`` doing the Streamable HTTP exchange by hand:
    ``initialize``, ``notifications/initialized``, then ``tools/call`` POSTs whose
    SSE answer is parsed with `json.loads` and checked for its id."""
    import httpx

    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    next_id = 0

    async def post(http: httpx.AsyncClient, message: dict[str, Any]) -> httpx.Response:
        content = json.dumps(message, separators=(",", ":")).encode()
        return await http.post(url, content=content, headers=headers)

    def reply_of(response: httpx.Response, request_id: int) -> dict[str, Any]:
        for line in response.content.split(b"\n"):
            if line.startswith(b"data:"):
                reply = json.loads(line[5:])
                if reply.get("id") == request_id and "result" in reply:
                    return cast(dict[str, Any], reply["result"])
        raise RuntimeError(f"floor: no result for request {request_id}: {response.content!r}")

    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
        response = await post(http, _floor_initialize(0))
        reply_of(response, 0)
        headers["mcp-session-id"] = response.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = FLOOR_PROTOCOL_VERSION
        await post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        async def call_echo() -> FloorResult:
            nonlocal next_id
            next_id += 1
            request_id = next_id
            response = await post(http, _floor_echo_request(request_id))
            return _floor_echo(reply_of(response, request_id))

        yield call_echo


def no_listing() -> Any:
    raise RuntimeError("the floor answers tools/call only")
