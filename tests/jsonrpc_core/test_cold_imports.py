"""A stdio server started for real loads nothing its first answers do not need.

Each check starts a server (or imports a client) in a fresh interpreter, feeds it the
requests a client sends first, and lists ``sys.modules`` when it exits at the end of its
input, so what this process imported does not count. Each module named here was loaded
on start-up before it was deferred; these checks keep it so (see also
``test_lazy_imports.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

_REPORT = """
import atexit, json, sys

def _report():
    with open({path!r}, "w", encoding="utf-8") as file:
        json.dump(sorted(sys.modules), file)

atexit.register(_report)
"""


def _loaded_by_server(tmp_path: Path, code: str, requests: list[dict[str, object]]) -> set[str]:
    """The modules a fresh interpreter running ``code`` (a stdio server) holds when it ends
    after answering ``requests``; fails unless every request got an answer."""
    report = tmp_path / "modules.json"
    script = _REPORT.format(path=str(report)) + textwrap.dedent(code)
    lines = "".join(json.dumps(request) + "\n" for request in requests)
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=lines,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    answered = {json.loads(line).get("id") for line in done.stdout.splitlines() if line.strip()}
    assert {request["id"] for request in requests if "id" in request} <= answered, done.stderr
    return set(json.loads(report.read_text(encoding="utf-8")))


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


MCP_SERVER = """
from mcp_layer import MCPServer

def echo(text: str) -> str:
    return text

server = MCPServer("cold", "1.0.0")
server.add_tool(echo)
server.run("stdio")
"""

MCP_FIRST_REQUESTS: list[dict[str, object]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "cold", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}},
    },
]


def test_an_mcp_stdio_server_answers_its_first_call_without_the_http_helpers(
    tmp_path: Path,
) -> None:
    loaded = _loaded_by_server(tmp_path, MCP_SERVER, MCP_FIRST_REQUESTS)
    assert "mcp_layer._session" in loaded
    assert "jsonrpc_core._http_common" not in loaded


ACP_AGENT = """
import anyio
from acp_layer import Agent, run_agent_stdio

class Quiet(Agent):
    async def prompt(self, params):
        return "end_turn"

anyio.run(lambda: run_agent_stdio(Quiet()))
"""

ACP_FIRST_REQUESTS: list[dict[str, object]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    },
    {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
]


def test_an_acp_stdio_agent_opens_a_session_without_the_wire_tap(tmp_path: Path) -> None:
    loaded = _loaded_by_server(tmp_path, ACP_AGENT, ACP_FIRST_REQUESTS)
    assert "acp_layer._agent_server" in loaded
    assert "jsonrpc_core._tap" not in loaded


def test_an_acp_client_that_spawns_agents_loads_no_wire_tap() -> None:
    loaded = _loaded_after("from acp_layer import Client, spawn_agent")
    assert "acp_layer._client_connect" in loaded
    assert "jsonrpc_core._tap" not in loaded
