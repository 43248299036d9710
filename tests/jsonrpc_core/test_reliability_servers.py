"""Mutation fuzzing of RUNNING servers: valid messages of every method of every layer,
corrupted (wrong types, missing members, huge numbers, deep nesting, invalid UTF-8, 1 MB
strings; 10 MB under ``RPCWEAVE_SOAK=1``), sent to

* the MCP everything server over stdio and over Streamable HTTP (its own process),
* the ACP demo agent over stdio,
* an A2A server (the TCK agent) over HTTP: JSON-RPC and the HTTP+JSON routes.

Each must answer every request exactly once with a well-formed response (never 5xx),
stay up and answer a ping afterwards, and its resident memory must come back near where
it was before the run (VmRSS from /proc, a generous bound). Randomness is seeded.

Reads the layers' private method tables (`acp_layer._methods`, `mcp_layer._methods`,
`a2a_layer._methods`) on purpose: every method of every layer is sent.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process
from soak.fuzz import Input, StdioFuzz, check_response, make_inputs, mutate
from soak.kit import example_for, rss_kib

import acp_layer._methods as acp_methods
from jsonrpc_core.http import SSEDecoder
from mcp_layer._methods import CLIENT_REQUESTS

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "mcp" / "everything_server.py"
DEMO_AGENT = ROOT / "examples" / "acp" / "demo_agent.py"
SERVE = ROOT / "tests" / "soak" / "serve.py"
SOAK = os.environ.get("RPCWEAVE_SOAK") == "1"
LONG = 10 * 1024 * 1024 if SOAK else 1024 * 1024
STDIO_INPUTS = 10_000 if SOAK else 1200
HTTP_INPUTS = 3000 if SOAK else 400
LONG_EVERY = 400 if SOAK else 40
"""One input in LONG_EVERY carries a LONG string (bounded: ~25 per run in soak)."""
RSS_SLACK_KIB = 64 * 1024
"""How far above its warmed-up baseline a server's RSS may stay after a run. A run sends
~30 strings of 1 MB (10 MB in soak), several times over: keeping them would exceed it."""


@pytest.fixture
def anyio_backend() -> str:
    # The servers run in their own processes; the client side is backend-neutral and
    # covered on both backends elsewhere. One backend keeps the suite fast.
    return "asyncio"


def report(name: str, inputs: Sequence[Input], before: int, after: int) -> None:
    kinds = {k: sum(1 for i in inputs if i.kind == k) for k in ("req", "null")}
    print(
        f"\n{name}: {len(inputs)} inputs ({kinds['req']} requests, {kinds['null']} non-JSON), "
        f"RSS {before // 1024} MiB -> {after // 1024} MiB"
    )


@asynccontextmanager
async def process(*argv: str | Path) -> AsyncIterator[Process]:
    proc = await anyio.open_process([sys.executable, *map(str, argv)], cwd=ROOT)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        with anyio.fail_after(10):
            await proc.wait()
        await proc.aclose()


def mcp_examples() -> dict[str, list[Any]]:
    examples = {name: example_for(d) for name, d in CLIENT_REQUESTS.items()}
    examples["tools/call"] += [
        {"name": "test_simple_text", "arguments": {}},
        {"name": "test_structured_output", "arguments": {"city": "Oslo"}},
        {"name": "test_error_handling", "arguments": {}},
        {"name": "json_schema_2020_12_tool", "arguments": {"name": "n", "address": {}}},
        {"name": "test_image_content"},
    ]
    examples["resources/read"] += [
        {"uri": "test://static-text"},
        {"uri": "test://template/42/data"},
    ]
    examples["prompts/get"] += [
        {"name": "test_simple_prompt"},
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}},
    ]
    examples["completion/complete"] += [
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "p"},
        }
    ]
    return examples


MCP_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}, "roots": {}},
    "clientInfo": {"name": "fuzz", "version": "1"},
}


async def finish(fuzz: StdioFuzz, proc: Process, inputs: Sequence[Input]) -> None:
    """The server is alive, answers a ping, and never answered anything twice."""
    await fuzz.request("final-ping", "ping", {})
    assert proc.returncode is None
    assert all(count == 1 for count in fuzz.responses.values())
    assert len(inputs) > 0


async def test_mcp_server_over_stdio_survives_mutated_messages() -> None:
    async with process(EVERYTHING, "--stdio") as proc, StdioFuzz(proc).reading() as fuzz:
        result = await fuzz.request("init", "initialize", MCP_INIT)
        assert "result" in result, result
        await fuzz.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        warm = make_inputs(mcp_examples(), 200, seed=7, long_string=LONG, prefix="warm")
        await fuzz.run(warm)
        before = rss_kib(proc.pid)
        inputs = make_inputs(
            mcp_examples(), STDIO_INPUTS, seed=1, long_string=LONG, long_every=LONG_EVERY
        )
        await fuzz.run(inputs)
        await finish(fuzz, proc, inputs)
        after = rss_kib(proc.pid)
    report("MCP stdio", inputs, before, after)
    assert after - before < RSS_SLACK_KIB


async def test_acp_agent_over_stdio_survives_mutated_messages(tmp_path: Path) -> None:
    async with process(DEMO_AGENT) as proc, StdioFuzz(proc).reading() as fuzz:
        result = await fuzz.request("init", "initialize", {"protocolVersion": 1})
        assert "result" in result, result
        session = await fuzz.request("new", "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        session_id = session["result"]["sessionId"]
        examples: dict[str, list[Any]] = {}
        for name, descriptor in acp_methods.AGENT_METHODS.items():
            if name in ("session/cancel", "$/cancel_request"):
                continue  # notifications: never answered
            found = example_for(descriptor)
            real = [
                {**e, "sessionId": session_id}
                for e in found
                if isinstance(e, dict) and "sessionId" in e
            ]
            examples[name] = found + real
        examples["session/prompt"].append(
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]}
        )
        warm = make_inputs(examples, 200, seed=7, long_string=LONG, prefix="warm")
        await fuzz.run(warm)
        before = rss_kib(proc.pid)
        inputs = make_inputs(
            examples, STDIO_INPUTS, seed=2, long_string=LONG, long_every=LONG_EVERY
        )
        await fuzz.run(inputs)
        result = await fuzz.request("final-list", "session/list", {})
        assert "result" in result or "error" in result
        assert proc.returncode is None
        after = rss_kib(proc.pid)
    report("ACP stdio", inputs, before, after)
    assert after - before < RSS_SLACK_KIB


# --- HTTP -----------------------------------------------------------------------------


@asynccontextmanager
async def served(kind: str, *args: str) -> AsyncIterator[tuple[Process, str]]:
    async with process(SERVE, kind, *args) as proc:
        assert proc.stdout is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await proc.stdout.receive(1)
        yield proc, line.decode().strip()


def answers_of(response: httpx.Response) -> list[Any]:
    """Every JSON-RPC message of a response: a JSON body, or the data of SSE events."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        decoder = SSEDecoder()
        events = list(decoder.feed(response.content))
        return [json.loads(e.data) for e in events if e.data and e.event in (None, "message")]
    if not response.content:
        return []
    return [json.loads(response.content)]


class HttpFuzz:
    """POSTs each input once; checks the status and every answer."""

    def __init__(self, http: httpx.AsyncClient, url: str, headers: Mapping[str, str]):
        self.http = http
        self.url = url
        self.headers = dict(headers)
        self.statuses: dict[int, int] = {}

    async def post(self, item: Input, streaming: frozenset[str]) -> None:
        response = await self.http.post(self.url, content=item.data, headers=self.headers)
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        assert response.status_code < 500, (item.data[:300], response.status_code, response.text)
        answers = answers_of(response)
        responses = []
        for answer in answers:
            if isinstance(answer, dict) and "method" in answer:
                if "id" in answer:  # a server request on the stream: refuse it
                    error = {"code": -32601, "message": "Method not found"}
                    reply = {"jsonrpc": "2.0", "id": answer["id"], "error": error}
                    await self.http.post(self.url, json=reply, headers=self.headers)
                continue
            responses.append(answer)
        ids = [check_response(r) for r in responses]
        if item.kind == "null":
            assert ids == [None], (item.data[:200], response.status_code, answers)
            return
        if item.kind == "either" and ids == [None]:
            return
        if response.status_code >= 400 and not ids:
            return  # refused at the HTTP level (a header check), with no JSON-RPC body
        if item.method in streaming and response.status_code == 200 and len(ids) > 1:
            assert set(ids) == {item.id}, ids
            return
        assert ids in ([item.id], [None]), (item.data[:200], response.status_code, answers)

    async def run(self, inputs: Sequence[Input], streaming: frozenset[str] = frozenset()) -> None:
        send, receive = anyio.create_memory_object_stream[Input](len(inputs))
        for item in inputs:
            send.send_nowait(item)
        send.close()

        async def worker() -> None:
            async for item in receive:
                await self.post(item, streaming)

        with anyio.fail_after(120 + len(inputs) * 0.2):
            async with anyio.create_task_group() as task_group:
                for _ in range(8):
                    task_group.start_soon(worker)


MCP_HTTP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


async def test_mcp_server_over_streamable_http_survives_mutated_messages() -> None:
    async with served("mcp") as (proc, url), httpx.AsyncClient(timeout=60) as http:
        endpoint = url + "/mcp"
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": MCP_INIT}
        response = await http.post(endpoint, json=init, headers=MCP_HTTP_HEADERS)
        assert response.status_code == 200, response.text
        headers = {
            **MCP_HTTP_HEADERS,
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(endpoint, json=note, headers=headers)
        fuzz = HttpFuzz(http, endpoint, headers)
        examples = mcp_examples()
        await fuzz.run(make_inputs(examples, 100, seed=7, long_string=LONG, prefix="warm"))
        before = rss_kib(proc.pid)
        inputs = make_inputs(
            examples, HTTP_INPUTS, seed=3, long_string=LONG, long_every=LONG_EVERY // 2
        )
        await fuzz.run(inputs)
        # Without a session, and in the 2026-07-28 era, the same endpoint stays sane.
        sessionless = HttpFuzz(http, endpoint, MCP_HTTP_HEADERS)
        await sessionless.run(make_inputs(examples, 100, seed=4, long_string=1024, prefix="nos"))
        ping = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
        response = await http.post(endpoint, json=ping, headers=headers)
        assert response.status_code == 200 and answers_of(response)[-1]["id"] == "ping"
        after = rss_kib(proc.pid)
    report("MCP Streamable HTTP", inputs, before, after)
    assert after - before < RSS_SLACK_KIB


def a2a_examples() -> dict[str, list[Any]]:
    from a2a_layer._methods import METHODS_V10

    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    examples = {name: example_for(d) for name, d in METHODS_V10.items()}
    for name in ("SendMessage", "SendStreamingMessage"):
        examples[name] += [
            {"message": {**message, "messageId": "tck-artifact-text-1"}},
            {"message": {**message, "messageId": "tck-stream-001"}},
            {"message": message, "configuration": {"returnImmediately": True}},
        ]
    examples["GetTask"] += [{"id": "nope", "historyLength": 3}]
    examples["ListTasks"] += [{"pageSize": 5, "includeArtifacts": True}]
    return examples


async def test_a2a_server_over_http_survives_mutated_messages() -> None:
    from a2a_layer._methods import STREAMING_METHODS, STREAMING_METHODS_V03

    streaming = STREAMING_METHODS | STREAMING_METHODS_V03
    headers = {"content-type": "application/json", "A2A-Version": "1.0"}
    async with served("a2a") as (proc, url), httpx.AsyncClient(timeout=60) as http:
        fuzz = HttpFuzz(http, url + "/", headers)
        examples = a2a_examples()
        warm = make_inputs(examples, 100, seed=7, long_string=LONG, prefix="warm")
        await fuzz.run(warm, streaming)
        before = rss_kib(proc.pid)
        inputs = make_inputs(
            examples, HTTP_INPUTS, seed=5, long_string=LONG, long_every=LONG_EVERY // 2
        )
        await fuzz.run(inputs, streaming)
        # The 0.3 names on the same endpoint (no A2A-Version header).
        v03 = HttpFuzz(http, url + "/", {"content-type": "application/json"})
        old = {
            "message/send": [
                {
                    "message": {
                        "kind": "message",
                        "messageId": "m",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "hi"}],
                    }
                }
            ],
            "tasks/get": [{"id": "t", "historyLength": 1}],
            "tasks/cancel": [{"id": "t"}],
        }
        await v03.run(make_inputs(old, 100, seed=6, long_string=1024, prefix="v03"), streaming)  # type: ignore[arg-type]
        await rest_fuzz(http, url, examples)
        response = await http.get(url + "/.well-known/agent-card.json")
        assert response.status_code == 200
        after = rss_kib(proc.pid)
    report("A2A HTTP", inputs, before, after)
    assert after - before < RSS_SLACK_KIB


async def rest_fuzz(http: httpx.AsyncClient, url: str, examples: dict[str, list[Any]]) -> None:
    """The HTTP+JSON binding: mutated bodies and queries, deep JSON, bad bytes."""
    import random

    rng = random.Random(8)
    headers = {"content-type": "application/json", "A2A-Version": "1.0"}
    bodies: list[bytes] = [
        b"[" * 5000 + b"]" * 5000,
        b'{"message":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b"\xff\xfe{",
        b'{"message": {"role": ' + b"[" * 900 + b"]" * 900 + b"}}",
        b"",
        b"null",
    ]
    for _ in range(60):
        valid = rng.choice(examples["SendMessage"])
        bodies.append(json.dumps(mutate(rng, valid, 64)).encode())
    for body in bodies:
        for path in ("/rest/message:send", "/rest/tasks/t-1:cancel"):
            response = await http.post(url + path, content=body, headers=headers)
            assert response.status_code < 500, (path, body[:100], response.text)
            assert "error" in response.json() or response.status_code == 200
    for query in ({"pageSize": "-1"}, {"pageSize": "9" * 400}, {"status": "\x00"}, {"x": "y"}):
        response = await http.get(url + "/rest/tasks", params=query, headers=headers)
        assert response.status_code < 500, (query, response.text)
