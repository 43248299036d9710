"""stdio on descriptors the event loop cannot watch: ``/dev/null`` and regular files.

A supervisor or a test harness may start a stdio server with ``</dev/null`` (epoll
refuses to watch it) or with stdin and stdout redirected to files: the server reads
what there is, answers into the file, sees the end of input and exits 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from _connect import ECHO_SERVER

from jsonrpc_core import FdReceiveStream, FdSendStream, MethodRegistry, NdjsonStream, Peer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ACP_AGENT = EXAMPLES / "acp" / "demo_agent.py"

NOTES = """
    from mcp_layer import MCPServer

    server = MCPServer("notes", "1.0.0")


    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b


    if __name__ == "__main__":
        server.run()
"""


def notes_server(tmp_path: Path) -> Path:
    path = tmp_path / "notes.py"
    path.write_text(textwrap.dedent(NOTES))
    return path


def line(message: dict[str, Any]) -> str:
    return json.dumps(message) + "\n"


MCP_INPUT: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
ECHO_INPUT: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "hi"}},
    {"jsonrpc": "2.0", "id": 2, "method": "add", "params": {"a": 2, "b": 3}},
]
# Two requests without after-response work (session/new advertises commands once
# answered, which fails when the input has already ended).
ACP_INPUT: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    for request_id in (1, 2)
]


def run(command: list[str], stdin: Any, stdout: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=60, env=os.environ
    )


def server_command(name: str, tmp_path: Path) -> list[str]:
    paths = {"mcp": notes_server(tmp_path), "jsonrpc": ECHO_SERVER, "acp": ACP_AGENT}
    return [sys.executable, str(paths[name])]


SERVERS = ["mcp", "jsonrpc", "acp"]


@pytest.mark.parametrize("name", SERVERS)
def test_a_stdio_server_with_stdin_from_dev_null_exits_0_without_a_traceback(
    name: str, tmp_path: Path
) -> None:
    with open(os.devnull, "rb") as devnull:
        done = run(server_command(name, tmp_path), devnull, subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    assert done.stdout == b""


@pytest.mark.parametrize("name", SERVERS)
def test_a_stdio_server_with_stdin_and_stdout_on_files_answers_into_the_file(
    name: str, tmp_path: Path
) -> None:
    messages = {"mcp": MCP_INPUT, "jsonrpc": ECHO_INPUT, "acp": ACP_INPUT}[name]
    requests = tmp_path / "in.jsonl"
    requests.write_text("".join(map(line, messages)))
    answers = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = run(server_command(name, tmp_path), stdin, stdout)
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    replies = [json.loads(raw) for raw in answers.read_text().splitlines()]
    answered = {reply["id"]: reply for reply in replies if "id" in reply}
    assert sorted(answered) == [1, 2], replies
    assert all("result" in reply for reply in answered.values()), replies


def test_a_stdio_server_writing_to_dev_null_reads_its_file_to_the_end(tmp_path: Path) -> None:
    requests = tmp_path / "in.jsonl"
    requests.write_text("".join(map(line, MCP_INPUT)))
    with requests.open("rb") as stdin, open(os.devnull, "wb") as devnull:
        done = run(server_command("mcp", tmp_path), stdin, devnull)
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr


def echo_registry() -> MethodRegistry:
    registry = MethodRegistry()
    registry.on("echo", lambda params, ctx: params)
    return registry


@pytest.mark.anyio
async def test_a_peer_reading_dev_null_sees_the_end_of_input_at_once() -> None:
    fd = os.open(os.devnull, os.O_RDONLY)
    out = os.open(os.devnull, os.O_WRONLY)
    stream = NdjsonStream(FdReceiveStream(fd, close_fd=True), FdSendStream(out, close_fd=True))
    with anyio.fail_after(10):
        async with Peer(stream, echo_registry()) as peer:
            await peer.wait_closed()


@pytest.mark.anyio
async def test_a_peer_answers_requests_from_a_file_into_a_file(tmp_path: Path) -> None:
    requests = tmp_path / "in.jsonl"
    requests.write_text("".join(map(line, ECHO_INPUT[:1])))
    answers = tmp_path / "out.jsonl"
    fd = os.open(requests, os.O_RDONLY)
    out = os.open(answers, os.O_WRONLY | os.O_CREAT)
    stream = NdjsonStream(FdReceiveStream(fd, close_fd=True), FdSendStream(out, close_fd=True))
    with anyio.fail_after(10):
        async with Peer(stream, echo_registry()) as peer:
            await peer.wait_closed()
    assert json.loads(answers.read_text()) == {"jsonrpc": "2.0", "id": 1, "result": {"text": "hi"}}
