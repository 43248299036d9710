"""An ACP agent uses the MCP servers of its session with one call: `connect_mcp_servers`.

The MCP server is examples/mcp/file_server.py (rpcweave's own mcp_layer), over stdio as a
process, and over Streamable HTTP and HTTP+SSE on a loopback port.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_fixtures.wire import ROOT, connected, requires_acp_schema

from acp_layer import Agent, LocalClient, connect_mcp_servers
from acp_layer import schema as s
from jsonrpc_core import running_server

pytestmark = [
    pytest.mark.anyio,
    requires_acp_schema,
]

FILE_SERVER = ROOT / "examples" / "mcp" / "file_server.py"


def stdio_server(root: Path) -> s.McpServerStdio:
    return s.McpServerStdio(
        name="files-stdio",
        command=sys.executable,
        args=[str(FILE_SERVER), str(root)],
        env=[s.EnvVariable(name="ACP_MCP_TEST", value="1")],
    )


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


class _McpAgent(Agent):
    """Calls ``read_file`` on every MCP server of the session and says what it got."""

    mcp_capabilities = s.McpCapabilities(http=True, sse=True)

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        block = params.prompt[0]
        assert isinstance(block, s.TextContent)
        async with connect_mcp_servers(self.client.sessions[sid].mcp_servers) as mcp:
            for name, session in sorted(mcp.items()):
                tools = [tool.name for tool in await session.list_all_tools()]
                result = await session.call_tool("read_file", {"path": block.text})
                await self.client.send_text(sid, f"{name} {tools} {_text(result)}\n")
        return "end_turn"


async def test_agent_uses_the_mcp_servers_of_its_session(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi from MCP")
    app = _load_file_server().build_server(tmp_path).asgi_app()
    client = LocalClient()
    with anyio.fail_after(60):
        async with running_server(app) as base_url:
            servers: list[s.McpServer] = [
                stdio_server(tmp_path),
                s.McpServerHttp(
                    name="files-http",
                    url=f"{base_url}/mcp",
                    headers=[s.HttpHeader(name="X-Test", value="1")],
                ),
                s.McpServerSse(name="files-sse", url=f"{base_url}/sse", headers=[]),
            ]
            async with connected(_McpAgent(), client) as (conn, agent_check, client_check):
                sid = (await conn.new_session(str(tmp_path), servers)).session_id
                assert (await conn.prompt(sid, "hello.txt")).stop_reason == "end_turn"
    said = "".join(
        u.content.text
        for u in client.updates[sid]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    )
    assert said.splitlines() == [
        "files-http ['read_file'] hi from MCP",
        "files-sse ['read_file'] hi from MCP",
        "files-stdio ['read_file'] hi from MCP",
    ]
    client_check.assert_valid()
    agent_check.assert_valid()


async def test_unreachable_servers_raise_or_are_left_out(tmp_path: Path) -> None:
    broken = s.McpServerStdio(name="broken", command="/nonexistent/mcp-server", args=[], env=[])
    unknown = s.UnknownMcpServer(type="acp", name="unstable")
    with anyio.fail_after(30):
        with pytest.raises(Exception, match="nonexistent"):
            async with connect_mcp_servers([broken]):
                pass
        async with connect_mcp_servers(
            [broken, unknown, stdio_server(tmp_path)], ignore_errors=True
        ) as mcp:
            assert list(mcp) == ["files-stdio"]


def test_importing_acp_layer_does_not_import_mcp_layer_or_httpx() -> None:
    code = (
        "import sys, acp_layer; "
        "from acp_layer import schema; "
        "assert 'mcp_layer' not in sys.modules and 'httpx' not in sys.modules, 'eager'; "
        "acp_layer.serve_agent; acp_layer.LocalClient; acp_layer.connect_mcp_servers; "
        "assert 'mcp_layer' not in sys.modules and 'httpx' not in sys.modules, 'runtime'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _load_file_server() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("example_mcp_file_server", FILE_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
